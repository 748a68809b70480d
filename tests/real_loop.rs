//! The whole calibration loop against real MPI runs, small: measure the
//! network with parsim's benchmark under `mpirun`, time the heat kernels,
//! build the heat skeleton into a real MPI program, run it at 1 and 2 ranks
//! and compare with the prediction. Needs MPICH (`mpicc`, `mpirun`); skipped
//! without it unless CI=true or PARSIM_REQUIRE_MPI is set
//! (scripts/test-all.sh sets it and installs MPICH).
//!
//! This machine is shared and noisy, so the bound asserted is loose (the
//! median |error| below 35%); VALIDATION.md records the real figures of
//! larger runs. The prediction uses the kernels' mean times, not `--noise`:
//! with the short calibration here (0.2 s per tuple) the measured
//! distributions catch this VM's slow and fast states, and drawing every
//! call independently from that mixture made two coupled ranks pay the
//! slower of two draws every iteration (a fresh-clone CI run predicted
//! 0.115 s for a 0.058 s run, +98%); the VM's states last seconds, not one
//! call.

mod support;

use support::{parsim, text};

#[test]
fn calibrate_build_run_and_compare_with_mpich() {
    if !support::requires_tools(&["mpicc", "mpirun"], "PARSIM_REQUIRE_MPI") {
        return;
    }
    let dir = support::temp_dir();
    let path = |name: &str| dir.join(name).to_str().expect("utf-8 path").to_owned();

    // 1. The network, measured: the benchmark runs twice, its output is kept.
    let machine = path("laptop.toml");
    let o = parsim(&[
        "calibrate",
        "net",
        "--run",
        "mpirun -np 2",
        "--shm-run",
        "mpirun -np 2",
        "--ranks-per-node",
        "2",
        "-o",
        &machine,
    ]);
    assert!(
        o.status.success(),
        "{}\n{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    let toml = std::fs::read_to_string(&machine).expect("machine written");
    assert!(toml.contains("[shm]") && toml.contains("memcpy"), "{toml}");
    assert!(toml.contains("measured by the benchmark"), "{toml}");
    let raw =
        std::fs::read_to_string(dir.join("laptop.shm.netbench.txt")).expect("raw output kept");
    // The machine is named after the file written, not after its saved
    // table (`laptop.network.netbench`).
    let written = std::fs::read_to_string(&machine).expect("machine file");
    assert!(written.contains("\nname = \"laptop\"\n"), "{written}");
    assert!(raw.contains("# Benchmarking PingPong") && raw.contains("# Benchmarking PingPing"));
    let o = parsim(&["machine", &machine]);
    assert!(
        o.status.success(),
        "the fitted machine loads: {}",
        text(&o.stderr)
    );

    // 2. The kernels, at both problem sizes and both rank counts.
    let sets = ["n=256,iters=1000", "n=512,iters=250"];
    let blocks = path("blocks.toml");
    let mut args = vec!["calibrate", "blocks", "examples/heat.mpl", "--ranks", "1,2"];
    for s in &sets {
        args.extend(["--set", s]);
    }
    args.extend([
        "--kernels",
        "examples/kernels.c",
        "--concurrent",
        "1,2",
        "--budget",
        "0.2",
        "--min-time",
        "0.1",
        "-o",
        &blocks,
    ]);
    let o = parsim(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));

    // 3. Real runs against predictions.
    let mut args = vec![
        "validate",
        "examples/heat.mpl",
        "--run",
        "mpirun -np {ranks}",
        "--np",
        "1,2",
    ];
    for s in &sets {
        args.extend(["--set", s]);
    }
    args.extend([
        "--kernels",
        "examples/kernels.c",
        "--blocks",
        &blocks,
        "--machine",
        &machine,
        "--repeat",
        "3",
        "--format",
        "json",
    ]);
    let o = parsim(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let rows = v["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 4, "2 parameter sets x 2 rank counts");
    for r in rows {
        let measured = r["measured"].as_f64().expect("measured");
        let predicted = r["predicted"].as_f64().expect("predicted");
        assert!(measured > 0.0 && predicted > 0.0, "{r}");
        assert_eq!(r["runs"].as_array().map(Vec::len), Some(3));
    }
    let median = v["median_abs_error"].as_f64().expect("median");
    eprintln!("{}", text(&o.stderr));
    assert!(
        median < 0.35,
        "median |error| {median}: {}",
        serde_json::to_string_pretty(&v).unwrap_or_default()
    );
}
