//! End-to-end tests of block calibration: `parsim calibrate blocks` (profile,
//! compile, time, fit, blocks.toml) and `parsim run --blocks`, with the
//! native kernels of examples/kernels.c. Needs a C compiler (`cc`).

mod support;

use std::path::PathBuf;
use std::process::Output;

use approx::assert_relative_eq;
use support::{parsim, temp_dir, text};

/// Runs parsim with `parts`, each split into words at spaces
/// (`"run examples/heat.mpl -n 1"`); the paths used have no spaces.
fn run(parts: &[&str]) -> Output {
    let words: Vec<&str> = parts.iter().flat_map(|p| p.split_whitespace()).collect();
    parsim(&words)
}

/// Whether `cc` is here; see `support::requires` (PARSIM_REQUIRE_MPI
/// stands for the C compiler too).
fn have_cc() -> bool {
    support::requires_tools(&["cc"], "PARSIM_REQUIRE_MPI")
}

fn toml_of(path: &PathBuf) -> toml::Value {
    toml::from_str(&std::fs::read_to_string(path).expect("blocks file written"))
        .expect("blocks file is TOML")
}

fn points(v: &toml::Value, kernel: &str, level: i64) -> Vec<toml::Value> {
    v["kernel"]
        .as_array()
        .expect("kernels")
        .iter()
        .find(|k| k["name"].as_str() == Some(kernel) && k["concurrent"].as_integer() == Some(level))
        .unwrap_or_else(|| panic!("kernel {kernel} at level {level}"))["point"]
        .as_array()
        .expect("points")
        .clone()
}

#[test]
fn heat_is_calibrated_and_run_with_its_measured_times() {
    if !have_cc() {
        return;
    }
    let dir = temp_dir();
    let blocks = dir.join("blocks.toml");
    let blocks_s = blocks.to_str().expect("utf-8 path");
    let o = run(&[
        "calibrate blocks examples/heat.mpl --ranks",
        "1,2",
        "--set",
        "n=64,iters=3",
        "--set",
        "n=128,iters=3",
        "--kernels examples/kernels.c --concurrent",
        "1,2",
        "--budget 0.05 --min-time 0.01 -o",
        blocks_s,
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(err.contains("compiled: cc -O2"), "{err}");
    assert!(err.contains("stencil(128, 128)"), "{err}");

    let v = toml_of(&blocks);
    let cal = &v["calibration"];
    assert_eq!(cal["concurrent"].as_array().map(Vec::len), Some(2));
    assert!(cal["cpu"].as_str().is_some_and(|c| !c.is_empty()));
    assert!(cal["compiler"].as_str().is_some_and(|c| !c.is_empty()));
    assert!(
        cal["timer_overhead"]
            .as_float()
            .is_some_and(|t| (0.0..1e-5).contains(&t))
    );
    for level in [1, 2] {
        let pts = points(&v, "stencil", level);
        assert_eq!(pts.len(), 2, "two tuples: (64, 64) and (128, 128)");
        let t: Vec<f64> = pts
            .iter()
            .map(|p| p["seconds"].as_float().expect("seconds"))
            .collect();
        // 4x the work: between 2x and 8x the time on any machine
        assert!((2.0..8.0).contains(&(t[1] / t[0])), "{t:?}");
        for p in &pts {
            let ci = p["ci95"].as_array().expect("ci95");
            let (lo, hi) = (ci[0].as_float().expect("lo"), ci[1].as_float().expect("hi"));
            let s = p["seconds"].as_float().expect("seconds");
            assert!(lo <= s && s <= hi, "{p}");
            assert!(p["samples"].as_integer().is_some_and(|n| n >= 3));
            assert!(p["first_call"].as_float().is_some_and(|f| f > 0.0));
        }
        // the profile counts: 3 iterations x (1 + 2) ranks
        assert_eq!(pts[1]["calls"].as_integer(), Some(9));
    }

    // A run uses the measured times of its tuple: the first call's on the
    // rank's first call, then the steady one: compute = first + 9 t.
    let p = &points(&v, "stencil", 1)[1];
    let t128_alone = p["seconds"].as_float().expect("seconds");
    let first_alone = p["first_call"].as_float().expect("first call");
    let o = run(&[
        "run examples/heat.mpl -n 1 -p n=128 -p iters=10 --blocks",
        blocks_s,
        "--format json",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(!text(&o.stderr).contains("warning"), "{}", text(&o.stderr));
    let rep: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let compute = rep["ranks"][0]["compute_seconds"]
        .as_f64()
        .expect("compute");
    assert_relative_eq!(compute, first_alone + 9.0 * t128_alone, max_relative = 1e-9);

    // Two ranks on one node (the built-in machine has 64 per node) use the
    // times measured with two copies at once.
    // ... rank 1 the second copy's (each copy ran on its own core)
    let p = &points(&v, "stencil", 2)[1];
    let t128_pair = p["copies"][1]["seconds"].as_float().expect("copy seconds");
    assert_eq!(p["copies"].as_array().map(Vec::len), Some(2));
    let first_pair = p["first_call"].as_float().expect("first call");
    let o = run(&[
        "run examples/heat.mpl -n 2 -p n=128 -p iters=10 --blocks",
        blocks_s,
        "--format json",
    ]);
    let rep: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let compute = rep["ranks"][1]["compute_seconds"]
        .as_f64()
        .expect("compute");
    assert_relative_eq!(compute, first_pair + 9.0 * t128_pair, max_relative = 1e-9);

    // --noise: every call's time drawn from the measured distribution, one
    // stream per rank from the seed: reproducible, seed-dependent, and two
    // ranks that wait for each other every step pay for the slower one, so
    // the prediction is not below the one with mean times.
    let predict = |extra: &[&str]| -> f64 {
        let mut parts = vec![
            "run examples/heat.mpl -n 2 -p n=128 -p iters=300 --format json --blocks",
            blocks_s,
        ];
        parts.extend_from_slice(extra);
        let o = run(&parts);
        assert!(o.status.success(), "{}", text(&o.stderr));
        let rep: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
        rep["predicted_seconds"].as_f64().expect("predicted")
    };
    let mean = predict(&[]);
    let noisy = predict(&["--noise"]);
    assert_eq!(noisy.to_bits(), predict(&["--noise", "1"]).to_bits());
    assert_ne!(noisy.to_bits(), predict(&["--noise", "2"]).to_bits());
    assert_ne!(noisy.to_bits(), mean.to_bits());
    assert!(noisy >= 0.99 * mean, "noisy {noisy} against mean {mean}");
    let o = run(&["run examples/heat.mpl -n 1 --noise"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("needs --blocks"),
        "{}",
        text(&o.stderr)
    );

    // Far beyond the measurements: the fit is used, and a warning says so.
    let o = run(&[
        "run examples/heat.mpl -n 1 -p n=1024 -p iters=2 --blocks",
        blocks_s,
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.contains("warning: kernel `stencil`") && err.contains("64.0x above"),
        "{err}"
    );
}

#[test]
fn a_batch_job_is_written_instead_of_timing() {
    let dir = temp_dir();
    let out = dir.join("b.toml");
    for (kind, marker, submit) in [
        ("slurm", "#SBATCH --exclusive", "sbatch"),
        ("pbs", "#PBS -l nodes=1:ppn=2", "qsub"),
    ] {
        let o = run(&[
            "calibrate blocks examples/jacobi.mpl -n 2 --param n=1002 --kernels examples/kernels.c --concurrent",
            "1,2",
            "--emit-job",
            kind,
            "-o",
            out.to_str().expect("utf-8 path"),
        ]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        assert!(text(&o.stdout).contains(submit));
        let script = std::fs::read_to_string(dir.join(format!("b.{kind}.sh"))).expect("script");
        assert!(script.starts_with("#!/bin/bash\n"), "{script}");
        assert!(script.contains(marker), "{script}");
        assert!(
            script.contains("calibrate blocks examples/jacobi.mpl --ranks 2 --param n=1002 --kernels examples/kernels.c")
                && script.contains("--concurrent 1,2"),
            "{script}"
        );
        assert!(script.contains("Bring back:"), "{script}");
        assert!(!out.exists(), "nothing is timed");
    }
}

#[test]
fn wrong_libraries_and_blocks_files_are_refused_by_name() {
    if !have_cc() {
        return;
    }
    let dir = temp_dir();
    // a library for another ABI version
    let src = dir.join("v2.c");
    std::fs::write(
        &src,
        "#include <stdint.h>\nuint32_t parsim_kernel_abi_version(void) { return 2; }\n\
         void parsim_kernel_stencil(const int64_t *a, int32_t n) { (void)a; (void)n; }\n",
    )
    .expect("write source");
    let o = run(&[
        "calibrate blocks examples/heat.mpl -n 1 --kernels",
        src.to_str().expect("utf-8 path"),
        "-o",
        dir.join("b.toml").to_str().expect("utf-8 path"),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("built for kernel ABI version 2"),
        "{}",
        text(&o.stderr)
    );

    // no version function at all
    std::fs::write(&src, "void parsim_kernel_stencil(void) {}\n").expect("write source");
    let o = run(&[
        "calibrate blocks examples/heat.mpl -n 1 --kernels",
        src.to_str().expect("utf-8 path"),
    ]);
    assert!(
        text(&o.stderr).contains("no `parsim_kernel_abi_version`"),
        "{}",
        text(&o.stderr)
    );

    // a kernel file that does not compile: the compiler's message is shown
    std::fs::write(&src, "this is not C\n").expect("write source");
    let o = run(&[
        "calibrate blocks examples/heat.mpl -n 1 --kernels",
        src.to_str().expect("utf-8 path"),
    ]);
    assert!(
        text(&o.stderr).contains("compiling the kernels"),
        "{}",
        text(&o.stderr)
    );
    assert!(text(&o.stderr).contains("error"), "{}", text(&o.stderr));

    // a blocks file with a bad key
    let bad = dir.join("bad.toml");
    std::fs::write(
        &bad,
        "[calibration]\nprogram = \"x\"\nranks = [1]\nlibrary = \"k\"\nhost = \"h\"\ncpu = \"c\"\n\
         compiler = \"cc\"\ncflags = \"\"\ndate = \"d\"\nconcurrent = [1]\ntimer_overhead = 0.0\n\
         target_rse = 0.01\nbudget = 1.0\n\n[[kernel]]\nname = \"stencil\"\nparams = [\"rows\", \"cols\"]\n\n\
         [[kernel.point]]\nargs = [1, 2]\nseconds = \"fast\"\nmedian = 0.0\nci95 = [0.0, 0.0]\nrse = 0.0\n\
         samples = 1\ntrimmed = 0\nbatch = 1\nfirst_call = 0.0\nwarmup = 0.0\ncalls = 1\n",
    )
    .expect("write blocks");
    let o = run(&[
        "run examples/heat.mpl -n 1 --blocks",
        bad.to_str().expect("utf-8 path"),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(err.contains("bad.toml") && err.contains("seconds"), "{err}");
}

#[test]
fn calls_are_timed_after_their_predecessor_in_the_program() {
    if !have_cc() {
        return;
    }
    let dir = temp_dir();
    for (isolated, name) in [(false, "seq.toml"), (true, "alone.toml")] {
        let out = dir.join(name);
        let mut parts = vec![
            "calibrate blocks examples/jacobi.mpl -n 2 --set n=130,iters=4",
            "--kernels examples/kernels.c --budget 0.05 --min-time 0.01 -o",
            out.to_str().expect("utf-8 path"),
        ];
        if isolated {
            parts.push("--isolated");
        }
        let o = run(&parts);
        assert!(o.status.success(), "{}", text(&o.stderr));
        let v = toml_of(&out);
        // the rows of a rank: (130 - 2) / 2 = 64, columns 128
        let relax = points(&v, "relax", 1);
        let copyback = points(&v, "copyback", 1);
        let after = |p: &toml::Value| p.get("after").and_then(|a| a.as_str()).map(str::to_owned);
        if isolated {
            assert_eq!(after(&relax[0]), None);
            assert_eq!(after(&copyback[0]), None);
        } else {
            // relax follows copyback of the previous iteration, copyback
            // follows relax
            assert_eq!(after(&relax[0]).as_deref(), Some("copyback(64, 128)"));
            assert_eq!(after(&copyback[0]).as_deref(), Some("relax(64, 128)"));
            assert!(text(&o.stderr).contains("relax(64, 128) after copyback(64, 128)"));
        }
    }
}

#[test]
fn a_kernel_without_cost_runs_and_checks_with_its_calibrated_time() {
    if !have_cc() {
        return;
    }
    let dir = temp_dir();
    let src = dir.join("nocost.mpl");
    std::fs::write(
        &src,
        "kernel stencil(rows, cols)\n\
         for it in 0 .. 3 {\n\
             compute stencil(64, 64)\n\
             if rank > 0 { sendrecv(to: rank - 1, from: rank - 1, bytes: 512) }\n\
             if rank < size - 1 { sendrecv(to: rank + 1, from: rank + 1, bytes: 512) }\n\
         }\n",
    )
    .expect("source written");
    let src_s = src.to_str().expect("utf-8 path");
    let blocks = dir.join("b.toml");
    let blocks_s = blocks.to_str().expect("utf-8 path");
    // without a time: an input error that says how to give one
    let o = run(&["run", src_s, "-n 2"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("parsim calibrate blocks"),
        "{}",
        text(&o.stderr)
    );
    // the profile run charges it nothing, then its native version is timed
    let o = run(&[
        "calibrate blocks",
        src_s,
        "-n 2 --kernels examples/kernels.c --budget 0.05 --min-time 0.01 -o",
        blocks_s,
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = run(&["run", src_s, "-n 2 --blocks", blocks_s]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = run(&["check", src_s, "-n 2 --blocks", blocks_s]);
    assert!(o.status.success(), "{}", text(&o.stdout));
    assert!(
        text(&o.stdout).contains("no problems found"),
        "{}",
        text(&o.stdout)
    );
}

#[test]
fn noise_samples_report_the_spread_of_the_prediction() {
    // The committed calibration of the development machine: no compiler
    // needed.
    let base = "run examples/heat.mpl -n 2 -p n=512 -p iters=50 \
                --blocks validation/dev-machine/blocks-heat.toml \
                --machine validation/dev-machine/machine.toml --format json";
    let o = run(&[base, "--noise 7 --samples 5"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let d = &v["noise_draws"];
    let seeds: Vec<u64> = d["seeds"]
        .as_array()
        .expect("seeds")
        .iter()
        .filter_map(serde_json::Value::as_u64)
        .collect();
    assert_eq!(seeds, [7, 8, 9, 10, 11]);
    let times: Vec<f64> = d["predicted_seconds"]
        .as_array()
        .expect("times")
        .iter()
        .filter_map(serde_json::Value::as_f64)
        .collect();
    assert_eq!(times.len(), 5);
    // The report is the first draw's; every draw is the run with its seed.
    assert_eq!(times[0], v["predicted_seconds"].as_f64().expect("time"));
    let o = run(&[base, "--noise 9"]);
    let single: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(
        times[2],
        single["predicted_seconds"].as_f64().expect("time")
    );
    // Draws differ, and the statistics order them.
    assert!(times.iter().any(|&t| t != times[0]), "{times:?}");
    let get = |k: &str| d[k].as_f64().expect(k);
    let (min, p5, median, p95, max) =
        (get("min"), get("p5"), get("median"), get("p95"), get("max"));
    assert!(min <= p5 && p5 <= median && median <= p95 && p95 <= max);
    assert_eq!(min, times.iter().copied().fold(f64::INFINITY, f64::min));
    assert_eq!(max, times.iter().copied().fold(0.0, f64::max));
    // --samples needs --noise.
    let o = run(&[base, "--samples 3"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn sweep_samples_give_each_point_the_spread_of_its_draws() {
    let common = "-p n=512 -p iters=50 --blocks validation/dev-machine/blocks-heat.toml \
                  -m validation/dev-machine/machine.toml --noise 3 --samples 5";
    let dir = temp_dir();
    let plot = dir.join("sweep.svg");
    let o = run(&[
        "sweep examples/heat.mpl --ranks 1,2 --format json",
        common,
        "--plot",
        plot.to_str().expect("utf-8"),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let points = v["series"][0]["points"].as_array().expect("points");
    assert_eq!(points.len(), 2);
    // Each point is the median of the draws `run --samples` makes at its
    // rank count, with the same 5% and 95% bounds.
    for p in points {
        let ranks = p["ranks"].as_u64().expect("ranks").to_string();
        let o = run(&["run examples/heat.mpl --format json -n", &ranks, common]);
        let r: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
        let d = &r["noise_draws"];
        assert_eq!(p["seconds"], d["median"]);
        assert_eq!(p["spread"][0], d["p5"]);
        assert_eq!(p["spread"][1], d["p95"]);
    }
    // One error bar per point in the time panel.
    let svg = std::fs::read_to_string(&plot).expect("plot written");
    assert_eq!(svg.matches(r#"stroke-width="1.5""#).count(), 2, "{svg}");
    // --samples needs --noise.
    let o = run(&["sweep examples/heat.mpl --ranks 1,2 --samples 3"]);
    assert_eq!(o.status.code(), Some(2));
}
