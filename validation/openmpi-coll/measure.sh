#!/usr/bin/env bash
# Record the point-to-point messages of one call of each collective as the
# real library sends them (mon.c: each rank's messages to each peer during
# the call, counted by Open MPI's pml monitoring, MPI_T performance
# variables pml_monitoring_messages_count / _size); compare.py runs the same
# calls in parsim. See README.md here.
#   bash validation/openmpi-coll/measure.sh OUT_DIR [MPICC] [MPIRUN]
# One node (default): every rank count of PS on this machine, oversubscribed;
# files OUT_DIR/p<P>.txt. Two nodes: NODE2=<host> (a second host reachable
# by ssh with the same paths; README.md sets one up on this machine with a
# network namespace) and RPNS="1 2 3 ..." ranks per node: P = 2 x RPN, the
# first RPN on this host; with UNEVEN=1 also P = 2 x RPN - 1 (one rank fewer
# on the second node); files OUT_DIR/p<P>-rpn<RPN>.txt.
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
    "$MPIRUN" --allow-run-as-root "$@" --mca pml_monitoring_enable 1 --mca coll ^monitoring \
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
if [ -z "${NODE2:-}" ]; then
    for p in $PS; do
        record "$OUT/p$p.txt" --oversubscribe -np "$p"
    done
else
    PREFIX=$(dirname "$(dirname "$(command -v "$MPIRUN")")")
    for k in ${RPNS:-1 2 3 4 8 16}; do
        counts=$((2 * k))
        if [ "${UNEVEN:-0}" = 1 ] && [ "$k" -gt 1 ]; then counts="$counts $((2 * k - 1))"; fi
        for p in $counts; do
            record "$OUT/p$p-rpn$k.txt" --prefix "$PREFIX" --host "$(hostname):$k,$NODE2:$k" \
                --bind-to none -np "$p"
        done
    done
fi
