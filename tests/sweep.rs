//! `parsim sweep`: a scaling table over rank counts, machines and what-if
//! settings, the scalability limit, and the SVG plot.

mod support;

fn sweep(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["sweep"];
    all.extend_from_slice(args);
    all.extend(["--format", "json"]);
    let o = support::parsim_command().args(&all).output().expect("runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("JSON")
}

#[test]
fn weak_scaling_of_heat_on_two_networks() {
    let dir = support::temp_dir();
    let plot = dir.join("heat-sweep.svg");
    let v = sweep(&[
        "examples/heat.mpl",
        "--ranks",
        "1,2,4,...,32",
        "--machine",
        "examples/machines/myrinet.toml",
        "--machine",
        "examples/machines/fast-ethernet.toml",
        "--param",
        "iters=10",
        "--weak",
        "--plot",
        plot.to_str().expect("utf-8"),
    ]);
    let series = v["series"].as_array().expect("series");
    assert_eq!(series.len(), 2);
    let ranks: Vec<u64> = series[0]["points"]
        .as_array()
        .expect("points")
        .iter()
        .map(|p| p["ranks"].as_u64().expect("u64"))
        .collect();
    assert_eq!(ranks, vec![1, 2, 4, 8, 16, 32]);
    // One rank computes 10 steps of 4e-9 * 3000^2 s and does not communicate.
    let t1 = series[0]["points"][0]["seconds"].as_f64().expect("f64");
    assert!((t1 - 0.36).abs() < 1e-9, "{t1}");
    // Fast Ethernet is slower than Myrinet once ranks span nodes (2 ranks
    // share a dual-processor node and talk through shared memory).
    let times = |s: usize| -> Vec<f64> {
        series[s]["points"]
            .as_array()
            .expect("points")
            .iter()
            .map(|p| p["seconds"].as_f64().expect("f64"))
            .collect()
    };
    for (k, (m, e)) in times(0).iter().zip(times(1)).enumerate().skip(2) {
        assert!(e > *m, "{k}: ethernet {e} myrinet {m}");
    }
    let svg = std::fs::read_to_string(&plot).expect("the plot was written");
    assert!(
        svg.starts_with("<svg") && svg.matches("<polyline").count() == 6,
        "three panels, two curves"
    );
}

#[test]
fn strong_scaling_finds_the_limit_and_what_if_settings_make_curves() {
    // A fixed amount of work split over the ranks plus an allreduce each
    // step: time falls, then the collective dominates.
    let dir = support::temp_dir();
    let prog = dir.join("strong.mpl");
    std::fs::write(
        &prog,
        "param work = 0.01\nkernel part(s) cost s\nfor i in 0 .. 10 {\n    compute part(work / size)\n    allreduce(bytes: 1000000)\n}\n",
    )
    .expect("write");
    let v = sweep(&[
        prog.to_str().expect("utf-8"),
        "--ranks",
        "1,2,...,64",
        "--machine",
        "examples/machines/fast-ethernet.toml",
        "--set",
        "network.bandwidth=10 MB/s,1000 MB/s",
    ]);
    let series = v["series"].as_array().expect("series");
    assert_eq!(series.len(), 2, "one curve per --set value");
    assert!(
        series[0]["label"]
            .as_str()
            .expect("label")
            .contains("network.bandwidth=10 MB/s")
    );
    // Two ranks share a node (shared memory); from 4 ranks on the 1 MB
    // allreduce crosses the network and the time stops falling.
    assert_eq!(series[0]["limit"].as_u64(), Some(2));
    let t = |s: usize, k: usize| series[s]["points"][k]["seconds"].as_f64().expect("f64");
    assert!(t(0, 1) < t(0, 0));
    // The what-if network is faster once the network is used.
    for k in 2..7 {
        assert!(t(1, k) < t(0, k), "{k}");
    }
}

#[test]
fn a_what_if_that_changes_nothing_says_so() {
    // Issue 14: the README's `--set network.bandwidth=1GB/s,10GB/s` on up to
    // 64 ranks drew two identical curves without a word, because the
    // built-in machine holds 64 ranks per node and no message crossed the
    // network.
    let on_one_node = sweep(&[
        "examples/heat.mpl",
        "--ranks",
        "1,2,4,...,64",
        "--weak",
        "-p",
        "iters=2",
        "--set",
        "network.bandwidth=1GB/s,10GB/s",
    ]);
    let notes = on_one_node["notes"].as_array().expect("notes");
    assert_eq!(notes.len(), 1, "{on_one_node}");
    let note = notes[0].as_str().expect("text");
    assert!(
        note.starts_with("--set network.bandwidth=1GB/s,10GB/s changes nothing on default"),
        "{note}"
    );
    assert!(
        note.contains("64 ranks per node") && note.contains("--ppn"),
        "{note}"
    );
    // One rank per node: the network is used, the curves differ, no note.
    let spread = sweep(&[
        "examples/heat.mpl",
        "--ranks",
        "1,2,4,...,64",
        "--weak",
        "--ppn",
        "1",
        "-p",
        "iters=2",
        "--set",
        "network.bandwidth=1GB/s,10GB/s",
    ]);
    assert_eq!(spread["notes"], serde_json::json!([]), "{spread}");
    // A key the program never uses on any placement (a collective's
    // algorithm in a program without collectives): the note has no
    // network reason; the text output shows it under the table.
    let o = support::parsim(&[
        "sweep",
        "examples/heat.mpl",
        "-n",
        "1,2",
        "--ppn",
        "1",
        "-p",
        "iters=2",
        "--set",
        "collectives.alltoall=pairwise,bruck",
    ]);
    assert!(o.status.success(), "{}", support::stderr(&o));
    let text = support::stdout(&o);
    assert!(
        text.contains("note: --set collectives.alltoall=pairwise,bruck changes nothing on default: its curves are the same at every rank count, so the program never used what collectives.alltoall sets\n"),
        "{text}"
    );
}
