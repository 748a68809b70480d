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

    // 1. Each collective's own call overhead, from the benchmark's
    // Call_<kind> tables: one inline table with the barrier's default and
    // every kind the benchmark timed.
    for kind in [
        "bcast",
        "allreduce",
        "alltoallv",
        "reduce_scatter",
        "exscan",
    ] {
        assert!(
            raw.contains(&format!("# Benchmarking Call_{kind}\n")),
            "{raw}"
        );
    }
    let overheads = written
        .lines()
        .find(|l| l.starts_with("call_overhead = { default = \""))
        .unwrap_or_else(|| panic!("per-kind call overheads: {written}"));
    assert_eq!(overheads.matches(" us\"").count(), 15, "{overheads}");

    // When a rendezvous send completes: both ends measured, the choice
    // written with its two errors.
    assert!(
        raw.contains("# Benchmarking RendezvousSend\n")
            && raw.contains("# Benchmarking RendezvousRecv\n"),
        "{raw}"
    );
    assert!(
        written.contains("# rendezvous send: done when "),
        "{written}"
    );

    // 1a. The sender's copy of an eager message (LogGOPS's O), from the
    // benchmark's SendOverhead table: every shared-memory eager send
    // copies its bytes, so the slope is above 0, and no core copies
    // slower than 1 GB/s.
    assert!(raw.contains("# Benchmarking SendOverhead"), "{raw}");
    let shm_section = written
        .split("\n[shm]\n")
        .nth(1)
        .and_then(|rest| rest.split("\n[").next())
        .expect("an [shm] section");
    let per_byte_ns: f64 = shm_section
        .lines()
        .find_map(|l| l.strip_prefix("send_overhead_per_byte = \""))
        .and_then(|v| v.strip_suffix(" ns\""))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("shm.send_overhead_per_byte in ns: {written}"));
    assert!(
        per_byte_ns > 0.0 && per_byte_ns < 1.0,
        "O = {per_byte_ns} ns/B"
    );
    assert!(written.contains("# shm: O = "), "{written}");

    // 1a'. The flag of the shared-memory collectives: both ranks share
    // this node, so the benchmark timed a cache line's round trip: a flag
    // is seen after more than 1 ns and well under 2 us (0.116 us here).
    assert!(raw.contains("# Benchmarking FlagLatency"), "{raw}");
    let flag_us: f64 = written
        .lines()
        .find_map(|l| l.strip_prefix("flag_latency = \""))
        .and_then(|v| v.strip_suffix(" us\""))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("node.flag_latency in us: {written}"));
    assert!(
        flag_us > 0.001 && flag_us < 2.0,
        "flag latency {flag_us} us"
    );
    // Debian's MPICH is a ch4:ucx build without the POSIX module: the
    // benchmark names the device and the machine runs its collectives
    // inside a node as messages.
    assert!(raw.contains("# parsim netbench: device ch4:ucx"), "{raw}");
    // What a derived datatype costs (Bruck's alltoall): measured, so the
    // machine states it instead of assuming it.
    assert!(raw.contains("# Benchmarking TypeCreate"), "{raw}");
    assert!(written.contains("\ntype_create = \""), "{written}");
    assert!(written.contains("\ntype_pack_per_block = \""), "{written}");
    assert!(written.contains("\nshared_memory = false\n"), "{written}");

    // 1b. The eager limit decides which programs deadlock. The benchmark
    // probed it to the byte; a real program whose two ranks both send
    // before receiving completes one byte below it and hangs at it, and
    // parsim, on the machine just written, says the same.
    let limit = calibrate::input::buffered_below(&raw)
        .expect("the benchmark states its probed eager limit");
    assert!(limit > 1, "{limit}");
    let skeleton = dir.file(
        "h2h.mpl",
        "param n = 1\nsend(to: 1 - rank, bytes: n)\nrecv(from: 1 - rank, bytes: n)\n",
    );
    let skeleton = skeleton.to_str().expect("utf-8 path");
    let program = path("h2h.c");
    let o = parsim(&["emit-c", skeleton, "-o", &program]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let binary = path("h2h");
    let o = std::process::Command::new("mpicc")
        .args(["-O2", &program, "-o", &binary, "-lm"])
        .output()
        .expect("mpicc runs");
    assert!(o.status.success(), "{}", text(&o.stderr));
    for (n, completes) in [(limit - 1, true), (limit, false)] {
        // `timeout` stops mpirun with SIGTERM, which it passes on to the
        // ranks; SIGKILL 5 s later if it has not ended.
        let real = std::process::Command::new("timeout")
            .args([
                "-k",
                "5",
                "5",
                "mpirun",
                "-np",
                "2",
                &binary,
                &format!("n={n}"),
            ])
            .output()
            .expect("timeout and mpirun run");
        assert_eq!(
            real.status.success(),
            completes,
            "real run at {n} B: {:?}\n{}\n{}",
            real.status,
            text(&real.stdout),
            text(&real.stderr)
        );
        let o = parsim(&[
            "run",
            skeleton,
            "-n",
            "2",
            "--machine",
            &machine,
            "--param",
            &format!("n={n}"),
            "-q",
        ]);
        let code = o.status.code();
        assert_eq!(
            code,
            if completes { Some(0) } else { Some(3) },
            "parsim at {n} B (eager limit {limit} B): {}",
            text(&o.stderr)
        );
    }

    // 1c. The same saved tables fitted from the benchmark's ping-pong of
    // data written just before each send (`--buffers written`).
    let shm_table = dir.join("laptop.shm.netbench.txt");
    let shm_table = shm_table.to_str().expect("utf-8 path");
    let written_path = path("written.toml");
    let o = parsim(&[
        "calibrate",
        "net",
        shm_table,
        "--shm",
        shm_table,
        "--ranks-per-node",
        "2",
        "--buffers",
        "written",
        "-o",
        &written_path,
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let toml = std::fs::read_to_string(&written_path).expect("machine written");
    assert!(toml.contains("PingPongWritten"), "{toml}");
    let clean_machine = std::fs::read_to_string(&machine).expect("machine file");
    let eager_lines = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| l.starts_with("eager_limit = "))
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(
        eager_lines(&toml),
        eager_lines(&clean_machine),
        "the probed limit {limit} B in both"
    );

    // 2. The kernels, at both problem sizes and both rank counts, then 3.
    // the real runs against the predictions. This VM's speed can change by
    // tens of per cent for seconds at a time (other tenants), and a kernel
    // timed two at once in such a moment makes the 2-rank predictions
    // that much too slow: the whole measurement is made once more, from
    // the kernels on, before the bound is asserted.
    let sets = ["n=256,iters=1000", "n=512,iters=250"];
    let blocks = path("blocks.toml");
    let attempt = || -> serde_json::Value {
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
            "--speed-reference",
            "--format",
            "json",
        ]);
        // Every kernel point carries the speed reference timed around it.
        let file = std::fs::read_to_string(&blocks).expect("blocks written");
        assert_eq!(
            file.matches("\nreference = ").count(),
            file.matches("[[kernel.point]]").count(),
            "{file}"
        );
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
            // The machine's speed during the runs, measured: a few ms of
            // reference, a slowdown this VM keeps within a factor of 3.
            let speed = &r["speed"];
            let reference = speed["reference"].as_f64().expect("reference");
            let slowdown = speed["slowdown"].as_f64().expect("slowdown");
            assert!(reference > 1e-4 && reference < 1.0, "{r}");
            assert!(slowdown > 1.0 / 3.0 && slowdown < 3.0, "{r}");
            assert!(
                speed["uncorrected"].as_f64().is_some_and(|u| u > 0.0),
                "{r}"
            );
        }
        eprintln!("{}", text(&o.stderr));
        v
    };
    let median = |v: &serde_json::Value| v["median_abs_error"].as_f64().expect("median");
    let mut v = attempt();
    if median(&v) >= 0.35 {
        eprintln!(
            "median |error| {} on the first measurement; measuring again: {}",
            median(&v),
            serde_json::to_string_pretty(&v).unwrap_or_default()
        );
        v = attempt();
    }
    let median = median(&v);
    assert!(
        median < 0.35,
        "median |error| {median}: {}",
        serde_json::to_string_pretty(&v).unwrap_or_default()
    );

    // 4. The kernels timed again just before each run (`--retime`): the
    // tuples of the point measured anew, the slowdown against the
    // calibration and the uncorrected prediction beside the new one.
    let at_one_rank = |more: &[&str]| {
        let mut args = vec![
            "validate",
            "examples/heat.mpl",
            "--run",
            "mpirun -np {ranks}",
            "--np",
            "1",
            "--kernels",
            "examples/kernels.c",
            "--blocks",
            &blocks,
        ];
        args.extend(more);
        parsim(&args)
    };
    let o = at_one_rank(&[
        "--set",
        sets[0],
        "--machine",
        &machine,
        "--repeat",
        "2",
        "--retime",
        "0.05",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let row = &v["rows"][0];
    let speed = &row["speed"];
    assert!(speed.get("reference").is_none(), "{row}");
    let slowdown = speed["slowdown"].as_f64().expect("slowdown");
    assert!(slowdown > 1.0 / 3.0 && slowdown < 3.0, "{row}");
    let uncorrected = speed["uncorrected"].as_f64().expect("uncorrected");
    let predicted = row["predicted"].as_f64().expect("predicted");
    // At one rank heat is its stencil alone: the new prediction is the
    // old one times the stencil's change, within the first call's share.
    assert!(
        (predicted / uncorrected / slowdown - 1.0).abs() < 0.05,
        "{row}"
    );
    let o = at_one_rank(&["--retime", "--speed-reference"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));

    // 5. The kernels timed inside the real program.
    blocks_timed_inside_the_real_program();
}

/// `calibrate blocks --in-program`: the kernels timed inside the real
/// program, every call of every rank, and a prediction from those times.
/// Called at the end of `calibrate_build_run_and_compare_with_mpich`, not
/// a test of its own: run beside it (the test harness runs a file's tests
/// in parallel) the two share the 2 cores, and the kernel times of one
/// and the real runs of the other meet different loads (CI saw |error|
/// 0.66 twice).
fn blocks_timed_inside_the_real_program() {
    let dir = support::temp_dir();
    let blocks = dir.join("in-program.toml");
    let blocks = blocks.to_str().expect("utf-8 path");
    let in_program = |program: &str, ranks: &str, set: &str, launcher: &str, out: &str| {
        parsim(&[
            "calibrate",
            "blocks",
            program,
            "--ranks",
            ranks,
            "--set",
            set,
            "--kernels",
            "examples/kernels.c",
            "--in-program",
            launcher,
            "-o",
            out,
        ])
    };
    let heat_at_one_rank = |set: &str, more: &[&str]| {
        let mut args = vec![
            "validate",
            "examples/heat.mpl",
            "--run",
            "mpirun -np {ranks}",
            "--np",
            "1",
            "--set",
            set,
            "--kernels",
            "examples/kernels.c",
            "--blocks",
            blocks,
        ];
        args.extend(more);
        parsim(&args)
    };
    let o = in_program(
        "examples/heat.mpl",
        "1,2",
        "n=64,iters=300",
        "mpirun -np {ranks}",
        blocks,
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let stderr = text(&o.stderr);
    assert!(
        stderr.contains("300 kernel calls timed on 1 rank (1 per node)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("600 kernel calls timed on 2 ranks (2 per node)"),
        "{stderr}"
    );
    let f: toml::Value =
        toml::from_str(&std::fs::read_to_string(blocks).expect("written")).expect("toml");
    assert_eq!(
        f["calibration"]["in_program"].as_str(),
        Some("mpirun -np {ranks}")
    );
    let kernels = f["kernel"].as_array().expect("kernels");
    assert_eq!(kernels.len(), 2, "one level per rank count: {f}");
    for (k, (level, calls)) in kernels.iter().zip([(1, 300), (2, 600)]) {
        assert_eq!(k["name"].as_str(), Some("stencil"));
        assert_eq!(k["concurrent"].as_integer(), Some(level));
        let p = &k["point"][0];
        assert_eq!(p["args"].as_array().map(Vec::len), Some(2));
        assert_eq!(p["calls"].as_integer(), Some(calls));
        // every call but each rank's first is a sample (some trimmed)
        let kept = p["samples"].as_integer().expect("samples")
            + p["trimmed"].as_integer().expect("trimmed");
        assert_eq!(kept, calls - level, "{p}");
        let s = p["seconds"].as_float().expect("seconds");
        let first = p["first_call"].as_float().expect("first call");
        assert!(s > 1e-7 && s < 1e-2 && first > 0.0, "{p}");
        // two ranks: each its own copy
        let copies = p
            .get("copies")
            .and_then(|c| c.as_array())
            .map_or(0, Vec::len);
        assert_eq!(copies, if level == 2 { 2 } else { 0 }, "{p}");
    }
    // Predicted from those times, a run ten times longer.
    let attempt = || {
        let o = heat_at_one_rank("n=64,iters=3000", &["--repeat", "3", "--format", "json"]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
        v["rows"][0]["error"].as_f64().expect("error").abs()
    };
    let mut e = attempt();
    if e >= 0.25 {
        eprintln!("|error| {e} on the first measurement; measuring again");
        e = attempt();
    }
    assert!(e < 0.25, "|error| {e}");
    // --retime times kernels apart: refused for times from inside.
    let o = heat_at_one_rank("n=64,iters=30", &["--retime"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("measured inside it"),
        "{}",
        text(&o.stderr)
    );
    // A kernel called once per rank (Net's setup, v1 and v2) is a point
    // too, its first call its only sample.
    let net = dir.join("net.toml");
    let net = net.to_str().expect("utf-8 path");
    let o = in_program(
        "examples/net.mpl",
        "1",
        "m=64,n=64,iters=5",
        "mpirun -np {ranks}",
        net,
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let f: toml::Value =
        toml::from_str(&std::fs::read_to_string(net).expect("written")).expect("toml");
    for name in ["v1", "v2"] {
        let k = f["kernel"]
            .as_array()
            .and_then(|ks| ks.iter().find(|k| k["name"].as_str() == Some(name)))
            .unwrap_or_else(|| panic!("{name} in {f}"));
        assert_eq!(k["point"][0]["calls"].as_integer(), Some(1), "{k}");
        assert_eq!(k["point"][0]["samples"].as_integer(), Some(1), "{k}");
    }
    // The launcher must say where the rank count goes.
    let o = in_program(
        "examples/heat.mpl",
        "1",
        "n=64,iters=3",
        "mpirun -np 2",
        net,
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
}
