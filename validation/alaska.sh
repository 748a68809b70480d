#!/usr/bin/env bash
# Issue 12 on the Alaska cluster (VALIDATION.md section 5): each of its four
# environments calibrated from its own osu_latency, osu_bw and osu_bibw,
# predicting osu_bw, osu_bibw, osu_mbw_mr at 1-32 pairs and IMB Uniband and
# Biband at 2-64 ranks; the Intel MPI environments also calibrated without
# their osu_bibw (a library pathology, see section 5). Takes about an hour
# on a 2-vCPU machine (the IMB windows at 64 ranks). From the workspace
# root, after `cargo build --release`:
#   bash validation/alaska.sh OUT_DIR [path/to/parsim]
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=$1
P=${2:-target/release/parsim}
S=../shared/validation/alaska
run_env() { # ENV OUT_SUBDIR BIBW(yes|no)
  local env=$1 out=$OUT/$2 bibw=$3
  local A=$S/$env/omb I=$S/$env/imb
  mkdir -p "$out"
  local extra=()
  if [ "$bibw" = yes ]; then extra=(--bistream "$A/Osu_bibw/rfm_Osu_bibw_job.out"); fi
  "$P" calibrate net "$A/Osu_latency/rfm_Osu_latency_job.out" \
      --stream "$A/Osu_bw/rfm_Osu_bw_job.out" "${extra[@]}" \
      --ranks-per-node 32 --shm "$A/Osu_latency/rfm_Osu_latency_job.out" \
      -o "$out/machine.toml" > "$out/calibrate.txt"
  "$P" validate examples/osu/bw.mpl --table "$A/Osu_bw/rfm_Osu_bw_job.out" \
      --machine "$out/machine.toml" --ppn 1 --ranks 2 > "$out/bw.txt"
  "$P" validate examples/osu/bibw.mpl --table "$A/Osu_bibw/rfm_Osu_bibw_job.out" \
      --machine "$out/machine.toml" --ppn 1 --ranks 2 > "$out/bibw.txt"
  for k in 1 2 4 8 16 32; do
    local f=$A/Osu_mbw_mr__$k/rfm_Osu_mbw_mr__${k}_job.out
    [ -f "$f" ] || continue
    "$P" validate examples/osu/mbw_mr.mpl --table "$f" --machine "$out/machine.toml" \
        --ppn "$k" > "$out/mbw_mr_$k.txt"
  done
  for b in Uniband Biband; do
    for n in 2 4 8 16 32 64; do
      local f=$I/IMB_${b}_$n/rfm_IMB_${b}_${n}_job.out
      [ -f "$f" ] || continue
      local lower
      lower=$(echo "$b" | tr A-Z a-z)
      "$P" validate "examples/imb/$lower.mpl" --table "$f" --machine "$out/machine.toml" \
          --ppn $((n / 2)) > "$out/${lower}_$n.txt"
    done
  done
}
# ENVS picks environments (default: all four); the Intel MPI ones are also
# run without their osu_bibw.
for env in ${ENVS:-ib-gcc9-openmpi4-ucx roce-gcc9-openmpi4-ucx ib-gcc9-impi-verbs roce-gcc9-impi-verbs}; do
  run_env "$env" "$env" yes
  case $env in *impi*) run_env "$env" "$env-nobibw" no ;; esac
done
