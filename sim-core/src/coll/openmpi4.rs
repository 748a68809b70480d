//! Open MPI 4.0's `coll/tuned` fixed decision rules, transcribed from
//! `ompi/mca/coll/tuned/coll_tuned_decision_fixed.c` of v4.0.3 (the same
//! decisions in every 4.0.x and, with the default MCA parameters, in 3.1.x;
//! 4.1 replaced them by the tables of [`super::openmpi`]). Commutative
//! operations, buffers not `MPI_IN_PLACE`.
//!
//! Unlike the later tables, these rules are thresholds and fitted linear
//! models (`communicator_size < a * message_size + b`) written out in code,
//! and they call the `ompi_coll_base_*` algorithms directly with segment
//! sizes of their own (128 KiB pipelines, 1 KiB split binary trees, a 1 MiB
//! segmented ring, ...), which the [`Algorithm`]s carry. Each threshold
//! below cites its function in that file. The `a * x + b` comparisons are
//! evaluated in `f64` as the C code does in `double`.
//!
//! The rules compare byte sizes (`dsize * count`) except in two places:
//! allreduce's ring needs `count > comm_size` (the call's elements,
//! [`CollCall::count`]), and bcast and reduce send a single element
//! (`count <= 1`) by binomial tree, which the small-message rules already
//! cover (a single element is at most 16 bytes).
//!
//! Collectives without a fixed rule (`coll_tuned_module.c` sets gatherv,
//! scatterv, scan, exscan to NULL) run `coll/basic`.

use super::util::{is_odd, is_pof2};
use super::{Algorithm, CollCall};
use crate::ir::CollKind;

use Algorithm as A;

/// `ompi_coll_tuned_allreduce_intra_dec_fixed`: `intermediate_message`.
const ALLREDUCE_INTERMEDIATE: u64 = 10_000;
/// `ompi_coll_tuned_allreduce_intra_dec_fixed`: the segmented ring's
/// `segment_size = 1 << 20`.
const ALLREDUCE_RING_SEGMENT: u64 = 1 << 20;

/// `ompi_coll_tuned_allreduce_intra_dec_fixed`: recursive doubling below
/// 10000 bytes; else, for a commutative operation with `count > comm_size`,
/// the ring while `comm_size * 1 MiB >= bytes` and the ring segmented in
/// 1 MiB pieces above; else (count <= comm_size) nonoverlapping (reduce +
/// bcast). `n` is the call's bytes, `count` its elements.
pub(super) fn allreduce(p: u64, n: u64, count: u64) -> Algorithm {
    if n < ALLREDUCE_INTERMEDIATE {
        return A::RecursiveDoubling;
    }
    if count > p {
        if p.saturating_mul(ALLREDUCE_RING_SEGMENT) >= n {
            return A::Ring;
        }
        return A::SegmentedRing(ALLREDUCE_RING_SEGMENT);
    }
    A::NonOverlapping
}

/// `coll_tuned_component.c`: `ompi_coll_tuned_alltoall_small_msg`.
const ALLTOALL_SMALL: u64 = 200;
/// `coll_tuned_component.c`: `ompi_coll_tuned_alltoall_intermediate_msg`.
const ALLTOALL_INTERMEDIATE: u64 = 3000;

/// `ompi_coll_tuned_alltoall_intra_dec_fixed` on the block per destination:
/// two_procs on 2 ranks; modified Bruck below 200 bytes on more than 12
/// ranks; basic_linear below 3000 bytes; else pairwise. (4.0 added a
/// linear_sync branch, `block < alltoall_large_msg && p <=
/// alltoall_min_procs`, which never applies with the defaults 3000 and 0:
/// "does not affect default algorithm selection".)
pub(super) fn alltoall(p: u64, n: u64) -> Algorithm {
    if p == 2 {
        // two_procs: one sendrecv, the pairwise exchange on 2 ranks.
        return A::OmpiPairwise;
    }
    if n < ALLTOALL_SMALL && p > 12 {
        A::Bruck
    } else if n < ALLTOALL_INTERMEDIATE {
        A::Linear
    } else {
        A::OmpiPairwise
    }
}

/// `ompi_coll_tuned_alltoallv_intra_dec_fixed`: always pairwise ("For
/// starters, just keep the original algorithm").
pub(super) fn alltoallv() -> Algorithm {
    A::OmpiPairwise
}

/// `ompi_coll_tuned_barrier_intra_dec_fixed`: two_procs on 2 ranks,
/// recursive doubling on a power of two, else Bruck.
pub(super) fn barrier(p: u64) -> Algorithm {
    if p == 2 {
        // two_procs: one zero-byte exchange, Bruck's single round.
        return A::Bruck;
    }
    if is_pof2(p) {
        A::RecursiveDoubling
    } else {
        A::Bruck
    }
}

/// `ompi_coll_tuned_bcast_intra_dec_fixed`: `small_message_size`.
const BCAST_SMALL: u64 = 2048;
/// `ompi_coll_tuned_bcast_intra_dec_fixed`: `intermediate_message_size`.
const BCAST_INTERMEDIATE: u64 = 370_728;
/// `ompi_coll_tuned_bcast_intra_dec_fixed`: `a_p16`, `b_p16` [1/byte], ...
const BCAST_A_P16: f64 = 3.2118e-6;
const BCAST_B_P16: f64 = 8.7936;
const BCAST_A_P64: f64 = 2.3679e-6;
const BCAST_B_P64: f64 = 1.1787;
const BCAST_A_P128: f64 = 1.6134e-6;
const BCAST_B_P128: f64 = 2.1102;

/// `ompi_coll_tuned_bcast_intra_dec_fixed` ("based on MX results for
/// messages up to 36MB and communicator sizes up to 64 nodes"): binomial
/// without segments below 2048 bytes (or a single element); split binary
/// tree with 1 KiB segments below 370728 bytes; then pipelines whose segment
/// shrinks as the communicator grows relative to the message: 128 KiB while
/// `p < 1.6134e-6 n + 2.1102`, else (p < 13) split binary tree with 8 KiB
/// segments, else 64 KiB while `p < 2.3679e-6 n + 1.1787`, 16 KiB while `p <
/// 3.2118e-6 n + 8.7936`, else 8 KiB.
pub(super) fn bcast(p: u64, n: u64) -> Algorithm {
    let (pf, nf) = (p as f64, n as f64);
    if n < BCAST_SMALL || n <= 1 {
        A::OmpiBinomial
    } else if n < BCAST_INTERMEDIATE {
        A::SplitBinaryTree(1024)
    } else if pf < BCAST_A_P128 * nf + BCAST_B_P128 {
        A::Pipeline(1024 << 7)
    } else if p < 13 {
        A::SplitBinaryTree(1024 << 3)
    } else if pf < BCAST_A_P64 * nf + BCAST_B_P64 {
        A::Pipeline(1024 << 6)
    } else if pf < BCAST_A_P16 * nf + BCAST_B_P16 {
        A::Pipeline(1024 << 4)
    } else {
        A::Pipeline(1024 << 3)
    }
}

/// `ompi_coll_tuned_reduce_intra_dec_fixed`: `a1 = 0.6016 / 1024.0`,
/// `b1 = 1.3496`, ... [1/B].
const REDUCE_A1: f64 = 0.6016 / 1024.0;
const REDUCE_B1: f64 = 1.3496;
const REDUCE_A2: f64 = 0.0410 / 1024.0;
const REDUCE_B2: f64 = 9.7128;
const REDUCE_A3: f64 = 0.0422 / 1024.0;
const REDUCE_B3: f64 = 1.1614;
const REDUCE_A4: f64 = 0.0033 / 1024.0;
const REDUCE_B4: f64 = 1.6761;

/// `ompi_coll_tuned_reduce_intra_dec_fixed`, commutative branch
/// (`max_requests = 0`: leaves send with blocking sends): linear on fewer
/// than 8 ranks below 512 bytes; binomial without segments on fewer than 8
/// ranks below 20480 bytes, below 2048 bytes, or for a single element; then
/// binomial with 1 KiB segments while `p > 0.6016/1024 n + 1.3496`,
/// pipeline with 1 KiB segments while `p > 0.0410/1024 n + 9.7128`, binary
/// tree with 32 KiB segments while `p > 0.0422/1024 n + 1.1614`, pipeline
/// with 32 KiB segments while `p > 0.0033/1024 n + 1.6761`, else with
/// 64 KiB segments.
pub(super) fn reduce(p: u64, n: u64) -> Algorithm {
    let (pf, nf) = (p as f64, n as f64);
    if p < 8 && n < 512 {
        A::Linear
    } else if (p < 8 && n < 20480) || n < 2048 || n <= 1 {
        // Binomial_0K: the generic reduce over the in-order binomial tree.
        A::BinomialTree
    } else if pf > REDUCE_A1 * nf + REDUCE_B1 {
        A::SegmentedBinomial(1024)
    } else if pf > REDUCE_A2 * nf + REDUCE_B2 {
        A::Pipeline(1024)
    } else if pf > REDUCE_A3 * nf + REDUCE_B3 {
        A::BinaryTree(32 * 1024)
    } else if pf > REDUCE_A4 * nf + REDUCE_B4 {
        A::Pipeline(32 * 1024)
    } else {
        A::Pipeline(64 * 1024)
    }
}

/// `ompi_coll_tuned_reduce_scatter_intra_dec_fixed`: `a`, `b`,
/// `small_message_size`, `large_message_size`.
const REDUCE_SCATTER_A: f64 = 0.0012;
const REDUCE_SCATTER_B: f64 = 8.0;
const REDUCE_SCATTER_SMALL: u64 = 12 * 1024;
const REDUCE_SCATTER_LARGE: u64 = 256 * 1024;

/// `ompi_coll_tuned_reduce_scatter_intra_dec_fixed` on the total bytes,
/// commutative branch: recursive halving up to 12 KiB, up to 256 KiB on a
/// power of two (`opal_next_poweroftwo_inclusive(p) == p`), or while `p >=
/// 0.0012 total + 8`; else the ring.
pub(super) fn reduce_scatter(p: u64, total: u64) -> Algorithm {
    if total <= REDUCE_SCATTER_SMALL
        || (total <= REDUCE_SCATTER_LARGE && is_pof2(p))
        || p as f64 >= REDUCE_SCATTER_A * total as f64 + REDUCE_SCATTER_B
    {
        A::RecursiveHalving
    } else {
        A::Ring
    }
}

/// `ompi_coll_tuned_allgather_intra_dec_fixed` / `..._allgatherv_...`: the
/// 50000-byte bound on the total gathered ("less than 50KB").
const ALLGATHER_SMALL_TOTAL: u64 = 50_000;

/// `ompi_coll_tuned_allgather_intra_dec_fixed` on the total `n * p`:
/// two_procs on 2 ranks; below 50000 bytes recursive doubling on a power of
/// two, else Bruck; from 50000 bytes the ring on an odd size, neighbor
/// exchange on an even one.
pub(super) fn allgather(p: u64, n: u64) -> Algorithm {
    if p == 2 {
        return A::TwoProcs;
    }
    if n.saturating_mul(p) < ALLGATHER_SMALL_TOTAL {
        if is_pof2(p) {
            A::RecursiveDoubling
        } else {
            A::Bruck
        }
    } else if is_odd(p) {
        A::Ring
    } else {
        A::Neighbor
    }
}

/// `ompi_coll_tuned_allgatherv_intra_dec_fixed` on the total of the counts
/// ("Decision based on allgather decision"): two_procs on 2 ranks; Bruck
/// below 50000 bytes; else the ring on an odd size, neighbor exchange on an
/// even one.
pub(super) fn allgatherv(p: u64, total: u64) -> Algorithm {
    if p == 2 {
        return A::TwoProcs;
    }
    if total < ALLGATHER_SMALL_TOTAL {
        A::Bruck
    } else if is_odd(p) {
        A::OmpiRing
    } else {
        A::Neighbor
    }
}

/// `ompi_coll_tuned_gather_intra_dec_fixed` on the block per rank:
/// linear_sync with a first segment of 32 KiB above 92160 bytes
/// (`large_block_size`, `large_segment_size`), of 1 KiB above 6000 bytes
/// (`intermediate_block_size`, `small_segment_size`); binomial on more than
/// 60 ranks (`large_communicator_size`) or on more than 10
/// (`small_communicator_size`) below 1024 bytes (`small_block_size`); else
/// basic linear.
pub(super) fn gather(p: u64, n: u64) -> Algorithm {
    if n > 92_160 {
        A::LinearSync(32_768)
    } else if n > 6000 {
        A::LinearSync(1024)
    } else if p > 60 || (p > 10 && n < 1024) {
        A::BinomialTree
    } else {
        A::Linear
    }
}

/// `ompi_coll_tuned_scatter_intra_dec_fixed` on the block per rank:
/// binomial on more than 10 ranks (`small_comm_size`) below 300 bytes
/// (`small_block_size`), else basic linear (blocking sends in rank order).
pub(super) fn scatter(p: u64, n: u64) -> Algorithm {
    if p > 10 && n < 300 {
        A::OmpiBinomial
    } else {
        A::Linear
    }
}

pub(super) fn select(call: &CollCall<'_>) -> Algorithm {
    let p = u64::from(call.size);
    let n = call.counts.single();
    match call.kind {
        CollKind::Allreduce => allreduce(p, n, call.count(n)),
        CollKind::Alltoall => alltoall(p, n),
        CollKind::Alltoallv => alltoallv(),
        CollKind::Barrier => barrier(p),
        CollKind::Bcast => bcast(p, n),
        CollKind::Reduce => reduce(p, n),
        CollKind::ReduceScatter => reduce_scatter(p, call.counts.total(p)),
        CollKind::Allgather => allgather(p, n),
        CollKind::Allgatherv => allgatherv(p, call.counts.total(p)),
        CollKind::Gather => gather(p, n),
        CollKind::Scatter => scatter(p, n),
        // coll/basic (4.0.3): mca_coll_basic_gatherv_intra receives with
        // blocking receives in rank order, mca_coll_basic_scatterv_intra
        // sends with blocking sends in rank order.
        CollKind::Gatherv | CollKind::Scatterv => A::Linear,
        // coll/basic scan and exscan (ompi_coll_base_scan/exscan_intra_linear):
        // the linear chain.
        CollKind::Scan | CollKind::Exscan => A::Linear,
    }
}
