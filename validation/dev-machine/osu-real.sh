#!/usr/bin/env bash
# Issue 13 on this machine (VALIDATION.md sections 4.1 and 4.2): the real
# OSU Micro-Benchmarks' collectives with MPICH 4 at its defaults, 2 ranks,
# against parsim's predictions on a machine calibrated minutes before by
# `calibrate net --run`, which also measures what a collective call costs
# beyond its messages (a 2-rank barrier, MPI_Reduce_local) and names the
# library it ran on (MPICH 4.0.2: `mpich-4`). Compared:
#   mpich-4         the machine as calibrated;
#   mpich-4-nocost  the same without the call costs (no call_overhead,
#                   reduce_overhead, reduce_op, page_fault): the model
#                   before 4.2;
#   mpich-4-nopf    the same without the temporaries' page faults
#                   (page_fault, section 4.7): the model before 4.7;
#   mpich-4-onecall the same with the barrier's call overhead for every
#                   collective instead of each one's own (the Call_<kind>
#                   tables, section 4.19): the model before 4.19;
#   mpich-4-clean   the same without the channels' written parameters
#                   ([shm.written], section 4.11): the model before 4.11;
#   mpich-3         refitted from the same saved tables under MPICH 3's
#                   rules (the call overhead is what its barrier leaves);
# and the same three on a machine whose point-to-point channels come from
# the real osu_latency medians of this session (`lat-*`: the netbench
# ping-pong can land in this VM's slow mode, section 4.1), the call costs
# still from netbench. No collective table is an input.
# The benchmarks are OMB 5.6.1 (github.com/paklui/osu-micro-benchmarks at
# b59ae53), built from their sources with mpicc:
#   for b in osu_latency osu_allreduce osu_reduce osu_bcast osu_alltoall \
#            osu_allgather osu_gather osu_scatter osu_barrier; do
#     mpicc -O2 -DPACKAGE_VERSION='"5.6.1"' -Iutil -o $OMB/$b \
#         mpi/*/$b.c util/osu_util.c util/osu_util_mpi.c; done
# Each benchmark is run 5 times and each size's median latency compared
# (this 2-vCPU VM's speed drifts; nothing else may run meanwhile: two
# spinning ranks on two cores make any other load count several times).
# Usage, from the workspace root on a quiet machine:
#   bash validation/dev-machine/osu-real.sh OMB_DIR [path/to/parsim]
# BENCHES="latency gatherv ..." runs other benchmarks (osu_latency first:
# the `lat-*` machines come from it), OUT=DIR writes elsewhere (section
# 4.6: OMB 6.1's v-collectives and reduce_scatter, built the same way from
# paklui/osu-micro-benchmarks at 5dfa372, whose osu_latency stops at 4 MiB).
set -euo pipefail
cd "$(dirname "$0")/../.."
OMB=$1
P=${2:-target/release/parsim}
D=${OUT:-validation/dev-machine/osu-real}
mkdir -p $D/runs
"$P" calibrate net --run "mpirun -np 2" --shm-run "mpirun -np 2" --ranks-per-node 2 \
    --name dev-machine-coll \
    --description "this development machine: 2 vCPUs, MPICH 4.0.2 (ch4:ucx) from Debian, shared memory" \
    -o $D/machine-mpich-4.toml > $D/calibrate-net.txt
NET=$D/dev-machine-coll.network.netbench.txt
SHM=$D/dev-machine-coll.shm.netbench.txt
MEMCPY=$(sed -n 's/^memcpy = "\(.*\)"$/\1/p' $D/machine-mpich-4.toml)
nocost() { sed -e '/^call_overhead = /d' -e '/^reduce_overhead = /d' -e '/^reduce_op = /d' -e '/^page_fault = /d' "$1" > "$2"; }
nocost $D/machine-mpich-4.toml $D/machine-mpich-4-nocost.toml
sed -e '/^page_fault = /d' $D/machine-mpich-4.toml > $D/machine-mpich-4-nopf.toml
# The barrier's call overhead (the inline table's default) for every call.
onecall() { sed -E 's/^call_overhead = \{ default = ("[^"]*").*$/call_overhead = \1/' "$1" > "$2"; }
onecall $D/machine-mpich-4.toml $D/machine-mpich-4-onecall.toml
# Without the channels' written parameters ([shm.written] and the like,
# section 4.11): every message priced with the clean ping-pong.
nowritten() { awk '/^\[/ { skip = ($0 ~ /^\[\[?[a-z]+\.written/) } !skip' "$1" > "$2"; }
nowritten $D/machine-mpich-4.toml $D/machine-mpich-4-clean.toml
# The same saved tables under MPICH 3's rules.
"$P" calibrate net $NET --format imb --pingping $NET --stream $NET --bistream $NET \
    --stream-format imb --shm $SHM --shm-format imb --ranks-per-node 2 \
    --shm-barrier $SHM --shm-calls $SHM --reduce-local $NET --page-fault $NET --memcpy "$MEMCPY" --collective library=mpich-3 \
    --name dev-machine-coll-mpich-3 -o $D/machine-mpich-3.toml > $D/calibrate-net-mpich-3.txt
B=${BENCHES:-"latency allreduce reduce bcast alltoall allgather gather scatter barrier"}
for r in 1 2 3 4 5; do
    for b in $B; do mpirun -np 2 "$OMB/osu_$b" > $D/runs/$b.$r.txt; done
done
# Per size, the median of the five runs, in OMB's own format.
python3 validation/dev-machine/omb_median.py "$D" $B
# The point-to-point channels from the real osu_latency medians, the call
# costs from netbench as above.
for lib in mpich-4 mpich-3; do
    "$P" calibrate net $D/measured-latency.txt --ranks-per-node 2 --shm $D/measured-latency.txt \
        --shm-barrier $SHM --shm-calls $SHM --reduce-local $NET --page-fault $NET --memcpy "$MEMCPY" --collective library=$lib \
        --name dev-machine-osu-latency-$lib -o $D/machine-lat-$lib.toml > $D/calibrate-lat-$lib.txt
done
nocost $D/machine-lat-mpich-4.toml $D/machine-lat-mpich-4-nocost.toml
for b in $B; do
    # OMB 5.6.1's largest size: 1 MiB for collectives, 128 MiB for
    # osu_latency built this way (section 6); osu_barrier has none.
    size=(-p max_bytes=1048576)
    if [ $b = latency ]; then size=(-p max_bytes=134217728); fi
    if [ $b = barrier ]; then size=(); fi
    for m in mpich-4 mpich-4-onecall mpich-4-clean mpich-4-nocost mpich-4-nopf mpich-3 lat-mpich-4 lat-mpich-4-nocost lat-mpich-3; do
        "$P" validate examples/osu/$b.mpl --table $D/measured-$b.txt --ranks 2 \
            "${size[@]}" --machine $D/machine-$m.toml > $D/validate-$b-$m.txt
        echo "$b $m $(grep '^all:' $D/validate-$b-$m.txt)"
    done
done
