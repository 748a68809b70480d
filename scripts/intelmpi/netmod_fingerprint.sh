#!/bin/sh
# What an Intel MPI netmod algorithm id does: run it on 8 ranks and print
# the bytes each rank sends and receives.
# Usage: scripts/intelmpi/netmod_fingerprint.sh IMPI_ROOT COLL ALG...
#   COLL: allreduce | bcast | reduce; ALG: an id with parameters ("10,8192").
# The generic tuning file is patched (patch_netmod.py) so that on 8 ranks of
# one node (ppn 8) the collective runs the flat netmod composition with ALG;
# one call of 100000 bytes runs over the tcp provider (I_MPI_FABRICS=ofi) and
# an LD_PRELOAD shim counts each rank's socket bytes. Output per rank:
# "rank:sent>received" in kB.
set -eu
R=$(cd "$1" && pwd); COLL=$2; shift 2
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
MPIH=${MPI_INCLUDE:-/usr/include/x86_64-linux-gnu/mpich}
gcc -O1 "$HERE/coll_once.c" -I"$MPIH" -L"$R/lib" -lmpi -Wl,-rpath,"$R/lib" -o "$T/coll"
gcc -O1 -shared -fPIC "$HERE/sockbytes_rank.c" -o "$T/shim.so" -ldl
export I_MPI_ROOT="$R" PATH="$R/bin:$PATH" LD_LIBRARY_PATH="$R/lib:$R/lib/libfabric" \
       FI_PROVIDER_PATH="$R/lib/libfabric/prov" I_MPI_FABRICS=ofi FI_PROVIDER=tcp
case $COLL in
    allreduce) ID=2 FLAT=2 NETNP=16 ;;   # the netmod allreduce rows at ppn 8 start at comm_size 16
    bcast) ID=7 FLAT=3 NETNP=8 ;;
    reduce) ID=12 FLAT=2 NETNP=8 ;;
    *) echo "COLL: allreduce, bcast or reduce" >&2; exit 2 ;;
esac
for ALG in "$@"; do
    python3 "$HERE/patch_netmod.py" "$R/opt/mpi/etc/tuning_generic_shm-ofi.dat" "$T/p.dat" \
        $ID 8 8 $NETNP "$ALG" $FLAT 2>/dev/null
    printf '%s %s: ' "$COLL" "$ALG"
    I_MPI_TUNING_BIN="$T/p.dat" mpiexec -n 8 -genv LD_PRELOAD "$T/shim.so" "$T/coll" "$COLL" 100000 2>&1 \
        | awk '/^RANK/ {print $2, int($4 / 1000), int($6 / 1000)}' | sort -n \
        | awk '{printf "%s:%d>%d ", $1, $2, $3} END {print ""}'
done
