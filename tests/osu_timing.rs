//! The OSU collective skeletons (`examples/osu/`) against closed forms on
//! the LogGP test machine of `collectives_closed_form.rs`: every rank its
//! own node, L = 5 us, o_s = 1 us, o_r = 2 us, g = 0, G = 10 ns/B, eager
//! below 64 KiB, memcpy and reductions at 1 GB/s (c = 1 ns/B), MPICH's
//! rules. One eager message of n bytes takes T = o_s + L + n G from the
//! start of the send to its arrival.
//!
//! OSU (mpi/collective/osu_*.c of OMB 5.4.1 to 6.1) times each call alone
//! with a barrier after it. On 2 ranks the dissemination barrier lets one
//! rank out L before the other, so from the second size on the ranks start
//! each call L apart; the first size starts from OSU's barrier together.

mod support;

use std::path::PathBuf;

use approx::assert_relative_eq;

const L: f64 = 5.0;
const OS: f64 = 1.0;
const OR: f64 = 2.0;
const G: f64 = 0.01;
const C: f64 = 0.001;

/// One row of the skeletons' table: bytes, repetitions, t_min, t_max,
/// t_avg (us).
#[derive(Debug)]
struct Row {
    bytes: u64,
    reps: u64,
    min: f64,
    max: f64,
    avg: f64,
}

fn machine(dir: &support::TempDir) -> PathBuf {
    support::closed_form_machine(
        dir,
        "100 MB/s",
        "barrier = \"dissemination\"\nallreduce = \"recursive_doubling\"",
    )
}

/// Runs an OSU skeleton on 2 ranks (one per node) of the test machine.
fn table(skeleton: &str, max_bytes: u64) -> Vec<Row> {
    let dir = support::temp_dir();
    let m = machine(&dir);
    let max = format!("max_bytes={max_bytes}");
    let m = m.to_str().expect("utf-8");
    support::run_rank0_table(
        skeleton,
        &["--ranks", "2", "--ppn", "1", "--machine", m],
        &[&max],
    )
    .into_iter()
    .map(|v| Row {
        bytes: v[0] as u64,
        reps: v[1] as u64,
        min: v[2],
        max: v[3],
        avg: v[4],
    })
    .collect()
}

/// How much later the second rank leaves the barrier before each
/// alltoallv call of `n` bytes, in the steady state (worked out from the
/// two ranks' events of one call and the barrier after it): `L - o_r + n
/// G`, at most `L` (from `n G = o_r` on, the later rank's barrier message
/// reaches the earlier rank after the earlier one has sent its own).
fn alltoallv_lag(n: f64) -> f64 {
    (L - OR + n * G).min(L)
}

#[test]
fn v_collectives_follow_their_closed_forms() {
    // gatherv: the non-root only sends (o_s); the root waits L more than
    // T(n), then o_r (its own block's copy overlaps the wait). scatterv:
    // the root copies its own block before it sends. allgatherv: both
    // copy, send and receive; the later rank finds the other's block in
    // flight since L. alltoallv (MPICH's scattered algorithm): each rank
    // sends its own block to itself first (o_s and two copies on its core,
    // o_r when it takes it), then to its peer; the earlier rank waits for
    // its peer's message, the later one ends after its own work or at the
    // earlier one's message, whichever is later.
    type F = fn(f64) -> f64;
    let cases: [(&str, F, F); 4] = [
        (
            "examples/osu/gatherv.mpl",
            |_| OS,
            |n| 2.0 * L + OS + n * G + OR,
        ),
        (
            "examples/osu/scatterv.mpl",
            |n| OS + n * C,
            |n| 2.0 * L + OS + n * (G + C) + OR,
        ),
        // MPICH's recursive doubling then copies the whole result, 2n
        // bytes, out of its temporary.
        (
            "examples/osu/allgatherv.mpl",
            |n| OS + OR + n * (G + 3.0 * C),
            |n| 2.0 * L + OS + OR + n * (G + 3.0 * C),
        ),
        (
            "examples/osu/alltoallv.mpl",
            |n| {
                let lag = alltoallv_lag(n);
                (lag + 2.0 * OS + OR).max(2.0 * OS + L + n * G) + 2.0 * n * C + OR - lag
            },
            |n| alltoallv_lag(n) + 2.0 * OS + L + OR + n * (G + 2.0 * C),
        ),
    ];
    for (skeleton, min_of, max_of) in cases {
        let rows = table(skeleton, 32768);
        let sizes: Vec<u64> = rows.iter().map(|r| r.bytes).collect();
        assert_eq!(sizes, (0..16).map(|k| 1u64 << k).collect::<Vec<_>>());
        for r in &rows[1..] {
            let n = r.bytes as f64;
            // OMB's LARGE_MESSAGE_SIZE: above 8192 bytes, 100 iterations.
            assert_eq!(
                r.reps,
                if r.bytes > 8192 { 100 } else { 1000 },
                "{skeleton}"
            );
            assert_relative_eq!(r.min, min_of(n), max_relative = 1e-9);
            assert_relative_eq!(r.max, max_of(n), max_relative = 1e-9);
            assert_relative_eq!(r.avg, (r.min + r.max) / 2.0, max_relative = 1e-9);
        }
    }
}

#[test]
fn reduce_scatter_splits_floats_as_osu_does() {
    // osu_reduce_scatter.c: n floats, one each to the first n ranks when
    // n < size, else n / size each and one more to the first n mod size.
    // MPICH's recursive halving on 2 ranks: a copy of the whole vector
    // into `tmp_results` (reduce_scatter_intra_recursive_halving.c line
    // 97), one exchange of the blocks (empty ones are not sent), the
    // received block combined, and the own block copied out (line 259).
    let rows = table("examples/osu/reduce_scatter.mpl", 65536);
    let sizes: Vec<u64> = rows.iter().map(|r| r.bytes).collect();
    assert_eq!(sizes, (2..17).map(|k| 1u64 << k).collect::<Vec<_>>());
    // One float: blocks [4, 0]; rank 1 copies 4 bytes and only sends; rank
    // 0 copies 4, receives 4 (sent after rank 1's copy) and copies 4 out.
    assert_relative_eq!(rows[0].min, 4.0 * C + OS, max_relative = 1e-9);
    assert_relative_eq!(
        rows[0].max,
        2.0 * L + OS + 4.0 * (G + C) + OR + 8.0 * C,
        max_relative = 1e-9
    );
    for r in &rows[1..] {
        let n = r.bytes as f64;
        let half = n / 2.0;
        assert_relative_eq!(
            r.avg,
            n * C + OS + L + half * (G + C) + OR + half * C,
            max_relative = 1e-9
        );
        assert_relative_eq!(r.max - r.min, 2.0 * L, max_relative = 1e-6);
        // The switch to 100 iterations counts floats: above 8192 floats.
        assert_eq!(r.reps, if r.bytes > 32768 { 100 } else { 1000 });
    }
}

#[test]
fn allreduce_and_reduce_switch_to_large_iterations_above_8192_floats() {
    for skeleton in ["examples/osu/allreduce.mpl", "examples/osu/reduce.mpl"] {
        let rows = table(skeleton, 65536);
        let reps: Vec<(u64, u64)> = rows
            .iter()
            .filter(|r| r.bytes >= 8192)
            .map(|r| (r.bytes, r.reps))
            .collect();
        assert_eq!(
            reps,
            [(8192, 1000), (16384, 1000), (32768, 1000), (65536, 100)],
            "{skeleton}"
        );
    }
}
