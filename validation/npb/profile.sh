#!/usr/bin/env bash
# Count the communication calls of the real NAS Parallel Benchmarks (MPI
# 3.3) per rank and call site with validation/npb/mpicount.c, and write
# validation/npb/profiles/BENCH.CLASS.P.csv, which tests/npb.rs compares
# with the skeletons' `parsim run --call-profile`.
#
#   bash validation/npb/profile.sh NPB3.3-MPI-DIR [CLASS] [PROCS...]
#
# BENCHES="bt sp" picks the benchmarks (default: cg ep ft is lu mg; BT and
# SP run on square process counts: 1 4 9 16).
#
# NPB3.3-MPI-DIR is the NPB 3.3 MPI source tree (NASA's NPB3.3-MPI, e.g.
# from github.com/mbdevpl/nas-parallel-benchmarks); it is copied, so the
# tree is not modified. Needs mpicc, mpif90 (MPICH, gfortran) and addr2line.
set -euo pipefail
src=${1:?usage: profile.sh NPB3.3-MPI-DIR [CLASS] [PROCS...]}
class=${2:-S}
shift $(( $# >= 2 ? 2 : 1 ))
procs=("$@")
[ ${#procs[@]} -gt 0 ] || procs=(1 2 4)
here=$(cd "$(dirname "$0")" && pwd)
out="$here/profiles"
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$src" "$work/npb"
npb="$work/npb"
mkdir -p "$npb/bin"
cp "$here/make.def" "$npb/config/make.def"
mpicc -O2 -shared -fPIC -o "$work/libmpicount.so" "$here/mpicount.c" -ldl
for bench in ${BENCHES:-cg ep ft is lu mg}; do
    for p in "${procs[@]}"; do
        exe="$npb/bin/$bench.$class.$p"
        make -C "$npb" "$bench" NPROCS="$p" CLASS="$class" >"$work/build.log" 2>&1 || {
            cat "$work/build.log" >&2
            exit 1
        }
        rm -rf "$work/counts"
        mkdir "$work/counts"
        (cd "$npb/bin" && MPICOUNT_OUT="$work/counts" LD_PRELOAD="$work/libmpicount.so" \
            mpiexec -n "$p" "$exe" >"$work/run.log" 2>&1) || {
            cat "$work/run.log" >&2
            exit 1
        }
        grep -q "Verification *= *SUCCESSFUL" "$work/run.log" || {
            echo "$bench.$class.$p did not verify" >&2
            cat "$work/run.log" >&2
            exit 1
        }
        # Call sites to file:line (the source file's name only).
        sites=$(cat "$work"/counts/rank.*.csv | grep -v '^rank' | cut -d, -f2 | sort -u)
        declare -A where=()
        for s in $sites; do
            loc=$(addr2line -e "$exe" "$s" | sed 's|.*/||; s| (discriminator.*||')
            where[$s]=$loc
        done
        {
            echo "# NPB 3.3 MPI $bench class $class on $p ranks, counted by validation/npb/mpicount.c"
            echo "rank,site,operation,peer,bytes,comm_size,calls"
            for r in $(seq 0 $((p - 1))); do
                grep -v '^rank' "$work/counts/rank.$r.csv" | while IFS=, read -r rank site op peer bytes size calls; do
                    echo "$rank,${where[$site]},$op,$peer,$bytes,$size,$calls"
                done | sort -t, -k2,2 -k3,3 -k4,4n -k5,5n
            done
        } >"$out/$bench.$class.$p.csv"
        unset where
        echo "wrote $out/$bench.$class.$p.csv"
    done
done
