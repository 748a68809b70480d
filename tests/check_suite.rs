//! `parsim check` on the known-buggy and known-correct patterns of
//! `tests/check/` (categories after the MPI Bugs Initiative: deadlock,
//! parameter matching, buffering hazard, resource leak, request lifecycle,
//! call ordering).

use std::process::Command;

/// Runs `parsim check` and returns (exit code, findings as (kind, line)).
fn check(file: &str, ranks: u32, params: &[&str]) -> (i32, Vec<(String, u64)>) {
    check_with(file, ranks, params, &[])
}

fn check_with(
    file: &str,
    ranks: u32,
    params: &[&str],
    extra: &[&str],
) -> (i32, Vec<(String, u64)>) {
    let mut args = vec![
        "check".to_owned(),
        format!("tests/check/{file}"),
        "--ranks".into(),
        ranks.to_string(),
    ];
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    args.extend(["--format".into(), "json".into()]);
    for p in params {
        args.extend(["--param".into(), (*p).to_owned()]);
    }
    let o = Command::new(env!("CARGO_BIN_EXE_parsim"))
        .args(&args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("parsim runs");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "{file}: not JSON ({e}): {}",
            String::from_utf8_lossy(&o.stderr)
        )
    });
    let findings = v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            (
                f["kind"].as_str().unwrap_or("").to_owned(),
                f["line"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    (o.status.code().unwrap_or(-1), findings)
}

#[test]
fn head_to_head_sends_are_a_buffering_hazard_then_a_deadlock() {
    assert_eq!(
        check("head_to_head.mpl", 2, &[]),
        (5, vec![("buffering_hazard".into(), 5)])
    );
    assert_eq!(
        check("head_to_head.mpl", 2, &["bytes=100000"]),
        (3, vec![("deadlock".into(), 5)])
    );
}

#[test]
fn deadlocks() {
    assert_eq!(check("ring.mpl", 6, &[]), (3, vec![("deadlock".into(), 4)]));
    assert_eq!(
        check("recv_from_self.mpl", 3, &[]),
        (3, vec![("deadlock".into(), 2)])
    );
    assert_eq!(
        check("mismatched_tags.mpl", 2, &[]),
        (
            3,
            vec![("wait_on_finished".into(), 2), ("deadlock".into(), 2)]
        )
    );
    assert_eq!(
        check("waitall_never.mpl", 2, &[]),
        (
            3,
            vec![("wait_on_finished".into(), 6), ("deadlock".into(), 6)]
        )
    );
    assert_eq!(
        check("collective_in_branch.mpl", 4, &[]),
        (
            3,
            vec![("wait_on_finished".into(), 2), ("deadlock".into(), 2)]
        )
    );
}

#[test]
fn usage_errors() {
    assert_eq!(
        check("different_roots.mpl", 4, &[]),
        (4, vec![("error".into(), 2)])
    );
    assert_eq!(
        check("never_received.mpl", 2, &[]),
        (4, vec![("unreceived_message".into(), 2)])
    );
    assert_eq!(
        check("leaked_isend.mpl", 2, &[]),
        (4, vec![("leaked_request".into(), 2)])
    );
}

#[test]
fn wildcard_races_are_warnings_and_explore_finds_the_bad_matching() {
    assert_eq!(
        check("wildcard_race.mpl", 3, &[]),
        (5, vec![("wildcard_race".into(), 5)])
    );
    let (code, findings) = check_with("wildcard_race.mpl", 3, &[], &["--explore"]);
    assert_eq!(code, 3);
    assert!(findings.contains(&("deadlock".into(), 5)), "{findings:?}");
    // A server that takes whichever worker writes first races by design:
    // a warning without --explore, nothing once every matching was tried.
    assert_eq!(check("waitany_server.mpl", 4, &[]).0, 5);
    assert_eq!(
        check_with("waitany_server.mpl", 3, &["jobs=1"], &["--explore=64"]),
        (0, vec![])
    );
    // With more jobs the matchings multiply beyond the budget: said so.
    let (code, findings) = check_with("waitany_server.mpl", 4, &[], &["--explore=8"]);
    assert_eq!(code, 5);
    assert!(
        findings.iter().any(|f| f.0 == "explore_incomplete"),
        "{findings:?}"
    );
}

#[test]
fn correct_programs_report_nothing() {
    assert_eq!(check("correct_halo.mpl", 5, &[]), (0, vec![]));
    // The examples shipped with parsim are correct too.
    let o = Command::new(env!("CARGO_BIN_EXE_parsim"))
        .args([
            "check",
            "examples/net.mpl",
            "--ranks",
            "6",
            "--param",
            "iters=3",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("runs");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

#[test]
fn and_and_or_waits_are_told_apart() {
    let o = Command::new(env!("CARGO_BIN_EXE_parsim"))
        .args(["check", "tests/check/and_or_waits.mpl", "--ranks", "3"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("runs");
    assert_eq!(o.status.code(), Some(3));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("rank 0 blocked in `waitany`"), "{text}");
    assert!(
        text.contains("an OR wait: any one of these would release it"),
        "{text}"
    );
    assert!(
        text.contains("an AND wait: it needs all of these"),
        "{text}"
    );
    assert!(
        text.contains("from any rank (an OR wait over all senders)"),
        "{text}"
    );
}

#[test]
fn explore_combines_forced_matches_in_order() {
    // The deadlock needs two wildcard receives to match particular ranks.
    assert_eq!(check("wildcard_race_deep.mpl", 5, &[]).0, 5);
    let (code, findings) = check_with("wildcard_race_deep.mpl", 5, &[], &["--explore"]);
    assert_eq!(code, 3);
    assert_eq!(
        findings.iter().filter(|f| f.0 == "deadlock").count(),
        1,
        "{findings:?}"
    );
    // Without enough budget for the second level it is not found.
    assert_eq!(
        check_with("wildcard_race_deep.mpl", 5, &[], &["--explore=3"]).0,
        5
    );
}

#[test]
fn collectives_on_different_communicators_are_a_mismatch() {
    let (code, findings) = check("different_communicators.mpl", 4, &[]);
    assert_eq!(code, 3);
    assert!(
        findings.contains(&("collective_mismatch".into(), 8)),
        "{findings:?}"
    );
}

/// The ranks each finding names.
fn ranks_of(file: &str, ranks: u32, params: &[&str]) -> Vec<(String, Vec<u64>)> {
    let mut args = vec![
        "check".to_owned(),
        format!("tests/check/{file}"),
        "--ranks".into(),
        ranks.to_string(),
    ];
    args.extend(["--format".into(), "json".into()]);
    for p in params {
        args.extend(["--param".into(), (*p).to_owned()]);
    }
    let o = Command::new(env!("CARGO_BIN_EXE_parsim"))
        .args(&args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("parsim runs");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            (
                f["kind"].as_str().unwrap_or("").to_owned(),
                f["ranks"]
                    .as_array()
                    .expect("ranks")
                    .iter()
                    .filter_map(serde_json::Value::as_u64)
                    .collect(),
            )
        })
        .collect()
}

#[test]
fn findings_name_the_right_ranks() {
    assert_eq!(
        ranks_of("ring.mpl", 5, &[]),
        vec![("deadlock".into(), vec![0, 1, 2, 3, 4])]
    );
    assert_eq!(
        ranks_of("head_to_head.mpl", 2, &["bytes=100000"]),
        vec![("deadlock".into(), vec![0, 1])]
    );
    assert_eq!(
        ranks_of("head_to_head.mpl", 2, &[]),
        vec![("buffering_hazard".into(), vec![0, 1])]
    );
    assert_eq!(
        ranks_of("mismatched_tags.mpl", 2, &[]),
        vec![
            ("wait_on_finished".into(), vec![1]),
            ("deadlock".into(), vec![1])
        ]
    );
    assert_eq!(
        ranks_of("different_roots.mpl", 4, &[]),
        vec![("error".into(), vec![1])]
    );
    assert_eq!(
        ranks_of("leaked_isend.mpl", 2, &[]),
        vec![("leaked_request".into(), vec![0])]
    );
    assert_eq!(
        ranks_of("never_received.mpl", 2, &[]),
        vec![("unreceived_message".into(), vec![0])]
    );
    assert_eq!(
        ranks_of("collective_in_branch.mpl", 4, &[]),
        // Ranks 1 and 2 wait only on rank 0, which skipped the barrier and
        // finished; rank 3 waits on rank 1.
        vec![
            ("wait_on_finished".into(), vec![1, 2]),
            ("deadlock".into(), vec![1, 2, 3])
        ]
    );
}
