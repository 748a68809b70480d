#!/usr/bin/env bash
# The whole calibration loop on this machine, as recorded in VALIDATION.md
# section 3: measure the network (MPICH, shared memory), time the kernels of
# heat, Jacobi and Net (alone and two at once), then run each program for
# real at 1 and 2 ranks over three problem sizes and compare with the
# predictions (with mean kernel times, and with --noise). Run from the workspace root on a quiet machine:
#   bash validation/dev-machine/run.sh [path/to/parsim]
set -euo pipefail
cd "$(dirname "$0")/../.."
P=${1:-target/release/parsim}
D=validation/dev-machine
REPEAT=${REPEAT:-5}

heat=(--set n=256,iters=6000 --set n=512,iters=1500 --set n=1024,iters=400)
jacobi=(--set n=514,iters=800 --set n=1026,iters=200 --set n=2050,iters=50)
net=(--set m=512,n=512,iters=1200 --set m=1024,n=1024,iters=300 --set m=2048,n=2048,iters=75)

"$P" calibrate net --run "mpirun -np 2" --shm-run "mpirun -np 2" --ranks-per-node 2 \
    --name dev-machine \
    --description "this development machine: 2 vCPUs (Intel Xeon), MPICH 4 from Debian, shared memory only" \
    -o $D/machine.toml > $D/calibrate-net.txt
# Per program: time its kernels, then at once run it for real and compare
# (the machine is a VM whose speed drifts over minutes: calibrate close to
# the runs), with mean kernel times and with --noise, each with its own
# real runs.
for prog in heat jacobi net; do
    declare -n sets=$prog
    "$P" calibrate blocks examples/$prog.mpl --ranks 1,2 "${sets[@]}" \
        --kernels examples/kernels.c --concurrent 1,2 --min-time 1 --budget 2 \
        -o $D/blocks-$prog.toml 2> $D/calibrate-blocks-$prog.txt
    "$P" validate examples/$prog.mpl --run "mpirun -np {ranks}" --np 1,2 "${sets[@]}" \
        --kernels examples/kernels.c --blocks $D/blocks-$prog.toml --machine $D/machine.toml \
        --repeat "$REPEAT" | tee $D/validate-$prog.txt
    "$P" validate examples/$prog.mpl --run "mpirun -np {ranks}" --np 1,2 "${sets[@]}" \
        --kernels examples/kernels.c --blocks $D/blocks-$prog.toml --machine $D/machine.toml \
        --repeat "$REPEAT" --noise | tee $D/validate-$prog-noise.txt
done
