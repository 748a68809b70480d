//! The page faults of a collective's temporary buffers (`[node]
//! page_fault`, `allocator`): MPICH's reduce allocates a `tmp_buf` of the
//! vector on every rank and a `recvbuf` of it on every rank but the root
//! (`reduce_intra_reduce_scatter_gather.c`, tag v4.0.2); glibc's heap
//! (models/src/heap.rs) hands the two of a non-root back to the kernel at
//! the end of every call once the first call has set its thresholds, and
//! keeps the root's one.
//!
//! Machine: tests/support `closed_form_machine` (MPICH 3's rules: a 1 MiB
//! reduce on 2 ranks is Rabenseifner's) with `page_fault` added. The cost is
//! charged to the rank's time in the call (`comm_seconds`), so the
//! difference against the same run without `page_fault` is the faults'
//! time alone, whatever the waits.

mod support;

use approx::assert_relative_eq;

const MIB: u64 = 1 << 20;
const PAGE: u64 = 4096;
const PF: f64 = 2e-6;

/// Each rank's `comm_seconds` of `calls` reduces of 1 MiB (each followed
/// by a barrier) on 2 ranks, with `node` lines added to `[node]` and the
/// collectives of `library`.
fn comm(node: &str, library: &str, calls: u32) -> Vec<f64> {
    let dir = support::temp_dir();
    let m = support::closed_form_machine(&dir, "1 GB/s", "");
    let text = std::fs::read_to_string(&m)
        .expect("machine")
        .replace("[node]\n", &format!("[node]\n{node}"))
        .replace("library = \"mpich\"", &format!("library = \"{library}\""));
    let m = dir.file("pf.toml", &text);
    let prog = dir.file(
        "reduce.mpl",
        &format!(
            "for i in 0 .. {calls} {{\n    reduce(root: 0, bytes: {MIB}, elem: 4)\n    barrier()\n}}\n"
        ),
    );
    let report = support::run_json(&prog, 2, &m);
    report["ranks"]
        .as_array()
        .expect("ranks")
        .iter()
        .map(|r| r["comm_seconds"].as_f64().expect("f64"))
        .collect()
}

/// Extra seconds per rank that `page_fault` adds to `calls` reduces.
fn extra(node: &str, library: &str, calls: u32) -> Vec<f64> {
    let base = comm("", library, calls);
    let with = comm(node, library, calls);
    with.iter().zip(&base).map(|(w, b)| w - b).collect()
}

/// Pages spanned by bytes `from..to` of the heap or a mapping (data starts
/// 16 bytes into a chunk).
fn span(from: u64, to: u64) -> u64 {
    to.div_ceil(PAGE) - from / PAGE
}

#[test]
fn a_non_root_faults_its_two_buffers_in_every_call_the_root_once() {
    let node = format!("page_fault = \"{} us\"\n", PF * 1e6);
    let (n, nb) = (MIB, MIB + 16);
    // Rabenseifner's reduce on 2 ranks: the root keeps (writes) the first
    // half of its `tmp_buf`; rank 1 the second half of its `tmp_buf` and
    // the whole of its `recvbuf` (a copy of the send buffer).
    //
    // Call 1: every buffer mapped on its own (the threshold is 128 KiB).
    let call1 = (
        span(16, 16 + n / 2),
        span(16 + n / 2, 16 + n) + span(16, 16 + n),
    );
    // Call 2: below the raised threshold, from a fresh heap: the root's
    // half at bytes 16..; rank 1's half, then `recvbuf` at `nb + 16`, whose
    // first page the half's last one already wrote.
    let call2 = (
        span(16, 16 + n / 2),
        span(16 + n / 2, 16 + n) + span(nb + 16, 2 * nb + 16) - 1,
    );
    let two = extra(&node, "mpich", 2);
    assert_relative_eq!(two[0], (call1.0 + call2.0) as f64 * PF, max_relative = 1e-9);
    assert_relative_eq!(two[1], (call1.1 + call2.1) as f64 * PF, max_relative = 1e-9);
    // Calls 3 and 4: the root reuses its buffer (one buffer stays below the
    // trim threshold of twice its size); rank 1's two pass it, the heap
    // gives back all but its 128 KiB pad, which lies in the unwritten first
    // half of `tmp_buf`: each call faults what call 2 did.
    let four = extra(&node, "mpich", 4);
    assert_relative_eq!(four[0], two[0], max_relative = 1e-9);
    assert_relative_eq!(
        four[1],
        two[1] + 2.0 * call2.1 as f64 * PF,
        max_relative = 1e-9
    );
}

#[test]
fn an_allocator_that_keeps_its_memory_faults_once() {
    let node = format!("page_fault = \"{} us\"\nallocator = \"retain\"\n", PF * 1e6);
    let (n, nb) = (MIB, MIB + 16);
    let one = extra(&node, "mpich", 1);
    let four = extra(&node, "mpich", 4);
    assert_relative_eq!(
        one[0],
        span(16, 16 + n / 2) as f64 * PF,
        max_relative = 1e-9
    );
    let rank1 = span(16 + n / 2, 16 + n) + span(nb + 16, 2 * nb + 16) - 1;
    assert_relative_eq!(one[1], rank1 as f64 * PF, max_relative = 1e-9);
    for (o, f) in one.iter().zip(&four) {
        assert_relative_eq!(*o, *f, max_relative = 1e-9);
    }
}

#[test]
fn libraries_whose_buffers_are_not_modelled_pay_nothing() {
    let node = format!("page_fault = \"{} us\"\n", PF * 1e6);
    for e in extra(&node, "openmpi-4", 3) {
        assert_eq!(e, 0.0);
    }
}

#[test]
fn bad_heap_keys_are_refused_by_name() {
    let dir = support::temp_dir();
    let m = support::closed_form_machine(&dir, "1 GB/s", "");
    for (line, key) in [
        ("allocator = \"jemalloc\"\n", "node.allocator"),
        ("page_size = \"0 B\"\n", "node.page_size"),
        ("page_fault = \"slow\"\n", "node.page_fault"),
    ] {
        let text = std::fs::read_to_string(&m)
            .expect("machine")
            .replace("[node]\n", &format!("[node]\n{line}"));
        let bad = dir.file("bad.toml", &text);
        let out = support::parsim(&["machine", bad.to_str().expect("utf-8 path")]);
        assert!(!out.status.success(), "{line}");
        let err = support::stderr(&out);
        assert!(err.contains(key), "{line}: {err}");
    }
}

#[test]
fn the_machine_states_its_page_fault_cost() {
    let dir = support::temp_dir();
    let m = support::closed_form_machine(&dir, "1 GB/s", "");
    let text = std::fs::read_to_string(&m)
        .expect("machine")
        .replace("[node]\n", "[node]\npage_fault = \"1.9 us\"\n");
    let m = dir.file("pf.toml", &text);
    let out = support::parsim(&["machine", m.to_str().expect("utf-8 path")]);
    assert!(out.status.success(), "{}", support::stderr(&out));
    let text = support::stdout(&out);
    assert!(
        text.contains("a collective's temporary buffers fault in at 1.9 us per 4 KiB page of fresh memory (glibc allocator)"),
        "{text}"
    );
}
