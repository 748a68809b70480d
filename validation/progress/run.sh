#!/usr/bin/env bash
# Does a rendezvous overlap the receiver's computation, and what does an
# eager send cost its sender? Real MPICH runs of overlap.c against parsim's
# predictions under `progress = "calls"` and `"async"`, and under "calls"
# without the sender's copy (`send_overhead_per_byte` removed), from a
# machine calibrated on this machine the same minute.
#
#   bash validation/progress/run.sh OUT_DIR
#   SIZES="4096 65536" bash validation/progress/run.sh OUT_DIR   # other sizes
#   PREDICT_ONLY=1 bash validation/progress/run.sh OUT_DIR       # predictions
#       again from OUT_DIR's machine and measurements (after a model change)
#
# Needs mpicc/mpirun (MPICH) and a release build (cargo build --release).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: run.sh OUT_DIR}
mkdir -p "$out"
P=target/release/parsim
if [ -z "${PREDICT_ONLY:-}" ]; then
    bin=$(mktemp -d)
    trap 'rm -rf "$bin"' EXIT
    mpicc -O2 -o "$bin/overlap" validation/progress/overlap.c
    $P calibrate net --run "mpirun -np 2" -o "$out/calls.toml" -q 2> "$out/calibrate.txt"
    rm -f "$out/measured.txt"
    for bytes in ${SIZES:-1024 4096 8192 65536 1048576}; do
        for compute in 200 1000; do
            for poll in 0 1; do
                mpirun -np 2 "$bin/overlap" "$bytes" "$compute" "$poll" 200 >> "$out/measured.txt"
            done
        done
    done
fi
grep -q '^progress' "$out/calls.toml" && { echo "calls.toml already names progress" >&2; exit 1; }
sed 's/^\[node\]/[node]\nprogress = "async"/' "$out/calls.toml" > "$out/async.toml"
sed '/^send_overhead_per_byte/d' "$out/calls.toml" > "$out/nocopy.toml"
echo "| bytes | compute (us) | test halfway | rank | measured (us) | calls (us) | error | async (us) | error | calls without O (us) | error |" > "$out/table.md"
echo "| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |" >> "$out/table.md"
# Each line: "bytes B compute_us C poll P: sender S us, receiver R us".
while read -r _ bytes _ compute _ poll rest; do
    compute=${compute%.0}
    poll=${poll%:}
    sender=$(echo "$rest" | sed 's/.*sender \([0-9.]*\) us.*/\1/')
    receiver=$(echo "$rest" | sed 's/.*receiver \([0-9.]*\) us.*/\1/')
    for m in calls async nocopy; do
        $P run validation/progress/overlap.mpl -n 2 --machine "$out/$m.toml" -q \
            -p bytes="$bytes" -p compute_us="$compute" -p poll="$poll" > "$out/pred-$m-$bytes-$compute-$poll.txt"
    done
    for rank in 0 1; do
        meas=$([ $rank = 0 ] && echo "$sender" || echo "$receiver")
        c=$(grep "^\[$rank\]" "$out/pred-calls-$bytes-$compute-$poll.txt" | awk '{print $3}')
        a=$(grep "^\[$rank\]" "$out/pred-async-$bytes-$compute-$poll.txt" | awk '{print $3}')
        n=$(grep "^\[$rank\]" "$out/pred-nocopy-$bytes-$compute-$poll.txt" | awk '{print $3}')
        python3 -c "
m,c,a,n=$meas,$c,$a,$n
e=lambda p: f'{(p-m)/m*100:+.1f}%'
print(f'| $bytes | $compute | {\"yes\" if $poll else \"no\"} | $rank | {m:.1f} | {c:.1f} | {e(c)} | {a:.1f} | {e(a)} | {n:.1f} | {e(n)} |')
" >> "$out/table.md"
    done
done < "$out/measured.txt"
cat "$out/table.md"
