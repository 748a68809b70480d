//! Every collective, on the world and on split communicators, runs to the
//! end under both libraries' selection rules at many process counts and
//! message sizes (so every algorithm the selectors pick meets the engine),
//! deterministically.

use std::path::PathBuf;
use std::process::Command;

fn machine(library: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("collectives_run");
    std::fs::create_dir_all(&dir).expect("dir");
    let p = dir.join(format!("{library}.toml"));
    let text = format!(
        "name = \"{library}\"\nmodel = \"smp\"\n[node]\nmemcpy = \"5 GB/s\"\nranks_per_node = 4\n\
         [network]\nlatency = \"2 us\"\nbandwidth = \"10 GB/s\"\neager_limit = \"64 KiB\"\n\
         [shm]\nlatency = \"0.5 us\"\nbandwidth = \"20 GB/s\"\neager_limit = \"64 KiB\"\n\
         [collectives]\nlibrary = \"{library}\"\n"
    );
    // Written under a unique name and renamed: tests run in parallel and a
    // reader must never see a half-written file.
    let tmp = dir.join(format!("{library}.{:?}.tmp", std::thread::current().id()));
    std::fs::write(&tmp, text).expect("write");
    std::fs::rename(&tmp, &p).expect("rename");
    p
}

fn run(library: &str, ranks: u32, bytes: u64) -> String {
    let m = machine(library);
    let o = Command::new(env!("CARGO_BIN_EXE_parsim"))
        .args([
            "run",
            "frontend/tests/golden/collectives.mpl",
            "--ranks",
            &ranks.to_string(),
        ])
        .args([
            "--machine",
            m.to_str().expect("utf-8"),
            "--param",
            &format!("bytes={bytes}"),
        ])
        .args(["--format", "json"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("runs");
    assert!(
        o.status.success(),
        "{library}, {ranks} ranks, {bytes} B: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    v["wall_seconds"] = serde_json::Value::Null;
    v.to_string()
}

#[test]
fn every_collective_completes_under_both_libraries() {
    for library in ["mpich", "openmpi"] {
        for ranks in [1, 2, 3, 5, 8, 12, 17] {
            for bytes in [8, 4096, 100_000, 1_048_576] {
                run(library, ranks, bytes);
            }
        }
    }
}

#[test]
fn collectives_are_deterministic() {
    assert_eq!(run("openmpi", 13, 70_000), run("openmpi", 13, 70_000));
    assert_eq!(run("mpich", 16, 300), run("mpich", 16, 300));
}
