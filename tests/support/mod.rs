//! What the root integration tests share (each uses it as `mod support;`):
//! running the `parsim` binary from the workspace root, temporary files and
//! directories, and the checks of tests that need something from outside
//! the workspace (MPI, a C compiler, chromium, tmux, the shared data
//! beside the workspace).
//!
//! Such a test skips with a printed note when what it needs is absent,
//! unless CI=true or the test's `PARSIM_REQUIRE_*` variable is set: then
//! the absence is a failure, so that CI never passes by skipping.

#![allow(
    dead_code,
    reason = "each test crate compiles this module and uses a part of it; \
              `expect` would be unfulfilled in the crates that use all of it"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The workspace root, where every test runs `parsim` (paths such as
/// `examples/heat.mpl` are relative to it).
pub const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// A `parsim` command run from the workspace root, to add arguments or
/// environment to.
pub fn parsim_command() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_parsim"));
    cmd.current_dir(ROOT);
    cmd
}

/// Runs `parsim` with `args` from the workspace root and waits for it.
pub fn parsim(args: &[&str]) -> Output {
    parsim_command()
        .args(args)
        .output()
        .expect("the parsim binary runs")
}

/// `parsim run PROGRAM --ranks RANKS --machine MACHINE --format json`,
/// asserted to succeed: its JSON report.
pub fn run_json(program: &Path, ranks: u32, machine: &Path) -> serde_json::Value {
    let o = parsim_command()
        .args(["run", program.to_str().expect("utf-8 path")])
        .args(["--ranks", &ranks.to_string()])
        .args(["--machine", machine.to_str().expect("utf-8 path")])
        .args(["--format", "json"])
        .output()
        .expect("the parsim binary runs");
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).expect("a JSON report")
}

/// Each rank's `finish_seconds` in a run's JSON report.
pub fn finish_times(report: &serde_json::Value) -> Vec<f64> {
    report["ranks"]
        .as_array()
        .expect("ranks")
        .iter()
        .map(|r| r["finish_seconds"].as_f64().expect("f64"))
        .collect()
}

/// Bytes as text, invalid UTF-8 replaced.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A run's standard output as text.
pub fn stdout(o: &Output) -> String {
    text(&o.stdout)
}

/// The table a benchmark skeleton prints from rank 0 (`[0] ` lines that
/// are not `#` headers), each row as its numbers; a word that is not a
/// number fails the test.
pub fn rank0_table(out: &str) -> Vec<Vec<f64>> {
    out.lines()
        .filter_map(|l| l.strip_prefix("[0] "))
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            l.split_whitespace()
                .map(|x| x.parse().expect("a number"))
                .collect()
        })
        .collect()
}

/// `parsim run PROGRAM --quiet` with `args` (ranks, machine, ...) and each
/// of `params` as a `--param`, asserted to succeed: the table rank 0
/// printed ([`rank0_table`]).
pub fn run_rank0_table(program: &str, args: &[&str], params: &[&str]) -> Vec<Vec<f64>> {
    let mut cmd = parsim_command();
    cmd.args(["run", program, "--quiet"]).args(args);
    for p in params {
        cmd.args(["--param", p]);
    }
    let o = cmd.output().expect("the parsim binary runs");
    assert!(o.status.success(), "{}", stderr(&o));
    rank0_table(&stdout(&o))
}

/// A run's standard error as text.
pub fn stderr(o: &Output) -> String {
    text(&o.stderr)
}

/// A fresh directory under the target's temporary directory, removed when
/// the returned guard is dropped (kept with PARSIM_KEEP_TEMP set, to look at
/// a failure's files).
pub fn temp_dir() -> TempDir {
    let dir = tempfile::Builder::new()
        .prefix("parsim-test-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("a temporary directory can be made in the target directory");
    TempDir { dir }
}

/// A temporary directory of one test (see [`temp_dir`]).
pub struct TempDir {
    dir: tempfile::TempDir,
}

impl TempDir {
    /// Writes `text` to the file `name` in the directory; returns its path.
    pub fn file(&self, name: &str, text: &str) -> PathBuf {
        let p = self.dir.path().join(name);
        std::fs::write(&p, text).expect("a file can be written in the temporary directory");
        p
    }
}

/// The directory's path (`dir.join(name)`, `dir.display()`).
impl std::ops::Deref for TempDir {
    type Target = Path;

    fn deref(&self) -> &Path {
        self.dir.path()
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if std::env::var_os("PARSIM_KEEP_TEMP").is_some() {
            eprintln!("note: kept {}", self.dir.path().display());
            self.dir.disable_cleanup(true);
        }
    }
}

/// The LogGP machine of the collectives' closed-form tests
/// (`collectives_closed_form.rs`, `imb_timing.rs`), written in `dir`:
/// every rank its own node, L = 5 us, o_s = 1 us, o_r = 2 us, g = 0, the
/// network at `bandwidth`, eager below 64 KiB, memcpy and reductions at
/// 1 GB/s, MPICH's rules with the `[collectives]` lines `force`.
pub fn closed_form_machine(dir: &TempDir, bandwidth: &str, force: &str) -> PathBuf {
    closed_form_machine_with(dir, bandwidth, "", force)
}

/// [`closed_form_machine`] with the `[node]` lines `node` added (a page
/// fault cost, a timer).
pub fn closed_form_machine_with(
    dir: &TempDir,
    bandwidth: &str,
    node: &str,
    force: &str,
) -> PathBuf {
    let text = format!(
        r#"name = "closed-form collectives"
model = "hardware"
[node]
memcpy = "1 GB/s"
reduce_op = "1 GB/s"
{node}
[network]
latency = "5 us"
send_overhead = "1 us"
recv_overhead = "2 us"
gap = "0 us"
bandwidth = "{bandwidth}"
mtu = "unlimited"
eager_limit = "64 KiB"
control_bytes = "0 B"
[collectives]
library = "mpich"
{force}
"#
    );
    dir.file("machine.toml", &text)
}

/// Writes `text` to a file called `name` in a fresh temporary directory;
/// returns the directory (keep it alive while the file is used) and the path.
pub fn temp_file(name: &str, text: &str) -> (TempDir, PathBuf) {
    let dir = temp_dir();
    let path = dir.file(name, text);
    (dir, path)
}

/// Why a missing prerequisite is a failure rather than a skip: CI=true, or
/// `require_var` set.
fn required_by(require_var: &str) -> Option<String> {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        Some("CI=true".to_owned())
    } else if std::env::var_os(require_var).is_some() {
        Some(format!("{require_var} is set"))
    } else {
        None
    }
}

/// The running test's name (libtest names each test's thread after it).
fn test_name() -> String {
    std::thread::current()
        .name()
        .unwrap_or("this test")
        .to_owned()
}

/// Whether a test can run that needs `what` (a description), with
/// `present` telling if it is here. Absent, it is a failure under CI=true or
/// `require_var` and otherwise a skip with a note; the test returns early
/// when this is false.
pub fn requires(what: &str, present: bool, require_var: &str) -> bool {
    if present {
        return true;
    }
    let test = test_name();
    if let Some(why) = required_by(require_var) {
        panic!("{test}: needs {what}, not found here, and {why}");
    }
    eprintln!(
        "note: {test}: skipped: needs {what}, not found here \
         (with CI=true or {require_var} set this is a failure)"
    );
    false
}

/// Whether `tool` is an executable file on the PATH.
pub fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|dir| {
            let p = dir.join(tool);
            p.is_file()
                && std::fs::metadata(&p).is_ok_and(|m| {
                    use std::os::unix::fs::PermissionsExt;
                    m.permissions().mode() & 0o111 != 0
                })
        })
    })
}

/// Whether every tool of `tools` is on the PATH; see [`requires`].
pub fn requires_tools(tools: &[&str], require_var: &str) -> bool {
    let missing: Vec<&str> = tools.iter().copied().filter(|t| !on_path(t)).collect();
    requires(
        &format!("`{}` (on the PATH)", missing.join("`, `")),
        missing.is_empty(),
        require_var,
    )
}

/// The shared data beside the workspace (`../shared/` + `rel`), when
/// `probe` (a file in it) exists; see [`requires`], with
/// PARSIM_REQUIRE_SHARED.
pub fn shared_data(rel: &str, probe: &str) -> Option<PathBuf> {
    let dir = Path::new(ROOT).join("../shared").join(rel);
    let present = dir.join(probe).is_file();
    requires(
        &format!("the shared data at {}", dir.display()),
        present,
        "PARSIM_REQUIRE_SHARED",
    )
    .then_some(dir)
}
