#!/usr/bin/env bash
# The OSU Micro-Benchmarks' method on this machine, as recorded in
# VALIDATION.md section 4: calibrate the network (MPICH, shared memory),
# build the skeletons of examples/osu as real MPI programs (`parsim
# build-mpi`), run them with 2 ranks and compare their tables, line by line,
# with the predictions on the machine just calibrated. Run from the
# workspace root on a quiet machine:
#   bash validation/dev-machine/osu.sh [path/to/parsim]
set -euo pipefail
cd "$(dirname "$0")/../.."
P=${1:-target/release/parsim}
D=validation/dev-machine/osu
mkdir -p $D
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$P" calibrate net --run "mpirun -np 2" --shm-run "mpirun -np 2" --ranks-per-node 2 \
    --name dev-machine-osu \
    --description "this development machine: 2 vCPUs (Intel Xeon), MPICH 4 from Debian, shared memory only" \
    -o $D/machine.toml > $D/calibrate-net.txt
for b in latency bcast reduce allreduce gather scatter allgather alltoall barrier; do
    "$P" build-mpi examples/osu/$b.mpl -o "$tmp/$b" > /dev/null
    mpirun -np 2 "$tmp/$b" > $D/measured-$b.txt
    "$P" validate examples/osu/$b.mpl --table $D/measured-$b.txt --ranks 2 \
        --machine $D/machine.toml | tee $D/validate-$b.txt
done
