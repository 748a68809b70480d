//! Levels inside a node: sockets (`node.sockets`, `node.socket_placement`)
//! and the `[socket]` channel, which a message between two sockets of one
//! node uses, against the closed forms of a ping-pong's one-way time.

use approx::assert_relative_eq;
use models::{Level, LogGpMachine, LogGpRun, MachineError};
use sim_core::model::{Machine, MachineDesc, MessageKind};

const US: f64 = 1e-6;
const NS: f64 = 1e-9;

/// 4 ranks per node on 2 sockets. Network: o_s 1 us, L 10 us, o_r 1.5 us,
/// 1 GB/s; shared memory: o_s 0.5 us, L 1 us, o_r 0.25 us, 2 GB/s; between
/// sockets: o_s 0.75 us, L 2 us, o_r 0.5 us, 0.5 GB/s.
const SOCKETS: &str = r#"
name = "test-sockets"
model = "smp"
[node]
memcpy = "1 GB/s"
ranks_per_node = 4
placement = "PLACEMENT"
sockets = 2
socket_placement = "SOCKET_PLACEMENT"
[network]
latency = "10 us"
send_overhead = "1 us"
recv_overhead = "1.5 us"
bandwidth = "1 GB/s"
eager_limit = "64 KiB"
control_bytes = "64 B"
[shm]
latency = "1 us"
send_overhead = "0.5 us"
recv_overhead = "0.25 us"
bandwidth = "2 GB/s"
eager_limit = "16 KiB"
control_bytes = "8 B"
[socket]
latency = "2 us"
send_overhead = "0.75 us"
recv_overhead = "0.5 us"
bandwidth = "500 MB/s"
eager_limit = "8 KiB"
control_bytes = "16 B"
"#;

/// (o_s, L, o_r, G) of the three channels.
const SHM: (f64, f64, f64, f64) = (0.5 * US, 1.0 * US, 0.25 * US, 0.5 * NS);
const SOCKET: (f64, f64, f64, f64) = (0.75 * US, 2.0 * US, 0.5 * US, 2.0 * NS);
const NETWORK: (f64, f64, f64, f64) = (1.0 * US, 10.0 * US, 1.5 * US, 1.0 * NS);

fn load(text: &str) -> Result<LogGpMachine, MachineError> {
    LogGpMachine::from_toml_str(text, "sockets.toml")
}

fn machine(placement: &str, socket_placement: &str) -> &'static LogGpMachine {
    let text = SOCKETS
        .replace("SOCKET_PLACEMENT", socket_placement)
        .replace("PLACEMENT", placement);
    match load(&text) {
        // A run borrows its description; leaked, the description lives as
        // long as the test needs it.
        Ok(machine) => Box::leak(Box::new(machine)),
        Err(err) => panic!("test machine does not load: {err}"),
    }
}

/// The one-way time of an eager message of `bytes` from `src` to `dst` on
/// a fresh run: its arrival (the sender starts at 0) plus the receiver's
/// overhead, as the engine charges a ping-pong's half round trip.
fn one_way(run: &mut LogGpRun<'_>, src: u32, dst: u32, bytes: u64) -> f64 {
    run.reset(run.ranks());
    let transfer = run.transfer(src, dst, bytes, MessageKind::Eager, 0.0);
    transfer.arrival + run.recv_overhead(src, dst, bytes)
}

/// `o_s + L + n·G + o_r` of a channel.
fn closed_form((o_s, latency, o_r, gap_per_byte): (f64, f64, f64, f64), bytes: u64) -> f64 {
    o_s + latency + bytes as f64 * gap_per_byte + o_r
}

fn assert_one_way(run: &mut LogGpRun<'_>, src: u32, dst: u32, channel: (f64, f64, f64, f64)) {
    for bytes in [0, 1000] {
        assert_relative_eq!(
            one_way(run, src, dst, bytes),
            closed_form(channel, bytes),
            max_relative = 1e-12
        );
    }
}

#[test]
fn block_sockets_one_node() {
    let m = machine("block", "block");
    assert_eq!((m.sockets(), m.ranks_per_socket()), (2, 2));
    let mut run = m.start(4);
    let sockets: Vec<u32> = (0..4).map(|r| run.socket_of(r)).collect();
    assert_eq!(sockets, [0, 0, 1, 1]);
    assert_eq!(run.level(0, 1), Level::SameSocket);
    assert_eq!(run.level(0, 2), Level::CrossSocket);
    assert_eq!(run.level(3, 1), Level::CrossSocket);
    // 0 -> 1 on one socket: [shm]; 0 -> 2 across: [socket].
    assert_one_way(&mut run, 0, 1, SHM);
    assert_one_way(&mut run, 0, 2, SOCKET);
    assert_one_way(&mut run, 3, 1, SOCKET);
    assert_one_way(&mut run, 3, 2, SHM);
}

#[test]
fn cyclic_sockets_flip_the_pairs() {
    let m = machine("block", "cyclic");
    let mut run = m.start(4);
    let sockets: Vec<u32> = (0..4).map(|r| run.socket_of(r)).collect();
    assert_eq!(sockets, [0, 1, 0, 1]);
    assert_eq!(run.level(0, 1), Level::CrossSocket);
    assert_eq!(run.level(0, 2), Level::SameSocket);
    assert_one_way(&mut run, 0, 1, SOCKET);
    assert_one_way(&mut run, 0, 2, SHM);
}

#[test]
fn other_nodes_use_the_network() {
    let m = machine("block", "block");
    let mut run = m.start(8);
    assert_eq!(run.nodes(), 2);
    assert_eq!(run.level(0, 4), Level::Network);
    assert_eq!(run.level(3, 4), Level::Network);
    assert_one_way(&mut run, 0, 4, NETWORK);
    assert_one_way(&mut run, 3, 4, NETWORK);
    // Node 1's ranks 4, 5 | 6, 7 are on its two sockets.
    assert_one_way(&mut run, 4, 5, SHM);
    assert_one_way(&mut run, 5, 6, SOCKET);
}

/// Cyclic placement on nodes: a node's ranks are those dealt to it, in
/// that order; the sockets follow the order.
#[test]
fn cyclic_nodes_with_block_sockets() {
    let m = machine("cyclic", "block");
    let mut run = m.start(8);
    // Node 0: ranks 0, 2, 4, 6 (local 0..3); node 1: 1, 3, 5, 7.
    let local: Vec<u32> = (0..8).map(|r| run.local_index(r)).collect();
    assert_eq!(local, [0, 0, 1, 1, 2, 2, 3, 3]);
    let sockets: Vec<u32> = (0..8).map(|r| run.socket_of(r)).collect();
    assert_eq!(sockets, [0, 0, 0, 0, 1, 1, 1, 1]);
    assert_eq!(run.level(0, 2), Level::SameSocket);
    assert_eq!(run.level(0, 4), Level::CrossSocket);
    assert_eq!(run.level(0, 1), Level::Network);
    assert_one_way(&mut run, 0, 2, SHM);
    assert_one_way(&mut run, 0, 4, SOCKET);
    assert_one_way(&mut run, 0, 1, NETWORK);
}

/// The per-pair questions of the engine follow the level.
#[test]
fn per_pair_parameters_follow_the_level() {
    let m = machine("block", "block");
    let run = m.start(8);
    let pairs = [(0, 1, SHM), (0, 2, SOCKET), (0, 4, NETWORK)];
    for (src, dst, (o_s, _, o_r, _)) in pairs {
        assert_relative_eq!(run.send_overhead(src, dst, 8), o_s, max_relative = 1e-12);
        assert_relative_eq!(run.recv_overhead(src, dst, 8), o_r, max_relative = 1e-12);
    }
    assert_eq!(run.eager_limit(0, 1), 16 * 1024);
    assert_eq!(run.eager_limit(0, 2), 8 * 1024);
    assert_eq!(run.eager_limit(0, 4), 64 * 1024);
    assert_eq!(run.control_bytes(0, 1), 8);
    assert_eq!(run.control_bytes(0, 2), 16);
    assert_eq!(run.control_bytes(0, 4), 64);
    // Zero buffering reaches the socket level too.
    let zero = m.with_eager_limit(0);
    let zero_run = zero.start(8);
    assert_eq!(zero_run.eager_limit(0, 2), 0);
    assert!(run.uses_shm(0, 2) && !run.uses_shm(0, 4));
}

#[test]
fn without_a_socket_channel_sockets_use_shm() {
    let text = SOCKETS
        .replace("SOCKET_PLACEMENT", "block")
        .replace("PLACEMENT", "block");
    let (text, _) = text
        .split_once("[socket]")
        .unwrap_or_else(|| panic!("the test machine has a [socket] table"));
    let m = match load(text) {
        Ok(machine) => machine,
        Err(err) => panic!("{err}"),
    };
    let mut run = m.start(4);
    assert_eq!(run.level(0, 2), Level::CrossSocket);
    assert_one_way(&mut run, 0, 1, SHM);
    assert_one_way(&mut run, 0, 2, SHM);
    assert!(
        m.describe()
            .contains("between sockets of a node: as shared memory")
    );
}

/// Ranks per node that do not divide evenly: `ceil(p / sockets)` per socket.
#[test]
fn uneven_sockets_fill_in_blocks_of_the_ceiling() {
    let text = SOCKETS
        .replace("SOCKET_PLACEMENT", "block")
        .replace("PLACEMENT", "block")
        .replace("ranks_per_node = 4", "ranks_per_node = 3");
    let m = match load(&text) {
        Ok(machine) => machine,
        Err(err) => panic!("{err}"),
    };
    assert_eq!(m.ranks_per_socket(), 2);
    let run = m.start(6);
    let sockets: Vec<u32> = (0..6).map(|r| run.socket_of(r)).collect();
    assert_eq!(sockets, [0, 0, 1, 0, 0, 1]);
    // One rank per node (`--ppn 1`): every rank on socket 0 of its node.
    let one = match m.with_ranks_per_node(1) {
        Ok(machine) => machine,
        Err(err) => panic!("{err}"),
    };
    let run = one.start(3);
    assert!((0..3).all(|r| run.socket_of(r) == 0));
}

/// A half-duplex `[socket]` uses the node's memory channel (its timelines
/// and byte intervals); a full-duplex `[shm]` keeps the ranks' own.
#[test]
fn half_duplex_socket_level_shares_the_node_memory_channel() {
    let text = SOCKETS
        .replace("SOCKET_PLACEMENT", "block")
        .replace("PLACEMENT", "block")
        .replace(
            "control_bytes = \"16 B\"",
            "control_bytes = \"16 B\"\nduplex = \"half\"",
        );
    let m = match load(&text) {
        Ok(machine) => machine,
        Err(err) => panic!("{err}"),
    };
    let mut run = m.start(4);
    // 5000 B (10 us at 2 ns/B) across the sockets, both ways at once. The
    // first: start at o_s = 0.75 us, the channel busy sending [0.75, 10.75]
    // and receiving [2.75, 12.75], arrival 0.75 + 2 + 10 = 12.75 us.
    let first = run.transfer(0, 2, 5_000, MessageKind::Eager, 0.0);
    assert_relative_eq!(first.arrival, 12.75 * US, max_relative = 1e-12);
    // The second waits for the node's sending side (10.75 us) and its
    // receiving side (12.75 + 10 = 22.75 us), and its sending interval
    // [10.75, 20.75] overlaps the first's receiving one by 2 us: half
    // duplex adds those 2 us, 24.75 us.
    let second = run.transfer(2, 0, 5_000, MessageKind::Eager, 0.0);
    assert_relative_eq!(second.arrival, 24.75 * US, max_relative = 1e-12);
    // Inside a socket the ranks' own (full-duplex) timelines are free.
    assert_one_way(&mut run, 1, 0, SHM);
    // Full duplex: the two cross independently.
    let m = machine("block", "block");
    let mut run = m.start(4);
    let first = run.transfer(0, 2, 5_000, MessageKind::Eager, 0.0);
    let second = run.transfer(2, 0, 5_000, MessageKind::Eager, 0.0);
    assert_relative_eq!(first.arrival, 12.75 * US, max_relative = 1e-12);
    assert_relative_eq!(second.arrival, 12.75 * US, max_relative = 1e-12);
}

#[test]
fn describe_names_the_sockets_and_the_channel() {
    let text = machine("block", "cyclic").describe();
    assert!(
        text.contains("2 sockets per node (cyclic placement on sockets, 2 ranks per socket)"),
        "{text}"
    );
    assert!(
        text.contains("\nbetween sockets of a node: MTU unlimited")
            && text.contains("\n  all sizes: L 2 µs"),
        "{text}"
    );
    // One socket: nothing about sockets.
    let default = LogGpMachine::builtin_default().describe();
    assert!(!default.contains("socket"), "{default}");
}

fn error(text: &str) -> String {
    match load(text) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(err) => err.to_string(),
    }
}

#[test]
fn bad_sockets_name_the_key() {
    let good = SOCKETS
        .replace("SOCKET_PLACEMENT", "block")
        .replace("PLACEMENT", "block");
    let e = error(&good.replace("sockets = 2", "sockets = 0"));
    assert!(
        e.contains("key `node.sockets`") && e.contains("got 0"),
        "{e}"
    );
    let e = error(&good.replace("sockets = 2", "sockets = \"two\""));
    assert!(
        e.contains("key `node.sockets`: expected a positive integer"),
        "{e}"
    );
    let e = error(&good.replace(
        "socket_placement = \"block\"",
        "socket_placement = \"scatter\"",
    ));
    assert!(
        e.contains("key `node.socket_placement`: expected \"block\" or \"cyclic\""),
        "{e}"
    );
    let e = error(&good.replace("sockets = 2", "sockets = 1"));
    assert!(
        e.contains("key `socket`") && e.contains("at least 2 sockets per node"),
        "{e}"
    );
    let e = error(&good.replace("sockets = 2", "sokets = 2"));
    assert!(e.contains("did you mean `sockets`"), "{e}");
    let hardware = good
        .replace("\"smp\"", "\"hardware\"")
        .replace("ranks_per_node = 4", "ranks_per_node = 1");
    let e = error(&hardware);
    assert!(
        e.contains("key `node.sockets`") && e.contains("hardware"),
        "{e}"
    );
    let e = error(&hardware.replace("sockets = 2", "sockets = 1"));
    assert!(e.contains("key `socket`") && e.contains("smp"), "{e}");
    let e = error(&good.replace(
        "[socket]\nlatency = \"2 us\"",
        "[socket]\nlatency = \"-2 us\"",
    ));
    assert!(e.contains("key `socket.latency`"), "{e}");
    // [socket] needs [shm] (one rank per node needs no [shm] otherwise).
    let (head, socket) = good.split_once("[shm]").unwrap_or_else(|| panic!("[shm]"));
    let (_, socket) = socket
        .split_once("[socket]")
        .unwrap_or_else(|| panic!("[socket]"));
    let no_shm =
        format!("{head}[socket]{socket}").replace("ranks_per_node = 4", "ranks_per_node = 1");
    let e = error(&no_shm);
    assert!(e.contains("key `socket`") && e.contains("[shm]"), "{e}");
}
