#!/usr/bin/env bash
# VALIDATION.md section 4.10: the real OSU collectives under Open MPI 4.1.4
# (Debian's openmpi-bin, next to MPICH: mpicc.openmpi, mpirun.openmpi),
# 2 ranks on this machine, against parsim's predictions on a machine
# calibrated minutes before by `calibrate net --run` built and run with
# Open MPI (it names the library: `openmpi-4.1`, whose rules are Open MPI
# 5.0's coll/tuned fixed decisions, docs/collectives.md). Compared: the
# machine as calibrated (`ompi`), the same without the channels' written
# parameters (`ompi-clean`, section 4.11) and without the call costs
# (`ompi-nocost`). No collective table is an input.
# OMB 6.1 (paklui/osu-micro-benchmarks at 5dfa372), built with
#   mpicc.openmpi -O2 -DPACKAGE_VERSION='"6.1"' -Iutil -o $BIN/osu_X \
#       mpi/{pt2pt,collective}/osu_X.c util/osu_util.c util/osu_util_mpi.c -lm
# Each benchmark is run 5 times, each size's median compared; nothing else
# may run meanwhile. This VM has two speed states about 2.5x apart (a
# 1-byte one-way time of 0.13-0.15 us or 0.35-0.37 us under Open MPI) and
# changes between them within tens of seconds, so every launch is
# sandwiched between two probes (validation/dev-machine/state/probe.c):
# the calibration is repeated until both of its probes agree, and a
# benchmark run is kept only when both of its probes show the
# calibration's state (at most 20 launches per benchmark for 5 kept).
# Usage, from the workspace root on a quiet machine:
#   bash validation/dev-machine/osu-ompi.sh BIN [path/to/parsim]
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=$1
P=${2:-target/release/parsim}
D=${OUT:-validation/dev-machine/osu-ompi}
RUN="mpirun.openmpi --allow-run-as-root -np 2"
mkdir -p $D/runs
PROBE=$(mktemp -d)/probe
mpicc.openmpi -O2 -o $PROBE validation/dev-machine/state/probe.c
# fast or slow: the median one-way time of one probe launch.
state() { $RUN $PROBE | awk '{print $4}' | sort -n | sed -n 2p | awk '{print ($1 < 0.25) ? "fast" : "slow"}'; }
for attempt in 1 2 3 4 5 6; do
    before=$(state)
    "$P" calibrate net --run "$RUN" --shm-run "$RUN" --mpicc mpicc.openmpi --ranks-per-node 2 \
        --name dev-machine-ompi \
        --description "this development machine: 2 vCPUs, Open MPI 4.1.4 from Debian, shared memory" \
        -o $D/machine-ompi.toml > $D/calibrate-net.txt
    after=$(state)
    echo "calibration $attempt: $before / $after"
    if [ "$before" = "$after" ]; then break; fi
done
CAL=$before
echo "$CAL" > $D/state.txt
sed -e '/^call_overhead = /d' -e '/^reduce_overhead = /d' -e '/^reduce_op = /d' -e '/^page_fault = /d' \
    $D/machine-ompi.toml > $D/machine-ompi-nocost.toml
# Without the channels' written parameters ([shm.written], section 4.11).
awk '/^\[/ { skip = ($0 ~ /^\[\[?[a-z]+\.written/) } !skip' $D/machine-ompi.toml \
    > $D/machine-ompi-clean.toml
B=${BENCHES:-"latency allreduce reduce bcast alltoall allgather gather scatter barrier reduce_scatter allgatherv alltoallv gatherv scatterv"}
for b in $B; do
    kept=0
    for attempt in $(seq 1 20); do
        before=$(state)
        $RUN "$BIN/osu_$b" > $D/runs/$b.try.txt
        after=$(state)
        echo "$b $attempt: $before / $after" >> $D/states.txt
        if [ "$before" = "$CAL" ] && [ "$after" = "$CAL" ]; then
            kept=$((kept + 1))
            mv $D/runs/$b.try.txt $D/runs/$b.$kept.txt
            if [ $kept = 5 ]; then break; fi
        fi
    done
    rm -f $D/runs/$b.try.txt
    echo "$b: $kept runs kept in the $CAL state"
done
python3 validation/dev-machine/omb_median.py "$D" $B
for b in $B; do
    # A benchmark none of whose launches stayed in the calibration's state.
    if ! ls $D/runs/$b.1.txt > /dev/null 2>&1; then echo "$b: no runs kept"; continue; fi
    size=(-p max_bytes=1048576)
    if [ $b = latency ]; then size=(-p max_bytes=4194304); fi
    if [ $b = barrier ]; then size=(); fi
    for m in ompi ompi-clean ompi-nocost; do
        "$P" validate examples/osu/$b.mpl --table $D/measured-$b.txt --ranks 2 \
            "${size[@]}" --machine $D/machine-$m.toml > $D/validate-$b-$m.txt
        echo "$b $m $(grep '^all:' $D/validate-$b-$m.txt)"
    done
done
