//! Resources a node's ranks share beyond its adapter's bytes: the adapter's
//! own message rate (`[network] node_gap`) and the node's memory throughput
//! for shared-memory messages (`[shm] node_bandwidth`). Closed forms.

use approx::assert_relative_eq;
use models::{LogGpMachine, LogGpRun};
use sim_core::model::{Machine, MachineDesc, MessageKind};

const US: f64 = 1e-6;

/// Two nodes of 4 ranks. Network: o_s 1 us, L 10 us, 1 GB/s, per-rank g
/// 0.5 us; shared memory: o_s 0.5 us, L 1 us, 2 GB/s.
const NODE: &str = r#"
name = "test-node-shared"
model = "smp"
[node]
memcpy = "1 GB/s"
ranks_per_node = 4
[network]
latency = "10 us"
send_overhead = "1 us"
recv_overhead = "1 us"
gap = "0.5 us"
bandwidth = "1 GB/s"
eager_limit = "64 KiB"
NETWORK_EXTRA
[shm]
latency = "1 us"
send_overhead = "0.5 us"
recv_overhead = "0.25 us"
bandwidth = "2 GB/s"
eager_limit = "16 MiB"
SHM_EXTRA
"#;

fn machine(network_extra: &str, shm_extra: &str) -> Result<LogGpMachine, models::MachineError> {
    let text = NODE
        .replace("NETWORK_EXTRA", network_extra)
        .replace("SHM_EXTRA", shm_extra);
    LogGpMachine::from_toml_str(&text, "node.toml")
}

fn run(network_extra: &str, shm_extra: &str, ranks: u32) -> LogGpRun<'static> {
    let m = match machine(network_extra, shm_extra) {
        Ok(machine) => machine,
        Err(err) => panic!("test machine does not load: {err}"),
    };
    // A run borrows its description; leaked, it lives as long as the test.
    Box::leak(Box::new(m)).start(ranks)
}

/// k equal shared-memory messages started at once on one node whose
/// memory moves C bytes/s: the last ends `max(W, k·n/C)` after the first
/// byte, as max-min fair sharing of C among them gives; no message ends
/// before its own `W`.
#[test]
fn shared_memory_messages_share_the_node_bandwidth() {
    let n: u64 = 1_000_000;
    let w = n as f64 * 0.5e-9; // 500 us at 2 GB/s
    let per = n as f64 / 5e9; // 200 us of the node's 5 GB/s
    let mut m = run("", "node_bandwidth = \"5 GB/s\"", 8);
    // Ranks 0..3 send to each other on node 0: 0->1, 1->2, 2->3, 3->0.
    let arrivals: Vec<f64> = (0..4)
        .map(|r| {
            m.transfer(r, (r + 1) % 4, n, MessageKind::Eager, 0.0)
                .arrival
        })
        .collect();
    // First byte at o_s + L = 1.5 us; each message ends at the later of
    // its own W and its turn through the node's memory.
    let first_byte = 1.5 * US;
    for (k, &arrival) in arrivals.iter().enumerate() {
        let through = first_byte + (k + 1) as f64 * per;
        assert_relative_eq!(arrival, (first_byte + w).max(through), max_relative = 1e-12);
    }
    // The last: k·n/C = 800 us after the first byte (fair sharing: four
    // flows at 1.25 GB/s).
    assert_relative_eq!(arrivals[3], first_byte + 800.0 * US, max_relative = 1e-12);
    // Node 1's memory is its own: a message there at the same time is not
    // slowed.
    let other = m.transfer(4, 5, n, MessageKind::Eager, 0.0);
    assert_relative_eq!(other.arrival, first_byte + w, max_relative = 1e-12);
    // Network messages do not use it.
    let net = m.transfer(0, 4, n, MessageKind::Eager, 0.0);
    assert_relative_eq!(
        net.arrival,
        1.0 * US + 10.0 * US + 1000.0 * US,
        max_relative = 1e-12
    );
}

/// Without `node_bandwidth` the same messages each take their own W.
#[test]
fn without_node_bandwidth_shared_memory_messages_do_not_wait_for_each_other() {
    let n: u64 = 1_000_000;
    let mut m = run("", "", 4);
    for r in 0..4 {
        let t = m.transfer(r, (r + 1) % 4, n, MessageKind::Eager, 0.0);
        assert_relative_eq!(t.arrival, 1.5 * US + 500.0 * US, max_relative = 1e-12);
    }
}

/// A node whose memory is faster than k messages need slows none of them.
#[test]
fn a_node_bandwidth_above_the_demand_changes_nothing() {
    let n: u64 = 1_000_000;
    let mut m = run("", "node_bandwidth = \"100 GB/s\"", 4);
    for r in 0..4 {
        let t = m.transfer(r, (r + 1) % 4, n, MessageKind::Eager, 0.0);
        assert_relative_eq!(t.arrival, 1.5 * US + 500.0 * US, max_relative = 1e-12);
    }
}

/// The adapter's own g (`node_gap`, 2 us) spaces the messages of all its
/// node's ranks: four ranks each send one 0-byte message at once, so the
/// adapter takes them 2 us apart (each rank's own g, 0.5 us, is not what
/// limits), and the receiving adapter delivers them 2 us apart.
#[test]
fn the_node_gap_limits_the_message_rate_of_all_ranks_of_a_node() {
    let mut m = run("node_gap = \"2 us\"", "", 8);
    for k in 0..4u32 {
        let t = m.transfer(k, 4 + k, 0, MessageKind::Eager, 0.0);
        let start = 1.0 * US + f64::from(k) * 2.0 * US;
        assert_relative_eq!(t.arrival, start + 10.0 * US, max_relative = 1e-12);
        assert_relative_eq!(t.cpu_free, start, max_relative = 1e-12);
    }
    // Without it, the four go out at once, each on its own rank's g; the
    // receiving adapter takes them as they come (W = 0).
    let mut m = run("", "", 8);
    for k in 0..4u32 {
        let t = m.transfer(k, 4 + k, 0, MessageKind::Eager, 0.0);
        assert_relative_eq!(t.arrival, 11.0 * US, max_relative = 1e-12);
    }
}

/// One rank's messages are spaced by the larger of its own g and the
/// adapter's: a stream of 1000-byte messages from one rank is `g + W`
/// apart with g 0.5 us and node_gap 0.2 us, and `node_gap + W` apart with
/// node_gap 3 us.
#[test]
fn one_ranks_stream_is_spaced_by_the_larger_gap() {
    for (extra, gap) in [
        ("node_gap = \"0.2 us\"", 0.5 * US),
        ("node_gap = \"3 us\"", 3.0 * US),
    ] {
        let mut m = run(extra, "", 8);
        let w = 1000.0 * 1e-9;
        let a = m.transfer(0, 4, 1000, MessageKind::Eager, 0.0);
        let b = m.transfer(0, 4, 1000, MessageKind::Eager, 0.0);
        assert_relative_eq!(b.arrival - a.arrival, gap + w, max_relative = 1e-9);
    }
}

/// In the hardware model (a rank per node) the adapter's g and the rank's
/// are one occupancy: the larger spaces a stream.
#[test]
fn in_the_hardware_model_the_node_gap_is_the_adapters_gap() {
    let text = r#"
name = "hw"
model = "hardware"
[node]
memcpy = "1 GB/s"
[network]
latency = "10 us"
send_overhead = "1 us"
gap = "0.5 us"
node_gap = "4 us"
bandwidth = "1 GB/s"
eager_limit = "64 KiB"
"#;
    let m = match LogGpMachine::from_toml_str(text, "hw.toml") {
        Ok(machine) => machine,
        Err(err) => panic!("test machine does not load: {err}"),
    };
    let mut run = m.start(2);
    let a = run.transfer(0, 1, 1000, MessageKind::Eager, 0.0);
    let b = run.transfer(0, 1, 1000, MessageKind::Eager, 0.0);
    assert_relative_eq!(
        b.arrival - a.arrival,
        4.0 * US + 1000.0 * 1e-9,
        max_relative = 1e-9
    );
}

/// Each key belongs to one section; elsewhere it is an error naming it.
#[test]
fn node_keys_in_the_wrong_section_are_errors_naming_them() {
    let err = match machine("node_bandwidth = \"5 GB/s\"", "") {
        Ok(_) => panic!("node_bandwidth in [network] loaded"),
        Err(err) => err.to_string(),
    };
    assert!(
        err.contains("network.node_bandwidth") && err.contains("[shm]"),
        "{err}"
    );
    let err = match machine("", "node_gap = \"1 us\"") {
        Ok(_) => panic!("node_gap in [shm] loaded"),
        Err(err) => err.to_string(),
    };
    assert!(
        err.contains("shm.node_gap") && err.contains("[network]"),
        "{err}"
    );
    let err = match machine("", "node_bandwidth = \"0 GB/s\"") {
        Ok(_) => panic!("a zero node_bandwidth loaded"),
        Err(err) => err.to_string(),
    };
    assert!(err.contains("shm.node_bandwidth"), "{err}");
    let err = match machine("node_gap = \"-1 us\"", "") {
        Ok(_) => panic!("a negative node_gap loaded"),
        Err(err) => err.to_string(),
    };
    assert!(err.contains("network.node_gap"), "{err}");
}

/// `parsim machine` says what the keys mean.
#[test]
fn the_description_names_the_node_resources() {
    let m = match machine("node_gap = \"2 us\"", "node_bandwidth = \"5 GB/s\"") {
        Ok(machine) => machine,
        Err(err) => panic!("test machine does not load: {err}"),
    };
    let text = m.describe();
    assert!(
        text.contains("the adapter's own g 2 µs shared by the node's ranks"),
        "{text}"
    );
    assert!(
        text.contains("the node's memory moves 5 GB/s for all its ranks"),
        "{text}"
    );
}

/// The node's shared adapter serves whoever is waiting whenever it is
/// idle: four ranks of a node each post four 1000-byte messages at once
/// (g = 1 us, W = 1 us, so one rank alone sends one every 2 us and leaves
/// the adapter idle half the time). The adapter takes the node's 16
/// messages back to back: the last byte of the last leaves 16 us after
/// the first began (o_s = 1 us), and arrives L = 10 us later. A "free at"
/// timeline, which queues each rank's window behind the previous rank's
/// last message, took 31 us.
#[test]
fn a_shared_adapter_takes_messages_in_its_idle_time() {
    let text = r#"
name = "work-conserving"
model = "smp"
[node]
memcpy = "1 GB/s"
ranks_per_node = 4
[network]
latency = "10 us"
send_overhead = "1 us"
gap = "1 us"
bandwidth = "1 GB/s"
eager_limit = "64 KiB"
[shm]
latency = "1 us"
bandwidth = "1 GB/s"
eager_limit = "64 KiB"
"#;
    let m = match LogGpMachine::from_toml_str(text, "wc.toml") {
        Ok(machine) => machine,
        Err(err) => panic!("test machine does not load: {err}"),
    };
    let mut run = m.start(8);
    let mut last = 0.0_f64;
    for rank in 0..4 {
        let mut previous = f64::NEG_INFINITY;
        for _ in 0..4 {
            let t = run.transfer(rank, rank + 4, 1000, MessageKind::Eager, 0.0);
            // One rank's messages stay in order, at least g + W apart.
            assert!(t.arrival >= previous + 2.0 * US - 1e-15, "{t:?}");
            previous = t.arrival;
            last = last.max(t.arrival);
        }
    }
    assert_relative_eq!(last, 1.0 * US + 16.0 * US + 10.0 * US, max_relative = 1e-12);
    // One rank alone sends one message every g + W.
    let mut run = m.start(8);
    let a = run.transfer(0, 4, 1000, MessageKind::Eager, 0.0);
    let b = run.transfer(0, 4, 1000, MessageKind::Eager, 0.0);
    assert_relative_eq!(a.arrival, 12.0 * US, max_relative = 1e-12);
    assert_relative_eq!(b.arrival - a.arrival, 2.0 * US, max_relative = 1e-12);
}

/// A segment's `G` above the link's (a small message's stream time per
/// byte: on Alaska's InfiniBand 1.13 ns/B below 256 B against the link's
/// 0.08) is work on each rank's own way in and out; the node's shared
/// adapter takes only the link's bytes (`ChannelParams::link_gap_per_byte`,
/// the channel's least G). Four ranks of a node each send 500 bytes
/// (G 10 ns/B below 1 KiB, the link 1 ns/B from 1 KiB) at once: each
/// message has its own W of 5 us, and the adapter spaces them by the link's
/// 0.5 us, not by 5 us; one rank's stream stays `g + W` apart.
#[test]
fn only_the_links_bytes_take_the_shared_adapter() {
    let segments = "bandwidth = \"100 MB/s\"\n\n[[network.segments]]\nfrom = \"1 KiB\"\nbandwidth = \"1 GB/s\"\n";
    let text = NODE
        .replace(
            "bandwidth = \"1 GB/s\"\neager_limit = \"64 KiB\"",
            "eager_limit = \"64 KiB\"",
        )
        .replace("NETWORK_EXTRA", segments)
        .replace("SHM_EXTRA", "");
    let m = LogGpMachine::from_toml_str(&text, "node.toml").expect("loads");
    let m: &'static LogGpMachine = Box::leak(Box::new(m));
    let mut run = m.start(8);
    for k in 0..4u32 {
        let t = run.transfer(k, 4 + k, 500, MessageKind::Eager, 0.0);
        // o_s + L + W = 16 us, then the link's 0.5 us per earlier message.
        assert_relative_eq!(
            t.arrival,
            (16.0 + 0.5 * f64::from(k)) * US,
            max_relative = 1e-12
        );
    }
    let mut run = m.start(8);
    let a = run.transfer(0, 4, 500, MessageKind::Eager, 0.0);
    let b = run.transfer(0, 4, 500, MessageKind::Eager, 0.0);
    assert_relative_eq!(
        b.arrival - a.arrival,
        0.5 * US + 5.0 * US,
        max_relative = 1e-9
    );
}
