#!/usr/bin/env bash
# Usage, from the workspace root: bash validation/dev-machine/shm-patterns-ab.sh ROUNDS_DIR LIBRARY OUT
#   (ROUNDS_DIR: an osu-rounds.sh output, e.g. validation/dev-machine/osu-rounds-seg mpich-4)
# VALIDATION.md 6.3: A/B of [shm]'s joint pattern fit on saved osu-rounds runs: each round's
# saved benchmark output refitted twice with the same flags, once as is (A,
# [shm] fitted with its PingPing/Stream/BiStream) and once with the shm
# file's PingPing table renamed (B: the patterns not detected, as by the build
# before fb83873), then every OMB table of the round validated on both.
set -euo pipefail
SRC=$1; LIB=$2; OUT=$3; P=target/release/parsim
B="allreduce reduce bcast alltoall allgather gather scatter barrier reduce_scatter allgatherv alltoallv gatherv scatterv"
mkdir -p $OUT
for R in $SRC/round*; do
  r=$(basename $R); mkdir -p $OUT/$r
  NET=$(ls $R/*.network.netbench.txt); SHM=$(ls $R/*.shm.netbench.txt)
  sed 's/^# Benchmarking PingPing$/# Benchmarking PingPingNotRead/' $SHM > $OUT/$r/shm-nostream.netbench.txt
  mem=$(grep -m1 "^memcpy = " $(ls $R/machine-*.toml | head -1) | cut -d\" -f2)
  shmem=$( (grep -h '^shared_memory = ' $R/machine-*.toml || true) | head -1 | awk '{print $3}')
  sm=(); [ -n "$shmem" ] && sm=(--collective shared_memory=$shmem)
  for v in A B; do
    s=$SHM; [ $v = B ] && s=$OUT/$r/shm-nostream.netbench.txt
    $P calibrate net $NET --pingping $NET --pingping-format imb --stream $NET --bistream $NET --stream-format imb \
      --shm $s --shm-format imb --shm-barrier $s --shm-calls $s --shm-rendezvous $s --flag-latency $s \
      --reduce-local $NET --memcpy-table $NET --datatype $NET --page-fault $NET --memcpy "$mem" \
      --collective library=$LIB "${sm[@]}" --ranks-per-node 2 --quiet -o $OUT/$r/machine-$v.toml > /dev/null 2>&1
    for b in $B; do
      [ -f $R/$b.txt ] || continue
      size=(-p max_bytes=1048576); [ $b = barrier ] && size=()
      $P validate examples/osu/$b.mpl --table $R/$b.txt --machine $OUT/$r/machine-$v.toml --ranks 2 "${size[@]}" 2>/dev/null | grep '^all:' | sed "s/^/$r $b $v /" >> $OUT/results.txt || echo "$r $b $v FAILED" >> $OUT/results.txt
    done
  done
done
