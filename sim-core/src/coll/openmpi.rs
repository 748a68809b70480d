//! Open MPI's `coll/tuned` fixed decision rules, as in Open MPI 5.0
//! (`ompi/mca/coll/tuned/coll_tuned_decision_fixed.c`, the tables generated
//! from the ompi-collectives-tuning measurements, commutative-operation
//! branches). Each table is transcribed row by row: for a communicator of
//! `p` ranks, the first row with `p < bound` applies, then the first entry
//! with `bytes < bound`; the numbers are the library's algorithm ids,
//! mapped to [`Algorithm`]s by the `*_alg` functions (the `*_intra_do_this`
//! switches of `coll_tuned_<coll>_decision.c`). The fixed rules call
//! `do_this` with segment size and fan-in/out 0, so segmented algorithms run
//! unsegmented and the chain degenerates to a pipeline
//! (`ompi_coll_base_topo_build_chain` forces fanout 0 to 1).
//!
//! Collectives without a fixed rule in `coll/tuned` (gatherv, scatterv,
//! scan, exscan: `coll_tuned_module.c` sets them to NULL) fall back to
//! `coll/basic`.

use super::util::is_pof2;
use super::{Algorithm, CollCall};
use crate::ir::CollKind;

/// Byte thresholds of one communicator-size row and the algorithm for
/// larger messages.
type Row = (&'static [(u64, u8)], u8);

fn by_bytes(x: u64, row: Row) -> u8 {
    row.0
        .iter()
        .find(|(bound, _)| x < *bound)
        .map_or(row.1, |&(_, alg)| alg)
}

fn by_comm(p: u64, rows: &[(u64, Row)], last: Row) -> Row {
    rows.iter()
        .find(|(bound, _)| p < *bound)
        .map_or(last, |&(_, row)| row)
}

/// `ompi_coll_tuned_allreduce_intra_dec_fixed`, commutative branch.
/// 1 basic_linear, 2 nonoverlapping, 3 recursive_doubling, 4 ring,
/// 5 segmented_ring, 6 rabenseifner.
pub(super) fn allreduce_id(p: u64, n: u64) -> u8 {
    let row = by_comm(
        p,
        &[
            (
                4,
                (
                    &[
                        (8, 4),
                        (4096, 3),
                        (8192, 4),
                        (16384, 3),
                        (65536, 4),
                        (262144, 5),
                    ],
                    6,
                ),
            ),
            (8, (&[(16, 4), (8192, 3)], 6)),
            (16, (&[(8192, 3)], 6)),
            (32, (&[(64, 5), (4096, 3)], 6)),
            (64, (&[(128, 5)], 6)),
            (128, (&[(262144, 3)], 6)),
            (256, (&[(131072, 2), (262144, 3)], 6)),
            (512, (&[(4096, 2)], 6)),
            (2048, (&[(2048, 2), (16384, 3)], 6)),
            (4096, (&[(2048, 2), (4096, 5), (16384, 3)], 6)),
        ],
        (&[(2048, 2), (16384, 5), (32768, 3)], 6),
    );
    by_bytes(n, row)
}

/// `ompi_coll_tuned_alltoall_intra_dec_fixed` on the per-destination size.
/// 1 linear, 2 pairwise, 3 modified_bruck, 4 linear_sync, 5 two_proc.
pub(super) fn alltoall_id(p: u64, n: u64) -> u8 {
    if p == 2 {
        return by_bytes(
            n,
            (
                &[
                    (2, 2),
                    (4, 5),
                    (16, 2),
                    (64, 5),
                    (256, 2),
                    (4096, 5),
                    (32768, 2),
                    (262144, 4),
                    (1048576, 5),
                ],
                2,
            ),
        );
    }
    let row = by_comm(
        p,
        &[
            (
                8,
                (
                    &[(8192, 4), (16384, 1), (65536, 4), (524288, 1), (1048576, 2)],
                    1,
                ),
            ),
            (16, (&[(262144, 4)], 1)),
            (
                32,
                (
                    &[
                        (4, 4),
                        (512, 3),
                        (8192, 4),
                        (32768, 1),
                        (262144, 4),
                        (524288, 1),
                    ],
                    4,
                ),
            ),
            (64, (&[(512, 3), (524288, 1)], 4)),
            (128, (&[(1024, 3), (2048, 1), (4096, 4), (262144, 1)], 2)),
            (256, (&[(1024, 3), (2048, 4), (262144, 1)], 2)),
            (512, (&[(1024, 3), (8192, 4), (32768, 1)], 2)),
            (
                1024,
                (
                    &[(512, 3), (8192, 4), (16384, 1), (131072, 4), (262144, 1)],
                    2,
                ),
            ),
            (
                2048,
                (
                    &[(512, 3), (1024, 4), (2048, 1), (16384, 4), (262144, 1)],
                    4,
                ),
            ),
            (4096, (&[(1024, 3), (4096, 4), (8192, 1), (131072, 4)], 1)),
        ],
        (
            &[(2048, 3), (8192, 4), (16384, 1), (32768, 4), (65536, 1)],
            4,
        ),
    );
    by_bytes(n, row)
}

/// `ompi_coll_tuned_alltoallv_intra_dec_fixed` (communicator size only).
/// 1 basic_linear, 2 pairwise.
pub(super) fn alltoallv_id(p: u64) -> u8 {
    by_bytes(p, (&[(4, 2), (64, 1), (128, 2), (256, 1), (1024, 2)], 1))
}

/// `ompi_coll_tuned_barrier_intra_dec_fixed` (communicator size only).
/// 1 linear, 2 double_ring, 3 recursive_doubling, 4 bruck, 5 two_proc,
/// 6 tree.
pub(super) fn barrier_id(p: u64) -> u8 {
    by_bytes(
        p,
        (
            &[
                (4, 3),
                (8, 1),
                (64, 3),
                (256, 4),
                (512, 6),
                (1024, 4),
                (4096, 6),
            ],
            4,
        ),
    )
}

/// `ompi_coll_tuned_bcast_intra_dec_fixed`. 1 basic_linear, 2 chain,
/// 3 pipeline, 4 split_binary_tree, 5 binary_tree, 6 binomial, 7 knomial,
/// 8 scatter_allgather, 9 scatter_allgather_ring.
pub(super) fn bcast_id(p: u64, n: u64) -> u8 {
    let row = by_comm(
        p,
        &[
            (
                4,
                (
                    &[
                        (32, 3),
                        (256, 5),
                        (512, 3),
                        (1024, 7),
                        (32768, 1),
                        (131072, 5),
                        (262144, 2),
                        (524288, 1),
                        (1048576, 6),
                    ],
                    5,
                ),
            ),
            (
                8,
                (&[(64, 5), (128, 6), (2048, 5), (8192, 6), (1048576, 1)], 2),
            ),
            (
                16,
                (&[(8, 7), (64, 5), (4096, 7), (16384, 5), (32768, 6)], 1),
            ),
            (32, (&[(4096, 7), (1048576, 6)], 8)),
            (64, (&[(2048, 6)], 7)),
            (128, (&[], 7)),
            (256, (&[(2, 6), (16384, 5), (32768, 1), (65536, 5)], 7)),
            (1024, (&[(16384, 7), (32768, 4)], 7)),
            (2048, (&[(524288, 7)], 8)),
            (4096, (&[(262144, 7)], 8)),
        ],
        (&[(8192, 7), (16384, 5), (262144, 7)], 8),
    );
    by_bytes(n, row)
}

/// `ompi_coll_tuned_reduce_intra_dec_fixed`, commutative branch.
/// 1 linear, 2 chain, 3 pipeline, 4 binary, 5 binomial, 6 in-order_binary,
/// 7 rabenseifner.
pub(super) fn reduce_id(p: u64, n: u64) -> u8 {
    let row = by_comm(
        p,
        &[
            (
                4,
                (
                    &[
                        (8, 7),
                        (16, 4),
                        (32, 3),
                        (262144, 1),
                        (524288, 3),
                        (1048576, 2),
                    ],
                    3,
                ),
            ),
            (
                8,
                (
                    &[
                        (4096, 4),
                        (65536, 2),
                        (262144, 5),
                        (524288, 1),
                        (1048576, 5),
                    ],
                    1,
                ),
            ),
            (16, (&[(8192, 4)], 5)),
            (32, (&[(4096, 4)], 5)),
            (256, (&[], 5)),
            (512, (&[(8192, 5), (16384, 6)], 5)),
            (2048, (&[], 5)),
            (4096, (&[(512, 5), (1024, 6), (8192, 5), (16384, 6)], 5)),
        ],
        (
            &[
                (16, 5),
                (32, 6),
                (1024, 5),
                (2048, 6),
                (8192, 5),
                (16384, 6),
            ],
            5,
        ),
    );
    by_bytes(n, row)
}

/// `ompi_coll_tuned_reduce_scatter_intra_dec_fixed` on the total size,
/// commutative branch. 1 non-overlapping, 2 recursive_halving, 3 ring,
/// 4 butterfly.
pub(super) fn reduce_scatter_id(p: u64, total: u64) -> u8 {
    let row = by_comm(
        p,
        &[
            (4, (&[(65536, 3), (131072, 4)], 3)),
            (8, (&[(8, 1), (262144, 2)], 3)),
            (32, (&[(262144, 2)], 3)),
            (64, (&[(64, 1), (2048, 2), (524288, 4)], 3)),
            (128, (&[(256, 1), (512, 2), (2048, 4), (4096, 2)], 4)),
            (256, (&[(256, 1), (512, 2)], 4)),
            (512, (&[(256, 1), (1024, 2)], 4)),
            (1024, (&[(512, 1), (2048, 2), (8192, 4), (16384, 2)], 4)),
            (2048, (&[(512, 1), (4096, 2), (16384, 4), (32768, 2)], 4)),
            (4096, (&[(512, 1), (4096, 2)], 4)),
        ],
        (&[(1024, 1), (8192, 2)], 4),
    );
    by_bytes(total, row)
}

/// `ompi_coll_tuned_allgather_intra_dec_fixed` on the per-rank block.
/// 1 linear, 2 bruck, 3 recursive_doubling, 4 ring, 5 neighbor, 6 two_proc.
pub(super) fn allgather_id(p: u64, n: u64) -> u8 {
    if p == 2 {
        return 6;
    }
    let row = by_comm(
        p,
        &[
            (32, (&[], 3)),
            (64, (&[(1024, 3), (65536, 5)], 4)),
            (128, (&[(512, 3), (65536, 5)], 4)),
            (
                256,
                (&[(512, 3), (131072, 5), (524288, 4), (1048576, 5)], 4),
            ),
            (
                512,
                (
                    &[
                        (32, 3),
                        (128, 2),
                        (1024, 3),
                        (131072, 5),
                        (524288, 4),
                        (1048576, 5),
                    ],
                    4,
                ),
            ),
            (1024, (&[(64, 3), (256, 2), (2048, 3)], 5)),
            (
                2048,
                (
                    &[
                        (4, 3),
                        (8, 2),
                        (16, 3),
                        (32, 2),
                        (256, 3),
                        (512, 2),
                        (4096, 3),
                    ],
                    5,
                ),
            ),
            (4096, (&[(32, 2), (128, 3), (512, 2), (4096, 3)], 5)),
        ],
        (&[(2, 3), (8, 2), (16, 3), (512, 2), (4096, 3)], 5),
    );
    by_bytes(n, row)
}

/// `ompi_coll_tuned_allgatherv_intra_dec_fixed` on the average block
/// (`total / p`). 1 default, 2 bruck, 3 ring, 4 neighbor, 5 two_proc.
pub(super) fn allgatherv_id(p: u64, per_rank: u64) -> u8 {
    if p == 2 {
        return by_bytes(per_rank, (&[(2048, 3), (4096, 5), (8192, 3)], 5));
    }
    let row = by_comm(
        p,
        &[
            (
                8,
                (
                    &[(256, 1), (4096, 4), (8192, 3), (16384, 4), (262144, 2)],
                    4,
                ),
            ),
            (16, (&[(1024, 1)], 2)),
            (32, (&[(128, 1), (262144, 2)], 3)),
            (64, (&[(256, 1), (8192, 2)], 3)),
            (128, (&[(256, 1), (4096, 2)], 3)),
            (256, (&[(1024, 2), (65536, 4)], 3)),
            (512, (&[(1024, 2)], 3)),
            (1024, (&[(512, 2), (1024, 1), (4096, 2), (1048576, 4)], 3)),
        ],
        (&[(4096, 2)], 4),
    );
    by_bytes(per_rank, row)
}

/// `ompi_coll_tuned_gather_intra_dec_fixed` on the per-rank block.
/// 1 basic_linear, 2 binomial, 3 linear_sync.
pub(super) fn gather_id(p: u64, n: u64) -> u8 {
    let row = by_comm(
        p,
        &[
            (
                4,
                (&[(2, 3), (4, 1), (32768, 2), (65536, 1), (131072, 2)], 3),
            ),
            (8, (&[(1024, 2), (8192, 1), (32768, 2), (262144, 1)], 3)),
            (256, (&[], 2)),
            (512, (&[(2048, 2), (8192, 1)], 2)),
        ],
        (&[], 2),
    );
    by_bytes(n, row)
}

/// `ompi_coll_tuned_scatter_intra_dec_fixed` on the per-rank block.
/// 1 basic_linear, 2 binomial, 3 linear_nb.
pub(super) fn scatter_id(p: u64, n: u64) -> u8 {
    let row = by_comm(
        p,
        &[
            (4, (&[(2, 3), (131072, 1), (262144, 3)], 1)),
            (
                8,
                (
                    &[(2048, 2), (4096, 1), (8192, 2), (32768, 1), (1048576, 3)],
                    1,
                ),
            ),
            (16, (&[(16384, 2), (1048576, 3)], 1)),
            (32, (&[(16384, 2), (32768, 1)], 3)),
            (64, (&[(512, 2), (8192, 3), (16384, 2)], 3)),
        ],
        (&[(512, 2)], 3),
    );
    by_bytes(n, row)
}

pub(super) fn select(call: &CollCall<'_>) -> Algorithm {
    let p = u64::from(call.size);
    let n = call.counts.single();
    use Algorithm as A;
    match call.kind {
        CollKind::Allreduce => match allreduce_id(p, n) {
            1 => A::Linear,
            2 => A::NonOverlapping,
            3 => A::RecursiveDoubling,
            // segmented_ring with segment size 0 runs the plain ring
            // (`ompi_coll_base_allreduce_intra_ring_segmented`: count <
            // size * segcount).
            4 | 5 => A::Ring,
            _ => A::OmpiRabenseifner,
        },
        CollKind::Alltoall => match alltoall_id(p, n) {
            1 => A::Linear,
            // modified_bruck
            3 => A::Bruck,
            // linear_sync with `coll_tuned_alltoall_max_requests` 0 posts
            // everything at once: the linear pattern.
            4 => A::Linear,
            // pairwise; two_proc is the same single sendrecv on 2 ranks.
            _ => A::OmpiPairwise,
        },
        CollKind::Alltoallv => match alltoallv_id(p) {
            1 => A::Linear,
            _ => A::OmpiPairwise,
        },
        CollKind::Barrier => match barrier_id(p) {
            1 => A::Linear,
            2 => A::DoubleRing,
            3 => A::RecursiveDoubling,
            6 => A::Tree,
            // bruck; two_proc is the same single exchange on 2 ranks.
            _ => A::Bruck,
        },
        CollKind::Bcast => match bcast_id(p, n) {
            1 => A::Linear,
            // chain with fanout 0 is built as one chain: the pipeline.
            2 | 3 => A::Pipeline(0),
            4 => A::SplitBinaryTree(0),
            5 => A::BinaryTree(0),
            6 => A::OmpiBinomial,
            7 => A::Knomial,
            // scatter_allgather(_ring) switch to basic_linear when
            // count < comm_size.
            8 if call.count(n) < p => A::Linear,
            8 => A::ScatterRecursiveDoublingAllgather,
            _ if call.count(n) < p => A::Linear,
            _ => A::ScatterRingAllgather,
        },
        CollKind::Reduce => match reduce_id(p, n) {
            1 => A::Linear,
            2 | 3 => A::Pipeline(0),
            4 => A::BinaryTree(0),
            5 => A::BinomialTree,
            6 => A::InOrderBinary,
            _ => A::OmpiRabenseifner,
        },
        CollKind::ReduceScatter => match reduce_scatter_id(p, call.counts.total(p)) {
            1 => A::NonOverlapping,
            2 => A::RecursiveHalving,
            3 => A::Ring,
            _ => A::Butterfly,
        },
        CollKind::Allgather => match allgather_id(p, n) {
            1 => A::Linear,
            2 => A::Bruck,
            // recursive_doubling switches to Bruck on other sizes.
            3 if is_pof2(p) => A::RecursiveDoubling,
            3 => A::Bruck,
            4 => A::Ring,
            5 => A::Neighbor,
            _ => A::TwoProcs,
        },
        CollKind::Allgatherv => match allgatherv_id(p, call.counts.total(p) / p.max(1)) {
            1 => A::Linear,
            2 => A::Bruck,
            4 => A::Neighbor,
            5 => A::TwoProcs,
            // ring (`ompi_coll_base_allgatherv_intra_ring`: whole blocks).
            _ => A::OmpiRing,
        },
        CollKind::Gather => match gather_id(p, n) {
            1 => A::Linear,
            2 => A::BinomialTree,
            _ => A::LinearSync(0),
        },
        CollKind::Scatter => match scatter_id(p, n) {
            1 => A::Linear,
            2 => A::OmpiBinomial,
            _ => A::LinearNb,
        },
        // coll/basic: mca_coll_basic_gatherv_intra posts all receives,
        // mca_coll_basic_scatterv_intra sends one after the other.
        CollKind::Gatherv => A::LinearNb,
        CollKind::Scatterv => A::Linear,
        // coll/basic scan and exscan: the linear chain.
        CollKind::Scan | CollKind::Exscan => A::Linear,
    }
}
