//! `run --fast-forward` (issue 15): a steady loop's iterations are skipped
//! with a prediction within the bound it reports of the full run's, and a
//! program it cannot skip runs in full, with the same result and the
//! reason.

mod support;

use support::{parsim, stdout, text};

fn run_json(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["run"];
    all.extend(args);
    all.extend(["--format", "json", "-q"]);
    let o = parsim(&all);
    assert!(o.status.success(), "{}", text(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("json")
}

fn predicted(v: &serde_json::Value) -> f64 {
    v["predicted_seconds"].as_f64().expect("predicted_seconds")
}

#[test]
fn a_steady_loop_is_skipped_within_the_bound_it_reports() {
    for (file, extra) in [
        ("examples/heat.mpl", vec!["-n", "64", "-p", "iters=300"]),
        (
            "bench/w2_stencil2d.mpl",
            vec![
                "-n",
                "256",
                "-p",
                "iters=100",
                "--machine",
                "bench/anchor.toml",
            ],
        ),
    ] {
        let mut args = vec![file];
        args.extend(&extra);
        let full = run_json(&args);
        args.push("--fast-forward");
        let ff = run_json(&args);
        let f = &ff["fast_forward"];
        assert_eq!(f["applied"], true, "{file}: {f}");
        let skipped = f["iterations_skipped"].as_u64().expect("skipped");
        assert!(skipped >= 50, "{file}: {f}");
        let (a, b) = (predicted(&full), predicted(&ff));
        let bound = f["bound_seconds"].as_f64().expect("bound");
        assert!((a - b).abs() <= bound, "{file}: {a} vs {b}, bound {bound}");
        // Far inside the bound in fact, and the bound itself is small.
        assert!((a - b).abs() <= 1e-6 * a, "{file}: {a} vs {b}");
        // At most one iteration's time beyond computing, plus the spread.
        assert!(bound <= 2e-3 * a, "{file}: bound {bound} of {a}");
        // The statistics of the skipped iterations are counted.
        assert_eq!(ff["messages"], full["messages"], "{file}");
        assert_eq!(ff["bytes"], full["bytes"], "{file}");
        assert!(
            ff["events"].as_u64() < full["events"].as_u64(),
            "{file}: fewer events"
        );
        let sum = |v: &serde_json::Value, k: &str| -> f64 {
            v["ranks"]
                .as_array()
                .expect("ranks")
                .iter()
                .map(|r| r[k].as_f64().expect("number"))
                .sum()
        };
        for k in ["compute_seconds", "comm_seconds"] {
            let (x, y) = (sum(&full, k), sum(&ff, k));
            assert!(
                (x - y).abs() <= 1e-6 * x.max(1e-12),
                "{file} {k}: {x} vs {y}"
            );
        }
    }
}

#[test]
fn programs_it_cannot_skip_run_in_full_and_say_why() {
    for (file, reason) in [
        (
            "tests/fast_forward/crossing.mpl",
            "messages cross the loop's iterations",
        ),
        (
            "tests/fast_forward/uneven.mpl",
            "ranks reached the iteration",
        ),
        (
            "tests/fast_forward/printing.mpl",
            "the loop at line 3 prints",
        ),
    ] {
        let full = parsim(&["run", file, "-n", "4", "-q"]);
        let ff = parsim(&["run", file, "-n", "4", "-q", "--fast-forward"]);
        assert!(ff.status.success(), "{file}: {}", text(&ff.stderr));
        let (a, b) = (stdout(&full), stdout(&ff));
        // The same report and output, plus the line that says why.
        let extra = b
            .strip_prefix(a.as_str())
            .unwrap_or_else(|| panic!("{file}:\n{a}\n{b}"));
        assert!(
            extra.starts_with("fast-forward: not applied (") && extra.contains(reason),
            "{file}: {extra}"
        );
        assert!(extra.contains("this is the full run"), "{file}: {extra}");
    }
}

#[test]
fn fast_forward_refuses_the_recordings_it_would_cut() {
    for flag in [
        &["--trace", "t.json"][..],
        &["--critical-path"][..],
        &["--comm-matrix", "m.csv"][..],
        &["--call-profile", "c.csv"][..],
    ] {
        let mut args = vec!["run", "examples/heat.mpl", "-n", "4", "--fast-forward"];
        args.extend(flag);
        let o = parsim(&args);
        assert_eq!(o.status.code(), Some(2), "{flag:?}: {}", text(&o.stderr));
    }
}

#[test]
fn a_sweep_fast_forwards_every_simulation() {
    let sweep = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec![
            "sweep",
            "examples/heat.mpl",
            "-n",
            "16,64",
            "--weak",
            "-p",
            "iters=200",
            "--format",
            "json",
            "-q",
        ];
        args.extend(extra);
        let o = parsim(&args);
        assert!(o.status.success(), "{}", text(&o.stderr));
        serde_json::from_slice(&o.stdout).expect("json")
    };
    let (full, ff) = (sweep(&[]), sweep(&["--fast-forward"]));
    let points = |v: &serde_json::Value| -> Vec<f64> {
        v["series"][0]["points"]
            .as_array()
            .expect("points")
            .iter()
            .map(|p| p["seconds"].as_f64().expect("seconds"))
            .collect()
    };
    let (a, b) = (points(&full), points(&ff));
    assert_eq!(a.len(), 2);
    // heat's 16 ranks alternate between two periods; the mean of a
    // window of them is within 1e-5 of the full run here (run's own test
    // checks the reported bound).
    for (x, y) in a.iter().zip(&b) {
        assert!((x - y).abs() <= 1e-5 * x, "{x} vs {y}");
    }
}
