//! LogGP with ParJava's MTU fragmentation: `post_time` against the paper's
//! formula computed by hand, and the NIC state of `transfer`.

use approx::assert_relative_eq;
use models::{ChannelParams, Duplex, LogGpMachine, Packets};
use sim_core::model::{Machine, MachineDesc, MessageKind, Transfer};

const US: f64 = 1e-6;

/// o_s = 2 us, L = 10 us, G = 1 ns/B, so T(m) = 12 us + m ns.
fn channel(mtu: Option<u64>, gap: f64) -> ChannelParams {
    ChannelParams {
        latency: 10.0 * US,
        send_overhead: 2.0 * US,
        recv_overhead: 3.0 * US,
        gap,
        gap_per_byte: 1e-9,
        mtu,
        eager_limit: 65_536,
        control_bytes: 0,
        segments: Vec::new(),
        duplex: Duplex::FULL,
        ..ChannelParams::default()
    }
}

/// T(m) = o_s + L + m·G for the channel above.
fn t(m: u64) -> f64 {
    12.0 * US + m as f64 * 1e-9
}

/// ParJava: Time(Post(n)) = floor(n/MTU)·Time(Post(MTU)) + Time(Post(n mod MTU)),
/// without the empty trailing packet when n mod MTU = 0, and T(n) for n <= MTU.
fn parjava_post(n: u64, mtu: u64) -> f64 {
    let rest = n % mtu;
    if n <= mtu {
        t(n)
    } else if rest == 0 {
        (n / mtu) as f64 * t(mtu)
    } else {
        (n / mtu) as f64 * t(mtu) + t(rest)
    }
}

#[test]
fn post_time_without_mtu_is_one_packet() {
    let c = channel(None, 0.0);
    assert_relative_eq!(c.post_time(0), 12.0 * US, max_relative = 1e-12); // o_s + L
    assert_relative_eq!(c.post_time(1), 12.001 * US, max_relative = 1e-12);
    assert_relative_eq!(c.post_time(2500), 14.5 * US, max_relative = 1e-12);
    assert_relative_eq!(c.post_time(1_000_000), 1012.0 * US, max_relative = 1e-12);
    assert_eq!(
        c.packets(2500),
        Packets {
            full: 1,
            size: 2500,
            rest: 0
        }
    );
    // Bandwidth of a long message is exactly 1/G.
    let slope = (c.post_time(2_000_000) - c.post_time(1_000_000)) / 1e6;
    assert_relative_eq!(slope, 1e-9, max_relative = 1e-9);
}

#[test]
fn post_time_with_mtu_follows_parjava() {
    let c = channel(Some(1000), 0.0);
    // n = 0 and n < MTU: one packet.
    assert_relative_eq!(c.post_time(0), 12.0 * US, max_relative = 1e-12);
    assert_relative_eq!(c.post_time(500), 12.5 * US, max_relative = 1e-12);
    // n = MTU: one packet of MTU bytes.
    assert_relative_eq!(c.post_time(1000), 13.0 * US, max_relative = 1e-12);
    // n = 3·MTU exactly: 3·T(MTU), no empty fourth packet.
    assert_relative_eq!(c.post_time(3000), 39.0 * US, max_relative = 1e-12);
    assert_eq!(
        c.packets(3000),
        Packets {
            full: 3,
            size: 1000,
            rest: 0
        }
    );
    assert_eq!(c.packets(3000).count(), 3);
    // n = 2·MTU + 500: 2·T(1000) + T(500) = 26 + 12.5 us.
    assert_relative_eq!(c.post_time(2500), 38.5 * US, max_relative = 1e-12);
    assert_eq!(c.packets(2500).count(), 3);
    // n = MTU + 1: T(1000) + T(1) = 13 + 12.001 us.
    assert_relative_eq!(c.post_time(1001), 25.001 * US, max_relative = 1e-12);
    for n in [0, 1, 999, 1000, 1001, 1999, 2000, 2001, 123_456, 10_000_000] {
        assert_relative_eq!(c.post_time(n), parjava_post(n, 1000), max_relative = 1e-12);
    }
}

#[test]
fn packet_time_is_loggp_with_m_times_g() {
    let c = channel(None, 0.0);
    assert_relative_eq!(c.packet_time(0), 12.0 * US, max_relative = 1e-12);
    assert_relative_eq!(c.packet_time(4096), t(4096), max_relative = 1e-12);
    assert_relative_eq!(c.bandwidth(), 1e9, max_relative = 1e-12);
}

const HARDWARE: &str = r#"
name = "test-hardware"
model = "hardware"
[node]
cpu_rate = 2
memcpy = "1 GB/s"
[network]
latency = "10 us"
send_overhead = "2 us"
recv_overhead = "3 us"
gap = "GAP"
gap_per_byte = "1 ns"
MTU
eager_limit = "64 KiB"
"#;

fn hardware(gap: &str, mtu: &str) -> LogGpMachine {
    let text = HARDWARE.replace("GAP", gap).replace("MTU", mtu);
    match LogGpMachine::from_toml_str(&text, "hardware.toml") {
        Ok(machine) => machine,
        Err(err) => panic!("test machine does not load: {err}"),
    }
}

fn assert_transfer(got: Transfer, cpu_free: f64, arrival: f64) {
    assert_relative_eq!(got.cpu_free, cpu_free, max_relative = 1e-12);
    assert_relative_eq!(got.arrival, arrival, max_relative = 1e-12);
}

#[test]
fn back_to_back_sends_gap_dominant() {
    // g = 50 us, W = 1 us for 1000 bytes: the adapter is busy g + W.
    let m = hardware("50 us", "");
    let mut m = m.start(4);
    // post(1000) = 12 + 1 = 13 us.
    let first = m.transfer(0, 1, 1000, MessageKind::Eager, 0.0);
    // The adapter starts after o_s = 2 us; arrival 13 us; cpu free once the
    // adapter has the (only) packet; the adapter busy until 2 + 51 us.
    assert_transfer(first, 2.0 * US, 13.0 * US);
    let second = m.transfer(0, 2, 1000, MessageKind::Eager, first.cpu_free);
    // start = max(2 + 2 us, 53 us) = 53 us.
    assert_transfer(second, 53.0 * US, 64.0 * US);
    let third = m.transfer(0, 1, 1000, MessageKind::Eager, second.cpu_free);
    assert_transfer(third, 104.0 * US, 115.0 * US);
    // Another rank has its own adapter in the Hardware model.
    let other = m.transfer(1, 0, 1000, MessageKind::Eager, 3.0 * US);
    assert_transfer(other, 5.0 * US, 16.0 * US);
    // A sender that is ready after the adapter is free starts when ready.
    let late = m.transfer(0, 1, 0, MessageKind::Eager, 500.0 * US);
    assert_transfer(late, 502.0 * US, 512.0 * US);
}

#[test]
fn back_to_back_sends_bandwidth_dominant() {
    // g = 1 us, W = 100 us for 100,000 bytes.
    let m = hardware("1 us", "");
    let mut m = m.start(2);
    // post(100,000) = 12 + 100 = 112 us.
    let first = m.transfer(0, 1, 100_000, MessageKind::Eager, 0.0);
    assert_transfer(first, 2.0 * US, 112.0 * US);
    // The adapter is free at 2 + g + W = 103 us.
    let second = m.transfer(0, 1, 100_000, MessageKind::Eager, first.cpu_free);
    assert_transfer(second, 103.0 * US, 213.0 * US);
    // Messages of one adapter stream g + n·G apart (LogGP): 101 us.
    assert_relative_eq!(
        second.arrival - first.arrival,
        101.0 * US,
        max_relative = 1e-12
    );
    // A small message behind a large one does not overtake it.
    let small = m.transfer(0, 1, 0, MessageKind::Eager, second.cpu_free);
    // start = 103 + 101 = 204 us; arrival max(204 + 10, 213 + g) = 214 us.
    assert_transfer(small, 204.0 * US, 214.0 * US);
    assert!(small.arrival >= second.arrival);
}

#[test]
fn rendezvous_kinds_and_cpu_free() {
    let m = hardware("0 us", "");
    let mut m = m.start(2);
    // RTS/CTS: like eager, free after the hand-over of the (only) packet.
    let rts = m.transfer(0, 1, 0, MessageKind::RendezvousRts, 0.0);
    assert_transfer(rts, 2.0 * US, 12.0 * US);
    // busy = 0 + max(0, 12 − 10) = 2 us.
    let cts = m.transfer(1, 0, 0, MessageKind::RendezvousCts, rts.arrival);
    assert_transfer(cts, 14.0 * US, 24.0 * US);
    // Data: the user buffer is busy until the last byte has left: arrival − L.
    let data = m.transfer(0, 1, 100_000, MessageKind::RendezvousData, cts.arrival);
    assert_transfer(data, (24.0 + 102.0) * US, (24.0 + 112.0) * US);
}

/// `rendezvous_send = "received"`: the data's send completes when it has
/// arrived (today's get-based rendezvous, VALIDATION.md 4.22); the
/// arrival and the control messages are as before; a bad value names the
/// key.
#[test]
fn a_rendezvous_send_done_when_received() {
    let text = HARDWARE.replace("GAP", "0 us").replace("MTU", "").replace(
        "memcpy = \"1 GB/s\"",
        "memcpy = \"1 GB/s\"\nrendezvous_send = \"received\"",
    );
    let machine = LogGpMachine::from_toml_str(&text, "t.toml").expect("loads");
    assert!(
        machine
            .describe()
            .contains("a rendezvous send done when its data is received")
    );
    let mut m = machine.start(2);
    let rts = m.transfer(0, 1, 0, MessageKind::RendezvousRts, 0.0);
    assert_transfer(rts, 2.0 * US, 12.0 * US);
    let cts = m.transfer(1, 0, 0, MessageKind::RendezvousCts, rts.arrival);
    assert_transfer(cts, 14.0 * US, 24.0 * US);
    // Free at the arrival, not L (10 us) before it.
    let data = m.transfer(0, 1, 100_000, MessageKind::RendezvousData, cts.arrival);
    assert_transfer(data, (24.0 + 112.0) * US, (24.0 + 112.0) * US);
    let bad = HARDWARE.replace("GAP", "0 us").replace("MTU", "").replace(
        "memcpy = \"1 GB/s\"",
        "memcpy = \"1 GB/s\"\nrendezvous_send = \"later\"",
    );
    let e = LogGpMachine::from_toml_str(&bad, "t.toml")
        .expect_err("refused")
        .to_string();
    assert!(
        e.contains("node.rendezvous_send") && e.contains("\"received\""),
        "{e}"
    );
}

#[test]
fn fragmented_transfer() {
    let m = hardware("0 us", "mtu = \"1000 B\"");
    let mut m = m.start(2);
    // post(2500) = 2·13 + 12.5 = 38.5 us; all packets but the last: 26 us.
    let eager = m.transfer(0, 1, 2500, MessageKind::Eager, 0.0);
    // The adapter starts after the first o_s (2 us); cpu free = 2 + 26 us.
    assert_transfer(eager, 28.0 * US, 38.5 * US);
    // The adapter's send phase: P − L − o_s = 26.5 us, free at 28.5 us.
    let next = m.transfer(0, 1, 1000, MessageKind::Eager, eager.cpu_free);
    assert_transfer(next, 30.0 * US, 41.0 * US);
    // Rendezvous data: arrival − L.
    let data = m.transfer(0, 1, 3000, MessageKind::RendezvousData, 100.0 * US);
    assert_transfer(data, (100.0 + 29.0) * US, (100.0 + 39.0) * US);
}

#[test]
fn node_model_and_overheads() {
    let machine = hardware("0 us", "");
    let m = machine.start(2);
    // cpu_rate = 2: nominal seconds halve.
    assert_relative_eq!(m.compute_seconds(0, 3.0), 1.5);
    // memcpy 1 GB/s = 10^9 B/s.
    assert_relative_eq!(m.copy_seconds(0, 1_000_000_000), 1.0, max_relative = 1e-12);
    assert_relative_eq!(m.copy_seconds(0, 4096), 4.096e-6, max_relative = 1e-12);
    assert_relative_eq!(m.send_overhead(0, 1, 10), 2.0 * US, max_relative = 1e-12);
    assert_relative_eq!(m.recv_overhead(0, 1, 10), 3.0 * US, max_relative = 1e-12);
    assert_eq!(m.eager_limit(0, 1), 65_536);
    assert_eq!(m.control_bytes(0, 1), 0);
}

#[test]
fn reset_clears_busy_times() {
    let m = hardware("50 us", "");
    let mut m = m.start(2);
    m.transfer(0, 1, 1000, MessageKind::Eager, 0.0);
    m.reset(2);
    let after = m.transfer(0, 1, 1000, MessageKind::Eager, 0.0);
    assert_transfer(after, 2.0 * US, 13.0 * US);
}

#[test]
fn pair_arrivals_never_decrease() {
    // Deterministic pseudo-random sizes and ready times (an LCG).
    let m = hardware("3 us", "mtu = \"1500 B\"");
    let mut m = m.start(2);
    let mut state: u64 = 12345;
    let mut next = || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        state >> 33
    };
    let mut ready = 0.0;
    let mut last_arrival = f64::NEG_INFINITY;
    for _ in 0..1000 {
        let bytes = next() % 20_000;
        ready += (next() % 100) as f64 * 1e-7;
        let kind = if next() % 2 == 0 {
            MessageKind::Eager
        } else {
            MessageKind::RendezvousData
        };
        let tr = m.transfer(0, 1, bytes, kind, ready);
        assert!(tr.arrival >= last_arrival, "arrival went back");
        assert!(tr.cpu_free >= ready && tr.arrival >= ready);
        assert!(tr.arrival.is_finite() && tr.cpu_free.is_finite());
        last_arrival = tr.arrival;
    }
}

#[test]
fn a_million_ranks() {
    let m = LogGpMachine::builtin_default();
    let mut m = m.start(1_000_000);
    assert_eq!(m.nodes(), 15_625); // ceil(10^6 / 64)
    assert_eq!(m.node_of(999_999), 15_624);
    let tr = m.transfer(999_999, 0, 8, MessageKind::Eager, 1.0);
    assert!(tr.arrival > 1.0);
    // A rank outside the announced range does not panic.
    let stray = m.transfer(u32::MAX, 0, 8, MessageKind::Eager, 1.0);
    assert!(stray.arrival > 1.0);
}

#[test]
fn latency_per_byte_delays_arrival_but_not_the_adapter() {
    // G = 1 ns/B on the adapter, 3 ns/B more on the way: a 1000-byte
    // message arrives after o_s + L + 4 us, and the next leaves the adapter
    // g + n·G = 1 us after the first started.
    let m = hardware("0 us", "");
    let mut spec = m.spec().clone();
    spec.network.latency_per_byte = 3e-9;
    let m = LogGpMachine::new(spec).expect("valid");
    assert_relative_eq!(m.network().post_time(1000), 16.0 * US, max_relative = 1e-12);
    let mut run = m.start(2);
    let first = run.transfer(0, 1, 1000, MessageKind::Eager, 0.0);
    assert_transfer(first, 2.0 * US, 16.0 * US);
    let second = run.transfer(0, 1, 1000, MessageKind::Eager, 0.0);
    // The adapter is free at 2 + 1 us; the receiving adapter takes the
    // second message's bytes g + n·G after the first arrived.
    assert_transfer(second, 3.0 * US, 17.0 * US);
}
