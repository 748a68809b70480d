#!/usr/bin/env bash
# Record the point-to-point messages of one call of each collective as the
# real library sends them (mon.c: each rank's messages to each peer during
# the call, counted by Open MPI's pml monitoring, MPI_T performance
# variables pml_monitoring_messages_count / _size); compare.py runs the same
# calls in parsim. See README.md here.
#   bash validation/openmpi-coll/measure.sh OUT_DIR [MPICC] [MPIRUN]
# One node (default): every rank count of PS on this machine, oversubscribed;
# files OUT_DIR/p<P>.txt. Several nodes: HOSTS="<host> ..." (more hosts
# reachable by ssh with the same paths; README.md sets them up on this
# machine with network namespaces) and RPNS="1 2 3 ..." ranks per node: P =
# nodes x RPN, the first RPN on this host, then RPN on each of HOSTS in
# order; with UNEVEN=1 also P - 1 (one rank fewer on the last node); files
# OUT_DIR/p<P>-rpn<RPN>.txt. ROOT=R (default 0) is the root of bcast,
# reduce, gather and scatter; a root other than 0 adds -root<R> to the
# file names.
set -euo pipefail
OUT=$1
MPICC=${2:-mpicc}
MPIRUN=${3:-mpirun}
PS=${PS:-"2 3 4 5 6 7 8 9 12 15 16 17 24 31 32 33 48 63 64"}
KINDS=${KINDS:-allreduce,reduce,bcast,barrier,allgather,alltoall,gather,scatter,reduce_scatter,allgatherv,alltoallv,scan,exscan}
SIZES=${SIZES:-"4 8 16 32 64 128 256 512 1024 2048 4096 8192 16384 32768 65536 131072 262144 524288 1048576"}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
"$MPICC" -O2 -o "$OUT/mon" "$HERE/mon.c"
"$MPIRUN" --version | head -1 > "$OUT/library.txt"
calls() { for k in ${KINDS//,/ }; do for n in $SIZES; do printf '%s@%s ' "$k" "$n"; done; done; }
# coll/monitoring is left out: it interposes above coll/han, so han's
# fallback to coll/tuned on a communicator it declines (uneven nodes) never
# sticks and every call repeats han's topology check (an allreduce among
# node leaders and a bcast in each node), which a run without monitoring
# does once. Open MPI 5.0.11 may then crash in MPI_Finalize after mon has
# printed everything ("# done", written before it): the exit status is not
# what tells, that line is.
record() { # FILE MPIRUN-ARGS...
    local file=$1; shift
    local raw=$OUT/raw.txt
    MON_ROOT=${ROOT:-0} "$MPIRUN" --allow-run-as-root "$@" -x MON_ROOT \
        --mca pml_monitoring_enable 1 --mca coll ^monitoring \
        "$OUT/mon" "$KINDS" $SIZES > "$raw" 2> "$OUT/stderr.txt" || true
    if ! grep -q '^# done$' "$raw"; then
        echo "$(basename "$file"): the run did not finish (see $OUT/stderr.txt)" >&2
        exit 1
    fi
    {
        echo "# calls: $(calls)"
        grep -v '^#' "$raw" | sort -k1,1 -k2,2n -k3,3n -k4,4n
    } > "$file"
    rm -f "$raw"
    echo "$(basename "$file"): $(wc -l < "$file") lines"
}
SUFFIX=""
if [ "${ROOT:-0}" != 0 ]; then SUFFIX="-root$ROOT"; fi
if [ -z "${HOSTS:-}" ]; then
    for p in $PS; do
        if [ "${ROOT:-0}" -ge "$p" ]; then continue; fi
        record "$OUT/p$p$SUFFIX.txt" --oversubscribe -np "$p"
    done
else
    PREFIX=$(dirname "$(dirname "$(command -v "$MPIRUN")")")
    read -r -a extra <<< "$HOSTS"
    nodes=$((1 + ${#extra[@]}))
    for k in ${RPNS:-1 2 3 4 8 16}; do
        list="$(hostname):$k"
        for h in "${extra[@]}"; do list="$list,$h:$k"; done
        counts=$((nodes * k))
        if [ "${UNEVEN:-0}" = 1 ] && [ "$k" -gt 1 ]; then counts="$counts $((nodes * k - 1))"; fi
        for p in $counts; do
            if [ "${ROOT:-0}" -ge "$p" ]; then continue; fi
            record "$OUT/p$p-rpn$k$SUFFIX.txt" --prefix "$PREFIX" --host "$list" \
                --bind-to none -np "$p"
        done
    done
fi
