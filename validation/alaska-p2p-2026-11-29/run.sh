# VALIDATION.md 5.5: the two Open MPI environments of Alaska re-run with the
# 2026-11-29 build (section 5's inputs: osu_latency + osu_bw + osu_bibw). From
# the workspace root, after cargo build --release: bash validation/alaska-p2p-2026-11-29/run.sh
set -e
cd "$(dirname "$0")/../.."
P=target/release/parsim
for env in ib-gcc9-openmpi4-ucx roce-gcc9-openmpi4-ucx; do
  S=../shared/validation/alaska/$env; A=$S/omb; I=$S/imb; O=validation/alaska-p2p-2026-11-29/$env; mkdir -p $O
  $P calibrate net $A/Osu_latency/rfm_Osu_latency_job.out --stream $A/Osu_bw/rfm_Osu_bw_job.out --bistream $A/Osu_bibw/rfm_Osu_bibw_job.out --ranks-per-node 32 --shm $A/Osu_latency/rfm_Osu_latency_job.out -o $O/machine.toml > $O/calibrate.txt
  for k in 1 2 4 8 16 32; do $P validate examples/osu/mbw_mr.mpl --table $A/Osu_mbw_mr__$k/rfm_Osu_mbw_mr__${k}_job.out --machine $O/machine.toml --ppn $k > $O/mbw_mr_$k.txt; echo "$env mbw_mr $k $(grep '^all:' $O/mbw_mr_$k.txt)"; done
  for b in Uniband Biband; do l=$(echo $b | tr A-Z a-z); for n in 2 4 8 16 32 64; do $P validate examples/imb/$l.mpl --table $I/IMB_${b}_$n/rfm_IMB_${b}_${n}_job.out --machine $O/machine.toml --ppn $((n/2)) > $O/${l}_$n.txt; echo "$env $l $n $(grep '^all:' $O/${l}_$n.txt)"; done; done
done
