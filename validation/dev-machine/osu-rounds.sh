#!/usr/bin/env bash
# Issue 13 on this machine, the drift-robust protocol of section 3.0
# applied to the OSU collectives (VALIDATION.md 4.19): this VM changes
# speed between launches (a 2-rank barrier 0.5 or 1.5 µs, a ping-pong
# 0.11, 0.19 or 0.68 µs), so a calibration made minutes before the real
# runs can describe another machine than the one they ran on. Each round
# here calibrates (`calibrate net --run` and `--shm-run`, as osu-real.sh
# does) and runs every OMB benchmark once right after, and each run is
# predicted on its own round's machine:
#   mpich-4          the machine as calibrated (each collective's own call
#                    overhead, the Call_<kind> tables);
#   mpich-4-onecall  the same with the barrier's call overhead for every
#                    collective (the model before 4.19);
#   mpich-4-sent     the same with a rendezvous send done when its last
#                    byte has left (the model before 4.22);
#   mpich-4-flat     the same with one rate for every size of copy and
#                    of reduction (no [[node.memcpy_segments]] and
#                    [[node.reduce_segments]]: the model before 4.23).
# No collective table is an input. Per benchmark and round the median
# |error| over its sizes; then, per benchmark, the median over the rounds
# (summary.txt).
# Usage, from the workspace root on a quiet machine (nothing else running:
# two spinning ranks on two cores make any other load count several times):
#   bash validation/dev-machine/osu-rounds.sh OMB_BIN [path/to/parsim]
# OMB_BIN holds OMB 6.1's osu_* binaries (built as osu-real.sh says);
# ROUNDS=N (default 5), OUT=DIR (default validation/dev-machine/osu-rounds).
# Another MPI: RUN="mpirun.openmpi --allow-run-as-root -np 2"
# MPICC=mpicc.openmpi LIBRARY_DESC="Open MPI 4.1.4 from Debian" and OMB
# built with that MPI (osu-ompi.sh says how).
set -euo pipefail
cd "$(dirname "$0")/../.."
OMB=$1
P=${2:-target/release/parsim}
D=${OUT:-validation/dev-machine/osu-rounds}
RUN=${RUN:-mpirun -np 2}
MPICC=${MPICC:-mpicc}
LIBRARY_DESC=${LIBRARY_DESC:-MPICH 4.0.2 (ch4:ucx) from Debian}
TAG=${TAG:-mpich-4}   # the machines' name in the outputs
B="latency allreduce reduce bcast alltoall allgather gather scatter barrier reduce_scatter allgatherv alltoallv gatherv scatterv"
mkdir -p $D
: > $D/results.txt
for r in $(seq 1 ${ROUNDS:-5}); do
    R=$D/round$r
    mkdir -p $R
    date -u +"round $r %H:%M:%S" | tee -a $D/results.txt
    "$P" calibrate net --run "$RUN" --shm-run "$RUN" --mpicc "$MPICC" --ranks-per-node 2 \
        --name dev-machine-coll \
        --description "this development machine: 2 vCPUs, $LIBRARY_DESC, shared memory" \
        -o $R/machine-$TAG.toml > $R/calibrate-net.txt 2> $R/calibrate-net.err
    sed -E 's/^call_overhead = \{ default = ("[^"]*").*$/call_overhead = \1/' \
        $R/machine-$TAG.toml > $R/machine-$TAG-onecall.toml
    # A rendezvous send done when its last byte has left (section 4.22).
    sed -e '/^rendezvous_send = /d' $R/machine-$TAG.toml > $R/machine-$TAG-sent.toml
    # One rate for every size of copy and reduction (the model before
    # 4.23): the machine without its [[node.*_segments]].
    awk '/^\[\[node\.(memcpy|reduce)_segments\]\]/ {skip = 1; next} skip && /^$/ {skip = 0; next} !skip' \
        $R/machine-$TAG.toml > $R/machine-$TAG-flat.toml
    for b in $B; do $RUN "$OMB/osu_$b" > $R/$b.txt; done
    for b in $B; do
        size=(-p max_bytes=1048576)
        if [ $b = latency ]; then size=(-p max_bytes=4194304); fi
        if [ $b = barrier ]; then size=(); fi
        for m in $TAG $TAG-onecall $TAG-sent $TAG-flat; do
            "$P" validate examples/osu/$b.mpl --table $R/$b.txt --ranks 2 \
                "${size[@]}" --machine $R/machine-$m.toml > $R/validate-$b-$m.txt
            echo "$r $b $m $(grep '^all:' $R/validate-$b-$m.txt)" >> $D/results.txt
        done
    done
done
python3 - "$D" "$TAG" <<'EOF'
import re, statistics, sys
d = sys.argv[1]
rows = {}
for line in open(f"{d}/results.txt"):
    m = re.match(r"(\d+) (\S+) (\S+) all: .*median \|error\| ([0-9.]+)%", line)
    if m:
        rows.setdefault((m[2], m[3]), []).append(float(m[4]))
with open(f"{d}/summary.txt", "w") as out:
    tag = sys.argv[2]
    variants = [m for m in (tag, tag + "-onecall", tag + "-sent", tag + "-flat") if any(k[1] == m for k in rows)]
    out.write("| benchmark | " + " | ".join(f"{m}: median over rounds (per round)" for m in variants) + " |\n")
    out.write("| --- |" + " --- |" * len(variants) + "\n")
    for b in dict.fromkeys(k[0] for k in rows):
        cell = lambda m: "%.1f (%s)" % (statistics.median(rows[(b, m)]), ", ".join("%.1f" % x for x in rows[(b, m)]))
        out.write(f"| {b} | " + " | ".join(cell(m) for m in variants) + " |\n")
print(open(f"{d}/summary.txt").read())
EOF
