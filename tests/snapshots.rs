//! Data-driven end-to-end tests: every program of `tests/semantics/` (MPI
//! semantics through `parsim run`) and `tests/check/` (the checker's known
//! buggy and correct patterns, after the MPI Bugs Initiative's categories)
//! is run as its `// snapshot` lines say, and what parsim prints is compared
//! with the snapshot file beside the program.
//!
//! A line `// snapshot: ARGS` or `// snapshot NAME: ARGS` (anywhere in the
//! program, so that the checker's programs keep the line numbers the README
//! cites) is one case: `parsim` runs from the workspace root with ARGS, the
//! program's path inserted after the first word (the subcommand). The case's
//! exit code, stdout and stderr are in `PROGRAM.snap`, or
//! `PROGRAM.NAME.snap` for a named case.
//!
//! `PARSIM_BLESS=1 cargo test --test snapshots` writes the snapshot files
//! from the current binary (and removes those of cases that are gone);
//! read the changes before committing them.

mod support;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The directories of programs with snapshots.
const DIRS: [&str; 2] = ["tests/semantics", "tests/check"];

/// One run of a program.
struct Case {
    /// The arguments, the program's path included.
    args: Vec<String>,
    /// The snapshot file, relative to the workspace root.
    snapshot: PathBuf,
}

/// The cases of `program` (relative to the workspace root) from its
/// `// snapshot` lines.
fn cases_of(program: &Path) -> Result<Vec<Case>, String> {
    let name = program.display().to_string();
    let text = std::fs::read_to_string(Path::new(support::ROOT).join(program))
        .map_err(|e| format!("{name}: cannot read it: {e}"))?;
    let stem = program
        .file_stem()
        .and_then(|s| s.to_str())
        .ok_or_else(|| format!("{name}: no UTF-8 file name"))?;
    let mut cases = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let Some(rest) = line.strip_prefix("// snapshot") else {
            continue;
        };
        let (label, args) = rest
            .split_once(':')
            .ok_or_else(|| format!("{name}:{}: `// snapshot[ NAME]: ARGS` expected", n + 1))?;
        let label = label.trim();
        if !label
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(format!(
                "{name}:{}: a case name is letters, digits, `-` and `_`",
                n + 1
            ));
        }
        let mut words = args.split_whitespace().map(str::to_owned);
        let command = words
            .next()
            .ok_or_else(|| format!("{name}:{}: no parsim subcommand", n + 1))?;
        let mut all = vec![command, name.clone()];
        all.extend(words);
        let file = if label.is_empty() {
            format!("{stem}.snap")
        } else {
            format!("{stem}.{label}.snap")
        };
        cases.push(Case {
            args: all,
            snapshot: program.with_file_name(file),
        });
    }
    if cases.is_empty() {
        return Err(format!("{name}: no `// snapshot: ARGS` line"));
    }
    Ok(cases)
}

/// What a run printed, as a snapshot file holds it.
fn render(o: &std::process::Output) -> String {
    let code = o
        .status
        .code()
        .map_or_else(|| format!("killed ({})", o.status), |c| c.to_string());
    let mut s = format!("exit code: {code}\n");
    for (what, bytes) in [("stdout", &o.stdout), ("stderr", &o.stderr)] {
        let text = support::text(bytes);
        let _ = writeln!(s, "--- {what}");
        s.push_str(&text);
        if !text.is_empty() && !text.ends_with('\n') {
            s.push_str("\n(no newline at the end)\n");
        }
    }
    s
}

/// A line diff of `want` (lines `-`) against `got` (lines `+`), with three
/// lines of context around the changes.
fn diff(want: &str, got: &str) -> String {
    let a: Vec<&str> = want.lines().collect();
    let b: Vec<&str> = got.lines().collect();
    // Longest common subsequence, by dynamic programming from the end.
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut lines: Vec<(char, &str)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            lines.push((' ', a[i]));
            i += 1;
            j += 1;
        } else if i < a.len() && (j == b.len() || lcs[i + 1][j] >= lcs[i][j + 1]) {
            lines.push(('-', a[i]));
            i += 1;
        } else {
            lines.push(('+', b[j]));
            j += 1;
        }
    }
    let near_change = |k: usize| {
        lines[k.saturating_sub(3)..(k + 4).min(lines.len())]
            .iter()
            .any(|l| l.0 != ' ')
    };
    let mut out = String::new();
    let mut skipped = false;
    for (k, (mark, line)) in lines.iter().enumerate() {
        if near_change(k) {
            if skipped {
                out.push_str("  ...\n");
                skipped = false;
            }
            let _ = writeln!(out, "{mark} {line}");
        } else {
            skipped = true;
        }
    }
    if want.ends_with('\n') != got.ends_with('\n') {
        out.push_str("(the files differ in the newline at the end)\n");
    }
    out
}

/// The `.mpl` programs of `dir` (relative to the workspace root), sorted.
fn programs(dir: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(Path::new(support::ROOT).join(dir))
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .map(|e| e.expect("a readable directory entry").file_name())
        .map(|name| Path::new(dir).join(name))
        .filter(|p| p.extension().is_some_and(|e| e == "mpl"))
        .collect();
    found.sort();
    found
}

/// The snapshot files of `dir` (relative to the workspace root).
fn snapshot_files(dir: &str) -> Vec<PathBuf> {
    std::fs::read_dir(Path::new(support::ROOT).join(dir))
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .map(|e| e.expect("a readable directory entry").file_name())
        .map(|name| Path::new(dir).join(name))
        .filter(|p| p.extension().is_some_and(|e| e == "snap"))
        .collect()
}

#[test]
fn programs_print_what_their_snapshots_say() {
    let bless = std::env::var_os("PARSIM_BLESS").is_some();
    let root = Path::new(support::ROOT);
    let mut failures = Vec::new();
    let mut cases = Vec::new();
    for dir in DIRS {
        let found = programs(dir);
        assert!(!found.is_empty(), "no programs in {dir}");
        for program in found {
            match cases_of(&program) {
                Ok(c) => cases.extend(c),
                Err(e) => failures.push(e),
            }
        }
    }
    for case in &cases {
        let args: Vec<&str> = case.args.iter().map(String::as_str).collect();
        let got = render(&support::parsim(&args));
        let path = root.join(&case.snapshot);
        let shown = format!(
            "{} (parsim {})",
            case.snapshot.display(),
            case.args.join(" ")
        );
        if bless {
            std::fs::write(&path, &got).unwrap_or_else(|e| panic!("{shown}: {e}"));
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(want) if want == got => {}
            Ok(want) => failures.push(format!(
                "{shown} differs (- snapshot, + now):\n{}",
                diff(&want, &got)
            )),
            Err(e) => failures.push(format!(
                "{shown}: no snapshot ({e}); PARSIM_BLESS=1 writes it"
            )),
        }
    }
    // A snapshot without its case is left over from a removed one.
    for dir in DIRS {
        for file in snapshot_files(dir) {
            if cases.iter().all(|c| c.snapshot != file) {
                if bless {
                    std::fs::remove_file(root.join(&file))
                        .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
                } else {
                    failures.push(format!(
                        "{}: no `// snapshot` line of {} makes it; PARSIM_BLESS=1 removes it",
                        file.display(),
                        dir
                    ));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} snapshot cases failed:\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
    assert!(cases.len() >= 30, "{} cases", cases.len());
}

/// The examples shipped with parsim are correct: `check` finds nothing.
#[test]
fn the_shipped_examples_check_clean() {
    let o = support::parsim(&[
        "check",
        "examples/net.mpl",
        "--ranks",
        "6",
        "--param",
        "iters=3",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", support::stdout(&o));
}

/// The diff shows what changed, with context, and nothing when equal.
#[test]
fn the_diff_marks_removed_and_added_lines() {
    let want = "a\nb\nc\nd\ne\nf\ng\nh\ni\n";
    let got = "a\nb\nc\nd\nE\nf\ng\nh\ni\nj\n";
    assert_eq!(
        diff(want, got),
        "  ...\n  b\n  c\n  d\n- e\n+ E\n  f\n  g\n  h\n  i\n+ j\n"
    );
    assert_eq!(diff(want, want), "");
    assert_eq!(
        diff("x\n", "x"),
        "(the files differ in the newline at the end)\n"
    );
}
