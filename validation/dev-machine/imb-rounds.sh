#!/usr/bin/env bash
# Issue 13 on this machine (VALIDATION.md 4.19): the real IMB-MPI1
# collectives at 2 ranks under the drift-robust protocol of osu-rounds.sh:
# each round calibrates (`calibrate net --run` and `--shm-run`) and runs
# every benchmark once right after, as `IMB-MPI1 PingPong BENCH PingPong`
# (imb-real.sh says why: the PingPong's buffers move glibc's thresholds,
# section 4.16), and each run is predicted on its own round's machine
# with IMB 2017+'s timing (--param timing=2017 after_pingpong=4194304):
#   mpich-4          the machine as calibrated (each collective's own call
#                    overhead, the Call_<kind> tables);
#   mpich-4-onecall  the barrier's call overhead for every collective.
# No collective table is an input. Per benchmark the median over the
# rounds of each round's median |error| (summary.txt), over the rounds
# whose calibration launch and benchmark launch show one state of the VM
# (imb-real.sh's test: 0-byte PingPong and PingPing below 0.4 µs and
# Barrier below 0.9 µs is fast); the others are listed, marked.
# IMB-MPI1 built as imb-real.sh says. Usage, from the workspace root on a
# quiet machine:
#   bash validation/dev-machine/imb-rounds.sh IMB_DIR [path/to/parsim]
# ROUNDS=N (default 5), OUT=DIR (default validation/dev-machine/imb-rounds).
set -euo pipefail
cd "$(dirname "$0")/../.."
IMB=$1
P=${2:-target/release/parsim}
D=${OUT:-validation/dev-machine/imb-rounds}
B="Allreduce Alltoall Bcast Reduce Allgather Barrier"
mkdir -p $D
: > $D/results.txt
for r in $(seq 1 ${ROUNDS:-5}); do
    R=$D/round$r
    mkdir -p $R
    date -u +"round $r %H:%M:%S" | tee -a $D/results.txt
    "$P" calibrate net --run "mpirun -np 2" --shm-run "mpirun -np 2" --ranks-per-node 2 \
        --name dev-machine-imb \
        --description "this development machine: 2 vCPUs, MPICH 4.0.2 (ch4:ucx) from Debian, shared memory" \
        -o $R/machine-mpich-4.toml > $R/calibrate-net.txt 2> $R/calibrate-net.err
    sed -E 's/^call_overhead = \{ default = ("[^"]*").*$/call_overhead = \1/' \
        $R/machine-mpich-4.toml > $R/machine-mpich-4-onecall.toml
    for b in $B; do
        mpirun -np 2 "$IMB/IMB-MPI1" PingPong $b PingPong -npmin 2 -msglog 0:22 > $R/$b.raw.txt
        python3 validation/dev-machine/imb_median.py "$R/$b.txt" "round $r, one launch" $b $R/$b.raw.txt
    done
    for b in $B; do
        f=$(echo $b | tr A-Z a-z)
        for m in mpich-4 mpich-4-onecall; do
            "$P" validate examples/imb/$f.mpl --table $R/$b.txt --param timing=2017 \
                --param after_pingpong=4194304 --machine $R/machine-$m.toml > $R/validate-$f-$m.txt
            echo "$r $b $m $(grep '^all:' $R/validate-$f-$m.txt)" >> $D/results.txt
        done
    done
done
python3 - "$D" <<'PY'
import re, statistics, sys
d = sys.argv[1]

def zeros(path, bench):
    # The 0-byte times of the blocks `bench` of an IMB-format output.
    out, on = [], False
    for line in open(path):
        if line.startswith("# Benchmarking "):
            on = line.split()[2] == bench
        p = line.split()
        if on and len(p) >= 3 and p[0] == "0":
            out.append(float(p[2]))
    return out

def state(t, limit):
    return "fast" if t < limit else "slow"

rows, kept = {}, {}
for line in open(f"{d}/results.txt"):
    m = re.match(r"(\d+) (\S+) (\S+) all: .*median \|error\| ([0-9.]+)%", line)
    if not m:
        continue
    r, b, machine, err = m[1], m[2], m[3], float(m[4])
    # The VM's state (imb-real.sh): the calibration's launch must show one
    # state in its PingPong, PingPing and Barrier, and the benchmark's
    # launch the same one in both its PingPongs.
    nb = f"{d}/round{r}/dev-machine-imb.shm.netbench.txt"
    cal = {state(zeros(nb, "PingPong")[0], 0.4), state(zeros(nb, "PingPing")[0], 0.4),
           state(zeros(nb, "Barrier")[0], 0.9)}
    run = {state(t, 0.4) for t in zeros(f"{d}/round{r}/{b}.raw.txt", "PingPong")}
    rows.setdefault((b, machine), []).append((r, err, len(cal) == 1 and cal == run))
with open(f"{d}/summary.txt", "w") as out:
    out.write("Per benchmark: the median over the rounds whose calibration and run show one state of the VM (in brackets each round's median |error|, * where the states differ).\n\n")
    out.write("| benchmark | mpich-4 | mpich-4-onecall |\n| --- | --- | --- |\n")
    for b in dict.fromkeys(k[0] for k in rows):
        def cell(m):
            v = rows[(b, m)]
            same = [e for _, e, ok in v if ok]
            med = "%.1f" % statistics.median(same) if same else "none"
            return "%s (%s)" % (med, ", ".join("%.1f%s" % (e, "" if ok else "*") for _, e, ok in v))
        out.write(f"| {b} | {cell('mpich-4')} | {cell('mpich-4-onecall')} |\n")
print(open(f"{d}/summary.txt").read())
PY
