#!/usr/bin/env bash
# Intel MPI's collectives on this machine (VALIDATION.md section 4.5): the
# Intel MPI 2021.13 runtime from PyPI (the impi-rt wheel: libmpi.so.12,
# mpiexec.hydra, libfabric and Intel's own IMB-MPI1), 2 ranks of the VM.
# Calibrates with parsim's network benchmark built against Intel's libmpi
# (MPICH's headers: the MPICH ABI) and run under Intel's mpiexec, twice:
# `library = "intelmpi-2021"` with its collectives inside a node through
# shared memory (the default) and with `shared_memory = false` (node parts
# as messages, what parsim did before); then predicts Intel's IMB-MPI1
# Allreduce, Reduce, Bcast and Barrier (3 launches, per size the median)
# with the skeletons of examples/imb/ (IMB 2017+ timing).
# From the workspace root, after `cargo build --release`:
#   bash validation/dev-machine/impi-shm.sh [OUT_DIR] [path/to/parsim]
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-validation/dev-machine/impi-shm}
P=${2:-target/release/parsim}
mkdir -p "$OUT"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
pip download impi-rt==2021.13.1 --no-deps -q -d "$W"
unzip -q "$W"/impi_rt-*.whl -d "$W"
R=$W/impi_rt-2021.13.1.data/data
chmod +x "$R"/bin/* "$R"/bin/libfabric/*
export I_MPI_ROOT="$R" PATH="$R/bin:$PATH" LD_LIBRARY_PATH="$R/lib:$R/lib/libfabric" \
       FI_PROVIDER_PATH="$R/lib/libfabric/prov"
gcc -O2 -I/usr/include/x86_64-linux-gnu/mpich calibrate/src/netbench.c \
    -L"$R/lib" -lmpi -Wl,-rpath,"$R/lib" -o "$W/netbench"
mpiexec -n 2 "$W/netbench" > "$OUT/netbench.txt"
for k in 1 2 3; do
    mpiexec -n 2 IMB-MPI1 PingPong Allreduce Reduce Bcast Barrier PingPong \
        -npmin 2 -msglog 0:20 > "$OUT/imb.$k.txt"
done
for b in Allreduce Reduce Bcast Barrier; do
    python3 validation/dev-machine/imb_median.py "$OUT/measured-$b.txt" \
        "$(ls "$OUT"/imb.*.txt | wc -l) launches of Intel MPI 2021.13's IMB-MPI1 on 2 ranks; per size the median of each column" \
        $b "$OUT"/imb.*.txt
done
f=$OUT/netbench.txt
memcpy=$(awk '/# parsim netbench: memcpy/ {printf "%.0f MB/s", $5 / 1e6}' "$f")
for variant in shm messages; do
    extra=()
    if [ $variant = messages ]; then extra=(--collective shared_memory=false); fi
    "$P" calibrate net "$f" --format imb --pingping "$f" --stream "$f" --bistream "$f" \
        --stream-format imb --shm "$f" --shm-format imb --ranks-per-node 2 \
        --shm-barrier "$f" --reduce-local "$f" --flag-latency "$f" --memcpy "$memcpy" \
        --collective library=intelmpi-2021 "${extra[@]}" --name "impi-vm-$variant" \
        --quiet -o "$OUT/machine-$variant.toml" > "$OUT/calibrate-$variant.txt" 2>&1
    for b in Allreduce Reduce Bcast Barrier; do
        g=$(echo $b | tr A-Z a-z)
        "$P" validate "examples/imb/$g.mpl" --table "$OUT/measured-$b.txt" --param timing=2017 \
            --machine "$OUT/machine-$variant.toml" > "$OUT/validate-$g-$variant.txt"
        echo "$variant $b $(grep '^all:' "$OUT/validate-$g-$variant.txt")"
    done
done
