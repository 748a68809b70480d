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
