//! `[node] progress`: where an MPI library answers a rendezvous.
//!
//! MPICH, Open MPI and Intel MPI without an asynchronous progress thread
//! match an arriving rendezvous request (RTS) in their progress engine,
//! which runs only inside MPI calls; a receiver that posted `irecv` and
//! then computes answers it at its next MPI call (`wait`, `test`, ...).
//! `progress = "calls"` models that; `"async"` answers at once (a progress
//! thread, or hardware that does it), which lets the transfer overlap the
//! computation.
//!
//! Machine (tests/support `closed_form_machine`): one rank per node,
//! o_s = 1 us, L = 5 us, o_r = 2 us, 100 MB/s, eager below 64 KiB,
//! 0-byte control messages. A 1 MiB message takes about 10.5 ms on the
//! wire, far longer than the computations below, so with async progress
//! the receiver's computation hides entirely.

mod support;

use approx::assert_relative_eq;

const OS: f64 = 1.0e-6;
const L: f64 = 5.0e-6;

/// Rank 0 sends `bytes` to rank 1 with `isend` + `wait`; rank 1 posts
/// `irecv`, computes `body` (statements), then waits. Returns the two
/// ranks' finish times.
fn run(progress: &str, bytes: u64, body: &str) -> [f64; 2] {
    let dir = support::temp_dir();
    let machine = support::closed_form_machine(&dir, "100 MB/s", "")
        .to_str()
        .expect("utf-8")
        .to_owned();
    let text = std::fs::read_to_string(&machine).expect("machine file");
    let text = text.replace("[node]\n", &format!("[node]\nprogress = \"{progress}\"\n"));
    let machine = dir.file("progress.toml", &text);
    let program = format!(
        "kernel work(s) cost s\n\
         if rank == 0 {{\n\
         \x20   let s = isend(to: 1, bytes: {bytes})\n\
         \x20   wait(s)\n\
         }} else {{\n\
         \x20   let r = irecv(from: 0, bytes: {bytes})\n\
         {body}\n\
         \x20   wait(r)\n\
         }}\n"
    );
    let prog = dir.file("prog.mpl", &program);
    let finish = support::finish_times(&support::run_json(&prog, 2, &machine));
    [finish[0], finish[1]]
}

fn compute(seconds: f64) -> String {
    format!("    compute work({seconds:e})")
}

#[test]
fn a_rendezvous_waits_for_the_receivers_next_mpi_call() {
    const MIB: u64 = 1 << 20;
    // Both ranks enter MPI at once: the RTS arrives o_s + L after the
    // send starts and is answered then, under either policy.
    let none = run("async", MIB, "");
    assert_eq!(none, run("calls", MIB, ""));

    for c in [0.2e-3, 0.5e-3] {
        // Async: the computation hides behind the transfer.
        let async_ = run("async", MIB, &compute(c));
        assert_relative_eq!(async_[1], none[1], max_relative = 1e-12);
        assert_relative_eq!(async_[0], none[0], max_relative = 1e-12);
        // In calls only: the CTS leaves at the receiver's `wait`, c after
        // the start instead of o_s + L; both ranks finish that much later.
        let calls = run("calls", MIB, &compute(c));
        assert_relative_eq!(calls[1], none[1] + c - (OS + L), max_relative = 1e-9);
        assert_relative_eq!(calls[0], none[0] + c - (OS + L), max_relative = 1e-9);
    }

    // A `test` in the middle of the computation is an MPI call: the CTS
    // leaves there, and the rest of the computation overlaps the transfer.
    let half = run("calls", MIB, &compute(0.25e-3));
    let polled = run(
        "calls",
        MIB,
        &format!(
            "{}\n    let done = test(r)\n{}",
            compute(0.25e-3),
            compute(0.25e-3)
        ),
    );
    assert_relative_eq!(polled[1], half[1], max_relative = 1e-12);
    assert_relative_eq!(polled[0], half[0], max_relative = 1e-12);

    // An eager message needs no answer: the same under both.
    let eager = run("calls", 1024, &compute(0.5e-3));
    assert_eq!(eager, run("async", 1024, &compute(0.5e-3)));
}

/// The key is checked: a wrong value names it and what it takes.
#[test]
fn a_wrong_progress_value_names_the_key() {
    let dir = support::temp_dir();
    let machine = support::closed_form_machine(&dir, "100 MB/s", "");
    let text = std::fs::read_to_string(&machine).expect("machine file");
    let bad = dir.file(
        "bad.toml",
        &text.replace("[node]\n", "[node]\nprogress = \"sometimes\"\n"),
    );
    let o = support::parsim_command()
        .args(["machine", bad.to_str().expect("utf-8")])
        .output()
        .expect("runs");
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("node.progress") && err.contains("\"calls\"") && err.contains("\"async\""),
        "{err}"
    );
}
