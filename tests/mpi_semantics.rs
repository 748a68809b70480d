//! MPI semantics beyond plain send/recv, end to end through the binary:
//! send modes, waitany, test, probe, communicators, arrays, collective
//! mismatches.

use std::path::PathBuf;
use std::process::{Command, Output};

fn parsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_parsim"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the parsim binary runs")
}

fn temp_file(name: &str, text: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("mpi_semantics");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let p = dir.join(name);
    // Unique temporary name, then rename: tests run in parallel and a reader
    // must never see a half-written file.
    let tmp = dir.join(format!("{name}.{:?}.tmp", std::thread::current().id()));
    std::fs::write(&tmp, text).expect("write temp file");
    std::fs::rename(&tmp, &p).expect("rename temp file");
    p
}

/// Runs `program` on `ranks` ranks; returns (exit code, print lines sorted
/// by rank then order, stderr).
fn run(name: &str, program: &str, ranks: u32) -> (i32, Vec<String>, String) {
    let p = temp_file(name, program);
    let o = parsim(&[
        "run",
        p.to_str().expect("utf-8"),
        "--ranks",
        &ranks.to_string(),
        "--format",
        "json",
    ]);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let code = o.status.code().unwrap_or(-1);
    if code != 0 {
        return (code, Vec::new(), err);
    }
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let mut lines: Vec<(u64, usize, String)> = v["output"]
        .as_array()
        .expect("output array")
        .iter()
        .enumerate()
        .map(|(i, l)| {
            (
                l["rank"].as_u64().unwrap_or(0),
                i,
                l["text"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    lines.sort();
    (
        code,
        lines
            .into_iter()
            .map(|(r, _, t)| format!("{r}: {t}"))
            .collect(),
        err,
    )
}

#[test]
fn synchronous_sends_deadlock_head_to_head_even_when_small() {
    let prog = "let peer = 1 - rank\nssend(to: peer, bytes: 8)\nrecv(from: peer, bytes: 8)\n";
    let (code, _, err) = run("ssend.mpl", prog, 2);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("blocked in `ssend`"), "{err}");
    // The same with standard sends of 8 bytes completes (eager).
    let (code, _, err) = run("send8.mpl", &prog.replace("ssend", "send"), 2);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn buffered_sends_never_wait_for_the_receiver() {
    let prog = "let peer = 1 - rank\nbsend(to: peer, bytes: 10000000)\nrecv(from: peer, bytes: 10000000)\n";
    let (code, _, err) = run("bsend.mpl", prog, 2);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn waitany_returns_the_first_completed_index_then_minus_one() {
    let prog = r#"
kernel work(s) cost s
if rank == 0 {
    let a = irecv(from: 1, bytes: 8)
    let b = irecv(from: 2, bytes: 8)
    let i = waitany(a, b)
    let j = waitany(a, b)
    let k = waitany(a, b)
    print(i, j, k, a == null, b == null)
} else {
    // rank 2 sends first
    compute work(0.001 * (3 - rank))
    send(to: 0, bytes: 8)
}
"#;
    let (code, lines, err) = run("waitany.mpl", prog, 3);
    assert_eq!(code, 0, "{err}");
    assert_eq!(lines, vec!["0: 1 0 -1 true true"]);
}

#[test]
fn test_is_false_until_the_message_is_there() {
    let prog = r#"
kernel work(s) cost s
if rank == 0 {
    let r = irecv(from: 1, bytes: 8)
    let early = test(r)
    compute work(0.01)
    let late = test(r)
    print(early, late, r == null, test(r))
} else {
    compute work(0.005)
    send(to: 0, bytes: 8)
}
"#;
    let (code, lines, err) = run("test.mpl", prog, 2);
    assert_eq!(code, 0, "{err}");
    assert_eq!(lines, vec!["0: false true true true"]);
}

#[test]
fn probe_sees_a_rendezvous_message_and_iprobe_returns_null_when_nothing_arrived() {
    let prog = r#"
if rank == 0 {
    let none = iprobe(from: any, tag: any)
    let st = probe(from: any, tag: any)
    let got = recv(from: st.source, bytes: st.bytes, tag: st.tag)
    print(none == null, st.source, st.tag, st.bytes, got.bytes)
} else if rank == 1 {
    send(to: 0, bytes: 1000000, tag: 4)
}
"#;
    let (code, lines, err) = run("probe.mpl", prog, 2);
    assert_eq!(code, 0, "{err}");
    assert_eq!(lines, vec!["0: true 1 4 1000000 1000000"]);
}

#[test]
fn comm_split_orders_by_key_then_rank_and_statuses_use_communicator_ranks() {
    let prog = r#"
let c = comm_split(color: rank % 2, key: -rank)
print(rank_in(c), size_in(c))
// In each half, the last rank (local 0) sends to local 1.
if rank_in(c) == 0 {
    send(to: 1, bytes: 8, tag: 3, comm: c)
} else if rank_in(c) == 1 {
    let s = recv(from: any, bytes: 8, tag: any, comm: c)
    print("from", s.source, s.tag)
}
let none = comm_split(color: -1, key: 0)
print(none == null)
"#;
    let (code, lines, err) = run("split.mpl", prog, 6);
    assert_eq!(code, 0, "{err}");
    // Evens {0, 2, 4} ordered by key -rank: 4, 2, 0; odds: 5, 3, 1.
    assert_eq!(
        lines,
        vec![
            "0: 2 3",
            "0: true",
            "1: 2 3",
            "1: true",
            "2: 1 3",
            "2: from 0 3",
            "2: true",
            "3: 1 3",
            "3: from 0 3",
            "3: true",
            "4: 0 3",
            "4: true",
            "5: 0 3",
            "5: true",
        ]
    );
}

#[test]
fn communicators_isolate_messages() {
    // A message on a duplicate of the world is not received by a world receive.
    let prog = r#"
let d = comm_dup(world)
if rank == 0 {
    send(to: 1, bytes: 8, tag: 1, comm: d)
    send(to: 1, bytes: 16, tag: 1)
} else if rank == 1 {
    let a = recv(from: 0, bytes: 100, tag: 1)
    let b = recv(from: 0, bytes: 100, tag: 1, comm: d)
    print(a.bytes, b.bytes)
}
"#;
    let (code, lines, err) = run("dup.mpl", prog, 2);
    assert_eq!(code, 0, "{err}");
    assert_eq!(lines, vec!["1: 16 8"]);
}

#[test]
fn arrays_are_values() {
    let prog = r#"
if rank == 0 {
    let a = array(4, 0)
    a[1] = 10
    let b = a
    b[1] += 5
    let c = [1, 2.5, a[1]]
    print(a, b, len(c), sum(c), c[2])
}
"#;
    let (code, lines, err) = run("arrays.mpl", prog, 1);
    assert_eq!(code, 0, "{err}");
    assert_eq!(lines, vec!["0: [0, 10, 0, 0] [0, 15, 0, 0] 3 13.5 10"]);
    let (code, _, err) = run("array_oob.mpl", "let a = [1, 2]\nprint(a[2])\n", 1);
    assert_eq!(code, 4);
    assert!(
        err.contains("index 2 is out of bounds for an array of length 2"),
        "{err}"
    );
}

#[test]
fn mismatched_collectives_are_errors_naming_both_lines() {
    let prog =
        "if rank == 0 {\n    bcast(root: 0, bytes: 8)\n} else {\n    bcast(root: 1, bytes: 8)\n}\n";
    let (code, _, err) = run("mismatch_root.mpl", prog, 2);
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("collective mismatch"), "{err}");
    assert!(err.contains("line 2:5"), "{err}");
    assert!(err.contains("mismatch_root.mpl:4:5"), "{err}");

    let prog = "if rank == 0 { barrier() } else { allreduce(bytes: 8) }\n";
    let (code, _, err) = run("mismatch_kind.mpl", prog, 3);
    assert_eq!(code, 4, "{err}");
    assert!(
        err.contains("allreduce here, but rank 0 called barrier"),
        "{err}"
    );

    let prog = "allreduce(bytes: 8 * (rank + 1))\n";
    let (code, _, err) = run("mismatch_bytes.mpl", prog, 2);
    assert_eq!(code, 4, "{err}");
    assert!(
        err.contains("with bytes 16 here, but rank 0 gave 8"),
        "{err}"
    );
}

#[test]
fn a_rank_that_skips_a_collective_deadlocks_the_others() {
    let prog = "if rank != 2 { barrier() }\n";
    let (code, _, err) = run("skip.mpl", prog, 4);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("blocked in `barrier`"), "{err}");
    assert!(err.contains("has already finished"), "{err}");
}
