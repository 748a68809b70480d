//! Golden files: every `tests/golden/NAME.mpl` compiles to `NAME.dot`
//! (a valid program, rendered with `sim_core::dot::to_dot`) or fails with
//! the diagnostics in `NAME.err` (rendered with `Diagnostics::render`).
//!
//! `UPDATE_GOLDEN=1 cargo test -p frontend --test golden` rewrites the
//! expected files; otherwise any difference fails the test.

use std::fs;
use std::path::{Path, PathBuf};

mod common;

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

#[test]
fn golden_files() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1");
    let dir = golden_dir();
    let mut inputs: Vec<PathBuf> = fs::read_dir(&dir)
        .expect("tests/golden exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "mpl"))
        .collect();
    inputs.sort();
    assert!(inputs.len() >= 14, "golden inputs are missing: {inputs:?}");
    let mut failures = Vec::new();
    for input in &inputs {
        let source = fs::read_to_string(input).expect("golden input is readable");
        let file_name = input
            .file_name()
            .and_then(|n| n.to_str())
            .expect("golden file names are UTF-8");
        let expect_error = file_name.starts_with("err_");
        let (actual, ext) = match frontend::compile(file_name, &source) {
            Ok(program) => {
                common::check_invariants(&program);
                (sim_core::dot::to_dot(&program), "dot")
            }
            Err(diags) => (diags.render(file_name, &source), "err"),
        };
        if expect_error != (ext == "err") {
            failures.push(format!(
                "{file_name}: expected {}, got:\n{actual}",
                if expect_error { "errors" } else { "a program" }
            ));
            continue;
        }
        let expected_path = input.with_extension(ext);
        if update {
            fs::write(&expected_path, &actual).expect("golden output is writable");
            continue;
        }
        match fs::read_to_string(&expected_path) {
            Ok(expected) if expected == actual => {}
            Ok(expected) => failures.push(format!(
                "{}: output differs (rerun with UPDATE_GOLDEN=1 to accept)\n--- expected\n{expected}\n+++ actual\n{actual}",
                expected_path.display()
            )),
            Err(_) => failures.push(format!(
                "{} is missing (rerun with UPDATE_GOLDEN=1 to create it)",
                expected_path.display()
            )),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The two programs of the issue parse exactly as written there.
#[test]
fn issue_examples_are_verbatim() {
    let heat = fs::read_to_string(golden_dir().join("heat.mpl")).expect("heat.mpl");
    assert!(heat.contains(
        "kernel stencil(rows, cols) cost 4.0e-9 * rows * cols   // seconds; calibration can replace it"
    ));
    let pingpong = fs::read_to_string(golden_dir().join("pingpong.mpl")).expect("pingpong.mpl");
    assert!(pingpong.contains("print(\"pingpong\", bytes, (wtime() - t0) / (2 * reps) * 1e6)"));
}
