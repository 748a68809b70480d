//! MPICH's classic selection (`MPIR_<Coll>_intra_auto` in
//! `src/mpi/coll/<coll>/<coll>.c`, MPICH 3.3, with the CVAR defaults of
//! those files; in MPICH 4 the same rules are the fallbacks of the JSON
//! tuning). SMP-aware variants are not modelled (the communicator is taken
//! as flat), the operation as a commutative built-in one, and buffers as
//! not `MPI_IN_PLACE`.

use super::util::{is_pof2, pof2_floor};
use super::{Algorithm, CollCall};
use crate::ir::CollKind;

/// `MPIR_CVAR_BCAST_SHORT_MSG_SIZE` (bcast/bcast.c).
pub(super) const BCAST_SHORT_MSG_SIZE: u64 = 12288;
/// `MPIR_CVAR_BCAST_LONG_MSG_SIZE` (bcast/bcast.c).
pub(super) const BCAST_LONG_MSG_SIZE: u64 = 524288;
/// `MPIR_CVAR_BCAST_MIN_PROCS` (bcast/bcast.c).
pub(super) const BCAST_MIN_PROCS: u64 = 8;
/// `MPIR_CVAR_REDUCE_SHORT_MSG_SIZE` (reduce/reduce.c).
pub(super) const REDUCE_SHORT_MSG_SIZE: u64 = 2048;
/// `MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE` (allreduce/allreduce.c).
pub(super) const ALLREDUCE_SHORT_MSG_SIZE: u64 = 2048;
/// `MPIR_CVAR_ALLGATHER_SHORT_MSG_SIZE` (allgather/allgather.c; also used by
/// allgatherv).
pub(super) const ALLGATHER_SHORT_MSG_SIZE: u64 = 81920;
/// `MPIR_CVAR_ALLGATHER_LONG_MSG_SIZE` (allgather/allgather.c).
pub(super) const ALLGATHER_LONG_MSG_SIZE: u64 = 524288;
/// `MPIR_CVAR_ALLTOALL_SHORT_MSG_SIZE` (alltoall/alltoall.c).
pub(super) const ALLTOALL_SHORT_MSG_SIZE: u64 = 256;
/// `MPIR_CVAR_ALLTOALL_MEDIUM_MSG_SIZE` (alltoall/alltoall.c).
pub(super) const ALLTOALL_MEDIUM_MSG_SIZE: u64 = 32768;
/// The Bruck alltoall needs at least 8 processes (literal `comm_size >= 8`
/// in `MPIR_Alltoall_intra_auto`).
pub(super) const ALLTOALL_BRUCK_MIN_PROCS: u64 = 8;
/// `MPIR_CVAR_REDUCE_SCATTER_COMMUTATIVE_LONG_MSG_SIZE`
/// (reduce_scatter/reduce_scatter.c).
pub(super) const REDUCE_SCATTER_COMMUTATIVE_LONG_MSG_SIZE: u64 = 524288;

pub(super) fn select(call: &CollCall<'_>) -> Algorithm {
    let p = u64::from(call.size);
    match call.kind {
        // MPIR_Barrier_intra_auto: dissemination (SMP barrier not modelled).
        CollKind::Barrier => Algorithm::Dissemination,
        // MPIR_Bcast_intra_auto: binomial for short messages or few
        // processes; medium and a power of two: scatter + recursive doubling
        // allgather; otherwise scatter + ring allgather.
        CollKind::Bcast => {
            let n = call.counts.single();
            if n < BCAST_SHORT_MSG_SIZE || p < BCAST_MIN_PROCS {
                Algorithm::BinomialTree
            } else if n < BCAST_LONG_MSG_SIZE && is_pof2(p) {
                Algorithm::ScatterRecursiveDoublingAllgather
            } else {
                Algorithm::ScatterRingAllgather
            }
        }
        // MPIR_Reduce_intra_auto: Rabenseifner (reduce_scatter_gather) when
        // `count * type_size > REDUCE_SHORT_MSG_SIZE` and `count >= pof2`,
        // else binomial.
        CollKind::Reduce => {
            let n = call.counts.single();
            if n > REDUCE_SHORT_MSG_SIZE && call.count(n) >= pof2_floor(p) {
                Algorithm::Rabenseifner
            } else {
                Algorithm::BinomialTree
            }
        }
        // MPIR_Allreduce_intra_auto: recursive doubling when
        // `nbytes <= ALLREDUCE_SHORT_MSG_SIZE` or `count < pof2`, else
        // Rabenseifner (reduce_scatter_allgather). (MPICH 3.3.0 computed
        // nbytes as 0 unless MPIR_CVAR_MAX_SMP_ALLREDUCE_MSG_SIZE was set,
        // always taking recursive doubling; the intended rule of 3.2 and
        // later releases is used here.)
        CollKind::Allreduce => {
            let n = call.counts.single();
            if n <= ALLREDUCE_SHORT_MSG_SIZE || call.count(n) < pof2_floor(p) {
                Algorithm::RecursiveDoubling
            } else {
                Algorithm::Rabenseifner
            }
        }
        // MPIR_Gather_intra_auto: always binomial.
        CollKind::Gather => Algorithm::BinomialTree,
        // MPIR_Gatherv_intra_auto / MPIR_Scatterv_intra_auto: linear, all
        // requests posted at once.
        CollKind::Gatherv | CollKind::Scatterv => Algorithm::LinearNb,
        // MPIR_Scatter_intra_auto: always binomial.
        CollKind::Scatter => Algorithm::BinomialTree,
        // MPIR_Allgather(v)_intra_auto on the total size
        // (`recvcount * comm_size * type_size`, or the sum of recvcounts):
        // recursive doubling below LONG on a power of two, Bruck below
        // SHORT, ring otherwise.
        CollKind::Allgather | CollKind::Allgatherv => {
            let tot = call.counts.total(p);
            if tot < ALLGATHER_LONG_MSG_SIZE && is_pof2(p) {
                Algorithm::RecursiveDoubling
            } else if tot < ALLGATHER_SHORT_MSG_SIZE {
                Algorithm::Bruck
            } else {
                Algorithm::Ring
            }
        }
        // MPIR_Alltoall_intra_auto on the per-destination size: Bruck for
        // `<= SHORT` and at least 8 processes, scattered (isend/irecv) for
        // `<= MEDIUM`, pairwise exchange otherwise.
        CollKind::Alltoall => {
            let n = call.counts.single();
            if n <= ALLTOALL_SHORT_MSG_SIZE && p >= ALLTOALL_BRUCK_MIN_PROCS {
                Algorithm::Bruck
            } else if n <= ALLTOALL_MEDIUM_MSG_SIZE {
                Algorithm::Scattered
            } else {
                Algorithm::Pairwise
            }
        }
        // MPIR_Alltoallv_intra_auto: scattered (not in place).
        CollKind::Alltoallv => Algorithm::Scattered,
        // MPIR_Reduce_scatter_intra_auto, commutative: recursive halving
        // below COMMUTATIVE_LONG_MSG_SIZE total bytes, pairwise otherwise.
        CollKind::ReduceScatter => {
            let tot = call.counts.total(p);
            if tot < REDUCE_SCATTER_COMMUTATIVE_LONG_MSG_SIZE {
                Algorithm::RecursiveHalving
            } else {
                Algorithm::Pairwise
            }
        }
        // MPIR_Scan_intra_auto (non-SMP) / MPIR_Exscan_intra_auto.
        CollKind::Scan | CollKind::Exscan => Algorithm::RecursiveDoubling,
    }
}
