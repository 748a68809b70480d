#!/usr/bin/env bash
# Issue 13 on this machine (VALIDATION.md section 4.3): the real IMB-MPI1
# collectives with MPICH 4 at its defaults, 2 ranks, against parsim's
# predictions on a machine calibrated by `calibrate net --run` (which also
# measures a 2-rank barrier and MPI_Reduce_local and names the library).
# No collective table is an input.
#
# The benchmark is IMB-MPI1 from github.com/intel/mpi-benchmarks (the
# snapshot fetched 2026-11-25, 46e8757), built as its Makefile does:
#   make IMB-MPI1 CC=mpicc CXX=mpicxx
# It times each collective call alone with a barrier after it (-sync 1,
# root_shift 0), so the skeletons run with --param timing=2017; the same
# predictions with PMB 2.2's loop timing (timing=2002) are shown beside.
#
# This VM runs in one of two states: a 0-byte ping-pong between its two
# vCPUs takes about 0.2 us in one ("fast") and 0.7 us in the other
# ("slow"), a 2-rank MPI_Barrier 0.5 us or 1.5 us, and every other time
# moves with them (section 4.1). The state changes between launches and
# sometimes within one (a netbench launch measured its PingPong fast and its
# Barrier slow). A machine calibrated in one state cannot predict a run in
# the other, so the script
# - runs `calibrate net --run` up to 8 times and keeps, per state, the first
#   netbench launch whose PingPong, PingPing and Barrier all show that state
#   (0-byte times below 0.4, 0.4 and 0.9 us: fast; above: slow), and fits
#   that state's machine from that one launch's tables with `calibrate net`
#   (network and shared memory from the same launch: on this VM both are
#   two ranks of one node; memcpy as --run measured it; library as --run
#   named it);
# - runs each benchmark 8 times as `IMB-MPI1 PingPong BENCH PingPong`,
#   keeps the launches whose two PingPongs show the same state, and per
#   state with at least 2 launches each size's median t_min, t_max, t_avg;
# - compares each state's benchmarks with that state's machine (and, since
#   section 4.13, with the same machine without its written tables,
#   `machine-STATE-clean.toml`; the page-fault cost is fitted too).
# Usage, from the workspace root on a quiet machine (nothing else running):
#   bash validation/dev-machine/imb-real.sh IMB_DIR [path/to/parsim [OUT_DIR]]
set -euo pipefail
cd "$(dirname "$0")/../.."
IMB=$1
P=${2:-target/release/parsim}
D=${3:-validation/dev-machine/imb-real}
mkdir -p $D/runs $D/calibrations
# The 0-byte times of the blocks named $2 of an IMB-format output; a time's
# state against a limit; a netbench launch's state (or "mixed").
zero() {
    awk -v b="$2" '/Benchmarking/ {on = ($3 == b)} on && $1 == "0" && NF >= 3 {print $3}' "$1"
}
state_of() { awk -v t="$1" -v lim="$2" 'BEGIN {print (t < lim ? "fast" : "slow")}'; }
launch_state() {
    local pp=$(zero "$1" PingPong | head -1) pi=$(zero "$1" PingPing | head -1) ba=$(zero "$1" Barrier | head -1)
    local a=$(state_of $pp 0.4) b=$(state_of $pi 0.4) c=$(state_of $ba 0.9)
    if [ $a = $b ] && [ $a = $c ]; then echo $a; else echo mixed; fi
}
for k in 1 2 3 4 5 6 7 8; do
    [ -f $D/machine-fast.toml ] && [ -f $D/machine-slow.toml ] && break
    c=$D/calibrations/$k
    mkdir -p $c
    "$P" calibrate net --run "mpirun -np 2" --shm-run "mpirun -np 2" --ranks-per-node 2 \
        --name dev-machine-imb \
        --description "this development machine: 2 vCPUs, MPICH 4.0.2 (ch4:ucx) from Debian, shared memory" \
        -o $c/machine.toml > $c/calibrate-net.txt 2> $c/stderr.txt
    lib=$(sed -n 's/^library = "\(.*\)"$/\1/p' $c/machine.toml)
    memcpy=$(sed -n 's/^memcpy = "\(.*\)"$/\1/p' $c/machine.toml)
    for f in $c/dev-machine-imb.network.netbench.txt $c/dev-machine-imb.shm.netbench.txt; do
        s=$(launch_state $f)
        echo "calibration $k: $(basename $f): $s"
        if [ $s != mixed ] && [ ! -f $D/machine-$s.toml ]; then
            "$P" calibrate net $f --format imb --pingping $f --stream $f --bistream $f \
                --stream-format imb --shm $f --shm-format imb --ranks-per-node 2 \
                --shm-barrier $f --reduce-local $f --page-fault $f --memcpy "$memcpy" --collective library=$lib \
                --name dev-machine-imb-$s \
                --description "this development machine in its $s state: 2 vCPUs, MPICH 4.0.2 (ch4:ucx), one netbench launch ($f)" \
                -o $D/machine-$s.toml > $D/calibrate-net-$s.txt
            # Without the channels' written tables (section 4.13).
            awk '/^\[/ { skip = ($0 ~ /^\[\[?[a-z]+\.written/) } !skip' $D/machine-$s.toml \
                > $D/machine-$s-clean.toml
        fi
    done
done
B="Allreduce Alltoall Bcast Reduce Allgather Barrier"
for r in 1 2 3 4 5 6 7 8; do
    for b in $B; do
        f=$D/runs/$b.$r.txt
        mpirun -np 2 "$IMB/IMB-MPI1" PingPong $b PingPong -npmin 2 -msglog 0:22 > $f
        first=$(state_of $(zero $f PingPong | head -1) 0.4)
        last=$(state_of $(zero $f PingPong | tail -1) 0.4)
        if [ $first = $last ]; then mv $f $D/runs/$b.$r.$first.txt; else mv $f $D/runs/$b.$r.mixed.txt; fi
    done
done
# Per state and size, the median of the runs of each column of the
# benchmark's block, in IMB's format.
for b in $B; do
    for state in fast slow; do
        runs=("$D"/runs/$b.*.$state.txt)
        if [ ! -e "${runs[0]}" ] || [ ${#runs[@]} -lt 2 ]; then
            echo "$b $state: fewer than 2 launches, not compared"
            continue
        fi
        python3 validation/dev-machine/imb_median.py "$D/measured-$b-$state.txt" \
            "${#runs[@]} launches in the $state state; per size the median of each column" \
            $b "${runs[@]}"
    done
done
for state in fast slow; do
    [ -f $D/machine-$state.toml ] || { echo "no calibration in the $state state"; continue; }
    for b in $B; do
        [ -f $D/measured-$b-$state.txt ] || continue
        f=$(echo $b | tr A-Z a-z)
        # IMB 2017+ (the binary run above): the same process ran a PingPong
        # up to 4 MiB first, whose buffers moved glibc's thresholds
        # (section 4.16).
        "$P" validate examples/imb/$f.mpl --table $D/measured-$b-$state.txt --param timing=2017 \
            --param after_pingpong=4194304 \
            --machine $D/machine-$state.toml > $D/validate-$f-$state-2017.txt
        echo "$state $b timing=2017 $(grep '^all:' $D/validate-$f-$state-2017.txt)"
        "$P" validate examples/imb/$f.mpl --table $D/measured-$b-$state.txt --param timing=2002 \
            --machine $D/machine-$state.toml > $D/validate-$f-$state-2002.txt
        echo "$state $b timing=2002 $(grep '^all:' $D/validate-$f-$state-2002.txt)"
        "$P" validate examples/imb/$f.mpl --table $D/measured-$b-$state.txt --param timing=2017 \
            --param after_pingpong=4194304 \
            --machine $D/machine-$state-clean.toml > $D/validate-$f-$state-2017-clean.txt
        echo "$state $b timing=2017 clean $(grep '^all:' $D/validate-$f-$state-2017-clean.txt)"
    done
done
