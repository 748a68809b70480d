//! `parsim emit-c` and `parsim build-mpi`: the C programs compile with
//! `mpicc -Wall -Werror`, print exactly what the simulator prints, run with
//! native kernels and report their time, and build for SimGrid's SMPI.
//!
//! Without `mpicc` on the PATH these tests say so and pass, unless CI=true
//! or `PARSIM_REQUIRE_MPI` is set (then a missing MPI is a failure); the
//! same holds for `smpicc` in the SMPI test.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use support::{ROOT, parsim, temp_dir, text};

/// Whether `tools` are on the PATH; see `support::requires`.
fn have(tools: &[&str]) -> bool {
    support::requires_tools(tools, "PARSIM_REQUIRE_MPI")
}

/// Runs `cmd` to completion, killing it after `limit`.
fn run_with_limit(cmd: &mut Command, limit: Duration) -> Output {
    let shown = format!("{cmd:?}");
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {shown}: {e}"));
    // Read the pipes on threads so that a chatty child never blocks.
    let mut out = child.stdout.take().expect("piped stdout");
    let mut err = child.stderr.take().expect("piped stderr");
    let out_t = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = std::io::Read::read_to_end(&mut out, &mut v);
        v
    });
    let err_t = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = std::io::Read::read_to_end(&mut err, &mut v);
        v
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait for the child") {
            break s;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{shown} did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Output {
        status,
        stdout: out_t.join().expect("stdout reader"),
        stderr: err_t.join().expect("stderr reader"),
    }
}

/// `parsim build-mpi`; panics with the compiler's output on failure.
fn build(file: &str, kernels: Option<&str>, output: &Path, mpicc: &str, cflags: &str) {
    let out_s = output.display().to_string();
    let mut args = vec![
        "build-mpi",
        file,
        "-o",
        &out_s,
        "--mpicc",
        mpicc,
        "--cflags",
        cflags,
    ];
    if let Some(k) = kernels {
        args.extend(["--kernels", k]);
    }
    let o = parsim(&args);
    assert!(
        o.status.success(),
        "parsim {args:?} failed:\n{}{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    // The exact compile command is printed.
    assert!(
        text(&o.stdout).starts_with(&format!(
            "{mpicc} {}",
            cflags.split_whitespace().next().unwrap_or("")
        )),
        "{}",
        text(&o.stdout)
    );
}

/// Print lines (`[rank] text`), stably sorted by rank.
fn by_rank(lines: impl Iterator<Item = (u32, String)>) -> Vec<String> {
    let mut v: Vec<(u32, String)> = lines.collect();
    v.sort_by_key(|(r, _)| *r);
    v.into_iter().map(|(r, t)| format!("[{r}] {t}")).collect()
}

/// The print output of `parsim run FILE -n RANKS`, sorted by rank.
fn simulated(file: &str, ranks: u32, params: &[&str]) -> Vec<String> {
    let n = ranks.to_string();
    let mut args = vec!["run", file, "-n", &n, "--format", "json"];
    for p in params {
        args.extend(["--param", p]);
    }
    let o = parsim(&args);
    assert!(o.status.success(), "parsim {args:?}: {}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON report");
    let lines = v["output"]
        .as_array()
        .expect("output lines")
        .iter()
        .map(|l| {
            (
                l["rank"].as_u64().expect("rank") as u32,
                l["text"].as_str().expect("text").to_owned(),
            )
        });
    by_rank(lines)
}

/// The `[rank] text` lines of a real run, sorted by rank.
fn printed(stdout: &str) -> Vec<String> {
    by_rank(stdout.lines().filter_map(|l| {
        let rest = l.strip_prefix('[')?;
        let (r, t) = rest.split_once("] ")?;
        Some((r.parse().ok()?, t.to_owned()))
    }))
}

/// The JSON of the `PARSIM_RESULT` line.
fn result_line(stdout: &str) -> serde_json::Value {
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("PARSIM_RESULT "))
        .unwrap_or_else(|| panic!("no PARSIM_RESULT line in:\n{stdout}"));
    serde_json::from_str(line).expect("PARSIM_RESULT is JSON")
}

fn mpirun(np: u32, binary: &Path, args: &[&str]) -> Output {
    run_with_limit(
        Command::new("mpirun")
            .arg("-np")
            .arg(np.to_string())
            .arg(binary)
            .args(args),
        Duration::from_secs(60),
    )
}

/// Every skeleton that parses (examples, the IMB suite, the checker's
/// programs, this suite's, the MPI-semantics snapshots') becomes C that
/// `mpicc -Wall -Werror` accepts.
#[test]
fn every_skeleton_compiles_with_mpicc_wall_werror() {
    if !have(&["mpicc"]) {
        return;
    }
    let dir = temp_dir();
    let mut files = Vec::new();
    for d in [
        "examples",
        "examples/imb",
        "examples/osu",
        "examples/npb",
        "tests/check",
        "tests/emit",
        "tests/semantics",
    ] {
        let mut found: Vec<PathBuf> = std::fs::read_dir(Path::new(ROOT).join(d))
            .expect("directory")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "mpl"))
            .collect();
        found.sort();
        files.extend(found);
    }
    assert!(files.len() >= 30, "{files:?}");
    let uses_kernels = |p: &Path| {
        ["heat.mpl", "jacobi.mpl", "net.mpl"]
            .iter()
            .any(|n| p.ends_with(Path::new("examples").join(n)))
    };
    // Two compilers at a time (the machines are small).
    let next = std::sync::atomic::AtomicUsize::new(0);
    let built = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(file) = files.get(i) else { break };
                    let f = file.display().to_string();
                    if !parsim(&["graph", &f]).status.success() {
                        continue; // does not parse: nothing to translate
                    }
                    let stem = file.file_stem().map(|s| s.to_string_lossy().into_owned());
                    let parent = file
                        .parent()
                        .and_then(|p| p.file_name())
                        .map(|s| s.to_string_lossy().into_owned());
                    let out = dir.join(format!(
                        "{}-{}",
                        parent.unwrap_or_default(),
                        stem.unwrap_or_default()
                    ));
                    let kernels = uses_kernels(file).then_some("examples/kernels.c");
                    build(&f, kernels, &out, "mpicc", "-O2 -Wall -Werror");
                    assert!(out.is_file(), "{} was not written", out.display());
                    built.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            });
        }
    });
    assert!(built.into_inner() >= 30);
}

/// Arithmetic, arrays, functions, recursion, every point-to-point operation,
/// statuses, probes, waitany, test, communicators and collectives with
/// values: the real MPI run prints exactly what the simulation prints.
#[test]
fn real_runs_print_what_the_simulator_prints() {
    if !have(&["mpicc", "mpirun"]) {
        return;
    }
    let dir = temp_dir();
    let bin = dir.join("semantics");
    build(
        "tests/emit/semantics.mpl",
        None,
        &bin,
        "mpicc",
        "-O2 -Wall -Werror",
    );
    for np in [2, 3] {
        let o = mpirun(np, &bin, &[]);
        let stdout = text(&o.stdout);
        assert!(
            o.status.success(),
            "mpirun -np {np}: {}\n{stdout}",
            text(&o.stderr)
        );
        let want = simulated("tests/emit/semantics.mpl", np, &[]);
        let got = printed(&stdout);
        assert!(want.len() > 30, "{want:?}");
        assert_eq!(got, want, "mpirun -np {np} vs parsim run -n {np}");
        let r = result_line(&stdout);
        assert_eq!(r["program"], "semantics.mpl");
        assert_eq!(r["ranks"], np);
    }
}

/// heat.mpl with the native stencil of examples/kernels.c: runs with a
/// param override and reports its time.
#[test]
fn heat_runs_with_native_kernels_and_reports_its_time() {
    if !have(&["mpicc", "mpirun"]) {
        return;
    }
    let dir = temp_dir();
    let bin = dir.join("heat");
    build(
        "examples/heat.mpl",
        Some("examples/kernels.c"),
        &bin,
        "mpicc",
        "-O2",
    );
    let o = mpirun(2, &bin, &["n=200", "iters=20"]);
    let stdout = text(&o.stdout);
    assert!(o.status.success(), "{}\n{stdout}", text(&o.stderr));
    let r = result_line(&stdout);
    assert_eq!(r["program"], "heat.mpl");
    assert_eq!(r["ranks"], 2);
    let seconds = r["seconds"].as_f64().expect("seconds");
    assert!(seconds > 0.0 && seconds < 30.0, "{r}");
    // Exactly one result line, from rank 0.
    assert_eq!(stdout.matches("PARSIM_RESULT").count(), 1, "{stdout}");
}

/// The emitted C of heat.mpl builds with SimGrid's `smpicc`, and runs in
/// `smpirun` on a small platform.
#[test]
fn heat_builds_with_smpicc_and_runs_in_smpirun() {
    if !have(&["smpicc"]) {
        return;
    }
    let dir = temp_dir();
    let bin = dir.join("heat");
    build(
        "examples/heat.mpl",
        Some("examples/kernels.c"),
        &bin,
        "smpicc",
        "-O2 -Wall -Werror",
    );
    if !have(&["smpirun"]) {
        return;
    }
    let platform = dir.join("platform.xml");
    std::fs::write(
        &platform,
        "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n<platform version=\"4.1\">\n  <cluster id=\"c\" prefix=\"node-\" suffix=\"\" radical=\"0-1\" speed=\"1Gf\" bw=\"125MBps\" lat=\"50us\"/>\n</platform>\n",
    )
    .expect("platform file");
    let hosts = dir.join("hosts");
    std::fs::write(&hosts, "node-0\nnode-1\n").expect("host file");
    let o = run_with_limit(
        Command::new("smpirun")
            .arg("-np")
            .arg("2")
            .arg("-platform")
            .arg(&platform)
            .arg("-hostfile")
            .arg(&hosts)
            .arg("--cfg=smpi/host-speed:1Gf")
            .arg(&bin)
            .args(["n=200", "iters=20"])
            .current_dir(&dir),
        Duration::from_secs(60),
    );
    let stdout = text(&o.stdout);
    assert!(o.status.success(), "{}\n{stdout}", text(&o.stderr));
    let r = result_line(&stdout);
    assert_eq!(r["ranks"], 2);
    assert!(r["seconds"].as_f64().expect("seconds") > 0.0, "{r}");
}

/// Run-time errors name the rank and the line (as the simulator's do) and
/// end the run with exit code 4; bad command-line params are refused.
#[test]
fn errors_name_the_rank_and_the_line() {
    if !have(&["mpicc", "mpirun"]) {
        return;
    }
    let dir = temp_dir();
    let src = dir.join("divide.mpl");
    std::fs::write(
        &src,
        "param n = 1\nkernel stencil(rows, cols)\nlet z = 1\nif rank == 1 {\n    z = n / (rank - 1)\n}\nbarrier()\ncompute stencil(z * n, 2.5)\n",
    )
    .expect("source");
    let src_s = src.display().to_string();
    let bin = dir.join("divide");
    build(
        &src_s,
        Some("examples/kernels.c"),
        &bin,
        "mpicc",
        "-O2 -Wall -Werror",
    );
    let o = mpirun(2, &bin, &[]);
    assert!(!o.status.success());
    let err = text(&o.stderr);
    assert!(
        err.contains("rank 1: error: integer division by zero in 1 / 0 at line 5"),
        "{err}"
    );
    // A native kernel takes integers.
    let o = mpirun(1, &bin, &[]);
    assert!(!o.status.success());
    let err = text(&o.stderr);
    assert!(
        err.contains(
            "rank 0: error: native kernel `stencil` takes integers, but argument 2 is float at line 8"
        ),
        "{err}"
    );
    // Params on the command line: as `parsim run --param`.
    let o = mpirun(1, &bin, &["m=2"]);
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("error: unknown param `m`; the program declares `n`"),
        "{}",
        text(&o.stderr)
    );
    let o = mpirun(1, &bin, &["n=0x10"]);
    assert!(
        text(&o.stderr).contains(
            "error: param `n` must be a number or the name of an earlier param, got `0x10`"
        ),
        "{}",
        text(&o.stderr)
    );
    let o = mpirun(1, &bin, &["n=2.5e0"]);
    assert!(
        text(&o.stderr).contains("rank 0: error: native kernel `stencil` takes integers, but argument 1 is float at line 8"),
        "{}",
        text(&o.stderr)
    );

    // `abort(...)` and a param named on the command line (`class=A`), as
    // `parsim run` has them.
    let src = dir.join("classes.mpl");
    std::fs::write(
        &src,
        "param S = 0\nparam A = 2\nparam class = S\nparam later = 7\nif size > 1 {\n    abort(\"one rank only, got\", size)\n}\nprint(\"class\", class)\n",
    )
    .expect("source");
    let bin = dir.join("classes");
    build(
        &src.display().to_string(),
        None,
        &bin,
        "mpicc",
        "-O2 -Wall -Werror",
    );
    let o = mpirun(1, &bin, &["class=A"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(printed(&text(&o.stdout)), ["[0] class 2"]);
    let o = mpirun(1, &bin, &["class=later"]);
    assert!(
        text(&o.stderr).contains("error: param `class`: `later` is declared after `class`"),
        "{}",
        text(&o.stderr)
    );
    let o = mpirun(2, &bin, &[]);
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("error: abort: one rank only, got 2 at line 6"),
        "{}",
        text(&o.stderr)
    );
}

/// Translation errors: a kernel with neither a cost nor native code, and a
/// kernel library of another ABI version.
#[test]
fn translation_errors_are_clear() {
    let dir = temp_dir();
    let src = dir.join("nocost.mpl");
    std::fs::write(&src, "kernel k(n)\ncompute k(3)\n").expect("source");
    let o = parsim(&["emit-c", &src.display().to_string()]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.contains(
            "kernel `k` (computed at line 2) has neither a cost nor a native implementation"
        ),
        "{err}"
    );
    let o = parsim(&[
        "emit-c",
        &src.display().to_string(),
        "--kernels",
        "README.md",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("a kernel library is a C file"),
        "{}",
        text(&o.stderr)
    );
    if !have(&["cc"]) {
        return;
    }
    let lib = dir.join("v2.c");
    std::fs::write(
        &lib,
        "#include <stdint.h>\nuint32_t parsim_kernel_abi_version(void) { return 2; }\nvoid parsim_kernel_k(const int64_t *a, int32_t n) { (void)a; (void)n; }\n",
    )
    .expect("library source");
    let o = parsim(&[
        "emit-c",
        &src.display().to_string(),
        "--kernels",
        &lib.display().to_string(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("built for kernel ABI version 2"),
        "{}",
        text(&o.stderr)
    );
    // The right version: `k` is native, and the C calls it.
    std::fs::write(
        &lib,
        "#include <stdint.h>\nuint32_t parsim_kernel_abi_version(void) { return 1; }\nvoid parsim_kernel_k(const int64_t *a, int32_t n) { (void)a; (void)n; }\n",
    )
    .expect("library source");
    let o = parsim(&[
        "emit-c",
        &src.display().to_string(),
        "--kernels",
        &lib.display().to_string(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("parsim_kernel_k(kargs"));
}
