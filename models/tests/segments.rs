//! Piecewise LogGP: per-message-size segments, times just below, at and
//! above each breakpoint computed by hand.

use approx::assert_relative_eq;
use models::{LogGpMachine, MachineError};
use sim_core::model::{Machine, MachineDesc, MessageKind, Transfer};

const US: f64 = 1e-6;

/// The format of the issue, verbatim in `[network]`, with a node around it.
/// Base: o_s 1 us, L 5 us, 80 MB/s (G = 12.5 ns/B).
/// From 8 B: L 7.7 us, 60 MB/s (G = 1/60 us/B), the rest inherited.
/// From 64 KiB: L 20 us, 84 MB/s, o_s 2 us, o_r 3 us.
const PIECEWISE: &str = r#"
name = "piecewise"
model = "hardware"
[node]
memcpy = "1 GB/s"

[network]
latency = "5 us"            # base parameters, for sizes below the first segment's `from`
bandwidth = "80 MB/s"
send_overhead = "1 us"
recv_overhead = "1 us"
gap = "0 us"
mtu = "MTU"
eager_limit = "64 KiB"
control_bytes = "64 B"
duplex = "full"

[[network.segments]]        # applies to messages of at least `from` bytes, up to the next segment's `from`
from = "8 B"
latency = "7.7 us"
bandwidth = "60 MB/s"
[[network.segments]]
from = "64 KiB"
latency = "20 us"
bandwidth = "84 MB/s"
send_overhead = "2 us"
recv_overhead = "3 us"
"#;

fn machine(mtu: &str) -> LogGpMachine {
    let text = PIECEWISE.replace("MTU", mtu);
    match LogGpMachine::from_toml_str(&text, "piecewise.toml") {
        Ok(machine) => machine,
        Err(err) => panic!("test machine does not load: {err}"),
    }
}

fn error(text: &str) -> MachineError {
    match LogGpMachine::from_toml_str(text, "bad.toml") {
        Ok(_) => panic!("should be refused:\n{text}"),
        Err(err) => err,
    }
}

fn assert_transfer(got: Transfer, cpu_free: f64, arrival: f64) {
    assert_relative_eq!(got.cpu_free, cpu_free, max_relative = 1e-12);
    assert_relative_eq!(got.arrival, arrival, max_relative = 1e-12);
}

#[test]
fn post_time_at_each_breakpoint() {
    let m = machine("unlimited");
    let net = m.network();
    assert_eq!(net.segments.len(), 2);
    // (n, post(n) = o_s + L + n·G of n's segment, in us)
    let cases = [
        (0, 1.0 + 5.0),                             // base
        (7, 1.0 + 5.0 + 7.0 * 0.0125),              // base, just below 8 B
        (8, 1.0 + 7.7 + 8.0 / 60.0),                // first segment, at 8 B
        (9, 1.0 + 7.7 + 9.0 / 60.0),                // just above
        (65_535, 1.0 + 7.7 + 65_535.0 / 60.0),      // just below 64 KiB
        (65_536, 2.0 + 20.0 + 65_536.0 / 84.0),     // at 64 KiB: o_s 2 us
        (65_537, 2.0 + 20.0 + 65_537.0 / 84.0),     // just above
        (1 << 20, 2.0 + 20.0 + 1_048_576.0 / 84.0), // far above
    ];
    for (n, post_us) in cases {
        assert_relative_eq!(net.post_time(n), post_us * US, max_relative = 1e-12);
    }
    assert_eq!(net.segment_index(7), None);
    assert_eq!(net.segment_index(8), Some(0));
    assert_eq!(net.segment_index(65_535), Some(0));
    assert_eq!(net.segment_index(65_536), Some(1));
    assert_eq!(net.segment_index(u64::MAX), Some(1));
    // Wire time W = n·G of n's segment.
    assert_relative_eq!(net.wire_time(7), 7.0 * 12.5e-9, max_relative = 1e-12);
    assert_relative_eq!(net.wire_time(60), 1.0 * US, max_relative = 1e-12);
    assert_relative_eq!(net.wire_time(84_000), 1000.0 * US, max_relative = 1e-12);
}

#[test]
fn inherited_and_overridden_keys() {
    let m = machine("unlimited");
    let net = m.network();
    let first = &net.segments[0];
    assert_eq!(first.from, 8);
    // Given: latency, bandwidth. Inherited: o_s, o_r, g.
    assert_relative_eq!(first.params.latency, 7.7 * US, max_relative = 1e-12);
    assert_relative_eq!(first.params.bandwidth(), 60e6, max_relative = 1e-12);
    assert_relative_eq!(first.params.send_overhead, 1.0 * US, max_relative = 1e-12);
    assert_relative_eq!(first.params.recv_overhead, 1.0 * US, max_relative = 1e-12);
    assert_relative_eq!(first.params.gap, 0.0);
    let second = &net.segments[1];
    assert_eq!(second.from, 65_536);
    assert_relative_eq!(second.params.send_overhead, 2.0 * US, max_relative = 1e-12);
    assert_relative_eq!(second.params.recv_overhead, 3.0 * US, max_relative = 1e-12);
    // The trait's overheads follow the segment of the message's size.
    assert_relative_eq!(
        m.start(2).send_overhead(0, 1, 65_535),
        1.0 * US,
        max_relative = 1e-12
    );
    assert_relative_eq!(
        m.start(2).send_overhead(0, 1, 65_536),
        2.0 * US,
        max_relative = 1e-12
    );
    assert_relative_eq!(
        m.start(2).recv_overhead(0, 1, 7),
        1.0 * US,
        max_relative = 1e-12
    );
    assert_relative_eq!(
        m.start(2).recv_overhead(0, 1, 65_536),
        3.0 * US,
        max_relative = 1e-12
    );
}

#[test]
fn fragmented_message_uses_the_segment_of_the_whole_message() {
    let m = machine("1000 B");
    let net = m.network();
    // n = 2500 (first segment): 2·T(1000) + T(500) with T(m) = 1 + 7.7 + m/60 us.
    let t1 = |m: f64| 1.0 + 7.7 + m / 60.0;
    assert_relative_eq!(
        net.post_time(2500),
        (2.0 * t1(1000.0) + t1(500.0)) * US,
        max_relative = 1e-12
    );
    // n = 65,536 = 65·1000 + 536: every packet, even the 536-byte one, with
    // the parameters of the 64 KiB segment, T(m) = 2 + 20 + m/84 us.
    let t2 = |m: f64| 2.0 + 20.0 + m / 84.0;
    assert_relative_eq!(
        net.post_time(65_536),
        (65.0 * t2(1000.0) + t2(536.0)) * US,
        max_relative = 1e-12
    );
    // n = 65,535: one byte less, every packet with the first segment's.
    assert_relative_eq!(
        net.post_time(65_535),
        (65.0 * t1(1000.0) + t1(535.0)) * US,
        max_relative = 1e-12
    );
}

#[test]
fn transfers_use_the_segment_of_their_own_size() {
    let m = machine("unlimited");
    let mut m = m.start(2);
    // Eager 7 B: base. cpu free at o_s = 1 us; arrival 6.0875 us.
    let eager = m.transfer(0, 1, 7, MessageKind::Eager, 0.0);
    assert_transfer(eager, 1.0 * US, (6.0 + 7.0 * 0.0125) * US);
    // A rendezvous RTS of 64 B uses the segment of 64 B (from 8 B).
    let rts = m.transfer(0, 1, 64, MessageKind::RendezvousRts, 100.0 * US);
    assert_transfer(rts, 101.0 * US, (100.0 + 8.7 + 64.0 / 60.0) * US);
    // The data, 64 KiB: the second segment; the buffer is free when the
    // last byte has left: arrival − L.
    let data = m.transfer(0, 1, 65_536, MessageKind::RendezvousData, 200.0 * US);
    let post = 22.0 + 65_536.0 / 84.0;
    assert_transfer(data, (200.0 + post - 20.0) * US, (200.0 + post) * US);
}

#[test]
fn gap_and_nic_busy_follow_the_segment() {
    // g only in the second segment: 8 B-and-up messages are g = 50 us apart.
    let text = PIECEWISE
        .replace("MTU", "unlimited")
        .replace("from = \"8 B\"", "from = \"8 B\"\ngap = \"50 us\"");
    let m = match LogGpMachine::from_toml_str(&text, "gap.toml") {
        Ok(m) => m,
        Err(err) => panic!("{err}"),
    };
    let mut m = m.start(2);
    let first = m.transfer(0, 1, 8, MessageKind::Eager, 0.0);
    // The adapter takes it after o_s = 1 us and is busy g + W = 50 us +
    // 8/60 us.
    let busy = 51.0 + 8.0 / 60.0;
    let second = m.transfer(0, 1, 0, MessageKind::Eager, first.cpu_free);
    assert_transfer(second, busy * US, (busy + 5.0) * US);
    // A base-size message (g = 0, W = 0) leaves the adapter free at once;
    // the next 8-byte message's reception needs the receiving adapter for
    // g + W after the previous arrival.
    let third = m.transfer(0, 1, 8, MessageKind::Eager, 0.0);
    assert_transfer(third, busy * US, (busy + 5.0 + 50.0 + 8.0 / 60.0) * US);
}

#[test]
fn describe_lists_the_segments() {
    let text = machine("unlimited").describe();
    assert!(
        text.contains("(G 12.5 ns/B)\n  from 8 B: L 7.7 µs") && text.contains("\n  below 8 B: L "),
        "{text}"
    );
    assert!(
        text.contains("from 64 KiB: L 20 µs, o_s 2 µs, o_r 3 µs"),
        "{text}"
    );
    assert!(text.contains("84 MB/s"), "{text}");
    assert!(text.contains("full duplex"), "{text}");
}

#[test]
fn segment_errors_name_the_key() {
    let base = PIECEWISE.replace("MTU", "unlimited");
    let cases = [
        // Not strictly increasing.
        (
            base.replace("from = \"64 KiB\"", "from = \"8 B\""),
            "network.segments[1].from",
            "strictly increasing",
        ),
        (
            base.replace("from = \"64 KiB\"", "from = \"4 B\""),
            "network.segments[1].from",
            "8 B",
        ),
        // A typo, with a suggestion.
        (
            base.replace("latency = \"7.7 us\"", "latncy = \"7.7 us\""),
            "network.segments[0].latncy",
            "did you mean `latency`",
        ),
        // Keys that are per channel, not per segment.
        (
            base.replace("latency = \"7.7 us\"", "mtu = \"1 KiB\""),
            "network.segments[0].mtu",
            "unknown key",
        ),
        // `from` is required.
        (
            base.replace("from = \"8 B\"\n", ""),
            "network.segments[0].from",
            "missing required key",
        ),
        (
            base.replace("from = \"8 B\"", "from = \"8\""),
            "network.segments[0].from",
            "unit",
        ),
        (
            base.replace("latency = \"20 us\"", "latency = \"-20 us\""),
            "network.segments[1].latency",
            "negative",
        ),
        (
            base.replace(
                "bandwidth = \"84 MB/s\"",
                "bandwidth = \"84 MB/s\"\ngap_per_byte = \"1 ns\"",
            ),
            "network.segments[1].bandwidth",
            "network.segments[1].gap_per_byte",
        ),
        (
            base.replace("duplex = \"full\"", "duplex = \"both\""),
            "network.duplex",
            "\"full\", \"half\", or the share",
        ),
        (
            base[..base.find("[[network.segments]]").unwrap_or(base.len())]
                .replace("duplex = \"full\"", "segments = 3"),
            "network.segments",
            "array of tables",
        ),
        (
            base[..base.find("[[network.segments]]").unwrap_or(base.len())]
                .replace("duplex = \"full\"", "segments = [\"8 B\"]"),
            "network.segments[0]",
            "a table with `from`",
        ),
    ];
    for (text, key, needle) in cases {
        let err = error(&text);
        let message = err.to_string();
        assert_eq!(err.key(), Some(key), "{message}");
        assert!(message.contains(&format!("`{key}`")), "{message}");
        assert!(message.contains(needle), "{needle:?} not in: {message}");
    }
}

#[test]
fn shm_segments_are_named_by_their_section() {
    let text = r#"
name = "smp"
model = "smp"
[node]
memcpy = "1 GB/s"
ranks_per_node = 2
[network]
latency = "5 us"
bandwidth = "1 GB/s"
eager_limit = "64 KiB"
[shm]
latency = "1 us"
bandwidth = "2 GB/s"
eager_limit = "64 KiB"
[[shm.segments]]
from = "4 KiB"
latency = "2 us"
[[shm.segments]]
from = "1 KiB"
"#;
    let err = error(text);
    assert_eq!(err.key(), Some("shm.segments[1].from"), "{err}");
    // Fixed, the shm segment applies to pairs on one node only.
    let fixed = text.replace("from = \"1 KiB\"", "from = \"1 MiB\"");
    let m = match LogGpMachine::from_toml_str(&fixed, "smp.toml") {
        Ok(m) => m,
        Err(err) => panic!("{err}"),
    };
    let mut m = m.start(4);
    // Shm 4 KiB: o_s 0 + L 2 us + 4096 B / 2 GB/s.
    let local = m.transfer(0, 1, 4096, MessageKind::Eager, 0.0);
    assert_relative_eq!(local.arrival, 2.0 * US + 4096.0 / 2e9, max_relative = 1e-12);
    // Network 4 KiB: no segments there.
    let remote = m.transfer(0, 2, 4096, MessageKind::Eager, 0.0);
    assert_relative_eq!(
        remote.arrival,
        5.0 * US + 4096.0 / 1e9,
        max_relative = 1e-12
    );
}

#[test]
fn specs_built_in_code_are_validated() {
    let mut spec = LogGpMachine::builtin_spec();
    let params = spec.network.base();
    spec.network.segments = vec![
        models::Segment {
            from: 1024,
            params,
            duplex: None,
        },
        models::Segment {
            from: 1024,
            params,
            duplex: None,
        },
    ];
    match LogGpMachine::new(spec.clone()) {
        Ok(_) => panic!("equal `from`s accepted"),
        Err(err) => assert_eq!(err.key(), Some("network.segments[1].from"), "{err}"),
    }
    spec.network.segments[1].from = 2048;
    spec.network.segments[1].params.latency = f64::NAN;
    match LogGpMachine::new(spec.clone()) {
        Ok(_) => panic!("NaN latency accepted"),
        Err(err) => assert_eq!(err.key(), Some("network.segments[1].latency"), "{err}"),
    }
    spec.network.segments[1].params.latency = 1e-6;
    assert!(LogGpMachine::new(spec).is_ok());
}
