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
# from 2 to 6 decimals: class S runs take milliseconds), CG's matrix
# product as a kernel on each class's real matrix (below), then runs
# validation/npb/run.py (ROUNDS rounds of REPEAT interleaved repetitions;
# see there) on two machines calibrated right before it. Writes
# validation/npb/results/ (NPB_OUT=DIR writes DIR instead). BIND=yes (the
# default) binds every real run to cores (run.py --bind; VALIDATION.md
# 7.7), BIND=no leaves them where the scheduler puts them.
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
# CG's matrix product on the real matrix (examples/npb/cg.mpl's row_ops,
# VALIDATION.md 7.6): a one-rank CG of each class with a dump of its
# block added after makea and the column shift (untimed setup; the copy is
# built apart, the benchmark itself is not changed), and the kernel
# validation/npb/cgmv.f, which run.py times on that block and its column
# halves alone on one core in every round.
kernel=$build/cgkernel
rm -rf "$kernel" "$npb/CGD"
mkdir -p "$kernel"
cp -r "$npb/CG" "$npb/CGD"
python3 - "$npb/CGD/cg.f" <<'PATCH'
import sys
path = sys.argv[1]
s = open(path).read()
shift = """            colidx(k) = colidx(k) - firstcol + 1
         enddo
      enddo
"""
dump = """c     parsim (validation/npb/run.sh): the rank's block in CSR
      open(unit=77, file='cgblock', form='formatted')
      write(77, *) lastrow-firstrow+1, lastcol-firstcol+1,
     >             rowstr(lastrow-firstrow+2)-1
      write(77, *) (rowstr(j), j=1,lastrow-firstrow+2)
      write(77, *) (colidx(k), k=1,rowstr(lastrow-firstrow+2)-1)
      close(77)
"""
assert s.count(shift) == 1, "cg.f: the column shift after makea not found"
open(path, "w").write(s.replace(shift, shift + dump))
PATCH
for class in $classes; do
    make -C "$npb/CGD" CLASS="$class" NPROCS=1 PROGRAM="$kernel/cgdump.$class" \
        >"$build/build.log" 2>&1 || {
        cat "$build/build.log" >&2
        exit 1
    }
    (cd "$kernel" && mpiexec -n 1 "./cgdump.$class" > "cgdump.$class.txt" && mv cgblock "cgblock.$class")
done
fflags=$(sed -n 's/^FFLAGS[[:space:]]*=//p' "$here/make.def")
# shellcheck disable=SC2086 # the flags are words
mpif90 $fflags -o "$kernel/cgmv" "$here/cgmv.f"
# The machine, calibrated right before the rounds (this VM changes between
# launches; a machine of another day is another machine): the 2-rank
# channel as shared memory (2 ranks per node, so that a rank's messages to
# itself and to its peer share its core, as they do), fitted from the
# benchmark's clean ping-pong and, second, from the ping-pong of data its
# sender just wrote (NPB sends what it has just computed).
out=${NPB_OUT:-$here/results}
mkdir -p "$out"
launch=mpirun
if [ "${BIND:-yes}" = yes ]; then launch="mpirun -bind-to core"; fi
for buffers in clean written; do
    "$parsim" calibrate net --run "$launch -np 2" --shm-run "$launch -np 2" --ranks-per-node 2 \
        --buffers "$buffers" -o "$out/machine-$buffers.toml" \
        > "$out/calibrate-$buffers.txt" 2> "$out/calibrate-$buffers.err"
done
bind=()
if [ "${BIND:-yes}" = yes ]; then bind=(--bind); fi
python3 "$here/run.py" --bin "$npb/bin" --parsim "$parsim" --classes $classes "${bind[@]}" \
    --cg-kernel "$kernel" \
    --out "$out" --machine "$out/machine-clean.toml" --machine "$out/machine-written.toml"
