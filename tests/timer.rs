//! What a read of the clock costs (`[node] timer`, `Machine::timer_seconds`):
//! a statement that reads `wtime()` advances the rank's clock by the timer
//! per read once it is done, so an interval between two reads holds one
//! read beyond its work, as a benchmark's `MPI_Wtime` pair does (measured
//! by `calibrate net --run`; 0.03 µs on the development machine).
//!
//! Machine: tests/support `closed_form_machine` (o_s 1 µs, L 5 µs, o_r 2
//! µs, G 0.01 µs/B; MPICH's rules) with `timer = "0.25 us"`.

mod support;

use approx::assert_relative_eq;

const TIMER: f64 = 0.25;

fn rank0_rows(program: &str, params: &[&str], timer: bool) -> Vec<Vec<f64>> {
    let dir = support::temp_dir();
    let node = if timer { "timer = \"0.25 us\"" } else { "" };
    let m = support::closed_form_machine_with(&dir, "100 MB/s", node, "");
    let m = m.to_str().expect("utf-8");
    support::run_rank0_table(
        program,
        &["--ranks", "2", "--ppn", "1", "--machine", m],
        params,
    )
}

#[test]
fn an_interval_between_two_reads_holds_one_read() {
    let dir = support::temp_dir();
    let prog = dir.file(
        "p.mpl",
        "let t0 = wtime()\n\
         let t1 = wtime()\n\
         let sum = 0.0\n\
         for i in 0 .. 4 {\n\
             let a = wtime()\n\
             compute_nothing()\n\
             sum += wtime() - a\n\
         }\n\
         fn compute_nothing() { return 0 }\n\
         if rank == 0 { print((t1 - t0) * 1e6, sum * 1e6) }\n",
    );
    let rows = rank0_rows(prog.to_str().expect("utf-8"), &[], true);
    assert_eq!(rows.len(), 1);
    assert_relative_eq!(rows[0][0], TIMER, max_relative = 1e-9);
    assert_relative_eq!(rows[0][1], 4.0 * TIMER, max_relative = 1e-9);
}

/// OSU's osu_latency times 10,000 round trips as one interval: the timer
/// moves it by a read over 2 x 10,000 half round trips, nothing to see;
/// IMB 2017+ and OSU's collectives time each call alone, so every row
/// moves by one read: here IMB's Allreduce, whose closed form
/// (tests/imb_timing.rs) the timer shifts by exactly `timer`.
#[test]
fn a_benchmark_that_times_each_call_sees_one_read_more_per_call() {
    let params = ["timing=2017", "max_bytes=4096", "secs=1"];
    let without = rank0_rows("examples/imb/allreduce.mpl", &params, false);
    let with = rank0_rows("examples/imb/allreduce.mpl", &params, true);
    assert_eq!(without.len(), with.len());
    assert!(without.len() > 5);
    for (a, b) in without.iter().zip(&with).skip(1) {
        assert_eq!(a[0], b[0]);
        for col in [2, 3, 4] {
            assert_relative_eq!(b[col] - a[col], TIMER, max_relative = 1e-6);
        }
    }
}
