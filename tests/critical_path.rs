//! `parsim run --critical-path`: the chain of compute and messages across
//! ranks that determines the predicted time.

mod support;

#[test]
fn a_pipeline_of_three_ranks() {
    let dir = support::temp_dir();
    let prog = dir.join("chain.mpl");
    std::fs::write(
        &prog,
        "kernel work(s) cost s\n\
         if rank == 0 {\n    compute work(0.001)\n    send(to: 1, bytes: 8)\n\
         } else if rank == 1 {\n    recv(from: 0, bytes: 8)\n    compute work(0.002)\n    send(to: 2, bytes: 8)\n\
         } else if rank == 2 {\n    compute work(0.0005)\n    recv(from: 1, bytes: 8)\n    compute work(0.0001)\n}\n",
    )
    .expect("write");
    let o = support::parsim_command()
        .args([
            "run",
            prog.to_str().expect("utf-8"),
            "--ranks",
            "3",
            "--critical-path",
        ])
        .output()
        .expect("runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    let steps: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("critical path"))
        .skip(1)
        .take_while(|l| l.starts_with("  rank"))
        .collect();
    // Rank 0's compute, its message to rank 1, rank 1's compute, its
    // message to rank 2, rank 2's last compute; rank 2's first compute
    // (0.5 ms, overlapped with the others) is not on the path.
    let summary: Vec<(u32, String)> = steps
        .iter()
        .map(|l| {
            let rank = l
                .split_whitespace()
                .nth(1)
                .expect("rank")
                .parse()
                .expect("number");
            let what = l
                .split("  ")
                .filter(|p| !p.trim().is_empty())
                .last()
                .expect("what")
                .trim()
                .to_owned();
            (rank, what)
        })
        .collect();
    let names: Vec<(u32, &str)> = summary
        .iter()
        .map(|(r, w)| (*r, w.split(" at ").next().unwrap_or("")))
        .collect();
    assert_eq!(
        names,
        vec![
            (0, "compute work"),
            (1, "recv: waits for rank 0's message"),
            (1, "compute work"),
            (2, "recv: waits for rank 1's message"),
            (2, "compute work"),
        ],
        "{text}"
    );
    assert!(
        steps[4].contains(":12"),
        "the last step is rank 2's compute at line 12: {}",
        steps[4]
    );
}

/// Issue 14: on a halo exchange with an allreduce per iteration (64 ranks,
/// myrinet.toml) the path blamed "allreduce at line 8: 8.9 ms on rank 0"
/// per iteration, while a 64-rank allreduce alone takes about 0.15 ms: the
/// walk stopped at the collective. The time is the chain of sendrecvs (rank
/// i waits for rank i - 1's, line 6) that makes the last rank late, which
/// the walk now reaches through the allreduce's own messages.
#[test]
fn the_path_crosses_a_collective_to_the_rank_that_held_it() {
    let dir = support::temp_dir();
    let prog = dir.file(
        "halo.mpl",
        "param iters = 2\n\
         param n = 3000\n\
         kernel relax(n) cost 4.0e-9 * n * n\n\
         for i in 0 .. iters {\n\
         \x20   compute relax(n)\n\
         \x20   if rank > 0 { sendrecv(to: rank - 1, from: rank - 1, bytes: 8 * n) }\n\
         \x20   if rank < size - 1 { sendrecv(to: rank + 1, from: rank + 1, bytes: 8 * n) }\n\
         \x20   let r = allreduce(bytes: 8, value: 1.0, op: max)\n\
         }\n",
    );
    let o = support::parsim(&[
        "run",
        prog.to_str().expect("utf-8"),
        "-n",
        "64",
        "-m",
        "examples/machines/myrinet.toml",
        "--critical-path",
    ]);
    assert!(o.status.success(), "{}", support::stderr(&o));
    let text = support::stdout(&o);
    let share = |op: &str| -> f64 {
        text.lines()
            .skip_while(|l| !l.starts_with("time on the critical path by operation"))
            .find(|l| l.trim_end().ends_with(&format!("%  {op}")))
            .and_then(|l| l.split_whitespace().nth(2))
            .and_then(|p| p.trim_end_matches('%').parse().ok())
            .unwrap_or_else(|| panic!("no {op} in\n{text}"))
    };
    // 2 x 36 ms of compute, 2 x 63 sendrecv steps of about 0.14 ms, and
    // the allreduce's tree from the last rank (6 rounds) twice.
    assert!((share("compute relax") - 80.0).abs() < 1.0, "{text}");
    assert!((share("sendrecv") - 19.6).abs() < 1.0, "{text}");
    assert!(share("allreduce") < 1.0, "{text}");
    // The chain runs through every rank: rank i's sendrecv waits for rank
    // i - 1's message, and the allreduce passes from rank 63 to rank 0.
    for i in 1..64 {
        let step = format!("sendrecv: waits for rank {}'s message", i - 1);
        assert!(
            text.lines()
                .any(|l| l.trim_start().starts_with(&format!("rank {i:>5}")) && l.contains(&step)),
            "rank {i}: {text}"
        );
    }
    assert!(
        text.contains("allreduce: waits for rank 63's message"),
        "{text}"
    );
}
