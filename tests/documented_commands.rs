//! Every command the documents show runs as written (issue 14): the
//! commands are read from the documents themselves, not from a copy kept
//! here, and run in document order in a scratch directory laid out like the
//! workspace, with `parsim` on the PATH as `cargo install --path .` would
//! put it.
//!
//! What counts as a command: in a fenced block whose info string is empty,
//! `sh`, `bash` or `console`, a line that starts with `parsim `, `mpirun `,
//! `smpirun `, `A=` (a variable the next lines use) or `cd `, joined with
//! the lines
//! that a trailing `\` continues; in `examples/README.md`, also an inline
//! code span that starts with `parsim ` (its "Run: `...`" sentences). A
//! block that shows a syntax (placeholders such as `FILE.mpl`) is a `text`
//! block, and output is a block with no command lines.
//!
//! The exit status expected is 0, or N when the command's comment says
//! `# exit N`. A block preceded by `<!-- commands: not run: REASON -->` is
//! not run (a Slurm cluster, files only a user has); the test lists those
//! with their reasons so that the exceptions stay visible. A block preceded
//! by `<!-- commands: need ../shared -->` uses the project's measured data
//! beside the workspace: it runs when that data is there, and under CI
//! (which has it) its absence is a failure.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The documents whose commands must run.
const DOCUMENTS: [&str; 8] = [
    "README.md",
    "docs/language.md",
    "docs/calibration.md",
    "docs/collectives.md",
    "docs/emit-c.md",
    "docs/scaling.md",
    "examples/README.md",
    "examples/machines/README.md",
];

#[derive(Debug)]
struct Documented {
    file: &'static str,
    line: usize,
    text: String,
    expected: i32,
    skip: Option<String>,
    needs_shared: bool,
}

/// The exit status a command's trailing comment promises (`# exit 3`).
fn expected_exit(command: &str) -> i32 {
    command
        .split(" # ")
        .skip(1)
        .find_map(|c| {
            let digits: String = c
                .trim()
                .strip_prefix("exit ")?
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse().ok()
        })
        .unwrap_or(0)
}

fn is_command(line: &str) -> bool {
    ["parsim ", "mpirun ", "smpirun ", "A=", "cd "]
        .iter()
        .any(|p| line.starts_with(p))
}

fn commands_of(file: &'static str, text: &str) -> Vec<Documented> {
    let mut out = Vec::new();
    let mut in_block: Option<bool> = None; // Some(runnable)
    let mut marker: Option<String> = None;
    let mut skip: Option<String> = None;
    let mut needs_shared = false;
    let mut pending: Option<(usize, String)> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim_end();
        match in_block {
            None => {
                if let Some(info) = line.trim_start().strip_prefix("```") {
                    let runnable = matches!(info.trim(), "" | "sh" | "bash" | "console");
                    in_block = Some(runnable);
                    skip = None;
                    needs_shared = false;
                    if let Some(m) = marker.take() {
                        if let Some(reason) = m.strip_prefix("not run: ") {
                            skip = Some(reason.to_owned());
                        } else if m == "need ../shared" {
                            needs_shared = true;
                        } else {
                            panic!("{file}:{}: unknown commands marker `{m}`", i);
                        }
                    }
                    continue;
                }
                let t = line.trim();
                marker = t
                    .strip_prefix("<!-- commands: ")
                    .and_then(|m| m.strip_suffix(" -->"))
                    .map(str::to_owned)
                    .or(if t.is_empty() { marker.take() } else { None });
                if file == "examples/README.md" {
                    for (k, span) in line.split('`').enumerate() {
                        if k % 2 == 1 && span.starts_with("parsim ") {
                            out.push(Documented {
                                file,
                                line: i + 1,
                                text: span.to_owned(),
                                expected: expected_exit(span),
                                skip: None,
                                needs_shared: false,
                            });
                        }
                    }
                }
            }
            Some(runnable) => {
                if line.trim_start().starts_with("```") {
                    in_block = None;
                    continue;
                }
                if !runnable {
                    continue;
                }
                if let Some((start, mut acc)) = pending.take() {
                    acc.push('\n');
                    acc.push_str(line);
                    if line.ends_with('\\') {
                        pending = Some((start, acc));
                    } else {
                        out.push(Documented {
                            file,
                            line: start,
                            expected: expected_exit(&acc),
                            text: acc,
                            skip: skip.clone(),
                            needs_shared,
                        });
                    }
                    continue;
                }
                if is_command(line) {
                    if line.ends_with('\\') {
                        pending = Some((i + 1, line.to_owned()));
                    } else {
                        out.push(Documented {
                            file,
                            line: i + 1,
                            text: line.to_owned(),
                            expected: expected_exit(line),
                            skip: skip.clone(),
                            needs_shared,
                        });
                    }
                }
            }
        }
    }
    out
}

/// A scratch directory laid out like the workspace (the directories the
/// documents name, linked), with `shared` beside it when the project's
/// data is there; commands run in `work`.
fn scratch(root: &Path) -> (support::TempDir, PathBuf) {
    let dir = support::temp_dir();
    let work = dir.join("work");
    std::fs::create_dir(&work).expect("mkdir");
    for d in [
        "examples",
        "docs",
        "validation",
        "calibrate",
        "scripts",
        "include",
        "tests",
    ] {
        std::os::unix::fs::symlink(root.join(d), work.join(d)).expect("symlink");
    }
    let shared = root.join("../shared");
    if shared.is_dir() {
        std::os::unix::fs::symlink(&shared, dir.join("shared")).expect("symlink");
    }
    (dir, work)
}

#[test]
fn every_documented_command_runs_as_written() {
    let root = Path::new(support::ROOT);
    let have_shared = support::shared_data("validation/ekss1", "pmb_pingpong_1ppn.csv").is_some();
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_parsim"))
        .parent()
        .expect("the binary's directory")
        .to_owned();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut failures = Vec::new();
    let mut not_run = Vec::new();
    let mut ran = 0;
    for file in DOCUMENTS {
        let text = std::fs::read_to_string(root.join(file)).expect("document");
        let commands = commands_of(file, &text);
        // One scratch directory per document: its commands may use what
        // the earlier ones wrote.
        let (_dir, work) = scratch(root);
        let mut script_env = String::new();
        for c in commands {
            if let Some(reason) = &c.skip {
                not_run.push(format!("{}:{}: {reason}", c.file, c.line));
                continue;
            }
            if c.needs_shared && !have_shared {
                not_run.push(format!("{}:{}: no ../shared here", c.file, c.line));
                continue;
            }
            // `A=...` and `cd ...` lines set up the commands after them.
            if c.text.starts_with("A=") || c.text.starts_with("cd ") {
                script_env.push_str(&c.text);
                script_env.push('\n');
                continue;
            }
            let began = std::time::Instant::now();
            let o = Command::new("bash")
                .arg("-c")
                .arg(format!("{script_env}{}", c.text))
                .current_dir(&work)
                .env("PATH", &path)
                .output()
                .expect("bash runs");
            ran += 1;
            eprintln!(
                "{:>7.1} s  {}:{}: {}",
                began.elapsed().as_secs_f64(),
                c.file,
                c.line,
                c.text.lines().next().unwrap_or("")
            );
            let code = o.status.code().unwrap_or(-1);
            if code != c.expected {
                failures.push(format!(
                    "{}:{}: exit {code}, expected {}\n  {}\n  stderr: {}",
                    c.file,
                    c.line,
                    c.expected,
                    c.text,
                    String::from_utf8_lossy(&o.stderr)
                        .lines()
                        .take(6)
                        .collect::<Vec<_>>()
                        .join("\n          ")
                ));
            }
        }
    }
    eprintln!(
        "{ran} documented commands ran; not run:\n  {}",
        not_run.join("\n  ")
    );
    assert!(
        ran >= 40,
        "only {ran} commands found: is the extraction broken?"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn extraction_reads_blocks_continuations_markers_and_exit_codes() {
    let doc = "intro\n\
               ```\n\
               parsim run a.mpl --ranks 2   # exit 3, the cycle\n\
               not a command\n\
               ```\n\
               <!-- commands: not run: needs a cluster -->\n\
               ```sh\n\
               parsim calibrate net --run \"srun -n 2\" \\\n\
               \x20   -o c.toml\n\
               ```\n\
               ```text\n\
               parsim run FILE.mpl --ranks N\n\
               ```\n";
    let c = commands_of("README.md", doc);
    assert_eq!(c.len(), 2, "{c:?}");
    assert_eq!((c[0].line, c[0].expected), (3, 3));
    assert!(c[0].skip.is_none());
    assert_eq!(
        c[1].text,
        "parsim calibrate net --run \"srun -n 2\" \\\n    -o c.toml"
    );
    assert_eq!(c[1].skip.as_deref(), Some("needs a cluster"));
}
