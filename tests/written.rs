//! Data a library just wrote (`[section.written]`, VALIDATION.md section
//! 4.8): a collective's sends of library data (a temporary filled by a copy
//! or a reduction, a block received and forwarded) are priced, where they
//! move by rendezvous, with the channel's written parameters; sends
//! straight from the user's buffer (a bcast's root, an alltoall's blocks)
//! and a program's own sends with its clean ones.
//!
//! Machine: tests/support `closed_form_machine` (G = 1 ns/B, eager limit
//! 64 KiB, full duplex, one rank per node; MPICH 3's rules) with a
//! `[network.written]` of G = 2 ns/B and the same latency and overheads.
//! Each written rendezvous message of `m` bytes then arrives `m·(2 − 1)
//! ns` later, the sender's buffer free as much later (`arrival − L`), and
//! nothing else changes.

mod support;

use approx::assert_relative_eq;

const MIB: u64 = 1 << 20;

/// The run's prediction (the last rank's finish) of `program` on 2 ranks,
/// with or without the written channel.
fn predicted(program: &str, written: bool) -> f64 {
    let dir = support::temp_dir();
    let m = support::closed_form_machine(&dir, "1 GB/s", "");
    let mut text = std::fs::read_to_string(&m).expect("machine");
    if written {
        text = text.replace(
            "[collectives]",
            "[network.written]\nbandwidth = \"500 MB/s\"\n\n[collectives]",
        );
    }
    let m = dir.file("written.toml", &text);
    let prog = dir.file("p.mpl", program);
    let report = support::run_json(&prog, 2, &m);
    support::finish_times(&report)
        .into_iter()
        .fold(0.0, f64::max)
}

/// `predicted(program, true) − predicted(program, false)`.
fn extra(program: &str) -> f64 {
    predicted(program, true) - predicted(program, false)
}

#[test]
fn library_data_by_rendezvous_is_priced_as_written() {
    // Rabenseifner's allreduce on 2 ranks (MPICH 3: 1 MiB of 4-byte
    // elements): one exchange of half the vector in the reduce-scatter,
    // one in the allgather, both of data the rank wrote (its copy of the
    // send buffer, its combined half): 2 × 512 KiB × 1 ns more.
    let program = format!("allreduce(bytes: {MIB}, elem: 4)\n");
    assert_relative_eq!(extra(&program), MIB as f64 * 1e-9, max_relative = 1e-9);
    // Three calls in a row: three times as much.
    let program = format!("for i in 0 .. 3 {{\n    allreduce(bytes: {MIB}, elem: 4)\n}}\n");
    assert_relative_eq!(
        extra(&program),
        3.0 * MIB as f64 * 1e-9,
        max_relative = 1e-9
    );
}

#[test]
fn the_users_buffer_and_eager_messages_are_priced_as_clean() {
    for program in [
        // The root of a binomial bcast sends the user's buffer.
        format!("bcast(root: 0, bytes: {MIB})\n"),
        // Pairwise alltoall: the user's blocks.
        format!("alltoall(bytes: {MIB})\n"),
        // A program's own messages.
        format!(
            "if rank == 0 {{\n    send(to: 1, bytes: {MIB})\n}} else {{\n    recv(from: 0, bytes: {MIB})\n}}\n"
        ),
        // Library data below the eager limit: copied by the sender's own
        // core, which holds it.
        "allreduce(bytes: 32768, elem: 4)\n".to_owned(),
    ] {
        let with = predicted(&program, true);
        let without = predicted(&program, false);
        assert!(without > 0.0, "{program}");
        assert_eq!(with, without, "{program}");
    }
}

#[test]
fn the_machine_states_its_written_channel() {
    let dir = support::temp_dir();
    let m = support::closed_form_machine(&dir, "1 GB/s", "");
    let text = std::fs::read_to_string(&m).expect("machine").replace(
        "[collectives]",
        "[network.written]\nbandwidth = \"500 MB/s\"\n\n[[network.written.segments]]\nfrom = \"1 MiB\"\nlatency = \"9 us\"\n\n[collectives]",
    );
    let m = dir.file("w.toml", &text);
    let out = support::parsim(&["machine", m.to_str().expect("utf-8 path")]);
    assert!(out.status.success(), "{}", support::stderr(&out));
    let text = support::stdout(&out);
    assert!(
        text.contains(
            "data the sender just wrote (a collective's library data, by rendezvous; [written]):"
        ),
        "{text}"
    );
    assert!(text.contains("    from 1 MiB: L 9 µs"), "{text}");
}

#[test]
fn bad_written_keys_are_refused_by_name() {
    let dir = support::temp_dir();
    let m = support::closed_form_machine(&dir, "1 GB/s", "");
    for (section, key) in [
        // The eager limit is the channel's: the same protocol.
        (
            "[network.written]\neager_limit = \"1 KiB\"\n",
            "network.written.eager_limit",
        ),
        (
            "[network.written]\nlatency = \"soon\"\n",
            "network.written.latency",
        ),
        (
            "[network.written]\n[[network.written.segments]]\nfrom = \"1 KiB\"\nduplex = \"half\"\n",
            "network.written.segments[0].duplex",
        ),
        (
            "[network.written]\n[network.written.written]\nlatency = \"1 us\"\n",
            "network.written.written",
        ),
    ] {
        let text = std::fs::read_to_string(&m)
            .expect("machine")
            .replace("[collectives]", &format!("{section}\n[collectives]"));
        let bad = dir.file("bad.toml", &text);
        let out = support::parsim(&["machine", bad.to_str().expect("utf-8 path")]);
        assert!(!out.status.success(), "{section}");
        let err = support::stderr(&out);
        assert!(err.contains(key), "{section}: {err}");
    }
}
