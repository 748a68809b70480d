#!/bin/sh
# How Intel MPI looks up its tuning tree: which ppn, comm_size and
# msg_size key a call takes. Usage: scripts/intelmpi/lookup_experiment.sh IMPI_ROOT
#
# Loads small JSON tunings (I_MPI_TUNING) for MPI_Alltoall on 4 ranks of one
# node that choose Bruck's algorithm (preset 1: 16n bytes on the wire for
# blocks of n bytes) or the pairwise exchange (preset 3: 12n), runs one
# alltoall with everything over the tcp provider, and prints the bytes the
# ranks wrote to sockets, so the row taken shows in the total.
set -eu
R=$(cd "$1" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
MPIH=${MPI_INCLUDE:-/usr/include/x86_64-linux-gnu/mpich}   # MPICH ABI headers
gcc -O1 "$HERE/alltoall_once.c" -I"$MPIH" -L"$R/lib" -lmpi -Wl,-rpath,"$R/lib" -o "$T/a2a"
gcc -O1 "$HERE/allreduce_once.c" -I"$MPIH" -L"$R/lib" -lmpi -Wl,-rpath,"$R/lib" -o "$T/ar"
gcc -O1 -shared -fPIC "$HERE/sockbytes.c" -o "$T/sockbytes.so" -ldl
export I_MPI_ROOT="$R" PATH="$R/bin:$PATH" LD_LIBRARY_PATH="$R/lib:$R/lib/libfabric" \
       FI_PROVIDER_PATH="$R/lib/libfabric/prov" I_MPI_FABRICS=ofi FI_PROVIDER=tcp
B='"coll=Barrier": {"ppn=-1": {"comm_size=-1": {"comm_id=-1": {"msg_size=-1": {"BARRIER=1": {}}}}}}'
a2a() { # the alltoall tree's ppn level as JSON text -> the whole tuning
    printf '{"coll=Alltoall": {%s}, %s}' "$1" "$B"
}
row() { printf '"comm_id=-1": {"msg_size=%s": {"ALLTOALL=%s": {}}}' "$1" "$2"; }
run() { # json bytes [program]
    printf '%s' "$1" > "$T/t.json"
    I_MPI_TUNING="$T/t.json" mpiexec -n 4 -genv LD_PRELOAD "$T/sockbytes.so" "$T/${3:-a2a}" "$2" 2>&1 \
        | awk '/SOCKBYTES/ {s += $2} END {print s}'
}
N=100000
echo "Bruck's is about $((16 * N)) bytes, pairwise about $((12 * N)) (n = $N)"
J=$(a2a "\"ppn=4\": {\"comm_size=4\": {\"comm_id=-1\": {\"msg_size=$N\": {\"ALLTOALL=1\": {}}, \"msg_size=-1\": {\"ALLTOALL=3\": {}}}}}")
echo "msg_size=$N Bruck's, -1 pairwise; n = $N: $(run "$J" $N); n = $((N + 1)): $(run "$J" $((N + 1)))"
J=$(a2a "\"ppn=4\": {\"comm_size=3\": {$(row -1 3)}, \"comm_size=8\": {$(row -1 1)}}")
echo "comm_size=3 pairwise, 8 Bruck's; 4 ranks: $(run "$J" $N)"
J=$(a2a "\"ppn=4\": {\"comm_size=2\": {$(row -1 1)}, \"comm_size=3\": {$(row -1 3)}}")
echo "comm_size=2 Bruck's, 3 pairwise; 4 ranks: $(run "$J" $N)"
J=$(a2a "\"ppn=2\": {\"comm_size=4\": {$(row -1 3)}}, \"ppn=8\": {\"comm_size=4\": {$(row -1 1)}}")
echo "ppn=2 pairwise, 8 Bruck's; 4 ranks on one node: $(run "$J" $N)"
J=$(a2a "\"ppn=1\": {\"comm_size=4\": {$(row -1 1)}}, \"ppn=2\": {\"comm_size=4\": {$(row -1 3)}}")
echo "ppn=1 Bruck's, 2 pairwise; 4 ranks on one node: $(run "$J" $N)"
# Allreduce: recursive doubling (preset 1, 8n bytes for an n-byte buffer on
# 4 ranks) up to msg_size 100000, Rabenseifner's (preset 2, 6n) above; the
# key is the whole buffer in bytes (25000 ints = 100000 bytes).
J=$(printf '{"coll=Allreduce": {"ppn=4": {"comm_size=4": {"comm_id=-1": {"msg_size=%s": {"ALLREDUCE=1": {}}, "msg_size=-1": {"ALLREDUCE=2": {}}}}}}, %s}' $N "$B")
echo "allreduce msg_size=$N recursive doubling, -1 Rabenseifner's; 25000 ints: $(run "$J" 25000 ar); 25001 ints: $(run "$J" 25001 ar)"
