#!/usr/bin/env bash
# heat, Jacobi and Net against real MPI runs on this machine, with the
# protocol of issue 17 for a VM whose speed drifts over minutes
# (VALIDATION.md section 3):
#   - everything a prediction uses is measured within about a minute of the
#     real runs it predicts: per round the network once (`calibrate net
#     --run`), then per program its kernels (`calibrate blocks`, alone and
#     two at once) immediately followed by its real runs (`validate --run`);
#   - runs long enough to be measured: five times the iterations of
#     run.sh, 1-3 s per real run at one rank;
#   - REPEAT (default 5) real runs per point, the median compared; the
#     range of the runs (min .. max) printed beside it is a distribution-
#     free confidence interval of that median (with 5 runs it holds the
#     median with probability 1 - 2/2^5 = 93.75%);
#   - ROUNDS (default 3) rounds in a row, each with its own calibration, so
#     that what a re-run gives is on record, not one lucky run;
#   - BUFFERS (default clean) is `calibrate net --buffers`: `written` fits
#     the channels from the benchmark's ping-pong of data written just
#     before each send, as these programs send what they computed;
#   - SPEED=yes adds `validate --speed-reference` (default no: it helped in
#     8 of 9 program-rounds before the scratch layout was fixed, in 3 of 9
#     after, VALIDATION.md sections 3.0b and 3.0c): a fixed
#     reference workload timed around every kernel point and every real
#     run, the kernel times scaled by its ratio (the machine's drift between
#     the two measured, not assumed away); the uncorrected prediction and
#     its median error are printed beside the corrected one;
#   - RETIME (default yes; VALIDATION.md section 3.0d) adds `validate
#     --retime 0.1` (SPEED=yes replaces it): every kernel tuple
#     timed again for 0.1 s just before every real run, each point
#     predicted with the median of its runs' measurements.
#   - PIN (default yes; VALIDATION.md section 3.0e): `calibrate blocks
#     --pin` (copy j of the kernels bound to CPU j) and every real run
#     launched with `mpirun -bind-to core` (rank j on core j), so that a
#     rank's times are its own core's: two copies at once run at speeds
#     5-20% apart on this VM's two vCPUs, and an unbound run may meet
#     either. PIN=no launches unbound, as before.
#   - INPROG=yes (default no; VALIDATION.md section 3.0f): the kernels
#     timed inside the real program (`calibrate blocks --in-program`) in
#     runs of a fifth of the iterations (the `*_cal` sets: the same
#     problems, so the same tuples), right before the real runs they
#     predict; replaces --retime (which times kernels apart).
#   - NOISE (default yes; VALIDATION.md section 3.0f): `validate --noise
#     1`, every kernel call's time drawn from its measured distribution
#     (the rank's own copy), so that ranks that wait for each other every
#     iteration pay the slower draw, as the real ones do (with the mean
#     times the 2-rank points came out 6-9% low on average in four sets of
#     rounds, with the draws 0.4-2.6%). NOISE=no predicts with the means.
# From the workspace root on a quiet machine, after `cargo build --release`
# (about 4 minutes a round here):
#   bash validation/dev-machine/rounds.sh OUT_DIR [path/to/parsim]
# Writes OUT_DIR/round-R/ (machine, blocks, each validate table) and
# OUT_DIR/summary.txt (one line per round and program).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: rounds.sh OUT_DIR [parsim]}
P=${2:-target/release/parsim}
ROUNDS=${ROUNDS:-3}
REPEAT=${REPEAT:-5}
BUFFERS=${BUFFERS:-clean}
SPEED=${SPEED:-no}
RETIME=${RETIME:-yes}
PIN=${PIN:-yes}
INPROG=${INPROG:-no}
NOISE=${NOISE:-yes}
pin=()
launch="mpirun"
if [ "$PIN" = yes ]; then pin=(--pin); launch="mpirun -bind-to core"; fi
speed=()
if [ "$SPEED" = yes ]; then speed=(--speed-reference)
elif [ "$RETIME" = yes ]; then speed=(--retime 0.1); fi

heat=(--set n=256,iters=30000 --set n=512,iters=7500 --set n=1024,iters=2000)
jacobi=(--set n=514,iters=4000 --set n=1026,iters=1000 --set n=2050,iters=250)
net=(--set m=512,n=512,iters=6000 --set m=1024,n=1024,iters=1500 --set m=2048,n=2048,iters=375)
heat_cal=(--set n=256,iters=6000 --set n=512,iters=1500 --set n=1024,iters=400)
jacobi_cal=(--set n=514,iters=800 --set n=1026,iters=200 --set n=2050,iters=50)
net_cal=(--set m=512,n=512,iters=1200 --set m=1024,n=1024,iters=300 --set m=2048,n=2048,iters=75)
if [ "$INPROG" = yes ]; then speed=(); fi
if [ "$NOISE" = yes ]; then speed+=(--noise 1); fi

mkdir -p "$OUT"
: > "$OUT/summary.txt"
for round in $(seq 1 "$ROUNDS"); do
    D=$OUT/round-$round
    mkdir -p "$D"
    "$P" calibrate net --run "$launch -np 2" --shm-run "$launch -np 2" --ranks-per-node 2 \
        --buffers "$BUFFERS" --name dev-machine -o "$D/machine.toml" > "$D/calibrate-net.txt" 2>&1
    for prog in heat jacobi net; do
        declare -n sets=$prog
        start=$(date -u +%H:%M:%S)
        if [ "$INPROG" = yes ]; then
            declare -n cal=${prog}_cal
            "$P" calibrate blocks examples/$prog.mpl --ranks 1,2 "${cal[@]}" \
                --kernels examples/kernels.c --in-program "$launch -np {ranks}" \
                -o "$D/blocks-$prog.toml" 2> "$D/calibrate-blocks-$prog.txt"
        else
            "$P" calibrate blocks examples/$prog.mpl --ranks 1,2 "${sets[@]}" \
                --kernels examples/kernels.c --concurrent 1,2 --min-time 1 --budget 2 "${pin[@]}" \
                -o "$D/blocks-$prog.toml" 2> "$D/calibrate-blocks-$prog.txt"
        fi
        "$P" validate examples/$prog.mpl --run "$launch -np {ranks}" --np 1,2 "${sets[@]}" \
            --kernels examples/kernels.c --blocks "$D/blocks-$prog.toml" \
            --machine "$D/machine.toml" --repeat "$REPEAT" "${speed[@]}" > "$D/validate-$prog.txt" 2>&1
        line=$(grep -E '^[0-9]+ points: median|^uncorrected' "$D/validate-$prog.txt" | paste -sd ';' -)
        echo "round $round $prog ($start-$(date -u +%H:%M:%S) UTC): $line" | tee -a "$OUT/summary.txt"
    done
done
