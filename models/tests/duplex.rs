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
    start(&text, ranks)
}

/// A run of `ranks` on the machine file `text`.
fn start(text: &str, ranks: u32) -> LogGpRun<'static> {
    let m = match LogGpMachine::from_toml_str(text, "duplex.toml") {
        Ok(m) => m,
        Err(err) => panic!("test machine does not load: {err}\n{text}"),
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
    assert_eq!(m.machine().network().duplex, Duplex::HALF);
    assert_eq!(m.machine().shm().map(|shm| shm.duplex), Some(Duplex::FULL));
    let text = m.machine().describe();
    assert!(text.contains("half duplex"), "{text}");
    // The default is full duplex.
    let text = MACHINE
        .replace("RPN", "1")
        .replace("duplex = \"NET\"\n", "")
        .replace("SHM", "half");
    match LogGpMachine::from_toml_str(&text, "default.toml") {
        Ok(m) => assert_eq!(m.network().duplex, Duplex::FULL),
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
    // a's adapter time: [o_s, o_s + W] at node 0, [o_s + L, post(n)] at
    // node 1. b's would be [o_s, o_s + W] at node 1 and [o_s + L, post(n)]
    // at node 0: each overlaps the other direction by W − L, which half
    // duplex serves one way at a time, so b is later by W − L.
    let b = m.transfer(1, 0, N, MessageKind::Eager, 0.0);
    let w = N as f64 * G;
    assert_transfer(b, OS, post(N) + w - L);
    // Later by about n·G (10 ms) for a large n.
    assert_relative_eq!(b.arrival - a.arrival, w - L, max_relative = 1e-12);
    assert_relative_eq!(b.arrival - a.arrival, w, max_relative = 1e-3);
}

#[test]
fn partial_duplex_crossing_is_one_minus_d_of_the_overlap() {
    // With a per-message occupancy g and overlap share d, two equal
    // messages crossing cost (1 − d)·(g + W − L) more than one.
    for (d, g_us, n) in [(0.3, 8.0, 1000_u64), (0.0, 8.0, 0), (0.5, 2.0, 20_000)] {
        let text = MACHINE
            .replace("RPN", "1")
            .replace(
                "duplex = \"NET\"",
                &format!("duplex = {d}\ngap = \"{g_us} us\""),
            )
            .replace("SHM", "full");
        let m = match LogGpMachine::from_toml_str(&text, "partial.toml") {
            Ok(m) => m,
            Err(err) => panic!("{err}\n{text}"),
        };
        assert_eq!(m.network().duplex.overlap(), d);
        let mut m = m.start(2);
        let a = m.transfer(0, 1, n, MessageKind::Eager, 0.0);
        let b = m.transfer(1, 0, n, MessageKind::Eager, 0.0);
        assert_transfer(a, OS, post(n));
        let g = g_us * US;
        let extra = (1.0 - d) * (g + n as f64 * G - L).max(0.0);
        assert_transfer(b, OS, post(n) + extra);
    }
}

#[test]
fn a_segment_crosses_with_its_own_duplex() {
    // A full-duplex network whose messages of 64 KiB and more share the
    // adapter one way at a time (d = 0): small messages cross freely,
    // large ones cost (1 − 0)·(W − L) more, as a half-duplex channel's.
    let text = MACHINE
        .replace("RPN", "1")
        .replace("NET", "full")
        .replace("SHM", "full")
        .replace(
            "[shm]",
            "[[network.segments]]\nfrom = \"64 KiB\"\nduplex = \"half\"\n\n[shm]",
        );
    let m = match LogGpMachine::from_toml_str(&text, "segment.toml") {
        Ok(m) => m,
        Err(err) => panic!("{err}\n{text}"),
    };
    assert_eq!(m.network().duplex_for(65_535), Duplex::FULL);
    assert_eq!(m.network().duplex_for(N), Duplex::HALF);
    assert!(!m.network().is_full_duplex());
    let mut m = m.start(2);
    let a = m.transfer(0, 1, 1000, MessageKind::Eager, 0.0);
    let b = m.transfer(1, 0, 1000, MessageKind::Eager, 0.0);
    assert_transfer(a, OS, post(1000));
    assert_transfer(b, OS, post(1000));
    let t = 1.0;
    let a = m.transfer(0, 1, N, MessageKind::Eager, t);
    let b = m.transfer(1, 0, N, MessageKind::Eager, t);
    let w = N as f64 * G;
    assert_transfer(a, t + OS, t + post(N));
    assert_transfer(b, t + OS, t + post(N) + w - L);

    // A segment's own duplex is read only for the network.
    let bad = MACHINE
        .replace("RPN", "2")
        .replace("NET", "full")
        .replace("SHM", "full")
        .trim_end()
        .to_owned()
        + "\n[[shm.segments]]\nfrom = \"1 KiB\"\nduplex = 0.5\n";
    match LogGpMachine::from_toml_str(&bad, "bad.toml") {
        Ok(_) => panic!("a shared-memory segment's duplex accepted"),
        Err(err) => assert_eq!(err.key(), Some("shm.segments[0].duplex"), "{err}"),
    }
}

#[test]
fn half_duplex_exchange_of_small_messages_is_symmetric() {
    // Without a per-message occupancy (g = 0) only bytes take the channel:
    // two 0-byte messages crossing each other both take o_s + L (LogGP),
    // whichever the machine computes first.
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
fn half_duplex_receiving_slows_sending_by_the_overlap() {
    let mut m = machine(1, "half", "full", 3);
    // Rank 1 receives a large message from rank 0: it takes node 1's
    // channel during [o_s + L, post(n)] = [6 us, 10.006 ms].
    let incoming = m.transfer(0, 1, N, MessageKind::Eager, 0.0);
    // A 0-byte message (g = 0: no channel time) goes through.
    let early = m.transfer(1, 2, 0, MessageKind::Eager, 1.0 * US);
    assert_transfer(early, 2.0 * US, 7.0 * US);
    // 1000 bytes (10 us of bytes) sent at 3 us leave during [4 us, 14 us]:
    // 8 us of it overlap the incoming bytes, and in half duplex the channel
    // serves one direction at a time, so they take 8 us longer (fair
    // sharing: half the channel each during the 16 us both need it).
    let outgoing = m.transfer(1, 2, 1000, MessageKind::Eager, 3.0 * US);
    assert_transfer(outgoing, 4.0 * US, 3.0 * US + post(1000) + 8.0 * US);
    assert!(incoming.arrival > outgoing.arrival);
    // In full duplex it would not be slowed.
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
        // The shared adapter's transmit side is free at o_s + g + n·G; the
        // second rank's overhead ran on its own core meanwhile, so its bytes
        // follow at once: later by n·G on both sides.
        let second = m.transfer(1, 3, N, MessageKind::Eager, 0.0);
        let start = OS + N as f64 * G;
        assert_transfer(second, start, start + L + N as f64 * G);
        assert_relative_eq!(
            second.arrival - first.arrival,
            N as f64 * G,
            max_relative = 1e-12
        );
    }
}

#[test]
fn g_is_each_ranks_own_and_bytes_share_the_adapter() {
    // LogGP's g is per processor: k ranks of node 0 each send one 0-byte
    // message to their partner on node 1 at the same time and none waits
    // for another's g (the node's message rate is k/g); one rank's
    // messages are g apart; bytes share the node's adapter.
    let text = MACHINE
        .replace("RPN", "8")
        .replace("duplex = \"NET\"", "gap = \"2 us\"")
        .replace("SHM", "full");
    let m = match LogGpMachine::from_toml_str(&text, "rate.toml") {
        Ok(m) => m,
        Err(err) => panic!("{err}"),
    };
    let mut run = m.start(16);
    for k in 0..8_u32 {
        let tr = run.transfer(k, 8 + k, 0, MessageKind::Eager, 0.0);
        assert_transfer(tr, OS, OS + L);
    }
    // Rank 0 again, ready at once: its own way in is busy g = 2 us.
    let again = run.transfer(0, 8, 0, MessageKind::Eager, 0.0);
    assert_transfer(again, OS + 2.0 * US, OS + 2.0 * US + L);
    // Two ranks sending n bytes: the node's adapter takes the second's
    // bytes after the first's.
    let mut run = m.start(16);
    let first = run.transfer(1, 9, N, MessageKind::Eager, 0.0);
    let second = run.transfer(2, 10, N, MessageKind::Eager, 0.0);
    let w = N as f64 * G;
    assert_transfer(first, OS, OS + L + w);
    assert_transfer(second, OS + w, OS + w + L + w);
}

#[test]
fn a_stream_of_messages_is_g_plus_w_apart() {
    // One rank sends k messages back to back (each posted when the
    // previous one is handed over): LogGP's (k−1)·G + g between them.
    let text = MACHINE
        .replace("RPN", "1")
        .replace("duplex = \"NET\"", "gap = \"3 us\"")
        .replace("SHM", "full");
    let m = match LogGpMachine::from_toml_str(&text, "stream.toml") {
        Ok(m) => m,
        Err(err) => panic!("{err}"),
    };
    let mut m = m.start(2);
    let n = 1000_u64;
    let mut ready = 0.0;
    let mut last = None;
    for _ in 0..5 {
        let tr = m.transfer(0, 1, n, MessageKind::Eager, ready);
        if let Some(prev) = last {
            assert_relative_eq!(
                tr.arrival - prev,
                3.0 * US + n as f64 * G,
                max_relative = 1e-12
            );
        }
        last = Some(tr.arrival);
        ready = tr.cpu_free;
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
    // A small message to another node is not held up by node 2, only by
    // rank 1's adapter, free at o_s + n·G.
    let other = m.transfer(1, 0, 0, MessageKind::Eager, 0.0);
    assert_transfer(other, OS + N as f64 * G, OS + N as f64 * G + L);
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
    let w = N as f64 * 1e-9;
    let a = m.transfer(0, 1, N, MessageKind::Eager, 0.0);
    assert_transfer(a, 0.5 * US, shm_post(N));
    // One memory channel per node: b's bytes go once a's have left (the
    // node's sending side is free at o_s + W); they then overlap a's
    // receiving interval [1.5 us, 1.5 us + W] by 1 us, which half duplex
    // adds: arrival 2.5 us + 2 W.
    let b = m.transfer(1, 0, N, MessageKind::Eager, 0.0);
    assert_transfer(b, 0.5 * US + w, 2.5 * US + 2.0 * w);
    // The other node's channel is free.
    let c = m.transfer(2, 3, N, MessageKind::Eager, 0.0);
    assert_transfer(c, 0.5 * US, shm_post(N));
    // The network does not wait for the memory channel.
    let d = m.transfer(0, 2, 0, MessageKind::Eager, 0.0);
    assert_transfer(d, OS, post(0));
}

#[test]
fn shm_partial_duplex_per_rank_slows_only_the_crossing_ranks() {
    // Four ranks of one node, `[shm]` overlapping half of the two
    // directions per rank: 0 and 1 write to each other at the same time,
    // and so do 2 and 3.
    let text = MACHINE
        .replace("RPN", "4")
        .replace("NET", "full")
        .replace("\"SHM\"", "0.5\nduplex_scope = \"rank\"");
    let mut m = start(&text, 4);
    let described = m.machine().describe();
    assert!(
        described.contains("duplex overlap 0.5 per rank"),
        "{described}"
    );
    let w = N as f64 * 1e-9;
    let a = m.transfer(0, 1, N, MessageKind::Eager, 0.0);
    assert_transfer(a, 0.5 * US, shm_post(N));
    // Rank 1 sends on its own timeline from o_s (not after a's bytes, as
    // one channel per node would have it); its sending interval [0.5 us,
    // 0.5 us + W] overlaps its receiving of a, [1.5 us, 1.5 us + W], by W −
    // 1 us, and a's sending at rank 0 overlaps b's receiving there by as
    // much: b is slowed by (1 − d)·(W − L) = 0.5·(W − 1 us), the crossing
    // of two one-rank nodes (`(1 − d)·(g + W − L)`, g = 0).
    let b = m.transfer(1, 0, N, MessageKind::Eager, 0.0);
    assert_transfer(b, 0.5 * US, shm_post(N) + 0.5 * (w - 1.0 * US));
    // Ranks 2 and 3 share the node but not 0's and 1's cores: the same
    // crossing, unslowed by the first.
    let c = m.transfer(2, 3, N, MessageKind::Eager, 0.0);
    assert_transfer(c, 0.5 * US, shm_post(N));
    let d = m.transfer(3, 2, N, MessageKind::Eager, 0.0);
    assert_transfer(d, 0.5 * US, shm_post(N) + 0.5 * (w - 1.0 * US));
    // One way only: no slowdown.
    let mut m = start(&text, 4);
    let e = m.transfer(0, 1, N, MessageKind::Eager, 0.0);
    let f = m.transfer(2, 1, N, MessageKind::Eager, 0.0);
    assert_transfer(e, 0.5 * US, shm_post(N));
    // Rank 1 receives e, then f (its receive timeline, per rank).
    assert_transfer(f, 0.5 * US, shm_post(N) + w);
}

#[test]
fn duplex_scope_is_refused_in_the_network_and_checked() {
    let text = MACHINE
        .replace("RPN", "2")
        .replace("\"NET\"", "0.5\nduplex_scope = \"rank\"")
        .replace("SHM", "full");
    match LogGpMachine::from_toml_str(&text, "net-scope.toml") {
        Ok(_) => panic!("network.duplex_scope accepted"),
        Err(err) => {
            assert_eq!(err.key(), Some("network.duplex_scope"), "{err}");
            assert!(
                err.to_string().contains("belongs in `[shm]` or `[socket]`"),
                "{err}"
            );
        }
    }
    let text = MACHINE
        .replace("RPN", "2")
        .replace("NET", "full")
        .replace("\"SHM\"", "0.5\nduplex_scope = \"core\"");
    match LogGpMachine::from_toml_str(&text, "bad-scope.toml") {
        Ok(_) => panic!("duplex_scope = \"core\" accepted"),
        Err(err) => {
            assert_eq!(err.key(), Some("shm.duplex_scope"), "{err}");
            assert!(err.to_string().contains("\"node\""), "{err}");
        }
    }
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
