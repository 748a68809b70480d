#!/usr/bin/env bash
# Records what a parsim binary prints for every example, the IMB and OSU
# suites, the checker programs and the analyses, so that two builds can be
# compared output for output (a refactoring must leave them identical):
#
#   bash scripts/compare-outputs.sh OLD_BINARY old-dir
#   bash scripts/compare-outputs.sh target/release/parsim new-dir
#   diff -r old-dir new-dir
#
# Each case writes NAME.out (stdout), NAME.err (stderr) and NAME.rc (exit
# code); files it writes (traces, matrices, pages) are copied in as
# NAME.FILE. Wall-clock figures (`wall_seconds`, events per second, build
# times) are blanked, since they differ between any two runs.
set -uo pipefail
cd "$(dirname "$0")/.."

if [ $# -ne 2 ]; then
    echo "usage: $0 PARSIM_BINARY OUTPUT_DIR" >&2
    exit 2
fi
bin=$(realpath "$1")
out=$2
mkdir -p "$out"
out=$(realpath "$out")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
shared=../shared/validation

# Blank what depends on the wall clock or on the temporary directory.
scrub() {
    sed -E \
        -e 's/("wall_seconds": )[0-9.eE+-]+/\1W/g' \
        -e 's/[0-9.]+ ?([kMG]?events\/s|M? ?events per second)/N \1/g' \
        -e 's/(in |took |wall[ a-z]*:? *)[0-9.]+ ?(s|ms|us)\b/\1T/g' \
        -e 's/^#Paraver \([^)]*\)/#Paraver (DATE)/' \
        -e "s#$work#WORK#g"
}

# case NAME ARGS...: run the binary in a fresh directory, keep its outputs.
case_() {
    local name=$1
    shift
    local dir="$work/$name"
    mkdir -p "$dir"
    (cd "$dir" && PARSIM_ROOT="$OLDPWD" "$bin" "$@" >stdout 2>stderr </dev/null
     echo $? >rc)
    scrub <"$dir/stdout" >"$out/$name.out"
    scrub <"$dir/stderr" >"$out/$name.err"
    cp "$dir/rc" "$out/$name.rc"
    for f in "$dir"/*; do
        case "$(basename "$f")" in stdout | stderr | rc) continue ;; esac
        scrub <"$f" >"$out/$name.$(basename "$f")"
    done
}

r=$PWD
m=$r/examples/machines

# The README's programs on every shipped machine.
for mach in default-infiniband ekss1 fast-ethernet myrinet sci; do
    case_ "heat-$mach" run "$r/examples/heat.mpl" --ranks 8 --param iters=20 --machine "$m/$mach.toml"
    case_ "jacobi-$mach" run "$r/examples/jacobi.mpl" --ranks 6 --param iters=20 --machine "$m/$mach.toml" --format json
    case_ "net-$mach" run "$r/examples/net.mpl" --ranks 6 --param iters=20 --machine "$m/$mach.toml"
    case_ "machine-$mach" machine "$m/$mach.toml"
done
case_ machine-default machine
case_ heat-default run "$r/examples/heat.mpl" --ranks 16 --param iters=50
case_ heat-json run "$r/examples/heat.mpl" --ranks 16 --param iters=50 --format json
case_ heat-allranks run "$r/examples/heat.mpl" --ranks 40 --param iters=5 --all-ranks
case_ heat-many run "$r/examples/heat.mpl" --ranks 3000 --param iters=3
case_ heat-ppn run "$r/examples/heat.mpl" --ranks 16 --param iters=5 --ppn 2 --machine "$m/myrinet.toml"
for b in 0 1024 65536 1048576; do
    case_ "pingpong-$b" run "$r/examples/pingpong.mpl" --ranks 2 --param bytes=$b --machine "$m/myrinet.toml"
done
case_ deadlock run "$r/examples/deadlock.mpl" --ranks 2
case_ deadlock-json run "$r/examples/deadlock.mpl" --ranks 2 --format json
case_ net-critical run "$r/examples/net.mpl" --ranks 16 --param iters=5 --critical-path
case_ heat-critical run "$r/examples/heat.mpl" --ranks 8 --param iters=5 --critical-path --machine "$m/fast-ethernet.toml"
case_ net-trace run "$r/examples/net.mpl" --ranks 6 --param iters=3 --trace net.json
case_ net-paraver run "$r/examples/net.mpl" --ranks 6 --param iters=3 --trace net.prv
case_ net-matrix run "$r/examples/net.mpl" --ranks 16 --param iters=3 --comm-matrix net.csv
case_ graph-heat graph "$r/examples/heat.mpl"
case_ graph-net graph "$r/examples/net.mpl"

# Calibrated kernel times, drawn with noise, and their spread.
dm=$r/validation/dev-machine
case_ noise-text run "$r/examples/heat.mpl" --ranks 4 --param n=512 --param iters=20 \
    --machine "$dm/machine.toml" --blocks "$dm/blocks-heat.toml" --noise 3 --samples 5
case_ noise-json run "$r/examples/heat.mpl" --ranks 4 --param n=512 --param iters=20 \
    --machine "$dm/machine.toml" --blocks "$dm/blocks-heat.toml" --noise 3 --samples 5 --format json
case_ noise-sweep sweep "$r/examples/heat.mpl" --ranks 1,2,4 --param n=512 --param iters=20 \
    --machine "$dm/machine.toml" --blocks "$dm/blocks-heat.toml" --noise 3 --samples 4 --format json

# The IMB suite (PMB 2.2 timing) on EKSS-1 and the OSU method on the default.
for f in "$r"/examples/imb/*.mpl; do
    b=$(basename "$f" .mpl)
    case_ "imb-$b" run "$f" --ranks 4 --machine "$m/ekss1.toml" --ppn 1 --param max_bytes=65536 --param max_reps=20
done
case_ imb-alltoall-active run "$r/examples/imb/alltoall.mpl" --ranks 8 --machine "$m/ekss1.toml" --ppn 2 \
    --param active=4 --param max_bytes=4096 --param max_reps=10
for f in "$r"/examples/osu/*.mpl; do
    b=$(basename "$f" .mpl)
    if [ "$b" = barrier ]; then
        case_ "osu-$b" run "$f" --ranks 4 --param iters=20 --param skip=2
    elif [ "$b" = latency ]; then
        case_ "osu-$b" run "$f" --ranks 2 --param max_bytes=65536
    else
        case_ "osu-$b" run "$f" --ranks 4 --param max_bytes=4096 --param iters_small=20 --param skip_small=2
    fi
done

# The checker, plain and exploring, text and JSON.
for f in "$r"/tests/check/*.mpl; do
    b=$(basename "$f" .mpl)
    n=3
    grep -q '^// ranks: ' "$f" && n=$(sed -n 's#^// ranks: \([0-9]*\).*#\1#p' "$f" | head -1)
    case_ "check-$b" check "$f" --ranks "$n"
    case_ "check-$b-explore" check "$f" --ranks "$n" --explore
    case_ "check-$b-json" check "$f" --ranks "$n" --format json
done
case_ check-deadlock check "$r/examples/deadlock.mpl" --ranks 2

# Studies, validation against the measured tables, calibration from a table.
case_ sweep sweep "$r/examples/heat.mpl" --ranks 1,2,4,8,16 --param iters=10 --weak \
    --machine "$m/myrinet.toml" --machine "$m/fast-ethernet.toml" --plot sweep.svg
case_ sweep-set sweep "$r/examples/heat.mpl" --ranks 1,2,4,8,16,32,64,128 --param iters=5 \
    --set network.bandwidth=1GB/s,10GB/s --format json
if [ -d "$shared/ekss1" ]; then
    case_ validate-alltoall validate "$r/examples/imb/alltoall.mpl" --machine "$m/ekss1.toml" --ppn 1 \
        --table "$(realpath $shared/ekss1/pmb_alltoall_1ppn.csv)"
    case_ validate-barrier validate "$r/examples/imb/barrier.mpl" --machine "$m/ekss1.toml" --ppn 1 \
        --table "$(realpath $shared/ekss1/pmb_barrier_1ppn.csv)"
    case_ calibrate-ekss1 calibrate net "$(realpath $shared/ekss1/pmb_pingpong_1ppn.csv)" --output fitted.toml
fi
case_ report report "$r/examples/heat.mpl" --ranks 8 --param n=200 --param iters=10 \
    --machine "$m/fast-ethernet.toml" --sweep 1,2,4,8 -o page.html

# Bad input: usage and input errors.
case_ bad-ranks run "$r/examples/heat.mpl" --ranks 0
case_ bad-param run "$r/examples/heat.mpl" --ranks 2 --param nosuch=1
case_ bad-file run "$r/examples/nosuch.mpl" --ranks 2
case_ check-bad-ranks check "$r/examples/heat.mpl" --ranks 0
# Tables that cannot be read: the errors name the options that settle them.
printf 'bytes,a_usec,b_usec\n0,1,2\n1,1,2\n' >"$work/ambiguous.csv"
printf 'hello\nnothing here\n' >"$work/unknown.txt"
printf 'bytes,t_usec\n0,1\n0,2\n' >"$work/duplicate.csv"
printf 'x,y\n1,2\n' >"$work/nocolumn.csv"
for t in ambiguous.csv unknown.txt duplicate.csv nocolumn.csv; do
    case_ "bad-table-$t" calibrate net "$work/$t"
    case_ "bad-validate-$t" validate "$r/examples/imb/alltoall.mpl" --table "$work/$t" --param max_bytes=1
done
# Fits and machine files that cannot be made.
printf 'bytes,t_usec\n0,5\n1024,6\n2048,7\n' >"$work/pingpong.csv"
case_ bad-smp-without-shm calibrate net "$work/pingpong.csv" --ranks-per-node 2
case_ bad-shm-without-smp calibrate net "$work/pingpong.csv" --shm "$work/pingpong.csv"
case_ bad-eager-limit calibrate net "$work/pingpong.csv" --eager-limit "32 B"
echo "wrote $(ls "$out" | wc -l) files to $out"
