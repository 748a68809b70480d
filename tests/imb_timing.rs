//! The IMB skeletons' two ways of timing (`--param timing=2002|2017`),
//! against closed forms on the LogGP test machine of
//! `collectives_closed_form.rs`: every rank its own node, L = 5 us,
//! o_s = 1 us, o_r = 2 us, g = 0, G = 10 ns/B, eager below 64 KiB, memcpy and
//! reductions at 1 GB/s; MPICH's binomial bcast, recursive-doubling
//! allreduce and dissemination barrier. One eager message of n bytes takes
//! T = o_s + L + n G from the start of the send to its arrival.
//!
//! IMB 2017+ (intel/mpi-benchmarks, src_c/IMB_bcast.c and the other
//! collectives) times each call alone and puts a barrier (`-sync 1`) after
//! it; PMB 2.2 times the loop. What that changes is checked here through
//! values that follow from the model by hand.

mod support;

use std::path::PathBuf;

use approx::assert_relative_eq;

const L: f64 = 5.0;
const OS: f64 = 1.0;
const OR: f64 = 2.0;

fn machine(dir: &support::TempDir, bandwidth: &str) -> PathBuf {
    support::closed_form_machine(
        dir,
        bandwidth,
        "barrier = \"dissemination\"\nbcast = \"binomial\"\nallreduce = \"recursive_doubling\"",
    )
}

/// One row of an IMB table: bytes (None for Barrier), repetitions, t_min,
/// t_max, t_avg (us).
#[derive(Debug)]
struct Row {
    bytes: Option<u64>,
    reps: u64,
    min: f64,
    max: f64,
    avg: f64,
}

/// Runs an IMB skeleton on 2 ranks (one per node) of the test machine and
/// returns its table.
fn table(skeleton: &str, bandwidth: &str, params: &[&str]) -> Vec<Row> {
    let dir = support::temp_dir();
    let m = machine(&dir, bandwidth);
    let m = m.to_str().expect("utf-8");
    support::run_rank0_table(
        skeleton,
        &["--ranks", "2", "--ppn", "1", "--machine", m],
        params,
    )
    .into_iter()
    .map(|v| {
        let (bytes, rest) = if v.len() == 5 {
            (Some(v[0] as u64), &v[1..])
        } else {
            (None, &v[..])
        };
        Row {
            bytes,
            reps: rest[0] as u64,
            min: rest[1],
            max: rest[2],
            avg: rest[3],
        }
    })
    .collect()
}

/// The message sizes of a table's rows.
fn sizes(rows: &[Row]) -> Vec<u64> {
    rows.iter().map(|r| r.bytes.expect("bytes")).collect()
}

#[test]
fn imb2017_bcast_times_each_call_alone_from_a_fixed_root() {
    // Root 0 every call (root_shift 0): its eager send costs it o_s. The
    // barrier after a call lets rank 1 out L before the root (rank 1's
    // message reaches the root L after rank 1 got the root's), so rank 1
    // starts each call L before the root and is done o_r after the root's
    // message arrives: L + T(n) + o_r = 13 us + n G here.
    let rows = table(
        "examples/imb/bcast.mpl",
        "100 MB/s",
        &["timing=2017", "max_bytes=4096"],
    );
    assert_eq!(
        sizes(&rows),
        [0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]
    );
    for r in &rows[1..] {
        let n = r.bytes.expect("bytes") as f64;
        assert_eq!(r.reps, 1000);
        assert_relative_eq!(r.min, OS, max_relative = 1e-9);
        assert_relative_eq!(r.max, L + OS + L + n * 0.01 + OR, max_relative = 1e-9);
        assert_relative_eq!(r.avg, (r.min + r.max) / 2.0, max_relative = 1e-9);
    }
    // PMB's loop timing with a rotating root gives other numbers: the
    // root's time is no longer its send overhead alone.
    let pmb = table("examples/imb/bcast.mpl", "100 MB/s", &["max_bytes=4096"]);
    assert!(pmb[1..].iter().all(|r| r.min > 2.0 * OS), "{pmb:?}");
}

#[test]
fn imb2017_allreduce_rows_step_by_the_float_and_average_the_closed_form() {
    // Sizes 0, then 4 (1 byte rounded up to MPI_FLOAT), 8, ... Recursive
    // doubling on 2 ranks: copy, one exchange, reduce: 2 n c + T(n) + o_r
    // per call on average. The ranks leave the barrier L apart (see the bcast
    // test), so the early one waits L longer and the late one L less:
    // t_max - t_min = 2 L.
    let rows = table(
        "examples/imb/allreduce.mpl",
        "100 MB/s",
        &["timing=2017", "max_bytes=4096"],
    );
    assert_eq!(
        sizes(&rows),
        [0, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]
    );
    assert_eq!(
        rows[0].avg, 0.0,
        "a count of 0 returns at once (zero_count)"
    );
    for r in &rows[1..] {
        let n = r.bytes.expect("bytes") as f64;
        let expected = 2.0 * n * 0.001 + OS + L + n * 0.01 + OR;
        assert_relative_eq!(r.avg, expected, max_relative = 1e-9);
        assert_relative_eq!(r.max - r.min, 2.0 * L, max_relative = 1e-6);
    }
}

#[test]
fn imb2017_repetitions_follow_the_dynamic_policy() {
    // At 1 MB/s a call of n bytes takes t = 13 us + n us at the slower rank
    // (see the bcast test). IMB's dynamic policy runs min(1000, 40 MiB / n,
    // 1 + 10 s / t) repetitions, never more than the size before.
    let rows = table(
        "examples/imb/bcast.mpl",
        "1 MB/s",
        &["timing=2017", "max_bytes=32768"],
    );
    for r in &rows[1..] {
        let n = r.bytes.expect("bytes");
        let t = (13.0 + n as f64) * 1e-6;
        let expected = 1000
            .min(41_943_040 / n)
            .min((1.0 + 10.0 / t).floor() as u64);
        assert_eq!(r.reps, expected, "{r:?}");
        assert_relative_eq!(r.max, t * 1e6, max_relative = 1e-9);
    }
    assert_eq!(
        rows.last().map(|r| (r.bytes, r.reps)),
        Some((Some(32768), 306))
    );
    assert_eq!(rows[rows.len() - 2].reps, 610);
}

#[test]
fn imb2017_stops_a_benchmark_past_its_time_limit() {
    // IMB skips the sizes that start after (log2 max - 1) * secs seconds
    // (IMB_2018.c): with secs = 100 us the first size (about 8 ms of calls
    // and barriers) is already past 11 * 100 us.
    let rows = table(
        "examples/imb/bcast.mpl",
        "100 MB/s",
        &["timing=2017", "max_bytes=4096", "secs=0.0001"],
    );
    assert!(rows.is_empty(), "{rows:?}");
    let rows = table(
        "examples/imb/bcast.mpl",
        "100 MB/s",
        &["timing=2017", "max_bytes=4096", "secs=10"],
    );
    assert_eq!(rows.len(), 14);
}

#[test]
fn imb_barrier_is_loop_timed_in_both() {
    // A dissemination barrier on 2 ranks: T(0) + o_r per call, in a loop.
    for timing in ["timing=2002", "timing=2017"] {
        let rows = table("examples/imb/barrier.mpl", "100 MB/s", &[timing]);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].reps, 1000);
        assert_relative_eq!(rows[0].avg, OS + L + OR, max_relative = 1e-9);
    }
}

#[test]
fn imb2017_with_inactive_ranks_runs_to_the_end() {
    // 2 active of 3: the third rank takes part only in IMB's MPI_COMM_WORLD
    // calls; the table is the 2-rank one's in size and repetitions.
    let dir = support::temp_dir();
    let m = machine(&dir, "100 MB/s");
    let o = support::parsim(&[
        "run",
        "examples/imb/allreduce.mpl",
        "--ranks",
        "3",
        "--ppn",
        "1",
        "--quiet",
        "--machine",
        m.to_str().expect("utf-8"),
        "--param",
        "timing=2017",
        "--param",
        "active=2",
        "--param",
        "max_bytes=64",
    ]);
    assert!(o.status.success(), "{}", support::stderr(&o));
    let out = support::stdout(&o);
    let sizes: Vec<&str> = out
        .lines()
        .filter_map(|l| l.strip_prefix("[0] "))
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(sizes, ["0", "4", "8", "16", "32", "64"]);
}

#[test]
fn imb2018_reduce_scatter_splits_the_vector_in_whole_floats() {
    // IMB 2018+ (IMB_reduce_scatter.c, IMB_get_rank_portion): a vector of
    // n bytes is ceil(n / 4) floats, rank i's block the i-th contiguous
    // piece, the first (floats mod 2) one float longer. MPICH's recursive
    // halving on 2 ranks: a copy of the whole vector into `tmp_results`
    // (reduce_scatter_intra_recursive_halving.c line 97), one exchange of
    // the blocks (empty ones are not sent), the received block combined,
    // the own block copied out (line 259); copies and the combination at
    // c = 1 ns/B.
    let rows = table(
        "examples/imb/reduce_scatter.mpl",
        "100 MB/s",
        &["timing=2017", "max_bytes=4096"],
    );
    assert_eq!(
        sizes(&rows),
        [0, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]
    );
    // One float: blocks [4, 0]. Rank 1 copies its float and only sends
    // (o_s); rank 0, out of the barrier L earlier, copies, waits L more for
    // the float (sent after rank 1's copy), then o_r, the combination and
    // the copy out.
    assert_relative_eq!(rows[1].min, 4.0 * 0.001 + OS, max_relative = 1e-9);
    assert_relative_eq!(
        rows[1].max,
        L + OS + L + 4.0 * 0.01 + OR + 4.0 * 0.001 + 8.0 * 0.001,
        max_relative = 1e-9
    );
    // From two floats on, n / 2 bytes each way: n c + T(n / 2) + o_r +
    // (n / 2) c + (n / 2) c on average, the ranks 2 L apart as in the
    // allreduce.
    for r in &rows[2..] {
        let n = r.bytes.expect("bytes") as f64;
        let half = n / 2.0;
        assert_relative_eq!(
            r.avg,
            n * 0.001 + OS + L + half * 0.01 + OR + half * 0.001 + half * 0.001,
            max_relative = 1e-9
        );
        assert_relative_eq!(r.max - r.min, 2.0 * L, max_relative = 1e-6);
    }
}

/// How much later the second rank leaves the barrier before each
/// Alltoallv call of `n` bytes, in the steady state (worked out from the
/// two ranks' events of one call and the barrier after it): `L - o_r + n
/// G`, at most `L` (from `n G = o_r` on, the later rank's barrier message
/// reaches the earlier rank after the earlier one has sent its own).
fn alltoallv_lag(n: f64) -> f64 {
    (L - OR + n * 0.01).min(L)
}

#[test]
fn imb2018_rooted_and_v_collectives_time_each_call_from_root_0() {
    // IMB 2017+'s Gather, Gatherv, Scatter, Scatterv (root 0 every call)
    // and Alltoallv, on 2 ranks of the test machine: the ranks leave the
    // barrier L apart (see the bcast test), so the later one finds its
    // peer's message in flight since L. Gather(v): the non-root only sends
    // (o_s); the root waits L more than the message's T(n), then o_r (its
    // own block's copy, n c with c = 1 ns/B, overlaps the wait). Scatter(v):
    // the root copies its own block before it sends, both ranks n c later.
    // Alltoallv (MPICH's scattered algorithm): each rank sends its own
    // block to itself first (o_s and two copies, n c each, on its core;
    // o_r when it takes it), then to its peer. The earlier rank waits for
    // its peer's message; the later one ends after its own work or at the
    // earlier one's message, whichever is later. How far apart they leave
    // the barrier (`alltoallv_lag`) follows from the previous call.
    for (skeleton, min_of, max_of) in [
        (
            "examples/imb/gather.mpl",
            (|_| OS) as fn(f64) -> f64,
            (|n| 2.0 * L + OS + n * 0.01 + OR) as fn(f64) -> f64,
        ),
        (
            "examples/imb/gatherv.mpl",
            |_| OS,
            |n| 2.0 * L + OS + n * 0.01 + OR,
        ),
        (
            "examples/imb/scatter.mpl",
            |n| OS + n * 0.001,
            |n| 2.0 * L + OS + n * (0.01 + 0.001) + OR,
        ),
        (
            "examples/imb/scatterv.mpl",
            |n| OS + n * 0.001,
            |n| 2.0 * L + OS + n * (0.01 + 0.001) + OR,
        ),
        (
            "examples/imb/alltoallv.mpl",
            |n| {
                let lag = alltoallv_lag(n);
                (lag + 2.0 * OS + OR).max(2.0 * OS + L + n * 0.01) + n * 2.0 * 0.001 + OR - lag
            },
            |n| alltoallv_lag(n) + 2.0 * OS + L + OR + n * (0.01 + 2.0 * 0.001),
        ),
    ] {
        let rows = table(skeleton, "100 MB/s", &["max_bytes=4096"]);
        assert_eq!(
            sizes(&rows),
            [0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096],
            "{skeleton}"
        );
        for r in &rows[1..] {
            let n = r.bytes.expect("bytes") as f64;
            assert_eq!(r.reps, 1000, "{skeleton}");
            assert_relative_eq!(r.min, min_of(n), max_relative = 1e-9);
            assert_relative_eq!(r.max, max_of(n), max_relative = 1e-9);
            assert_relative_eq!(r.avg, (r.min + r.max) / 2.0, max_relative = 1e-9);
        }
    }
}

#[test]
fn imb2018_only_skeletons_refuse_the_loop_timing() {
    let dir = support::temp_dir();
    let m = machine(&dir, "100 MB/s");
    let o = support::parsim(&[
        "run",
        "examples/imb/gather.mpl",
        "--ranks",
        "2",
        "--quiet",
        "--machine",
        m.to_str().expect("utf-8"),
        "--param",
        "timing=2002",
    ]);
    assert_eq!(o.status.code(), Some(4), "{}", support::stderr(&o));
    assert!(
        support::stderr(&o).contains("Gather has IMB 2017+'s timing only"),
        "{}",
        support::stderr(&o)
    );
}
