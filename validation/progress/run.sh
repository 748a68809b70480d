#!/usr/bin/env bash
# Does a rendezvous overlap the receiver's computation? Real MPICH runs of
# overlap.c against parsim's predictions under `progress = "calls"` and
# `"async"`, from a machine calibrated on this machine the same minute.
#
#   bash validation/progress/run.sh OUT_DIR
#
# Needs mpicc/mpirun (MPICH) and a release build (cargo build --release).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: run.sh OUT_DIR}
mkdir -p "$out"
P=target/release/parsim
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
mpicc -O2 -o "$bin/overlap" validation/progress/overlap.c
$P calibrate net --run "mpirun -np 2" -o "$out/calls.toml" -q 2> "$out/calibrate.txt"
grep -q '^progress' "$out/calls.toml" && { echo "calls.toml already names progress" >&2; exit 1; }
sed 's/^\[node\]/[node]\nprogress = "async"/' "$out/calls.toml" > "$out/async.toml"
echo "| bytes | compute (us) | test halfway | rank | measured (us) | calls (us) | error | async (us) | error |" > "$out/table.md"
echo "| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |" >> "$out/table.md"
for bytes in 4096 65536 1048576; do
    for compute in 200 1000; do
        for poll in 0 1; do
            line=$(mpirun -np 2 "$bin/overlap" "$bytes" "$compute" "$poll" 200)
            echo "$line" >> "$out/measured.txt"
            sender=$(echo "$line" | sed 's/.*sender \([0-9.]*\) us.*/\1/')
            receiver=$(echo "$line" | sed 's/.*receiver \([0-9.]*\) us.*/\1/')
            for m in calls async; do
                $P run validation/progress/overlap.mpl -n 2 --machine "$out/$m.toml" -q \
                    -p bytes=$bytes -p compute_us=$compute -p poll=$poll > "$out/pred-$m-$bytes-$compute-$poll.txt"
            done
            for rank in 0 1; do
                meas=$([ $rank = 0 ] && echo "$sender" || echo "$receiver")
                c=$(grep "^\[$rank\]" "$out/pred-calls-$bytes-$compute-$poll.txt" | awk '{print $3}')
                a=$(grep "^\[$rank\]" "$out/pred-async-$bytes-$compute-$poll.txt" | awk '{print $3}')
                python3 -c "
m,c,a=$meas,$c,$a
print(f'| $bytes | $compute | {\"yes\" if $poll else \"no\"} | $rank | {m:.1f} | {c:.1f} | {(c-m)/m*100:+.1f}% | {a:.1f} | {(a-m)/m*100:+.1f}% |')
" >> "$out/table.md"
            done
        done
    done
done
cat "$out/table.md"
