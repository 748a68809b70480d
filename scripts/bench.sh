#!/usr/bin/env bash
# The speed benchmarks of BENCHMARKS.md, as one command:
#
#   bash scripts/bench.sh [--quick] [--only REGEX] PARSIM [BASELINE]
#
# runs every workload below with PARSIM and prints a Markdown table: events,
# event-loop wall time (parsim --stats), the whole process's wall time and
# peak resident memory (/usr/bin/time), and the predicted time. With a
# BASELINE binary the two are run alternately, workload by workload (an A/B
# in one run, so that the machine's drift hits both alike), and the table
# gets both figures and whether the predictions agree to the last digit.
#
# --quick stops W1 and W2 at 2^16 ranks and skips the runs over a minute;
# --only keeps the workloads whose name matches REGEX (grep -E).
#
# The workloads: the anchor workloads W1 and W2 (bench/, the same programs
# and machine as the LogGOPSim and SMPI figures of ../shared/bench) at 2^10
# to 2^20 ranks; heat.mpl on the default machine; the IMB Alltoall skeleton
# at 1,024 ranks; a communicator split and a ring allgather at 9,216 ranks,
# 36 per node; one rank waiting for 32,767 receives (bench/fanin.mpl), posted
# before the envelopes arrive or, `late`, after.
# Needs GNU time (Debian package `time`).
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0
only=.
while [ $# -gt 0 ]; do
    case $1 in
        --quick) quick=1; shift ;;
        --only) only=$2; shift 2 ;;
        -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
        *) break ;;
    esac
done
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: $0 [--quick] [--only REGEX] PARSIM [BASELINE]" >&2
    exit 2
fi
new=$(realpath "$1")
old=${2:+$(realpath "$2")}
if [ ! -x /usr/bin/time ]; then
    echo "$0: needs GNU time at /usr/bin/time (apt-get install time)" >&2
    exit 1
fi

# name|arguments (run from the repository root)
workloads=()
for k in 10 12 14 16 18 20; do
    if [ $quick = 1 ] && [ $k -gt 16 ]; then continue; fi
    p=$((1 << k))
    workloads+=("W1 2^$k|bench/w1_allreduce_rd.mpl --machine bench/anchor.toml --ranks $p")
done
for k in 10 12 14 16 18 20; do
    if [ $quick = 1 ] && [ $k -gt 16 ]; then continue; fi
    p=$((1 << k))
    workloads+=("W2 2^$k|bench/w2_stencil2d.mpl --machine bench/anchor.toml --ranks $p")
done
workloads+=("heat 1024 x 1000|examples/heat.mpl --ranks 1024")
workloads+=("heat 65536 x 100|examples/heat.mpl --ranks 65536 --param iters=100")
if [ $quick = 0 ]; then
    workloads+=("heat 65536 x 1000|examples/heat.mpl --ranks 65536")
fi
workloads+=("IMB Alltoall 1024 (<= 1 KiB, 10 reps)|examples/imb/alltoall.mpl --ranks 1024 -p max_bytes=1024 -p max_reps=10")
workloads+=("split + barrier 9216, 36/node|bench/split.mpl --ranks 9216 --ppn 36")
workloads+=("fan-in 32768, in order|bench/fanin.mpl --ranks 32768")
workloads+=("fan-in 32768, reversed|bench/fanin.mpl --ranks 32768 -p order=1")
workloads+=("fan-in 32768, late, in order|bench/fanin.mpl --ranks 32768 -p late=1")
workloads+=("fan-in 32768, late, reversed|bench/fanin.mpl --ranks 32768 -p late=1 -p order=1")
if [ $quick = 0 ]; then
    workloads+=("ring allgather 16 B 9216, 36/node|bench/allgather_ring.mpl --ranks 9216 --ppn 36")
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# measure BINARY ARGS: prints "events|loop s|wall s|peak MiB|predicted"
measure() {
    local bin=$1
    shift
    # shellcheck disable=SC2086 # the arguments are words on purpose
    if ! /usr/bin/time -f "%e %M" -o "$tmp/time" "$bin" run $* --stats --no-memory-check \
        >"$tmp/out" 2>"$tmp/err"; then
        echo "failed|||"
        return
    fi
    local events loop wall kib pred
    events=$(sed -nE 's/^stats: ([0-9]+) events in ([0-9.]+) s wall.*/\1/p' "$tmp/err" | tail -1)
    loop=$(sed -nE 's/^stats: ([0-9]+) events in ([0-9.]+) s wall.*/\2/p' "$tmp/err" | tail -1)
    read -r wall kib <"$tmp/time"
    pred=$(sed -nE 's/^predicted run time: ([0-9.e+-]+) s.*/\1/p' "$tmp/out" | tail -1)
    printf '%s|%s|%s|%s|%s\n' "$events" "$loop" "$wall" \
        "$(awk -v k="$kib" 'BEGIN { printf "%.0f", k / 1024 }')" "$pred"
}

date -u +"%Y-%m-%d %H:%M UTC"
echo "machine: $(nproc) cores, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)"
echo "parsim: $new${old:+, baseline: $old}"
echo
if [ -z "$old" ]; then
    echo "| workload | events | event loop | process wall | peak RSS | predicted (s) |"
    echo "| --- | ---: | ---: | ---: | ---: | ---: |"
else
    echo "| workload | events | wall, baseline | wall, new | peak RSS, baseline | peak RSS, new | same prediction |"
    echo "| --- | ---: | ---: | ---: | ---: | ---: | --- |"
fi
for w in "${workloads[@]}"; do
    name=${w%%|*}
    args=${w#*|}
    if ! echo "$name" | grep -Eq -- "$only"; then continue; fi
    if [ -z "$old" ]; then
        IFS='|' read -r ev loop wall mib pred <<<"$(measure "$new" "$args")"
        echo "| $name | $ev | $loop s | $wall s | $mib MiB | $pred |"
    else
        IFS='|' read -r oev _ owall omib opred <<<"$(measure "$old" "$args")"
        IFS='|' read -r ev _ wall mib pred <<<"$(measure "$new" "$args")"
        same=yes
        if [ "$opred" != "$pred" ] || [ "$oev" != "$ev" ]; then
            same="no: $opred vs $pred, $oev vs $ev events"
        fi
        echo "| $name | $ev | $owall s | $wall s | $omib MiB | $mib MiB | $same |"
    fi
done
