#!/usr/bin/env bash
# VALIDATION.md section 10: what a channel table that ends inside the
# caches costs the predictions of larger messages. On this machine (2
# vCPUs, 35.8 MiB last-level cache, MPICH 4 through shared memory) the
# real OMB 5.6.1 built as in patterns.sh measures up to 128 MiB, and
# parsim's benchmark by default up to 4 MiB (IMB's ladder).
#
# One measurement, two machines: `calibrate net --run "mpirun -np 2"
# --max-bytes 128MiB` (its raw output saved), then the same saved output
# cut at 4 MiB (every row above 4 MiB dropped) and both fitted by the same
# command from the saved file, so that the two machines differ only in the
# sizes their tables reach. Then the real osu_bw and osu_bibw (osu_mbw_mr
# of one pair is osu_bw's loop, and takes 10 minutes to 128 MiB here) and
# IMB-MPI1 Exchange/Sendrecv, each predicted on both machines, and the
# benchmark's own PingPong and PingPing of 8-128 MiB, which the 4 MiB
# machine did not see.
# Usage, from the workspace root on a quiet machine (about 10 minutes):
#   bash validation/dev-machine/measured-range.sh OMB_DIR IMB-MPI1 [path/to/parsim]
# (RANGE_DIR=DIR writes into DIR instead of validation/dev-machine/measured-range;
# MEASURE=0 fits and predicts again from the measurements saved there.)
set -euo pipefail
cd "$(dirname "$0")/../.."
OMB=$1
IMB=$2
P=${3:-target/release/parsim}
D=${RANGE_DIR:-validation/dev-machine/measured-range}
mkdir -p $D

MEASURE=${MEASURE:-1}
if [ "$MEASURE" = 1 ]; then
    "$P" calibrate net --run "mpirun -np 2" --max-bytes 128MiB --name dev-machine-range \
        --description "this development machine: 2 vCPUs, MPICH 4 from Debian, 2 ranks through shared memory, calibrated as one channel" \
        -o $D/machine-run.toml > $D/calibrate-run.txt
fi
NET=$D/dev-machine-range.network.netbench.txt
python3 - "$NET" "$D/netbench-4mib.txt" <<'PY'
import sys
src, dst = sys.argv[1:]
out = []
for line in open(src):
    f = line.split()
    if line.startswith("# parsim netbench: messages up to"):
        line = "# parsim netbench: messages up to 4194304 bytes\n"
    elif f and f[0].isdigit() and int(f[0]) > 4194304:
        continue
    out.append(line)
open(dst, "w").write("".join(out))
PY
MEMCPY=$(sed -n 's/^memcpy = "\(.*\)"$/\1/p' $D/machine-run.toml)
for size in 128mib 4mib; do
    T=$NET
    [ $size = 4mib ] && T=$D/netbench-4mib.txt
    "$P" calibrate net $T --format imb --pingping $T --pingping-format imb \
        --stream $T --bistream $T --stream-format imb --barrier $T --reduce-local $T \
        --flag-latency $T --datatype $T --memcpy "$MEMCPY" --collective library=mpich-4 \
        --name dev-machine-$size -o $D/machine-$size.toml > $D/calibrate-$size.txt 2>&1
done
if [ "$MEASURE" = 1 ]; then
    mpirun -np 2 "$OMB/osu_bw" > $D/measured-osu_bw.txt
    mpirun -np 2 "$OMB/osu_bibw" > $D/measured-osu_bibw.txt
    mpirun -np 2 "$IMB" Exchange Sendrecv -npmin 2 > $D/measured-imb.txt
fi
for size in 4mib 128mib; do
    for b in bw bibw; do
        "$P" validate examples/osu/$b.mpl --table $D/measured-osu_$b.txt --ranks 2 \
            -p max_bytes=134217728 --machine $D/machine-$size.toml > $D/validate-$size-osu_$b.txt
    done
    for b in pingpong pingping; do
        "$P" validate examples/imb/$b.mpl --table $NET -p max_bytes=134217728 \
            --machine $D/machine-$size.toml > $D/validate-$size-netbench_$b.txt
    done
    for b in exchange sendrecv; do
        "$P" validate examples/imb/$b.mpl --table $D/measured-imb.txt \
            --machine $D/machine-$size.toml > $D/validate-$size-imb_$b.txt
    done
done
grep -H "^all:" $D/validate-*.txt
