#!/usr/bin/env bash
# Issue 13 on this machine (VALIDATION.md section 4.1): the real OSU
# Micro-Benchmarks' collectives with MPICH 4 at its defaults, 2 ranks,
# against parsim's predictions under the MPICH 3 rules ("mpich-3") and
# MPICH 4's ("mpich-4") on a machine calibrated minutes before by
# `calibrate net --run`. The benchmarks are OMB 5.6.1
# (github.com/paklui/osu-micro-benchmarks at b59ae53), built from their
# sources with mpicc:
#   for b in osu_latency osu_allreduce osu_reduce osu_bcast osu_alltoall \
#            osu_allgather osu_gather osu_scatter osu_barrier; do
#     mpicc -O2 -DPACKAGE_VERSION='"5.6.1"' -Iutil -o $OMB/$b \
#         mpi/*/$b.c util/osu_util.c util/osu_util_mpi.c; done
# Each benchmark is run 5 times and each size's median latency compared
# (this 2-vCPU VM's speed drifts; nothing else may run meanwhile: two
# spinning ranks on two cores make any other load count several times).
# Usage, from the workspace root on a quiet machine:
#   bash validation/dev-machine/osu-real.sh OMB_DIR [path/to/parsim]
set -euo pipefail
cd "$(dirname "$0")/../.."
OMB=$1
P=${2:-target/release/parsim}
D=validation/dev-machine/osu-real
mkdir -p $D/runs
"$P" calibrate net --run "mpirun -np 2" --shm-run "mpirun -np 2" --ranks-per-node 2 \
    --name dev-machine-coll \
    --description "this development machine: 2 vCPUs, MPICH 4.0.2 (ch4:ucx) from Debian, shared memory" \
    -o $D/machine-mpich-3.toml > $D/calibrate-net.txt
# calibrate net writes no [collectives] section: the MPICH 3 rules are
# the default, and MPICH 4's are one line more.
cp $D/machine-mpich-3.toml $D/machine-mpich-4.toml
printf '\n[collectives]\nlibrary = "mpich-4"\n' >> $D/machine-mpich-4.toml
B="latency allreduce reduce bcast alltoall allgather gather scatter barrier"
for r in 1 2 3 4 5; do
    for b in $B; do mpirun -np 2 "$OMB/osu_$b" > $D/runs/$b.$r.txt; done
done
# Per size, the median of the five runs, in OMB's own format.
python3 - "$D" $B <<'PY'
import collections, glob, statistics, sys
d = sys.argv[1]
for b in sys.argv[2:]:
    rows, head = collections.OrderedDict(), []
    for f in sorted(glob.glob(f"{d}/runs/{b}.*.txt")):
        for line in open(f):
            if line.startswith("#"):
                if f.endswith(".1.txt"):
                    head.append(line)
            elif line.strip():
                parts = line.split()
                rows.setdefault(parts[0] if len(parts) == 2 else "-", []).append(float(parts[-1]))
    with open(f"{d}/measured-{b}.txt", "w") as o:
        o.write("".join(head))
        for k, v in rows.items():
            m = statistics.median(v)
            o.write(f"{m:>20.2f}\n" if k == "-" else f"{k:<10} {m:>12.2f}\n")
PY
for b in $B; do
    # OMB 5.6.1's largest size: 1 MiB for collectives, 128 MiB for
    # osu_latency built this way (section 6); osu_barrier has none.
    size=(-p max_bytes=1048576)
    if [ $b = latency ]; then size=(-p max_bytes=134217728); fi
    if [ $b = barrier ]; then size=(); fi
    for lib in mpich-3 mpich-4; do
        "$P" validate examples/osu/$b.mpl --table $D/measured-$b.txt --ranks 2 \
            "${size[@]}" --machine $D/machine-$lib.toml > $D/validate-$b-$lib.txt
        echo "$b $lib $(grep '^all:' $D/validate-$b-$lib.txt)"
    done
done
# The same comparison on a machine calibrated from the real osu_latency
# medians just measured (the netbench ping-pong of `calibrate net --run`
# can land in this VM's slow mode, section 4.1).
"$P" calibrate net $D/measured-latency.txt --ranks-per-node 2 --shm $D/measured-latency.txt \
    --name dev-machine-osu-latency -o $D/machine-lat-mpich-3.toml > $D/calibrate-lat.txt
cp $D/machine-lat-mpich-3.toml $D/machine-lat-mpich-4.toml
printf '\n[collectives]\nlibrary = "mpich-4"\n' >> $D/machine-lat-mpich-4.toml
for b in $B; do
    [ $b = latency ] && continue
    size=(-p max_bytes=1048576)
    if [ $b = barrier ]; then size=(); fi
    for lib in mpich-3 mpich-4; do
        "$P" validate examples/osu/$b.mpl --table $D/measured-$b.txt --ranks 2 \
            "${size[@]}" --machine $D/machine-lat-$lib.toml > $D/validate-lat-$b-$lib.txt
        echo "lat $b $lib $(grep '^all:' $D/validate-lat-$b-$lib.txt)"
    done
done
