//! The SMP model: which channel set a pair uses, and NIC sharing between the
//! ranks of one node, under block and cyclic placement.

use approx::assert_relative_eq;
use models::{CommModel, LogGpMachine, LogGpRun, Placement};
use sim_core::model::{Machine, MachineDesc, MessageKind, Transfer};

const US: f64 = 1e-6;

/// Network: o_s 1 us, L 10 us, 1 GB/s; shared memory: o_s 0.5 us, L 1 us, 2 GB/s.
const SMP: &str = r#"
name = "test-smp"
model = "smp"
[node]
memcpy = "1 GB/s"
ranks_per_node = 2
placement = "PLACEMENT"
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
"#;

fn smp(placement: &str, ranks: u32) -> LogGpRun<'static> {
    let text = SMP.replace("PLACEMENT", placement);
    let m = match LogGpMachine::from_toml_str(&text, "smp.toml") {
        Ok(machine) => machine,
        Err(err) => panic!("test machine does not load: {err}"),
    };
    // A run borrows its description; leaked, the description lives as long
    // as the test needs it.
    Box::leak(Box::new(m)).start(ranks)
}

fn assert_transfer(got: Transfer, cpu_free: f64, arrival: f64) {
    assert_relative_eq!(got.cpu_free, cpu_free, max_relative = 1e-12);
    assert_relative_eq!(got.arrival, arrival, max_relative = 1e-12);
}

#[test]
fn block_placement_pairs() {
    let m = smp("block", 4);
    assert_eq!(m.machine().model(), CommModel::Smp);
    assert_eq!(m.machine().node().placement, Placement::Block);
    assert_eq!(m.nodes(), 2);
    let nodes: Vec<u32> = (0..4).map(|r| m.node_of(r)).collect();
    assert_eq!(nodes, [0, 0, 1, 1]);
    assert!(m.uses_shm(0, 1) && m.uses_shm(1, 0) && m.uses_shm(2, 3));
    assert!(!m.uses_shm(1, 2) && !m.uses_shm(0, 3));
    // Per-pair parameters.
    assert_relative_eq!(m.send_overhead(0, 1, 8), 0.5 * US, max_relative = 1e-12);
    assert_relative_eq!(m.recv_overhead(0, 1, 8), 0.25 * US, max_relative = 1e-12);
    assert_relative_eq!(m.send_overhead(1, 2, 8), 1.0 * US, max_relative = 1e-12);
    assert_relative_eq!(m.recv_overhead(1, 2, 8), 1.5 * US, max_relative = 1e-12);
    assert_eq!(m.eager_limit(0, 1), 16 * 1024);
    assert_eq!(m.eager_limit(0, 2), 64 * 1024);
    assert_eq!(m.control_bytes_between(0, 1), 8);
    assert_eq!(m.control_bytes_between(0, 2), 64);
    // The trait's control_bytes is the pair's.
    assert_eq!(m.control_bytes(0, 1), 8);
    assert_eq!(m.control_bytes(0, 2), 64);
}

#[test]
fn cyclic_placement_pairs() {
    let m = smp("cyclic", 4);
    assert_eq!(m.nodes(), 2);
    let nodes: Vec<u32> = (0..4).map(|r| m.node_of(r)).collect();
    assert_eq!(nodes, [0, 1, 0, 1]);
    assert!(m.uses_shm(0, 2) && m.uses_shm(1, 3));
    assert!(!m.uses_shm(0, 1) && !m.uses_shm(2, 3));
    // 5 ranks on ceil(5/2) = 3 nodes.
    let m = smp("cyclic", 5);
    assert_eq!(m.nodes(), 3);
    let nodes: Vec<u32> = (0..5).map(|r| m.node_of(r)).collect();
    assert_eq!(nodes, [0, 1, 2, 0, 1]);
    let m = smp("block", 5);
    let nodes: Vec<u32> = (0..5).map(|r| m.node_of(r)).collect();
    assert_eq!(nodes, [0, 0, 1, 1, 2]);
}

/// Two ranks of one node send across the network at the same time: the
/// second waits for the shared NIC. Network post(1000) = 1 + 10 + 1 = 12 us;
/// the NIC takes a message after its sender's o_s and is busy for its
/// g + n·G = 1 us.
fn check_nic_sharing(
    m: &mut LogGpRun<'_>,
    a: u32,
    b: u32,
    remote_a: u32,
    remote_b: u32,
    other_node: u32,
) {
    assert_eq!(m.node_of(a), m.node_of(b));
    let first = m.transfer(a, remote_a, 1000, MessageKind::Eager, 0.0);
    assert_transfer(first, 1.0 * US, 12.0 * US);
    let second = m.transfer(b, remote_b, 1000, MessageKind::Eager, 0.0);
    assert_transfer(second, 2.0 * US, 13.0 * US);
    // The other node's NIC is free.
    let other = m.transfer(other_node, a, 1000, MessageKind::Eager, 0.0);
    assert_transfer(other, 1.0 * US, 12.0 * US);
    // Shared memory does not wait for the NIC. Shm post(1000) = 0.5 + 1 + 0.5 = 2 us.
    let local = m.transfer(a, b, 1000, MessageKind::Eager, 0.0);
    assert_transfer(local, 0.5 * US, 2.0 * US);
    // The shm channel is per rank: b's is free, a's busy until 0.5 + 0.5 us
    // (g + n·G after its o_s).
    let local_b = m.transfer(b, a, 1000, MessageKind::Eager, 0.0);
    assert_transfer(local_b, 0.5 * US, 2.0 * US);
    let local_again = m.transfer(a, b, 1000, MessageKind::Eager, 0.0);
    assert_transfer(local_again, 1.0 * US, 2.5 * US);
}

#[test]
fn nic_sharing_block() {
    let mut m = smp("block", 4);
    // Ranks 0 and 1 share node 0; 2 and 3 are on node 1.
    check_nic_sharing(&mut m, 0, 1, 2, 3, 2);
}

#[test]
fn nic_sharing_cyclic() {
    let mut m = smp("cyclic", 4);
    // Ranks 0 and 2 share node 0; 1 and 3 are on node 1.
    check_nic_sharing(&mut m, 0, 2, 1, 3, 1);
}

#[test]
fn hardware_model_never_uses_shm() {
    let text = SMP
        .replace("PLACEMENT", "block")
        .replace("\"smp\"", "\"hardware\"")
        .replace("ranks_per_node = 2", "ranks_per_node = 1");
    let m = match LogGpMachine::from_toml_str(&text, "hw.toml") {
        Ok(machine) => machine,
        Err(err) => panic!("{err}"),
    };
    let mut m = m.start(4);
    assert_eq!(m.nodes(), 4);
    assert!((0..4).all(|r| m.node_of(r) == r));
    assert!(!m.uses_shm(0, 1) && !m.uses_shm(0, 0));
    // Each rank has its own NIC.
    let a = m.transfer(0, 2, 1000, MessageKind::Eager, 0.0);
    let b = m.transfer(1, 3, 1000, MessageKind::Eager, 0.0);
    assert_transfer(a, 1.0 * US, 12.0 * US);
    assert_transfer(b, 1.0 * US, 12.0 * US);
}

#[test]
fn default_machine_has_64_ranks_per_node() {
    let m = LogGpMachine::builtin_default();
    let mut m = m.start(128);
    assert_eq!(m.nodes(), 2);
    assert!(m.uses_shm(0, 63) && !m.uses_shm(63, 64));
    // Ping-pong half round trip on the network: o_s + L + 8 B·G + o_r ≈ 1 us.
    let net = m.machine().network().clone();
    let tr = m.transfer(0, 64, 8, MessageKind::Eager, 0.0);
    let one_way = tr.arrival + m.recv_overhead(0, 64, 8);
    assert_relative_eq!(
        one_way,
        1.0e-6 + 8.0 * net.gap_per_byte,
        max_relative = 1e-12
    );
}

/// A rank's message to itself takes the self path (`LogGpRun::transfer_self`):
/// its channel's `o_s` and two copies at the node's memcpy rate for an eager
/// message, one copy for rendezvous data, `o_s` for a control message; no
/// latency. The copies take the rank's shared-memory receive timeline, one
/// message after another with what it receives from other ranks.
#[test]
fn a_message_to_itself_is_overheads_and_copies() {
    let mut m = smp("block", 4);
    // Shared memory's o_s 0.5 us; memcpy 1 GB/s: 1000 B copy 1 us.
    let eager = m.transfer(0, 0, 1000, MessageKind::Eager, 0.0);
    assert_transfer(eager, 2.5 * US, 2.5 * US);
    // The engine keeps the sender in the call for both copies.
    assert_relative_eq!(m.send_copy(0, 0, 1000), 2.0 * US, max_relative = 1e-12);
    assert_relative_eq!(m.send_copy(0, 1, 1000), 0.0);
    // Its sending channel is untouched: a message to rank 1 at 0 goes at
    // once (post(1000) = 0.5 + 1 + 0.5 = 2 us).
    let local = m.transfer(0, 1, 1000, MessageKind::Eager, 0.0);
    assert_transfer(local, 0.5 * US, 2.0 * US);
    // A control message to itself at 1 us: o_s, after the copies.
    let rts = m.transfer(0, 0, 64, MessageKind::RendezvousRts, 1.0 * US);
    assert_transfer(rts, 2.5 * US, 2.5 * US);
    // Rendezvous data at 10 us: one copy of 100 kB, 100 us.
    let data = m.transfer(0, 0, 100_000, MessageKind::RendezvousData, 10.0 * US);
    assert_transfer(data, 110.0 * US, 110.0 * US);
    // A message from rank 1 to rank 0 ready at 20 us is received after
    // that copy: rank 0's receive timeline is free at 110 us, and the
    // message's 0.5 us there (n G) end at 110.5.
    let incoming = m.transfer(1, 0, 1000, MessageKind::Eager, 20.0 * US);
    assert_transfer(incoming, 20.5 * US, 110.5 * US);
    // Rank 1's receive timeline holds rank 0's message until 2 us: its
    // written self message (priced as any other) copies after it.
    let written = m.transfer_written(1, 1, 1000, MessageKind::Eager, 0.0);
    assert_transfer(written, 4.0 * US, 4.0 * US);
}

/// Under MPICH's CH4 (`mpich-4`, Intel MPI) a rendezvous message to itself
/// runs the device's rendezvous with itself: its RTS, CTS and data cost
/// what they cost to the other rank of the node; an eager one stays the
/// self path's copies.
#[test]
fn under_ch4_a_rendezvous_message_to_itself_is_a_shared_memory_message() {
    for library in ["mpich-4", "intelmpi-2019", "intelmpi-2021"] {
        let text = format!(
            "{}\n[collectives]\nlibrary = \"{library}\"\n",
            SMP.replace("PLACEMENT", "block")
        );
        let machine: &'static LogGpMachine = Box::leak(Box::new(
            LogGpMachine::from_toml_str(&text, "smp.toml").expect("loads"),
        ));
        let (mut to_self, mut to_peer) = (machine.start(4), machine.start(4));
        for (kind, bytes, ready) in [
            (MessageKind::RendezvousRts, 64, 1.0 * US),
            (MessageKind::RendezvousCts, 64, 3.0 * US),
            (MessageKind::RendezvousData, 100_000, 10.0 * US),
        ] {
            let got = to_self.transfer(0, 0, bytes, kind, ready);
            let want = to_peer.transfer(0, 1, bytes, kind, ready);
            assert_transfer(got, want.cpu_free, want.arrival);
        }
        // Eager: o_s 0.5 us and two copies of 1 us, as under any library.
        let eager = to_self.transfer(2, 2, 1000, MessageKind::Eager, 0.0);
        assert_transfer(eager, 2.5 * US, 2.5 * US);
    }
}
