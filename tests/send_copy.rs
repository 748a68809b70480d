//! `send_overhead_per_byte` (LogGOPS's `O`): the sender's copy of an eager
//! message out of the user's buffer keeps it in the send call for `o_s +
//! O·n`, while the message leaves after `o_s` (Hoefler, Schneider,
//! Lumsdaine, "LogGOPSim", HPDC 2010: CPU `o + (s−1)·O`, network `g +
//! (s−1)·G` from the same start).
//!
//! Machine (tests/support `closed_form_machine`): one rank per node, o_s =
//! 1 us, L = 5 us, o_r = 2 us, 100 MB/s (G = 10 ns/B), g = 0, eager below
//! 64 KiB, 0-byte control messages; `O` as each test sets it.

mod support;

use approx::assert_relative_eq;

const US: f64 = 1e-6;
const OS: f64 = 1.0 * US;
const L: f64 = 5.0 * US;
const OR: f64 = 2.0 * US;
const G: f64 = 10e-9;

/// Runs `program` on 2 ranks of the closed-form machine with `O` given as
/// `per_byte` (a time such as "4 ns"; `None` leaves the key out) and
/// returns the two ranks' finish times.
fn run(per_byte: Option<&str>, program: &str) -> [f64; 2] {
    let dir = support::temp_dir();
    let machine = support::closed_form_machine(&dir, "100 MB/s", "");
    let mut text = std::fs::read_to_string(&machine).expect("machine file");
    if let Some(o) = per_byte {
        text = text.replace(
            "[network]\n",
            &format!("[network]\nsend_overhead_per_byte = \"{o}\"\n"),
        );
    }
    let machine = dir.file("copy.toml", &text);
    let prog = dir.file("prog.mpl", program);
    let finish = support::finish_times(&support::run_json(&prog, 2, &machine));
    [finish[0], finish[1]]
}

/// Rank 0: `isend` of `bytes`, compute 100 us, `wait`; rank 1: `recv`.
fn isend_then_compute(bytes: u64) -> String {
    format!(
        "kernel work(s) cost s\n\
         if rank == 0 {{\n\
         \x20   let s = isend(to: 1, bytes: {bytes})\n\
         \x20   compute work(100e-6)\n\
         \x20   wait(s)\n\
         }} else {{\n\
         \x20   recv(from: 0, bytes: {bytes})\n\
         }}\n"
    )
}

#[test]
fn an_eager_copy_delays_the_sender_and_not_the_arrival() {
    let n = 10_000u64;
    let o = 4e-9;
    let program = isend_then_compute(n);
    let without = run(None, &program);
    let with = run(Some("4 ns"), &program);
    // The call returns after o_s (LogGP) or o_s + O·n (LogGOPS), then the
    // computation; the request is complete by then.
    assert_relative_eq!(without[0], OS + 100.0 * US, max_relative = 1e-12);
    assert_relative_eq!(
        with[0],
        OS + o * n as f64 + 100.0 * US,
        max_relative = 1e-12
    );
    // The receiver: o_s + L + n·G, then o_r, either way.
    let arrival = OS + L + n as f64 * G + OR;
    assert_relative_eq!(without[1], arrival, max_relative = 1e-12);
    assert_relative_eq!(with[1], arrival, max_relative = 1e-12);
    // A key of 0 is LogGP.
    assert_eq!(run(Some("0 ns"), &program), without);
}

#[test]
fn a_rendezvous_send_is_not_charged_the_copy() {
    // 100 KB is at or above the 64 KiB eager limit: sent from the user's
    // buffer after the handshake.
    let program = isend_then_compute(100_000);
    assert_eq!(run(Some("4 ns"), &program), run(None, &program));
}

/// Two `isend`s of n bytes back to back, then `waitall`; rank 1 receives
/// both. With O above G the sender's copies, not the adapter, space the
/// messages: the second leaves at `2·o_s + O·n` instead of when the
/// adapter is free (`o_s + n·G`).
#[test]
fn a_stream_is_spaced_by_the_copy_when_it_is_slower_than_the_adapter() {
    let n = 10_000u64;
    let program = format!(
        "if rank == 0 {{\n\
         \x20   let a = isend(to: 1, bytes: {n})\n\
         \x20   let b = isend(to: 1, bytes: {n})\n\
         \x20   waitall(a, b)\n\
         }} else {{\n\
         \x20   recv(from: 0, bytes: {n})\n\
         \x20   recv(from: 0, bytes: {n})\n\
         }}\n"
    );
    let w = n as f64 * G;
    // LogGP: the adapter is free at o_s + W; the second leaves then.
    let without = run(None, &program);
    assert_relative_eq!(without[1], OS + w + L + w + OR, max_relative = 1e-12);
    // O = 4 ns/B < G: the adapter still spaces them.
    assert_eq!(run(Some("4 ns"), &program)[1], without[1]);
    // O = 20 ns/B > G: the second call starts at o_s + O·n and the message
    // leaves o_s later.
    let o = 20e-9;
    let with = run(Some("20 ns"), &program);
    let second = 2.0 * OS + o * n as f64;
    assert_relative_eq!(with[1], second + L + w + OR, max_relative = 1e-12);
    // The sender finishes its second copy at 2·(o_s + O·n).
    assert_relative_eq!(with[0], 2.0 * (OS + o * n as f64), max_relative = 1e-12);
}

#[test]
fn a_negative_or_unitless_value_names_the_key() {
    let dir = support::temp_dir();
    let machine = support::closed_form_machine(&dir, "100 MB/s", "");
    let text = std::fs::read_to_string(&machine).expect("machine file");
    for bad in ["\"-1 ns\"", "\"4\""] {
        let bad_file = dir.file(
            "bad.toml",
            &text.replace(
                "[network]\n",
                &format!("[network]\nsend_overhead_per_byte = {bad}\n"),
            ),
        );
        let o = support::parsim_command()
            .args(["machine", bad_file.to_str().expect("utf-8")])
            .output()
            .expect("runs");
        assert_eq!(o.status.code(), Some(1), "{bad}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("network.send_overhead_per_byte"),
            "{bad}: {err}"
        );
    }
}
