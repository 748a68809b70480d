//! `parsim run --trace`: a Chrome trace-event timeline with one track per
//! rank, compute and communication intervals, and message arrows.

mod support;

#[test]
fn heat_timeline_has_the_intervals_and_arrows_of_the_run() {
    let dir = support::temp_dir();
    let out = dir.join("heat.trace.json");
    let o = support::parsim_command()
        .args([
            "run",
            "examples/heat.mpl",
            "--ranks",
            "4",
            "--param",
            "iters=3",
            "--param",
            "n=300",
        ])
        .arg("--trace")
        .arg(&out)
        .output()
        .expect("runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("written")).expect("JSON");
    let events = v["traceEvents"].as_array().expect("events");
    let of = |ph: &str, cat: &str| -> Vec<&serde_json::Value> {
        events
            .iter()
            .filter(|e| e["ph"] == ph && (cat.is_empty() || e["cat"] == cat))
            .collect()
    };
    // Every rank computes 3 times 4e-9 * 300 * 300 s = 360 us.
    let compute = of("X", "compute");
    assert_eq!(compute.len(), 12);
    for e in &compute {
        assert!(
            (e["dur"].as_f64().expect("dur") - 360.0).abs() < 1e-6,
            "{e}"
        );
        assert_eq!(e["args"]["line"], 8);
    }
    for r in 0..4u64 {
        let starts: Vec<f64> = compute
            .iter()
            .filter(|e| e["tid"] == r)
            .map(|e| e["ts"].as_f64().expect("ts"))
            .collect();
        assert_eq!(starts.len(), 3, "rank {r}");
        assert!(
            starts.windows(2).all(|w| w[1] >= w[0] + 360.0),
            "rank {r}: compute intervals do not overlap"
        );
    }
    // Edge ranks exchange with one neighbour, inner ranks with two: 6
    // sendrecv calls and 6 messages a step.
    assert_eq!(of("X", "comm").len(), 18);
    let starts = of("s", "message");
    let ends = of("f", "message");
    assert_eq!((starts.len(), ends.len()), (18, 18));
    for (s, f) in starts.iter().zip(&ends) {
        assert_eq!(s["id"], f["id"]);
        assert!(
            f["ts"].as_f64().expect("ts") > s["ts"].as_f64().expect("ts"),
            "a message arrives after it is sent"
        );
        assert_ne!(s["tid"], f["tid"]);
    }
    // A name for every rank's track.
    assert_eq!(
        events.iter().filter(|e| e["name"] == "thread_name").count(),
        4
    );
}

#[test]
fn waitany_has_its_interval_from_post_to_the_first_completion() {
    let dir = support::temp_dir();
    let src = dir.join("waitany_trace.mpl");
    // rank 0 waits for two receives; rank 1 sends after 1 ms of compute
    std::fs::write(
        &src,
        "kernel k() cost 1.0e-3\n\
         if rank == 0 {\n\
             let a = irecv(from: 1, bytes: 8, tag: 1)\n\
             let b = irecv(from: 1, bytes: 8, tag: 2)\n\
             let i = waitany(a, b)\n\
             let j = waitany(a, b)\n\
         } else {\n\
             compute k()\n\
             send(to: 0, bytes: 8, tag: 2)\n\
             send(to: 0, bytes: 8, tag: 1)\n\
         }\n",
    )
    .expect("source written");
    let out = dir.join("waitany.trace.json");
    let o = support::parsim_command()
        .args(["run", "--ranks", "2"])
        .arg(&src)
        .arg("--trace")
        .arg(&out)
        .output()
        .expect("runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("written")).expect("JSON");
    let waits: Vec<&serde_json::Value> = v["traceEvents"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| e["ph"] == "X" && e["name"] == "waitany")
        .collect();
    assert_eq!(waits.len(), 2, "{waits:?}");
    // the first one waits for rank 1's 1 ms of compute
    assert!(
        waits[0]["tid"] == 0 && waits[0]["dur"].as_f64().expect("dur") >= 1000.0,
        "{waits:?}"
    );
    assert_eq!(waits[0]["args"]["line"], 5);
}
