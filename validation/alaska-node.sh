#!/usr/bin/env bash
# Issue 12 on the Alaska cluster (VALIDATION.md section 5.1): what a node's
# ranks share. Each environment is calibrated from its own point-to-point
# tables in four ways:
#   p2p      osu_latency, osu_bw and osu_bibw (section 5's inputs);
#   multi1   the same and the 1-pair osu_mbw_mr (`--multi-pair`): the
#            issue's inputs;
#   multi8   the same and the 8-pair osu_mbw_mr (16 and 32 held out);
#   multiall the same and osu_mbw_mr at every pair count (1-32).
# Each predicts osu_mbw_mr at 1-32 pairs; p2p and multiall also IMB
# Uniband and Biband at 2-64 ranks (held out from both). Intel MPI is
# calibrated without its osu_bibw (section 5: a library pathology).
# Takes about 40 minutes on a 2-vCPU machine. From the workspace root,
# after `cargo build --release`:
#   bash validation/alaska-node.sh OUT_DIR [path/to/parsim]
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=$1
P=${2:-target/release/parsim}
S=../shared/validation/alaska
run_env() { # ENV BIBW(yes|no)
  local env=$1 bibw=$2
  local A=$S/$env/omb I=$S/$env/imb
  local extra=()
  if [ "$bibw" = yes ]; then extra=(--bistream "$A/Osu_bibw/rfm_Osu_bibw_job.out"); fi
  for variant in p2p multi1 multi8 multiall; do
    local out=$OUT/$env/$variant
    mkdir -p "$out"
    local pairs=()
    case $variant in
      multi1) pairs=(--multi-pair "$A/Osu_mbw_mr__1/rfm_Osu_mbw_mr__1_job.out") ;;
      multi8) pairs=(--multi-pair "$A/Osu_mbw_mr__8/rfm_Osu_mbw_mr__8_job.out") ;;
      multiall)
        for k in 1 2 4 8 16 32; do
          pairs+=(--multi-pair "$A/Osu_mbw_mr__$k/rfm_Osu_mbw_mr__${k}_job.out")
        done ;;
    esac
    "$P" calibrate net "$A/Osu_latency/rfm_Osu_latency_job.out" \
        --stream "$A/Osu_bw/rfm_Osu_bw_job.out" "${extra[@]}" "${pairs[@]}" \
        --ranks-per-node 32 --shm "$A/Osu_latency/rfm_Osu_latency_job.out" \
        -o "$out/machine.toml" > "$out/calibrate.txt"
    for k in 1 2 4 8 16 32; do
      local f=$A/Osu_mbw_mr__$k/rfm_Osu_mbw_mr__${k}_job.out
      [ -f "$f" ] || continue
      "$P" validate examples/osu/mbw_mr.mpl --table "$f" --machine "$out/machine.toml" \
          --ppn "$k" > "$out/mbw_mr_$k.txt"
    done
    if [ "$variant" = p2p ] || [ "$variant" = multiall ]; then
      for b in Uniband Biband; do
        local lower
        lower=$(echo "$b" | tr A-Z a-z)
        for n in 2 4 8 16 32 64; do
          local f=$I/IMB_${b}_$n/rfm_IMB_${b}_${n}_job.out
          [ -f "$f" ] || continue
          "$P" validate "examples/imb/$lower.mpl" --table "$f" --machine "$out/machine.toml" \
              --ppn $((n / 2)) > "$out/${lower}_$n.txt"
        done
      done
    fi
  done
}
run_env ib-gcc9-openmpi4-ucx yes
run_env roce-gcc9-openmpi4-ucx yes
run_env ib-gcc9-impi-verbs no
run_env roce-gcc9-impi-verbs no
