#!/usr/bin/env bash
# The NAS Parallel Benchmark skeletons (examples/npb/) against real runs
# of NPB 3.3 MPI on this machine, with a protocol that survives a VM whose
# speed drifts (VALIDATION.md section 6):
#
#   bash validation/npb/run.sh NPB3.3-MPI-DIR [path/to/parsim]
#
# NPB3.3-MPI-DIR is NASA's NPB3.3-MPI source tree (e.g. from
# github.com/mbdevpl/nas-parallel-benchmarks); it is copied, not modified.
# Builds CG, EP, FT, IS, LU and MG for the classes in $CLASSES (default
# "S W") at 1 and 2 ranks with mpif90/mpicc (the results' printout patched
# from 2 to 6 decimals: class S runs take milliseconds), then runs
# validation/npb/run.py (ROUNDS rounds of REPEAT interleaved repetitions;
# see there) on two machines calibrated right before it. Writes
# validation/npb/results/.
set -euo pipefail
src=${1:?usage: run.sh NPB3.3-MPI-DIR [parsim]}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
parsim=${2:-$root/target/release/parsim}
classes=${CLASSES:-S W}
build=${NPB_BUILD:-$(mktemp -d)}
mkdir -p "$build"
rm -rf "$build/npb"
cp -r "$src" "$build/npb"
npb="$build/npb"
mkdir -p "$npb/bin"
cp "$here/make.def" "$npb/config/make.def"
# Six decimals instead of two in "Time in seconds =" (MPI_Wtime resolves
# far below a millisecond); nothing that is timed changes.
sed -i 's/format(. Time in seconds = .,12x, f12.2)/format('"'"' Time in seconds = '"'"',12x, f12.6)/' \
    "$npb/common/print_results.f"
sed -i 's/Time in seconds =             %12.2f/Time in seconds =             %12.6f/' \
    "$npb/common/c_print_results.c"
grep -q 'f12.6' "$npb/common/print_results.f"
grep -q '%12.6f' "$npb/common/c_print_results.c"
for class in $classes; do
    for bench in cg ep ft is lu mg; do
        for p in 1 2; do
            make -C "$npb" "$bench" NPROCS="$p" CLASS="$class" >"$build/build.log" 2>&1 || {
                cat "$build/build.log" >&2
                exit 1
            }
        done
    done
done
echo "built NPB in $npb/bin" >&2
# The machine, calibrated right before the rounds (this VM changes between
# launches; a machine of another day is another machine): the 2-rank
# channel as shared memory (2 ranks per node, so that a rank's messages to
# itself and to its peer share its core, as they do), fitted from the
# benchmark's clean ping-pong and, second, from the ping-pong of data its
# sender just wrote (NPB sends what it has just computed).
out=$here/results
mkdir -p "$out"
for buffers in clean written; do
    "$parsim" calibrate net --run "mpirun -np 2" --shm-run "mpirun -np 2" --ranks-per-node 2 \
        --buffers "$buffers" -o "$out/machine-$buffers.toml" \
        > "$out/calibrate-$buffers.txt" 2> "$out/calibrate-$buffers.err"
done
python3 "$here/run.py" --bin "$npb/bin" --parsim "$parsim" --classes $classes \
    --out "$out" --machine "$out/machine-clean.toml" --machine "$out/machine-written.toml"
