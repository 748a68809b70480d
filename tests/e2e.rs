//! End-to-end tests of the `parsim` binary: closed-form predictions,
//! determinism, deadlock and error reports, exit codes.

mod support;

use std::path::Path;

use approx::assert_relative_eq;
use support::{TempDir, parsim, stderr, stdout, temp_dir, temp_file};

fn run_json(file: &str, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["run", file, "--format", "json"];
    all.extend_from_slice(args);
    let o = parsim(&all);
    assert!(o.status.success(), "parsim {all:?} failed: {}", stderr(&o));
    serde_json::from_slice(&o.stdout).expect("valid JSON")
}

// Parameters of the test machine below, in seconds and bytes.
const L: f64 = 5.0e-6;
const OS: f64 = 1.0e-6;
const OR: f64 = 2.0e-6;
const GAP: f64 = 0.5e-6;
const G: f64 = 1.0 / 100.0e6; // 100 MB/s

/// The machine file (and the directory holding it).
fn test_machine(mtu: &str, eager: &str) -> (TempDir, std::path::PathBuf) {
    let text = format!(
        r#"name = "closed-form test machine"
model = "hardware"
[node]
cpu_rate = 1.0
memcpy = "1 GB/s"
[network]
latency = "5 us"
send_overhead = "1 us"
recv_overhead = "2 us"
gap = "0.5 us"
bandwidth = "100 MB/s"
mtu = "{mtu}"
eager_limit = "{eager}"
control_bytes = "0 B"
"#
    );
    temp_file(
        &format!(
            "machine-{}-{}.toml",
            mtu.replace(' ', ""),
            eager.replace(' ', "")
        ),
        &text,
    )
}

const PINGPONG: &str = r#"
param bytes = 1024
param reps = 1000
if rank == 0 {
    let t0 = wtime()
    for i in 0 .. reps { send(to: 1, bytes: bytes); recv(from: 1, bytes: bytes) }
    print("pingpong", bytes, (wtime() - t0) / (2 * reps) * 1e6)
} else if rank == 1 {
    for i in 0 .. reps { recv(from: 0, bytes: bytes); send(to: 0, bytes: bytes) }
}
"#;

fn pingpong_usec(machine: &Path, bytes: u64) -> (f64, f64) {
    let (_dir, prog) = temp_file("pingpong.mpl", PINGPONG);
    let v = run_json(
        prog.to_str().expect("utf-8 path"),
        &[
            "--ranks",
            "2",
            "--machine",
            machine.to_str().expect("utf-8 path"),
            "--param",
            &format!("bytes={bytes}"),
        ],
    );
    let text = v["output"][0]["text"]
        .as_str()
        .expect("one print line")
        .to_owned();
    let usec: f64 = text
        .split_whitespace()
        .nth(2)
        .expect("three words")
        .parse()
        .expect("a number");
    (usec, v["predicted_seconds"].as_f64().expect("number"))
}

/// ParJava's Time(Post(n)) = floor(n/MTU) T(MTU) + T(n mod MTU), T(m) = o_s + L + m G.
fn post(n: f64, mtu: f64) -> f64 {
    let t = |m: f64| OS + L + m * G;
    if n <= mtu {
        return t(n);
    }
    let full = (n / mtu).floor();
    let rest = n - full * mtu;
    full * t(mtu) + if rest > 0.0 { t(rest) } else { 0.0 }
}

#[test]
fn pingpong_eager_matches_closed_form() {
    let (_machine_dir, m) = test_machine("unlimited", "64 KiB");
    for bytes in [0u64, 1, 1024, 65535] {
        let (usec, total) = pingpong_usec(&m, bytes);
        let one_way = OS + L + bytes as f64 * G + OR;
        assert_relative_eq!(usec, one_way * 1e6, max_relative = 1e-10);
        // Rank 0 finishes last: 2 * reps one-way trips.
        assert_relative_eq!(total, 2000.0 * one_way, max_relative = 1e-12);
    }
}

#[test]
fn pingpong_with_mtu_fragments_as_parjava() {
    let (_machine_dir, m) = test_machine("9 KiB", "1 MiB");
    for bytes in [9216u64, 9217, 3 * 9216, 100_000] {
        let (usec, _) = pingpong_usec(&m, bytes);
        let one_way = post(bytes as f64, 9216.0) + OR;
        assert_relative_eq!(usec, one_way * 1e6, max_relative = 1e-10);
    }
}

#[test]
fn pingpong_rendezvous_pays_the_handshake() {
    let (_machine_dir, m) = test_machine("unlimited", "64 KiB");
    for bytes in [65536u64, 1 << 20] {
        let (usec, _) = pingpong_usec(&m, bytes);
        // RTS and CTS (0-byte control messages), then the data.
        let one_way = 2.0 * post(0.0, f64::INFINITY) + post(bytes as f64, f64::INFINITY) + OR;
        assert_relative_eq!(usec, one_way * 1e6, max_relative = 1e-10);
    }
}

#[test]
fn linear_broadcast_matches_loggp_closed_form() {
    // The root sends m bytes to ranks 1..n-1 in turn (blocking, eager).
    // Hockney (MPIPerf): t_i = i (a + m b). Under our LogGP model the root's
    // adapter takes message i at o_s + (i-1) D with D = max(o_s, g + m G)
    // (LogGP: the CPU's overhead or the adapter's gap and bytes, whichever
    // is longer), so rank i has the data at t_i = (i-1) D + o_s + L + m G +
    // o_r.
    let (_dir, prog) = temp_file(
        "linear_bcast.mpl",
        r#"
param m = 4000
if rank == 0 {
    for i in 1 .. size { send(to: i, bytes: m) }
} else {
    recv(from: 0, bytes: m)
}
"#,
    );
    let (_machine_dir, machine) = test_machine("unlimited", "64 KiB");
    for (n, m) in [(2u32, 4000.0f64), (8, 4000.0), (16, 10.0)] {
        let v = run_json(
            prog.to_str().expect("utf-8"),
            &[
                "--ranks",
                &n.to_string(),
                "--machine",
                machine.to_str().expect("utf-8"),
                "--param",
                &format!("m={m}"),
            ],
        );
        let d = OS.max(GAP + m * G);
        for i in 1..n {
            let t_i = f64::from(i - 1) * d + OS + L + m * G + OR;
            let got = v["ranks"][i as usize]["finish_seconds"]
                .as_f64()
                .expect("number");
            assert_relative_eq!(got, t_i, max_relative = 1e-12);
        }
        let root = v["ranks"][0]["finish_seconds"].as_f64().expect("number");
        assert_relative_eq!(root, f64::from(n - 2) * d + OS, max_relative = 1e-12);
        let t_last = f64::from(n - 2) * d + OS + L + m * G + OR;
        assert_relative_eq!(
            v["predicted_seconds"].as_f64().expect("number"),
            t_last,
            max_relative = 1e-12
        );
    }
}

#[test]
fn heat_runs_on_default_machine() {
    let o = parsim(&[
        "run",
        "examples/heat.mpl",
        "--ranks",
        "16",
        "--param",
        "iters=50",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("predicted run time:"), "{out}");
    // 50 iterations of 4e-9 * 3000 * 3000 s of compute at least.
    let v = run_json(
        "examples/heat.mpl",
        &["--ranks", "16", "--param", "iters=50"],
    );
    let t = v["predicted_seconds"].as_f64().expect("number");
    assert!(t > 50.0 * 0.036, "{t}");
    assert!(t < 50.0 * 0.036 * 1.01, "{t}");
    assert_eq!(v["ranks"].as_array().expect("array").len(), 16);
    // 14 interior ranks exchange with 2 neighbours, 2 edge ranks with 1: 30 messages a step.
    assert_eq!(v["messages"].as_u64(), Some(30 * 50));
}

#[test]
fn identical_runs_give_identical_json() {
    let strip = |mut v: serde_json::Value| {
        v["wall_seconds"] = serde_json::Value::Null;
        v
    };
    let args = ["--ranks", "12", "--param", "iters=20"];
    let a = strip(run_json("examples/heat.mpl", &args));
    let b = strip(run_json("examples/heat.mpl", &args));
    assert_eq!(a, b);
    let a = strip(run_json("examples/net.mpl", &["--ranks", "9"]));
    let b = strip(run_json("examples/net.mpl", &["--ranks", "9"]));
    assert_eq!(a, b);
}

#[test]
fn myrinet_and_sci_differ_as_the_networks_imply() {
    let run = |machine: &str| {
        let v = run_json(
            "examples/heat.mpl",
            &[
                "--ranks",
                "8",
                "--machine",
                machine,
                "--param",
                "iters=10",
                "--param",
                "n=300",
            ],
        );
        v["predicted_seconds"].as_f64().expect("number")
    };
    let myrinet = run("examples/machines/myrinet.toml");
    let sci = run("examples/machines/sci.toml");
    let ethernet = run("examples/machines/fast-ethernet.toml");
    // Same compute; SCI has lower latency and higher bandwidth than Myrinet,
    // and Fast Ethernet is far slower than both.
    assert!(sci < myrinet, "sci {sci} myrinet {myrinet}");
    assert!(myrinet < ethernet, "myrinet {myrinet} ethernet {ethernet}");
}

#[test]
fn deadlock_example_exits_3_and_names_ranks_and_lines() {
    let o = parsim(&["run", "examples/deadlock.mpl", "--ranks", "2"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("deadlock"), "{err}");
    assert!(err.contains("rank 0") || err.contains("ranks 0-1"), "{err}");
    assert!(err.contains("examples/deadlock.mpl:"), "{err}");
}

#[test]
fn head_to_head_sends_deadlock_only_above_the_eager_limit() {
    let (_dir, prog) = temp_file(
        "head_to_head.mpl",
        r#"
param bytes = 1024
let peer = 1 - rank
send(to: peer, bytes: bytes)
recv(from: peer, bytes: bytes)
"#,
    );
    let p = prog.to_str().expect("utf-8");
    let o = parsim(&["run", p, "--ranks", "2", "--param", "bytes=1024"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = parsim(&["run", p, "--ranks", "2", "--param", "bytes=1000000"]);
    assert_eq!(o.status.code(), Some(3));
    let err = stderr(&o);
    assert!(err.contains("ranks 0-1 blocked in `send`"), "{err}");
    assert!(err.contains("cycle of waits: rank 0 -> 1 -> 0"), "{err}");
    assert!(err.contains(":4:1"), "{err}");
}

#[test]
fn wildcard_receive_takes_the_earliest_arrival() {
    // Rank 1 sends late, rank 2 early: a manager receiving from any rank
    // must see rank 2 first, whatever order the ranks are simulated in.
    let (_dir, prog) = temp_file(
        "wildcard.mpl",
        r#"
kernel work(s) cost s
if rank == 0 {
    let a = recv(from: any, bytes: 8, tag: any)
    let b = recv(from: any, bytes: 8, tag: any)
    print(a.source, b.source)
} else {
    compute work(0.001 * (3 - rank))
    send(to: 0, bytes: 8, tag: rank)
}
"#,
    );
    let v = run_json(prog.to_str().expect("utf-8"), &["--ranks", "3"]);
    assert_eq!(v["output"][0]["text"], "2 1");
}

#[test]
fn runtime_errors_exit_4_with_rank_and_line() {
    let (_dir, prog) = temp_file("bad_rank.mpl", "send(to: size, bytes: 8)\n");
    let o = parsim(&["run", prog.to_str().expect("utf-8"), "--ranks", "4"]);
    assert_eq!(o.status.code(), Some(4));
    let err = stderr(&o);
    assert!(
        err.contains("rank 0: `to: 4` is not a valid rank (size is 4)"),
        "{err}"
    );
    assert!(err.contains("bad_rank.mpl:1:1"), "{err}");

    let (_dir, prog) = temp_file(
        "truncate.mpl",
        "if rank == 0 { send(to: 1, bytes: 100) } else { recv(from: 0, bytes: 10) }\n",
    );
    let o = parsim(&["run", prog.to_str().expect("utf-8"), "--ranks", "2"]);
    assert_eq!(o.status.code(), Some(4));
    assert!(stderr(&o).contains("message truncated"), "{}", stderr(&o));
}

#[test]
fn runaway_loop_is_stopped() {
    let (_dir, prog) = temp_file("forever.mpl", "let x = 0\nwhile true { x = x + 1 }\n");
    let o = parsim(&[
        "run",
        prog.to_str().expect("utf-8"),
        "--ranks",
        "2",
        "--max-events",
        "1000",
    ]);
    assert_eq!(o.status.code(), Some(4));
    let err = stderr(&o);
    assert!(err.contains("runaway program"), "{err}");
    assert!(err.contains("forever.mpl:2"), "{err}");
}

#[test]
fn loop_that_cannot_change_is_proven_infinite() {
    // A forgotten increment: the loop costs time, so neither the event nor
    // the model-time limit would stop it soon; its state repeats exactly.
    let (_dir, prog) = temp_file(
        "forgot.mpl",
        "kernel work() cost 1e-3\nlet i = 0\nwhile i < 10 {\n  compute work()\n  print(i)\n}\n",
    );
    let o = parsim(&["run", prog.to_str().expect("utf-8"), "--ranks", "2"]);
    assert_eq!(o.status.code(), Some(4));
    let err = stderr(&o);
    assert!(err.contains("loops forever"), "{err}");
    assert!(err.contains("forgot.mpl:3"), "{err}");
}

#[test]
fn zero_time_loop_meets_its_budget() {
    // The state changes (x grows) and no time passes.
    let (_dir, prog) = temp_file("counter.mpl", "let x = 0\nwhile true { x = x + 1 }\n");
    let o = parsim(&[
        "run",
        prog.to_str().expect("utf-8"),
        "--ranks",
        "1",
        "--max-zero-time-blocks",
        "100000",
    ]);
    assert_eq!(o.status.code(), Some(4));
    let err = stderr(&o);
    assert!(err.contains("without its model time advancing"), "{err}");
    assert!(err.contains("counter.mpl:2"), "{err}");
}

#[test]
fn loops_that_wait_for_time_or_messages_are_not_runaways() {
    // Same state at every pass, but each pass reads the clock or tests a
    // request, so the loop can end; and a zero-time loop under the budget.
    let (_dir, prog) = temp_file(
        "waiting.mpl",
        "kernel work() cost 1e-6\nkernel poll() cost 1e-7\n\
         while wtime() < 0.01 { compute work() }\n\
         let s = 0\nfor k in 0 .. 10000 { s += k }\n\
         if rank == 0 {\n  let t = wtime()\n  while wtime() < t + 0.01 { compute work() }\n  send(to: 1, bytes: 8)\n\
         } else {\n  let r = irecv(from: 0, bytes: 8)\n  while !test(r) { compute poll() }\n}\n\
         print(s)\n",
    );
    let o = parsim(&[
        "run",
        prog.to_str().expect("utf-8"),
        "--ranks",
        "2",
        "--max-zero-time-blocks",
        "100000",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("[1] 49995000"), "{out}");
}

#[test]
fn loop_of_calls_that_make_no_events_meets_max_events() {
    // A zero-byte broadcast completes at once and makes no event; the
    // budget counts the calls too.
    let (_dir, prog) = temp_file(
        "stuck.mpl",
        "let b = 0\nwhile b <= 1024 {\n  bcast(root: 0, bytes: b)\n  b = b * 2\n}\n",
    );
    let o = parsim(&[
        "run",
        prog.to_str().expect("utf-8"),
        "--ranks",
        "4",
        "--max-events",
        "100000",
    ]);
    assert_eq!(o.status.code(), Some(4));
    let err = stderr(&o);
    assert!(err.contains("communication calls"), "{err}");
    assert!(err.contains("stuck.mpl:2"), "{err}");
}

#[test]
fn input_errors_exit_1() {
    let (_dir, prog) = temp_file("syntax.mpl", "let x = (1 +\n");
    let o = parsim(&["run", prog.to_str().expect("utf-8"), "--ranks", "2"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("syntax.mpl:"), "{}", stderr(&o));

    let o = parsim(&[
        "run",
        "examples/heat.mpl",
        "--ranks",
        "2",
        "--param",
        "n=abc",
    ]);
    assert_eq!(o.status.code(), Some(1));

    let (_dir, bad) = temp_file(
        "bad_machine.toml",
        "model = \"hardware\"\n[network]\nlatency = \"30 parsec\"\n",
    );
    let o = parsim(&[
        "run",
        "examples/heat.mpl",
        "--ranks",
        "2",
        "--machine",
        bad.to_str().expect("utf-8"),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("network.latency"), "{}", stderr(&o));

    let o = parsim(&["run", "examples/heat.mpl"]);
    assert_eq!(o.status.code(), Some(2), "missing --ranks is a usage error");
}

/// A rank count of 0 is a command-line error in every command: exit 2 and
/// the flag named on stderr, nothing on stdout (issue 14: run and sweep
/// exited 1, check 4 with the message on stdout).
#[test]
fn zero_ranks_is_a_usage_error_everywhere() {
    let heat = "examples/heat.mpl";
    for args in [
        vec!["run", heat, "--ranks", "0"],
        vec!["check", heat, "--ranks", "0"],
        vec!["report", heat, "--ranks", "0"],
        vec!["sweep", heat, "--ranks", "0"],
        vec!["sweep", heat, "--ranks", "1,2,0"],
        vec!["report", heat, "--ranks", "2", "--sweep", "1,...,4"],
        vec![
            "calibrate",
            "blocks",
            heat,
            "--ranks",
            "1,0",
            "--kernels",
            "examples/kernels.c",
        ],
    ] {
        let o = parsim(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stdout(&o).is_empty(), "{args:?}: {}", stdout(&o));
        let err = stderr(&o);
        assert!(
            err.contains("'--ranks <RANKS>'") || err.contains("'--sweep <RANKS>'"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn bad_values_of_the_real_run_flags_are_usage_errors() {
    // A flag's value the command cannot take exits 2 (README, "Exit
    // codes"), before anything is built or run.
    let heat = "examples/heat.mpl";
    let launcher = "mpirun -np {ranks}";
    for (args, says) in [
        (
            vec!["validate", heat, "--run", launcher, "--np", "0"],
            "'--np <N,N,...>'",
        ),
        (
            vec![
                "validate", heat, "--run", launcher, "--np", "1", "--repeat", "0",
            ],
            "--repeat must be at least 1",
        ),
        (
            vec!["validate", heat, "--run", "mpirun -np 2", "--np", "1"],
            "say where the rank count goes",
        ),
        (
            vec![
                "validate",
                heat,
                "--run",
                launcher,
                "--np",
                "1",
                "--blocks",
                "b.toml",
                "--kernels",
                "examples/kernels.c",
                "--retime",
                "0",
            ],
            "give the seconds per tuple",
        ),
        (
            vec![
                "calibrate",
                "blocks",
                heat,
                "--ranks",
                "1",
                "--kernels",
                "examples/kernels.c",
                "--concurrent",
                "0",
            ],
            "--concurrent levels must be in 1..=1024",
        ),
        (
            vec![
                "calibrate",
                "blocks",
                heat,
                "--ranks",
                "1",
                "--kernels",
                "examples/kernels.c",
                "--min-time",
                "5",
            ],
            "--min-time must be between 0 and --budget",
        ),
    ] {
        let o = parsim(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn zero_ranks_per_node_is_a_usage_error_everywhere() {
    // Issue 14: `--ppn 0` named `<in-memory machine spec>` and exited 1.
    let heat = "examples/heat.mpl";
    for args in [
        vec!["run", heat, "-n", "2", "--ppn", "0"],
        vec!["check", heat, "--ranks", "2", "--ppn", "0"],
        vec!["report", heat, "--ranks", "2", "--ppn", "0"],
        vec!["sweep", heat, "-n", "1,2", "--ppn", "0"],
        vec![
            "validate",
            "examples/osu/latency.mpl",
            "--table",
            "x.txt",
            "--ppn",
            "0",
        ],
    ] {
        let o = parsim(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stdout(&o).is_empty(), "{args:?}");
        let err = stderr(&o);
        assert!(
            err.contains("'--ppn <PPN>': must be at least 1"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn a_bad_placement_names_the_machine_file() {
    // More than one rank per node needs [shm]; the error names the file the
    // machine came from, not `<in-memory machine spec>`.
    let (_dir, m) = temp_file(
        "net-only.toml",
        "name = \"net only\"\nmodel = \"hardware\"\n[node]\nmemcpy = \"1 GB/s\"\n\
         [network]\nlatency = \"5 us\"\n\
         send_overhead = \"1 us\"\nrecv_overhead = \"1 us\"\nbandwidth = \"1 GB/s\"\n\
         eager_limit = \"64 KiB\"\n",
    );
    let path = m.to_str().expect("utf-8");
    let o = parsim(&[
        "run",
        "examples/heat.mpl",
        "-n",
        "4",
        "--ppn",
        "2",
        "-m",
        path,
    ]);
    // The machine file lacks what the placement needs: an input error.
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(&format!("--ppn 2: {path}: missing required key `shm`")),
        "{err}"
    );
    assert!(!err.contains("in-memory"), "{err}");
}

#[test]
fn output_files_follow_their_extension_and_are_announced() {
    // Issue 14: `--trace x.txt` wrote JSON and `--plot x.pdf` SVG without a
    // word, and neither --trace nor --comm-matrix said what it wrote.
    let dir = temp_dir();
    let at = |name: &str| dir.join(name).to_str().expect("utf-8").to_owned();
    let heat = "examples/heat.mpl";
    for (args, flag) in [
        (
            vec!["run", heat, "-n", "2", "--trace", &at("t.txt")],
            "--trace",
        ),
        (
            vec!["run", heat, "-n", "2", "--comm-matrix", &at("m.txt")],
            "--comm-matrix",
        ),
        (
            vec!["sweep", heat, "-n", "1,2", "--plot", &at("p.pdf")],
            "--plot",
        ),
    ] {
        let o = parsim(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(
            err.contains(flag) && err.contains("the file's extension chooses"),
            "{err}"
        );
    }
    assert!(
        std::fs::read_dir(&*dir).expect("dir").next().is_none(),
        "nothing written"
    );
    let o = parsim(&[
        "run",
        heat,
        "-n",
        "2",
        "-q",
        "--trace",
        &at("t.JSON"),
        "--comm-matrix",
        &at("m.csv"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(&format!("wrote {}, {}\n", at("m.csv"), at("m.svg"))),
        "{err}"
    );
    assert!(err.contains(&format!("wrote {}\n", at("t.JSON"))), "{err}");
    let trace: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(at("t.JSON")).expect("trace")).expect("JSON");
    assert!(
        trace["traceEvents"]
            .as_array()
            .is_some_and(|e| !e.is_empty())
    );
    let o = parsim(&["run", heat, "-n", "2", "-q", "--trace", &at("t.prv")]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "wrote {}, {}, {}",
            at("t.prv"),
            at("t.pcf"),
            at("t.row")
        )),
        "{}",
        stderr(&o)
    );
}

#[test]
fn an_integer_param_too_large_for_the_integers_is_an_input_error() {
    // Issue 14: `--param n=99999999999999999999` became 1e20 and the run
    // was stopped as a runaway program.
    let o = parsim(&[
        "run",
        "examples/heat.mpl",
        "-n",
        "2",
        "-p",
        "n=99999999999999999999",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("param `n`: `99999999999999999999` is outside the integers"),
        "{}",
        stderr(&o)
    );
    assert!(!stderr(&o).contains("runaway"));
}

#[test]
fn long_work_reports_progress_in_batch_logs_too() {
    // Issue 14: a 104 s run printed nothing when stderr was not a terminal,
    // and sweep printed nothing at all. Here stderr is a pipe: a line every
    // --progress-every seconds (0: at every report, which the engine makes
    // every 2^18 events); the default (10 s) keeps short work silent, and
    // --quiet silences it.
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "examples/heat.mpl", "-n", "64", "-p", "iters=2000"];
        args.extend_from_slice(extra);
        let o = parsim(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        stderr(&o)
    };
    let err = run(&["--progress-every", "0"]);
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("[parsim] ")).collect();
    assert!(!lines.is_empty(), "{err}");
    assert!(
        lines[0].contains("model time")
            && lines[0].contains("of 64 ranks finished")
            && lines[0].contains("elapsed"),
        "{err}"
    );
    assert!(!err.contains('\r'), "no terminal control in a log: {err:?}");
    assert!(!run(&[]).contains("[parsim]"));
    assert!(!run(&["--progress-every", "0", "-q"]).contains("[parsim]"));
    let o = parsim(&[
        "sweep",
        "examples/heat.mpl",
        "-n",
        "1,2,4",
        "-p",
        "iters=10",
        "--progress-every",
        "0",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("[parsim] simulations: 3 of 3 done (100%), "),
        "{err}"
    );
    assert!(err.contains("of 3 done (33%)"), "{err}");
    // calibrate net: the stage its fits are in.
    let o = parsim(&[
        "calibrate",
        "net",
        "calibrate/tests/data/osu7_latency.txt",
        "--progress-every",
        "0",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("[parsim] calibrate net: fitting "),
        "{}",
        stderr(&o)
    );
    // calibrate blocks: each timed tuple says how far the calibration is.
    let out = temp_dir();
    let o = parsim(&[
        "calibrate",
        "blocks",
        "examples/heat.mpl",
        "--ranks",
        "1",
        "--set",
        "n=64,iters=4",
        "--kernels",
        "examples/kernels.c",
        "-o",
        out.join("b.toml").to_str().expect("utf-8"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("[1 of 1 tuples, 100%, "),
        "{}",
        stderr(&o)
    );
    // check: its runs, against the most the exploring budget allows.
    let o = parsim(&[
        "check",
        "tests/check/waitany_server.mpl",
        "--ranks",
        "4",
        "--explore",
        "--progress-every",
        "0",
    ]);
    assert!(
        stderr(&o).contains("[parsim] check: 1 runs done (of at most 18), "),
        "{}",
        stderr(&o)
    );
    // validate: one simulation per process count of the table.
    let table = temp_file(
        "osu.txt",
        "# OSU MPI Latency Test v5.6.2\n# Size          Latency (us)\n0                       1.50\n8                       1.60\n",
    );
    let o = parsim(&[
        "validate",
        "examples/osu/latency.mpl",
        "--table",
        table.1.to_str().expect("utf-8"),
        "-p",
        "max_bytes=8",
        "--progress-every",
        "0",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("[parsim] simulations: 1 of 1 done (100%), "),
        "{}",
        stderr(&o)
    );
}

#[test]
fn one_exit_code_and_stream_policy_for_every_command() {
    // Issue 14: the README's table (0 done, 1 input error, 2 usage error)
    // holds for every command: a file that cannot be read is an input
    // error (1) and a missing argument or unknown flag a usage error (2),
    // both said on stderr with nothing on stdout.
    let dir = temp_dir();
    let missing = dir.join("missing.mpl");
    let missing = missing.to_str().expect("utf-8");
    let missing_toml = dir.join("missing.toml");
    let missing_toml = missing_toml.to_str().expect("utf-8");
    let input_errors: Vec<Vec<&str>> = vec![
        vec!["run", missing, "-n", "2"],
        vec!["check", missing, "--ranks", "2"],
        vec!["sweep", missing, "-n", "1,2"],
        vec!["report", missing, "--ranks", "2", "-o", "r.html"],
        vec![
            "validate",
            "examples/osu/latency.mpl",
            "--table",
            missing_toml,
        ],
        vec!["calibrate", "net", missing_toml],
        vec![
            "calibrate",
            "blocks",
            missing,
            "--ranks",
            "1",
            "--kernels",
            "examples/kernels.c",
            "-o",
            "b.toml",
        ],
        vec!["emit-c", missing],
        vec!["build-mpi", missing, "-o", "x"],
        vec!["graph", missing],
        vec!["machine", missing_toml],
        vec!["run", "examples/heat.mpl", "-n", "2", "-m", missing_toml],
    ];
    for args in &input_errors {
        let o = parsim(args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        assert!(stdout(&o).is_empty(), "{args:?}: {}", stdout(&o));
        assert!(
            stderr(&o).starts_with("error: "),
            "{args:?}: {}",
            stderr(&o)
        );
        assert!(!stderr(&o).contains("note: node.memcpy"), "{args:?}");
    }
    for args in [
        vec!["run"],
        vec!["bogus"],
        vec!["run", "examples/heat.mpl"],
        vec!["check", "examples/heat.mpl", "--no-such-flag"],
        vec!["sweep", "examples/heat.mpl"],
        vec!["calibrate", "blocks", "examples/heat.mpl"],
        vec!["validate", "examples/heat.mpl"],
    ] {
        let o = parsim(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stdout(&o).is_empty(), "{args:?}: {}", stdout(&o));
        assert!(
            stderr(&o).starts_with("error: "),
            "{args:?}: {}",
            stderr(&o)
        );
    }
}

/// Issue 14 item 1: a run of 30 million ranks passed a check that counted
/// only the rank records and was then killed by the kernel. Runs of 4,096
/// ranks and more are now probed (`app::memory`); the estimate must be
/// within 1.5x of the peak the run reaches (`--stats` prints both), in
/// total and in what the run adds to the process's memory before it, on
/// heat, a W2-like stencil and every IMB skeleton; and a run that cannot
/// fit is refused before it starts.
#[test]
fn the_memory_a_large_run_needs_is_measured_and_checked() {
    let stencil = temp_file(
        "w2.mpl",
        "param iters = 2\n\
         kernel work() cost 100e-6\n\
         let n = floor(sqrt(size))\n\
         let x = rank % n\n\
         let y = rank / n\n\
         let north = ((y - 1 + n) % n) * n + x\n\
         let south = ((y + 1) % n) * n + x\n\
         let west = y * n + (x - 1 + n) % n\n\
         let east = y * n + (x + 1) % n\n\
         for it in 0 .. iters {\n\
         \x20   compute work()\n\
         \x20   let r0 = irecv(from: north, tag: 1, bytes: 8192)\n\
         \x20   let r1 = irecv(from: south, tag: 0, bytes: 8192)\n\
         \x20   let r2 = irecv(from: west, tag: 3, bytes: 8192)\n\
         \x20   let r3 = irecv(from: east, tag: 2, bytes: 8192)\n\
         \x20   let s0 = isend(to: north, tag: 0, bytes: 8192)\n\
         \x20   let s1 = isend(to: south, tag: 1, bytes: 8192)\n\
         \x20   let s2 = isend(to: west, tag: 2, bytes: 8192)\n\
         \x20   let s3 = isend(to: east, tag: 3, bytes: 8192)\n\
         \x20   waitall()\n\
         }\n",
    );
    let stencil = stencil.1.to_str().expect("utf-8").to_owned();
    let mut runs: Vec<(String, Vec<String>)> = [
        ("examples/heat.mpl", "iters=1"),
        (stencil.as_str(), "iters=2"),
    ]
    .iter()
    .map(|(program, param)| {
        let args = ["-n", "262144", "-p", param];
        (program.to_string(), args.map(str::to_owned).to_vec())
    })
    .collect();
    // The IMB suite at 4,096 ranks, 36 per node (the smallest probed
    // count): their communicators, windows of requests and collective
    // schedules; two repetitions of the sizes up to 8 bytes. Alltoallv
    // is left out: MPICH's scattered algorithm makes p^2 = 16.8 M messages
    // per call there, about 30 calls: minutes even in a release build.
    let mut imb: Vec<_> = std::fs::read_dir("examples/imb")
        .expect("examples/imb")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "mpl"))
        .filter(|p| !p.ends_with("alltoallv.mpl"))
        .collect();
    imb.sort();
    assert_eq!(imb.len(), 18, "{imb:?}");
    for p in imb {
        let args = [
            "-n",
            "4096",
            "--ppn",
            "36",
            "-p",
            "max_bytes=8",
            "-p",
            "max_reps=2",
        ];
        runs.push((p.display().to_string(), args.map(str::to_owned).to_vec()));
    }
    for (program, extra) in &runs {
        let mut args = vec!["run", program.as_str(), "-q", "--stats"];
        args.extend(extra.iter().map(String::as_str));
        let o = parsim(&args);
        assert!(o.status.success(), "{program}: {}", stderr(&o));
        let err = stderr(&o);
        let line = err
            .lines()
            .find(|l| l.starts_with("stats: memory peak"))
            .unwrap_or_else(|| panic!("{err}"));
        let number = |after: &str, until: &str| -> f64 {
            line.split(after)
                .nth(1)
                .and_then(|s| s.split(until).next())
                .and_then(|s| s.trim().parse().ok())
                .unwrap_or_else(|| panic!("{after:?} in {line}"))
        };
        let mib = |after: &str| number(after, " MiB");
        let (peak, estimated, base) =
            (mib("memory peak "), mib("estimated "), mib(" B per rank: "));
        let ratio = estimated / peak;
        assert!((1.0 / 1.5..=1.5).contains(&ratio), "{program}: {line}");
        let added = (estimated - base) / (peak - base);
        assert!((1.0 / 1.5..=1.5).contains(&added), "{program}: {line}");
        let probes = if program.contains("imb") {
            "from probes of 256 and 1024 ranks"
        } else {
            "from probes of 16384 and 65536 ranks"
        };
        assert!(line.contains(probes), "{line}");
    }
    // More ranks than any machine here holds: refused at once.
    let o = parsim(&[
        "run",
        "examples/heat.mpl",
        "-n",
        "2147483647",
        "-p",
        "iters=1",
    ]);
    refused_for_memory(
        &o,
        "2147483647 ranks need about ",
        "measured on probes of 16384 and 65536 ranks",
    );
}

/// A command refused because the run would not fit in memory: exit 1,
/// nothing on stdout, the error starting with `starts` and containing
/// `names` and the way around the check. Returns the error text.
fn refused_for_memory(o: &std::process::Output, starts: &str, names: &str) -> String {
    assert_eq!(o.status.code(), Some(1), "{}", stderr(o));
    let err = stderr(o);
    assert!(
        err.starts_with(&format!("error: {starts}"))
            && err.contains(names)
            && err.contains("--no-memory-check"),
        "{err}"
    );
    assert!(stdout(o).is_empty());
    err
}

/// Issue 14: `sweep` and `check` are probed like `run`. A sweep's need is
/// that of the simulations it runs at once (one per --jobs thread); a
/// check's, one run with the checker's records. Both refuse what cannot fit
/// before they start, on stderr with exit 1, and name the way around.
#[test]
fn sweeps_and_checks_too_large_for_the_machine_are_refused() {
    let o = parsim(&[
        "sweep",
        "examples/heat.mpl",
        "-n",
        "1000000000,2000000000",
        "-p",
        "iters=1",
        "--jobs",
        "2",
    ]);
    let err = refused_for_memory(
        &o,
        "the sweep's simulations need about ",
        "measured on probes of 16384 and 65536 ranks",
    );
    assert!(
        err.contains(" at once (2 at a time; the largest, default on 2000000000 ranks, "),
        "{err}"
    );
    // Heat's probes measure about 750 B per rank: the two tasks need
    // three times what the larger needs alone.
    let gib = |text: &str, after: &str| -> f64 {
        text.split(after)
            .nth(1)
            .and_then(|s| s.split(" GiB").next())
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or_else(|| panic!("{text}"))
    };
    let (all, largest) = (gib(&err, "need about "), gib(&err, "2000000000 ranks, "));
    assert_relative_eq!(all, 1.5 * largest, max_relative = 0.01);

    let o = parsim(&[
        "check",
        "examples/heat.mpl",
        "-n",
        "2000000000",
        "-p",
        "iters=1",
    ]);
    refused_for_memory(
        &o,
        "2000000000 ranks need about ",
        "measured on probes of 16384 and 65536 ranks",
    );
}
