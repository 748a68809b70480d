#!/usr/bin/env bash
# Issue 13 on the Alaska cluster (VALIDATION.md sections 5.2 and 5.3):
# osu_allreduce, osu_allgather and osu_alltoall at 64 ranks (32 per node, 2
# nodes), predicted from each environment's point-to-point tables only: the
# machine of section 5 (osu_latency + osu_bw + osu_bibw; Intel MPI without
# its osu_bibw, a library pathology), with the library whose rules select
# the algorithms: Open MPI 4.0.3 `openmpi-4` (coll/tuned's fixed rules; 4.0
# has no han) and Intel MPI 2019.7 `intelmpi-2019` (its default tuning
# table, docs/sources/intelmpi-tuning.md). Assumed, not measured: the
# channel inside a node. Alaska has no intra-node latency table, so [shm]
# is fitted from the network's osu_latency as in section 5.1 (an upper
# bound: shared memory is faster than the adapter); and nothing measures
# the call overhead or the reduction there (both 0). No collective table is
# an input. Three machines per environment:
#   1gbs     section 5.2's: node.memcpy at the old default, 1 GB/s
#   p2p      node.memcpy as calibrate net now bounds it from the intra-node
#            table (section 5.3)
#   uniband  p2p + the intra-node blocks of IMB Uniband (2 to 32 processes
#            of a 32-per-node job: 1 to 16 pairs inside one node) as
#            --shm-multi-pair, for [shm] node_bandwidth
#   pairs    uniband + osu_mbw_mr of 1, 2, 4, 8, 16 and 32 pairs between the
#            two nodes as --multi-pair, for what the node's adapter takes
#            (node_gap, node_bandwidth; section 5.1): still point-to-point
#            tables of the system
# From the workspace root, after `cargo build --release`:
#   bash validation/alaska-coll.sh OUT_DIR [path/to/parsim]
# VARIANTS="p2p ..." and ENVS="ib-gcc9-openmpi4-ucx ..." run a subset.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=$1
P=${2:-target/release/parsim}
S=../shared/validation/alaska
run_env() { # ENV BIBW(yes|no) LIBRARY
  local env=$1 bibw=$2 lib=$3
  local A=$S/$env/omb
  local extra=()
  if [ "$bibw" = yes ]; then extra=(--bistream "$A/Osu_bibw/rfm_Osu_bibw_job.out"); fi
  local pairs=()
  for k in 1 2 4 8 16 32; do
    pairs+=(--multi-pair "$A/Osu_mbw_mr__$k/rfm_Osu_mbw_mr__${k}_job.out")
  done
  for variant in ${VARIANTS:-1gbs p2p uniband pairs}; do
    local more=()
    case $variant in
      1gbs) more=(--memcpy "1 GB/s");;
      uniband) more=(--shm-multi-pair "$S/$env/imb/IMB_Uniband_1_0/rfm_IMB_Uniband_1_0_job.out");;
      pairs) more=(--shm-multi-pair "$S/$env/imb/IMB_Uniband_1_0/rfm_IMB_Uniband_1_0_job.out" "${pairs[@]}");;
    esac
    local out=$OUT/$env/$variant
    mkdir -p "$out"
    "$P" calibrate net "$A/Osu_latency/rfm_Osu_latency_job.out" \
        --stream "$A/Osu_bw/rfm_Osu_bw_job.out" "${extra[@]}" \
        --ranks-per-node 32 --shm "$A/Osu_latency/rfm_Osu_latency_job.out" "${more[@]}" \
        --collective library=$lib --name "alaska-$env" --quiet \
        -o "$out/machine.toml" > "$out/calibrate.txt" 2> "$out/calibrate.err"
    for b in allreduce allgather alltoall; do
      "$P" validate "examples/osu/$b.mpl" --table "$A/Osu_$b/rfm_Osu_${b}_job.out" \
          --machine "$out/machine.toml" --ranks 64 --quiet > "$out/$b.txt"
      echo "$env $variant $lib $b $(grep '^all:' "$out/$b.txt")"
    done
  done
}
# ENVS="ENV ..." runs only those environments (default: all four).
for spec in "ib-gcc9-openmpi4-ucx yes openmpi-4" "roce-gcc9-openmpi4-ucx yes openmpi-4" \
            "ib-gcc9-impi-verbs no intelmpi-2019" "roce-gcc9-impi-verbs no intelmpi-2019"; do
    read -r env bibw lib <<< "$spec"
    if [ -z "${ENVS:-}" ] || [[ " $ENVS " == *" $env "* ]]; then
        run_env "$env" "$bibw" "$lib"
    fi
done
