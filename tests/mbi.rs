//! The checker against a suite in the style of the MPI Bugs Initiative
//! (MBI: Laguna, Marchal, Saillard, Wimmer and others, "MPI Bugs Initiative:
//! a benchmark suite for MPI correctness tools", Correctness 2021):
//! `tests/mbi/*.mpl`, each with its MBI error class (or `correct`), its
//! rank count and the finding a correct tool reports (`expect: KIND`, or
//! `ok`). Every program is checked with `--explore`.
//!
//! The scores are MBI's: a true positive is an incorrect program with any
//! finding (deadlock, error or warning; `explore_incomplete` alone is
//! none), a false negative one without, a false positive a correct program
//! with a finding; recall = TP / (TP + FN), precision = TP / (TP + FP).
//! Beyond MBI's scores, the share of incorrect programs reported with the
//! expected kind is computed too. The figures are in docs/checker.md; this
//! test fails when they fall below what is recorded there, and prints every
//! miss.

mod support;

use std::path::Path;

/// What docs/checker.md records (the test fails below these).
const RECALL_AT_LEAST: f64 = 1.0;
const PRECISION_AT_LEAST: f64 = 1.0;
const RIGHT_KIND_AT_LEAST: f64 = 0.96;

struct Case {
    file: String,
    class: String,
    ranks: String,
    expect: String,
}

fn header(text: &str, key: &str, file: &str) -> String {
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("// {key}:")))
        .map(|v| v.trim().to_owned())
        .unwrap_or_else(|| panic!("{file}: no `// {key}:` line"))
}

fn cases() -> Vec<Case> {
    let dir = Path::new(support::ROOT).join("tests/mbi");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/mbi exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "mpl"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("readable");
            let file = format!(
                "tests/mbi/{}",
                p.file_name()
                    .map(|n| n.to_string_lossy())
                    .unwrap_or_default()
            );
            Case {
                class: header(&text, "mbi", &file),
                ranks: header(&text, "ranks", &file),
                expect: header(&text, "expect", &file),
                file,
            }
        })
        .collect()
}

#[test]
fn the_checker_finds_the_mbi_style_bugs() {
    let cases = cases();
    assert!(cases.len() >= 40, "{} programs", cases.len());
    let (mut tp, mut fn_, mut fp, mut tn, mut right_kind) = (0u32, 0u32, 0u32, 0u32, 0u32);
    let mut misses = Vec::new();
    for c in &cases {
        let o = support::parsim(&[
            "check",
            &c.file,
            "--ranks",
            &c.ranks,
            "--explore",
            "--format",
            "json",
        ]);
        let out = support::stdout(&o);
        let json: serde_json::Value = serde_json::from_str(&out)
            .unwrap_or_else(|e| panic!("{}: {e}: {out}{}", c.file, support::stderr(&o)));
        let kinds: Vec<String> = json["findings"]
            .as_array()
            .map(|f| {
                f.iter()
                    .filter_map(|x| x["kind"].as_str().map(str::to_owned))
                    .filter(|k| k != "explore_incomplete")
                    .collect()
            })
            .unwrap_or_default();
        let flagged = !kinds.is_empty();
        match (c.expect == "ok", flagged) {
            (true, false) => tn += 1,
            (true, true) => {
                fp += 1;
                misses.push(format!(
                    "{} ({}): correct, reported {kinds:?}",
                    c.file, c.class
                ));
            }
            (false, true) => {
                tp += 1;
                if kinds.contains(&c.expect) {
                    right_kind += 1;
                } else {
                    misses.push(format!(
                        "{} ({}): expected {}, reported {kinds:?} (counted as found)",
                        c.file, c.class, c.expect
                    ));
                }
            }
            (false, false) => {
                fn_ += 1;
                misses.push(format!(
                    "{} ({}): expected {}, reported nothing",
                    c.file, c.class, c.expect
                ));
            }
        }
    }
    let recall = f64::from(tp) / f64::from((tp + fn_).max(1));
    let precision = f64::from(tp) / f64::from((tp + fp).max(1));
    let kind_share = f64::from(right_kind) / f64::from((tp + fn_).max(1));
    eprintln!(
        "{} programs: TP {tp}, FN {fn_}, FP {fp}, TN {tn}; recall {recall:.3}, precision {precision:.3}, right kind {kind_share:.3}",
        cases.len()
    );
    for m in &misses {
        eprintln!("  {m}");
    }
    assert!(recall >= RECALL_AT_LEAST, "recall {recall:.3}");
    assert!(precision >= PRECISION_AT_LEAST, "precision {precision:.3}");
    assert!(
        kind_share >= RIGHT_KIND_AT_LEAST,
        "right kind {kind_share:.3}"
    );
}
