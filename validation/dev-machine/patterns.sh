#!/usr/bin/env bash
# Issue 12 on this machine (VALIDATION.md section 6): calibrate the 2-rank
# channel (MPICH, shared memory) from parsim's own benchmark run for real
# (`calibrate net --run`: PingPong, PingPing, osu_bw's and osu_bibw's
# streams), then run the real OSU Micro-Benchmarks osu_bw, osu_bibw and
# osu_mbw_mr and IMB-MPI1's Exchange and Sendrecv with 2 ranks and compare
# their tables with the predictions. The benchmarks are other people's
# code, built from their sources with mpicc:
#   OMB 5.6.1 (github.com/paklui/osu-micro-benchmarks at b59ae53):
#     for b in osu_bw osu_bibw osu_mbw_mr; do
#       mpicc -O2 -DPACKAGE_VERSION='"5.6.1"' -Iutil -o $OMB/$b \
#           mpi/pt2pt/$b.c util/osu_util.c util/osu_util_mpi.c; done
#   IMB 2021 (github.com/intel/mpi-benchmarks, `make IMB-MPI1 CC=mpicc
#   CXX=mpicxx`).
# Usage, from the workspace root on a quiet machine:
#   bash validation/dev-machine/patterns.sh OMB_DIR IMB-MPI1 [path/to/parsim]
# (PATTERNS_DIR=DIR writes into DIR instead of validation/dev-machine/patterns.)
# When the machine has `send_overhead_per_byte` (LogGOPS's O, from the
# benchmark's SendOverhead table), every table is also predicted without it
# (`validate-nocopy-*.txt`, machine `nocopy.toml`): the A/B of that term on
# the same measurements.
set -euo pipefail
cd "$(dirname "$0")/../.."
OMB=$1
IMB=$2
P=${3:-target/release/parsim}
D=${PATTERNS_DIR:-validation/dev-machine/patterns}
mkdir -p $D

"$P" calibrate net --run "mpirun -np 2" --name dev-machine-patterns \
    --description "this development machine: 2 vCPUs, MPICH 4 from Debian, 2 ranks through shared memory, calibrated as one channel" \
    -o $D/machine.toml > $D/calibrate-net.txt
# OMB 5.6.1 built this way ignores -m and measures up to 128 MiB: the
# skeletons are run to the same size.
mpirun -np 2 "$OMB/osu_bw" > $D/measured-osu_bw.txt
mpirun -np 2 "$OMB/osu_bibw" > $D/measured-osu_bibw.txt
mpirun -np 2 "$OMB/osu_mbw_mr" > $D/measured-osu_mbw_mr.txt
mpirun -np 2 "$IMB" Exchange Sendrecv -npmin 2 > $D/measured-imb.txt
# osu_mbw_mr's pair count and IMB's process blocks set the ranks (validate
# refuses --ranks with them).
for b in bw bibw mbw_mr; do
    ranks=(--ranks 2)
    [ "$b" = mbw_mr ] && ranks=()
    "$P" validate examples/osu/$b.mpl --table $D/measured-osu_$b.txt "${ranks[@]}" \
        -p max_bytes=134217728 --machine $D/machine.toml | tee $D/validate-osu_$b.txt
done
for b in exchange sendrecv; do
    "$P" validate examples/imb/$b.mpl --table $D/measured-imb.txt \
        --machine $D/machine.toml | tee $D/validate-imb_$b.txt
done
# The same tables on the machine of VALIDATION.md 7.4: the 2-rank channel
# measured as shared memory (`--shm-run`, 2 ranks per node), so that it is
# priced as the ranks' cores, not as a network adapter per rank
# (`validate-smp-*.txt`).
"$P" calibrate net --run "mpirun -np 2" --shm-run "mpirun -np 2" --ranks-per-node 2 \
    --name dev-machine-patterns-smp \
    --description "this development machine: 2 vCPUs, MPICH 4 from Debian, 2 ranks through shared memory, calibrated as one node" \
    -o $D/machine-smp.toml > $D/calibrate-net-smp.txt
for b in bw bibw mbw_mr; do
    ranks=(--ranks 2)
    [ "$b" = mbw_mr ] && ranks=()
    "$P" validate examples/osu/$b.mpl --table $D/measured-osu_$b.txt "${ranks[@]}" \
        -p max_bytes=134217728 --machine $D/machine-smp.toml > $D/validate-smp-osu_$b.txt
done
for b in exchange sendrecv; do
    "$P" validate examples/imb/$b.mpl --table $D/measured-imb.txt \
        --machine $D/machine-smp.toml > $D/validate-smp-imb_$b.txt
done
grep -H "^all:" $D/validate-smp-*.txt
if grep -q '^send_overhead_per_byte' $D/machine.toml; then
    sed '/^send_overhead_per_byte/d' $D/machine.toml > $D/nocopy.toml
    for b in bw bibw mbw_mr; do
        ranks=(--ranks 2)
        [ "$b" = mbw_mr ] && ranks=()
        "$P" validate examples/osu/$b.mpl --table $D/measured-osu_$b.txt "${ranks[@]}" \
            -p max_bytes=134217728 --machine $D/nocopy.toml > $D/validate-nocopy-osu_$b.txt
    done
    for b in exchange sendrecv; do
        "$P" validate examples/imb/$b.mpl --table $D/measured-imb.txt \
            --machine $D/nocopy.toml > $D/validate-nocopy-imb_$b.txt
    done
    grep -h "^all:" $D/validate-nocopy-*.txt
fi
