//! A machine description and the runs it starts: runs never share state,
//! one description serves several threads, and a description with eager
//! limit 0 (zero buffering) sends every message by rendezvous.

use approx::assert_relative_eq;
use models::{AnyMachine, LogGpMachine};
use sim_core::model::{Machine, MessageKind, Transfer};

const US: f64 = 1e-6;

/// Two ranks per node (block placement), half-duplex network so that runs
/// also keep byte calendars. Network: o_s 1 us, L 10 us, 1 GB/s; shared
/// memory: o_s 0.5 us, L 1 us, 2 GB/s.
const SMP: &str = r#"
name = "runs-test"
model = "smp"
[node]
memcpy = "1 GB/s"
ranks_per_node = 2
[network]
latency = "10 us"
send_overhead = "1 us"
recv_overhead = "1.5 us"
bandwidth = "1 GB/s"
eager_limit = "64 KiB"
control_bytes = "64 B"
duplex = "half"
[shm]
latency = "1 us"
send_overhead = "0.5 us"
recv_overhead = "0.25 us"
bandwidth = "2 GB/s"
eager_limit = "16 KiB"
control_bytes = "8 B"
"#;

fn description() -> AnyMachine {
    match AnyMachine::from_toml_str(SMP, "runs.toml", std::path::Path::new(".")) {
        Ok(machine) => machine,
        Err(err) => panic!("test machine does not load: {err}"),
    }
}

/// The transfers of a fixed sequence: the first three by hand, then
/// pseudo-random pairs, sizes and kinds (an LCG) in nondecreasing `ready`.
fn steps() -> Vec<(u32, u32, u64, MessageKind, f64)> {
    let mut steps = vec![
        (0, 2, 1000, MessageKind::Eager, 0.0),
        (1, 3, 1000, MessageKind::Eager, 0.0),
        (0, 1, 1000, MessageKind::Eager, 0.0),
    ];
    let mut state: u64 = 7;
    let mut next = || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        state >> 33
    };
    let kinds = [
        MessageKind::Eager,
        MessageKind::RendezvousRts,
        MessageKind::RendezvousCts,
        MessageKind::RendezvousData,
    ];
    let mut ready = 0.0;
    for _ in 0..500 {
        let (src, dst) = ((next() % 4) as u32, (next() % 4) as u32);
        let bytes = next() % 100_000;
        let kind = kinds[(next() % 4) as usize];
        ready += (next() % 20) as f64 * 1e-7;
        steps.push((src, dst, bytes, kind, ready));
    }
    steps
}

fn step(
    run: &mut dyn Machine,
    (src, dst, bytes, kind, ready): (u32, u32, u64, MessageKind, f64),
) -> Transfer {
    run.transfer(src, dst, bytes, kind, ready)
}

/// The hand-computed start of the sequence: 0 -> 2 over the network,
/// post(1000) = o_s + L + n·G = 1 + 10 + 1 us; rank 1 shares rank 0's NIC,
/// which takes the message after o_s and is busy for g + n·G = 1 us, so
/// rank 1's bytes start at 2 us (its own o_s overlapped); 0 -> 1 through
/// shared memory, 0.5 + 1 + 0.5 us.
fn assert_hand_computed(got: &[Transfer]) {
    let expected = [(1.0, 12.0), (2.0, 13.0), (0.5, 2.0)];
    for (tr, (cpu_free, arrival)) in got.iter().zip(expected) {
        assert_relative_eq!(tr.cpu_free, cpu_free * US, max_relative = 1e-12);
        assert_relative_eq!(tr.arrival, arrival * US, max_relative = 1e-12);
    }
}

fn whole_run(machine: &AnyMachine) -> Vec<Transfer> {
    let mut run = machine.start(4);
    steps().into_iter().map(|s| step(&mut run, s)).collect()
}

#[test]
fn two_runs_of_one_description_give_the_same_results() {
    let machine = description();
    let first = whole_run(&machine);
    assert_hand_computed(&first);
    let second = whole_run(&machine);
    assert_eq!(first, second);
    // Two runs alive at once, their calls interleaved: neither sees the
    // other's NIC state.
    let mut a = machine.start(4);
    let mut b = machine.start(4);
    for (index, s) in steps().into_iter().enumerate() {
        assert_eq!(step(&mut a, s), first[index], "run a, step {index}");
        assert_eq!(step(&mut b, s), first[index], "run b, step {index}");
    }
    // `reset` brings a used run back to where `start` left it.
    a.reset(4);
    let again: Vec<Transfer> = steps().into_iter().map(|s| step(&mut a, s)).collect();
    assert_eq!(again, first);
}

#[test]
fn one_description_serves_several_threads() {
    let machine = description();
    let reference = whole_run(&machine);
    let results: Vec<Vec<Transfer>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|_| scope.spawn(|| whole_run(&machine)))
            .collect();
        handles
            .into_iter()
            .map(|handle| match handle.join() {
                Ok(result) => result,
                Err(_) => panic!("a run panicked"),
            })
            .collect()
    });
    for result in &results {
        assert_hand_computed(result);
        assert_eq!(result, &reference);
    }
}

#[test]
fn eager_limit_zero_sends_every_message_by_rendezvous() {
    let machine = description();
    let zero = machine.zero_buffering();
    let (normal, mut zero_run) = (machine.start(4), zero.start(4));
    for src in 0..4 {
        for dst in 0..4 {
            // The engine sends `bytes >= eager_limit` by rendezvous: with 0,
            // every message, even an empty one.
            assert_eq!(zero_run.eager_limit(src, dst), 0, "{src} -> {dst}");
            let shm = src / 2 == dst / 2;
            let limit = if shm { 16 * 1024 } else { 64 * 1024 };
            assert_eq!(normal.eager_limit(src, dst), limit, "{src} -> {dst}");
        }
    }
    // Nothing else changes: the same overheads and transfer times.
    assert_eq!(zero_run.control_bytes(0, 1), 8);
    assert_eq!(zero_run.control_bytes(0, 2), 64);
    assert_relative_eq!(
        zero_run.send_overhead(0, 2, 10),
        1.0 * US,
        max_relative = 1e-12
    );
    let got: Vec<Transfer> = steps()
        .into_iter()
        .map(|s| step(&mut zero_run, s))
        .collect();
    assert_eq!(got, whole_run(&machine));
    // The LogGP description says so too.
    let loggp = match LogGpMachine::from_toml_str(SMP, "runs.toml") {
        Ok(machine) => machine.with_eager_limit(0),
        Err(err) => panic!("{err}"),
    };
    assert_eq!(loggp.network().eager_limit, 0);
    assert_eq!(loggp.shm().map(|shm| shm.eager_limit), Some(0));
    assert!(
        loggp.describe().contains("eager limit 0 B"),
        "{}",
        loggp.describe()
    );
}
