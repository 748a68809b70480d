//! Collectives against their closed forms under the LogGP model.
//!
//! Test machine: every rank its own node, L = 5 us, o_s = 1 us, o_r = 2 us,
//! g = 0, G = 10 ns/B (100 MB/s), eager below 64 KiB, memcpy and reductions
//! at 1 GB/s. One eager message of n bytes takes T = o_s + L + n G from the
//! start of the send to its arrival; the receiver is done o_r later.

mod support;

use std::path::PathBuf;

use approx::assert_relative_eq;

const L: f64 = 5.0e-6;
const OS: f64 = 1.0e-6;
const OR: f64 = 2.0e-6;
const G: f64 = 10.0e-9;
const COPY: f64 = 1.0e-9; // s/B, memcpy and reduce_op

/// The test machine with the `[collectives]` setting `force`, written in `dir`.
fn machine(dir: &support::TempDir, force: &str) -> PathBuf {
    support::closed_form_machine(dir, "100 MB/s", force)
}

/// Runs `program` on `ranks` ranks; returns the per-rank finish times and
/// messages sent.
fn run(program: &str, ranks: u32, force: &str) -> (Vec<f64>, Vec<u64>) {
    let dir = support::temp_dir();
    let prog = dir.file("prog.mpl", program);
    let m = machine(&dir, force);
    let v = support::run_json(&prog, ranks, &m);
    let sent = v["ranks"]
        .as_array()
        .expect("ranks")
        .iter()
        .map(|r| r["messages_sent"].as_u64().expect("u64"))
        .collect();
    (support::finish_times(&v), sent)
}

fn t(n: f64) -> f64 {
    OS + L + n * G
}

#[test]
fn binomial_bcast() {
    // MPICH's binomial tree sends to the farthest child first, so on 2^k
    // ranks the last rank gets the data after k hops, each T + o_r.
    for (p, k) in [(2u32, 1.0), (8, 3.0), (16, 4.0)] {
        let n = 1000.0;
        let (finish, msgs) = run("bcast(root: 0, bytes: 1000)\n", p, "bcast = \"binomial\"");
        let expected = k * (t(n) + OR);
        let latest = finish.iter().copied().fold(0.0, f64::max);
        assert_relative_eq!(latest, expected, max_relative = 1e-12);
        assert_relative_eq!(finish[(p - 1) as usize], expected, max_relative = 1e-12);
        assert_eq!(
            msgs.iter().sum::<u64>(),
            u64::from(p - 1),
            "a binomial tree sends p - 1 messages"
        );
    }
}

#[test]
fn recursive_doubling_allreduce() {
    // Local copy of the buffer, then log2 p exchanges of n bytes, each
    // followed by the reduction of n bytes.
    for (p, k) in [(2u32, 1.0), (4, 2.0), (16, 4.0)] {
        let n = 4096.0;
        let (finish, msgs) = run(
            "allreduce(bytes: 4096)\n",
            p,
            "allreduce = \"recursive_doubling\"",
        );
        let expected = n * COPY + k * (t(n) + OR + n * COPY);
        for f in &finish {
            assert_relative_eq!(*f, expected, max_relative = 1e-12);
        }
        assert!(
            msgs.iter().all(|&m| m as f64 == k),
            "one message per step: {msgs:?}"
        );
    }
}

#[test]
fn dissemination_barrier() {
    // ceil(log2 p) rounds of a 0-byte message to rank + 2^i.
    for (p, rounds) in [(2u32, 1.0), (5, 3.0), (8, 3.0), (16, 4.0)] {
        let (finish, msgs) = run("barrier()\n", p, "barrier = \"dissemination\"");
        for f in &finish {
            assert_relative_eq!(*f, rounds * (t(0.0) + OR), max_relative = 1e-12);
        }
        assert!(msgs.iter().all(|&m| m as f64 == rounds));
    }
}

#[test]
fn call_overhead_is_charged_once_per_call_that_communicates() {
    // `call_overhead = c`: each rank's CPU pays c on entering a call, before
    // its first message; the barrier's rounds then run as without it. Two
    // barriers in a row cost 2 (c + rounds (T(0) + o_r)).
    const C: f64 = 0.7e-6;
    let force = "barrier = \"dissemination\"\ncall_overhead = \"0.7 us\"";
    for (p, rounds) in [(2u32, 1.0), (5, 3.0), (8, 3.0)] {
        let (finish, _) = run("barrier()\nbarrier()\n", p, force);
        for f in &finish {
            assert_relative_eq!(*f, 2.0 * (C + rounds * (t(0.0) + OR)), max_relative = 1e-12);
        }
    }
    // A call on one rank and a zero-count call return at once (the
    // libraries' shortcuts): nothing is charged.
    let (finish, _) = run("barrier()\nallreduce(bytes: 0)\n", 1, force);
    assert_eq!(finish, vec![0.0]);
    let (finish, _) = run("allreduce(bytes: 0)\n", 4, force);
    assert!(finish.iter().all(|&f| f == 0.0), "{finish:?}");
}

#[test]
fn a_kind_of_its_own_pays_its_own_call_overhead() {
    // `call_overhead = { default = ..., barrier = ... }`: a barrier pays
    // its own overhead, not the default; an entry of another kind changes
    // nothing for it, and without its own entry it pays the default.
    const OWN: f64 = 0.3e-6;
    const DEFAULT: f64 = 0.7e-6;
    let own = "barrier = \"dissemination\"\ncall_overhead = { default = \"0.7 us\", barrier = \"0.3 us\", allreduce = \"5 us\" }";
    let other = "barrier = \"dissemination\"\ncall_overhead = { default = \"0.7 us\", allreduce = \"5 us\" }";
    for (p, rounds) in [(2u32, 1.0), (5, 3.0)] {
        for (force, c) in [(own, OWN), (other, DEFAULT)] {
            let (finish, _) = run("barrier()\nbarrier()\n", p, force);
            for f in &finish {
                assert_relative_eq!(*f, 2.0 * (c + rounds * (t(0.0) + OR)), max_relative = 1e-12);
            }
        }
    }
}

#[test]
fn pairwise_alltoall() {
    // Local copy of the own block, then p - 1 exchanges of n bytes.
    for p in [2u32, 4, 8] {
        let n = 2000.0;
        let (finish, msgs) = run("alltoall(bytes: 2000)\n", p, "alltoall = \"pairwise\"");
        let expected = n * COPY + f64::from(p - 1) * (t(n) + OR);
        for f in &finish {
            assert_relative_eq!(*f, expected, max_relative = 1e-12);
        }
        assert!(msgs.iter().all(|&m| m == u64::from(p - 1)));
    }
}
