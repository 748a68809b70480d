//! Contention inside a node: the NIC's transmit and receive timelines, the
//! byte intervals of a half-duplex channel (the two directions' bytes never
//! overlap), NIC sharing between the ranks of a node, receiver-side
//! serialisation, and the shared-memory channel of a node.

use approx::assert_relative_eq;
use models::{Duplex, LogGpMachine, LogGpRun};
use sim_core::model::{Machine, MachineDesc, MessageKind, Transfer};

const US: f64 = 1e-6;
/// o_s = 1 us, L = 5 us.
const OS: f64 = 1.0 * US;
const L: f64 = 5.0 * US;
/// 100 MB/s: G = 10 ns/B.
const G: f64 = 1e-8;
/// 1 MB: n·G = 10 ms.
const N: u64 = 1_000_000;

/// Network o_s 1 us, L 5 us, 100 MB/s, g 0; shm o_s 0.5 us, L 1 us, 1 GB/s.
const MACHINE: &str = r#"
name = "duplex-test"
model = "smp"
[node]
memcpy = "1 GB/s"
ranks_per_node = RPN
[network]
latency = "5 us"
send_overhead = "1 us"
recv_overhead = "1 us"
bandwidth = "100 MB/s"
eager_limit = "64 MiB"
duplex = "NET"
[shm]
latency = "1 us"
send_overhead = "0.5 us"
bandwidth = "1 GB/s"
eager_limit = "64 MiB"
duplex = "SHM"
"#;

fn machine(ranks_per_node: u32, net: &str, shm: &str, ranks: u32) -> LogGpRun<'static> {
    let text = MACHINE
        .replace("RPN", &ranks_per_node.to_string())
        .replace("NET", net)
        .replace("SHM", shm);
    let m = match LogGpMachine::from_toml_str(&text, "duplex.toml") {
        Ok(m) => m,
        Err(err) => panic!("test machine does not load: {err}"),
    };
    // A run borrows its description; leaked, the description lives as long
    // as the test needs it.
    Box::leak(Box::new(m)).start(ranks)
}

fn post(n: u64) -> f64 {
    OS + L + n as f64 * G
}

fn assert_transfer(got: Transfer, cpu_free: f64, arrival: f64) {
    assert_relative_eq!(got.cpu_free, cpu_free, max_relative = 1e-12);
    assert_relative_eq!(got.arrival, arrival, max_relative = 1e-12);
}

#[test]
fn duplex_is_read_and_described() {
    let m = machine(1, "half", "full", 2);
    assert_eq!(m.machine().network().duplex, Duplex::Half);
    assert_eq!(m.machine().shm().map(|shm| shm.duplex), Some(Duplex::Full));
    let text = m.machine().describe();
    assert!(text.contains("half duplex"), "{text}");
    // The default is full duplex.
    let text = MACHINE
        .replace("RPN", "1")
        .replace("duplex = \"NET\"\n", "")
        .replace("SHM", "half");
    match LogGpMachine::from_toml_str(&text, "default.toml") {
        Ok(m) => assert_eq!(m.network().duplex, Duplex::Full),
        Err(err) => panic!("{err}"),
    }
    let bad = MACHINE
        .replace("RPN", "2")
        .replace("NET", "full")
        .replace("SHM", "simplex");
    match LogGpMachine::from_toml_str(&bad, "bad.toml") {
        Ok(_) => panic!("duplex = \"simplex\" accepted"),
        Err(err) => assert_eq!(err.key(), Some("shm.duplex"), "{err}"),
    }
}

#[test]
fn exchange_full_duplex_both_arrive_at_post() {
    // Two ranks on two nodes send n bytes to each other at the same time.
    let mut m = machine(1, "full", "full", 2);
    let a = m.transfer(0, 1, N, MessageKind::Eager, 0.0);
    let b = m.transfer(1, 0, N, MessageKind::Eager, 0.0);
    // Both: o_s + L + n·G = 10.006 ms.
    assert_transfer(a, OS, post(N));
    assert_transfer(b, OS, post(N));
}

#[test]
fn exchange_half_duplex_one_is_later_by_about_n_g() {
    let mut m = machine(1, "half", "full", 2);
    let a = m.transfer(0, 1, N, MessageKind::Eager, 0.0);
    assert_transfer(a, OS, post(N));
    // a's bytes cross node 1's channel during [o_s + L, post(n)]; b's would
    // leave node 1 during [o_s, o_s + n·G], which overlaps, so b starts once
    // they fit after: start + o_s = post(n), start = L + n·G; its bytes then
    // reach node 0 during [2·post(n) − o_s − n·G, 2·post(n) − o_s], after
    // a's left it.
    let b = m.transfer(1, 0, N, MessageKind::Eager, 0.0);
    assert_transfer(b, post(N), 2.0 * post(N) - OS);
    // Later by L + n·G, about n·G (10 ms) for a large n.
    let later = b.arrival - a.arrival;
    assert_relative_eq!(later, N as f64 * G + L, max_relative = 1e-12);
    assert_relative_eq!(later, N as f64 * G, max_relative = 1e-3);
}

#[test]
fn half_duplex_exchange_of_small_messages_is_symmetric() {
    // Only bytes share the channel: two 0-byte messages crossing each other
    // both take o_s + L (LogGP), whichever the machine computes first.
    let mut m = machine(1, "half", "full", 2);
    let a = m.transfer(0, 1, 0, MessageKind::Eager, 0.0);
    let b = m.transfer(1, 0, 0, MessageKind::Eager, 0.0);
    assert_transfer(a, OS, post(0));
    assert_transfer(b, OS, post(0));
    // 100 bytes each way (1 us of bytes) do not overlap either: each
    // channel sends during [o_s, o_s + 1 us] and receives from o_s + L on.
    let a = m.transfer(0, 1, 100, MessageKind::Eager, 20.0 * US);
    let b = m.transfer(1, 0, 100, MessageKind::Eager, 20.0 * US);
    assert_transfer(a, 20.0 * US + OS, 20.0 * US + post(100));
    assert_transfer(b, 20.0 * US + OS, 20.0 * US + post(100));
}

#[test]
fn half_duplex_receiving_holds_back_sending() {
    let mut m = machine(1, "half", "full", 3);
    // Rank 1 receives a large message from rank 0: its bytes cross node 1's
    // channel during [o_s + L, post(n)] = [6 us, 10.006 ms].
    let incoming = m.transfer(0, 1, N, MessageKind::Eager, 0.0);
    // A 0-byte message whose send phase ends before that goes through.
    let early = m.transfer(1, 2, 0, MessageKind::Eager, 1.0 * US);
    assert_transfer(early, 2.0 * US, 7.0 * US);
    // 1000 bytes (10 us of bytes) sent at 3 us would leave during
    // [4 us, 14 us]: they wait until the incoming bytes have crossed,
    // start = post(n) − o_s.
    let outgoing = m.transfer(1, 2, 1000, MessageKind::Eager, 3.0 * US);
    let start = incoming.arrival - OS;
    assert_transfer(outgoing, start + OS, start + post(1000));
    // A 0-byte message whose send phase ends inside the incoming bytes
    // waits for them too.
    let mut m = machine(1, "half", "full", 3);
    let incoming = m.transfer(0, 1, N, MessageKind::Eager, 0.0);
    let late = m.transfer(1, 2, 0, MessageKind::Eager, 7.0 * US);
    assert_transfer(late, incoming.arrival, incoming.arrival + L);
    // In full duplex neither would.
    let mut m = machine(1, "full", "full", 3);
    m.transfer(0, 1, N, MessageKind::Eager, 0.0);
    let outgoing = m.transfer(1, 2, 1000, MessageKind::Eager, 3.0 * US);
    assert_transfer(outgoing, 4.0 * US, 3.0 * US + post(1000));
}

#[test]
fn two_ranks_of_a_node_share_its_nic() {
    // Four ranks, two per node; ranks 0 and 1 (node 0) both send n bytes to
    // node 1 (ranks 2 and 3) at the same time.
    for duplex in ["full", "half"] {
        let mut m = machine(2, duplex, "full", 4);
        let first = m.transfer(0, 2, N, MessageKind::Eager, 0.0);
        assert_transfer(first, OS, post(N));
        // The shared NIC's transmit side is free at max(g, post − L) =
        // o_s + n·G; the receiving NIC at post(n), and post(n) + W is the
        // same as start + post(n): serialised on both sides.
        let second = m.transfer(1, 3, N, MessageKind::Eager, 0.0);
        let start = OS + N as f64 * G;
        assert_transfer(second, start + OS, start + post(N));
        assert_relative_eq!(
            second.arrival - first.arrival,
            OS + N as f64 * G,
            max_relative = 1e-12
        );
    }
}

#[test]
fn receiving_nic_serialises_incoming_messages() {
    // Full duplex: ranks 0 and 1 on their own nodes both send n bytes to
    // rank 2 at the same time. Their NICs are independent, but rank 2's NIC
    // takes one message's bytes at a time (LogGOPSim).
    let mut m = machine(1, "full", "full", 3);
    let first = m.transfer(0, 2, N, MessageKind::Eager, 0.0);
    assert_transfer(first, OS, post(N));
    let second = m.transfer(1, 2, N, MessageKind::Eager, 0.0);
    // The sender is free after o_s; the bytes arrive during
    // [arrival − W, arrival] after the first's: arrival = post(n) + n·G.
    assert_transfer(second, OS, post(N) + N as f64 * G);
    // A small message to another node is not held up.
    let other = m.transfer(1, 0, 0, MessageKind::Eager, 0.0);
    // Rank 1's NIC transmit side: free at o_s + n·G.
    assert_transfer(other, 2.0 * OS + N as f64 * G, OS + N as f64 * G + post(0));
}

/// Shm post(n) with o_s 0.5 us, L 1 us, 1 GB/s.
fn shm_post(n: u64) -> f64 {
    1.5 * US + n as f64 * 1e-9
}

#[test]
fn shm_half_duplex_serialises_the_node() {
    // Ranks 0 and 1 share node 0 and write to each other at the same time.
    let mut m = machine(2, "full", "half", 4);
    assert!(m.uses_shm(0, 1));
    let a = m.transfer(0, 1, N, MessageKind::Eager, 0.0);
    assert_transfer(a, 0.5 * US, shm_post(N));
    // One memory channel per node: b's send phase begins once a's has
    // ended (the node's sending side, o_s + n·G), and its bytes once a's
    // have arrived: start = shm_post(n) − o_s, so the CPU is free at
    // shm_post(n) and b arrives at 2·shm_post(n) − o_s.
    let b = m.transfer(1, 0, N, MessageKind::Eager, 0.0);
    assert_transfer(b, shm_post(N), 2.0 * shm_post(N) - 0.5 * US);
    // The other node's channel is free.
    let c = m.transfer(2, 3, N, MessageKind::Eager, 0.0);
    assert_transfer(c, 0.5 * US, shm_post(N));
    // The network does not wait for the memory channel.
    let d = m.transfer(0, 2, 0, MessageKind::Eager, 0.0);
    assert_transfer(d, OS, post(0));
}

#[test]
fn shm_full_duplex_is_per_rank() {
    let mut m = machine(2, "full", "full", 4);
    let a = m.transfer(0, 1, N, MessageKind::Eager, 0.0);
    let b = m.transfer(1, 0, N, MessageKind::Eager, 0.0);
    assert_transfer(a, 0.5 * US, shm_post(N));
    assert_transfer(b, 0.5 * US, shm_post(N));
}

#[test]
fn pair_arrivals_never_decrease_with_segments_and_contention() {
    // Segments whose latency drops for small messages (a large message then
    // a small one has the smaller L), half and full duplex, eight ranks on
    // four nodes sending to each other: per pair, arrivals stay in call order.
    for (net, shm) in [("half", "half"), ("full", "full"), ("half", "full")] {
        let text = MACHINE
            .replace("RPN", "2")
            .replace("NET", net)
            .replace("SHM", shm)
            + "[[shm.segments]]\nfrom = \"4 KiB\"\nlatency = \"30 us\"\n\
               [[network.segments]]\nfrom = \"1 KiB\"\nlatency = \"50 us\"\ngap = \"2 us\"\n\
               [[network.segments]]\nfrom = \"32 KiB\"\nlatency = \"80 us\"\n\
               bandwidth = \"1 GB/s\"\n";
        let m = match LogGpMachine::from_toml_str(&text, "mixed.toml") {
            Ok(m) => m,
            Err(err) => panic!("{err}\n{text}"),
        };
        assert_eq!(m.network().segments.len(), 2);
        assert_eq!(m.shm().map(|shm| shm.segments.len()), Some(1));
        let mut m = m.start(8);
        let mut state: u64 = 99;
        let mut next = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            state >> 33
        };
        let mut last = [[f64::NEG_INFINITY; 8]; 8];
        let mut ready = 0.0;
        for _ in 0..5000 {
            let (src, dst) = ((next() % 8) as u32, (next() % 8) as u32);
            let bytes = match next() % 3 {
                0 => next() % 64,
                1 => next() % 8192,
                _ => next() % 200_000,
            };
            ready += (next() % 50) as f64 * 1e-7;
            let kind = match next() % 4 {
                0 => MessageKind::Eager,
                1 => MessageKind::RendezvousRts,
                2 => MessageKind::RendezvousCts,
                _ => MessageKind::RendezvousData,
            };
            let tr = m.transfer(src, dst, bytes, kind, ready);
            let previous = &mut last[src as usize][dst as usize];
            assert!(tr.arrival >= *previous, "{net}/{shm}: arrival went back");
            assert!(tr.cpu_free >= ready && tr.arrival >= ready);
            assert!(tr.arrival.is_finite() && tr.cpu_free.is_finite());
            *previous = tr.arrival;
        }
    }
}
