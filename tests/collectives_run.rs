//! Every collective, on the world and on split communicators, runs to the
//! end under both libraries' selection rules at many process counts and
//! message sizes (so every algorithm the selectors pick meets the engine),
//! deterministically.

mod support;

use std::path::PathBuf;

/// The test machine with `library`'s collectives, written in `dir`.
fn machine(dir: &support::TempDir, library: &str) -> PathBuf {
    let text = format!(
        "name = \"{library}\"\nmodel = \"smp\"\n[node]\nmemcpy = \"5 GB/s\"\nranks_per_node = 4\n\
         [network]\nlatency = \"2 us\"\nbandwidth = \"10 GB/s\"\neager_limit = \"64 KiB\"\n\
         [shm]\nlatency = \"0.5 us\"\nbandwidth = \"20 GB/s\"\neager_limit = \"64 KiB\"\n\
         [collectives]\nlibrary = \"{library}\"\n"
    );
    dir.file("machine.toml", &text)
}

fn run(library: &str, ranks: u32, bytes: u64) -> String {
    let dir = support::temp_dir();
    let m = machine(&dir, library);
    let o = support::parsim_command()
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

#[test]
fn open_mpi_5_allreduce_crosses_nodes_only_between_the_leaders() {
    // 8 ranks, 4 per node (block placement): Open MPI 5's han reduces on
    // each node (tuned's binary tree: 3 messages), the leaders 0 and 4
    // reduce and broadcast between them (libnbc: 1 message each way), and
    // each node broadcasts (binary tree: 3 messages): 14 messages, and only
    // ranks 0 and 4 talk across nodes. (MPICH 3's flat recursive doubling
    // sends 24 messages, 8 of them across nodes.)
    let dir = support::temp_dir();
    let m = machine(&dir, "openmpi-5");
    let prog = dir.file("allreduce.mpl", "allreduce(bytes: 8)\n");
    let csv = dir.join("matrix.csv");
    let o = support::parsim_command()
        .arg("run")
        .arg(&prog)
        .args(["--ranks", "8", "--machine"])
        .arg(&m)
        .arg("--comm-matrix")
        .arg(&csv)
        .output()
        .expect("runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&csv).expect("csv written");
    let mut total = 0u64;
    let mut crossing = Vec::new();
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let (src, dst): (u32, u32) = (f[0].parse().expect("src"), f[1].parse().expect("dst"));
        let msgs: u64 = f[2].parse().expect("messages");
        total += msgs;
        if src / 4 != dst / 4 {
            crossing.push((src, dst, msgs, f[3].to_string()));
        }
    }
    assert_eq!(total, 14, "{text}");
    crossing.sort();
    assert_eq!(
        crossing,
        vec![(0, 4, 1, "8".to_string()), (4, 0, 1, "8".to_string())],
        "{text}"
    );
}

#[test]
fn every_collective_completes_under_intel_mpi() {
    // Node-aware (4 ranks per node): the table's compositions run on the
    // node and node-leader communicators.
    for library in ["intelmpi", "intelmpi-2019"] {
        for ranks in [1, 2, 3, 5, 8, 12, 17] {
            for bytes in [8, 4096, 100_000, 1_048_576] {
                run(library, ranks, bytes);
            }
        }
    }
    assert_eq!(run("intelmpi", 12, 3000), run("intelmpi", 12, 3000));
}
