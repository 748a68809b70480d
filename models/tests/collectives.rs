//! `[collectives]` and `reduce_op` in machine files.

use approx::assert_relative_eq;
use models::LogGpMachine;
use sim_core::coll::{Algorithm, Library};
use sim_core::ir::CollKind;
use sim_core::model::{Machine, MachineDesc};

const BASE: &str = r#"
name = "t"
model = "hardware"
[node]
memcpy = "1 GB/s"
[network]
latency = "1 us"
bandwidth = "1 GB/s"
eager_limit = "64 KiB"
"#;

fn load(extra: &str) -> Result<LogGpMachine, String> {
    LogGpMachine::from_toml_str(&format!("{BASE}{extra}"), "t.toml").map_err(|e| e.to_string())
}

#[test]
fn default_is_mpich_with_nothing_forced() {
    let m = load("").expect("loads");
    let c = m.start(1).collectives();
    assert_eq!(c.library, Library::Mpich3);
    assert!(c.forced.is_empty());
}

#[test]
fn library_and_forced_algorithms_are_read() {
    let m = load(
        "[collectives]\nlibrary = \"openmpi\"\nalltoall = \"pairwise\"\nbcast = \"binomial\"\n",
    )
    .expect("loads");
    let c = m.start(1).collectives();
    assert_eq!(c.library, Library::OpenMpi5);
    // Under Open MPI, its own variants of the named algorithms.
    assert!(
        c.forced
            .contains(&(CollKind::Alltoall, Algorithm::OmpiPairwise))
    );
    assert!(
        c.forced
            .contains(&(CollKind::Bcast, Algorithm::OmpiBinomial))
    );
}

#[test]
fn bad_collective_entries_name_the_key() {
    let e = load("[collectives]\nlibrary = \"lam\"\n").expect_err("refused");
    assert!(e.contains("collectives.library"), "{e}");
    let e = load("[collectives]\nalltoall = \"binomial\"\n").expect_err("refused");
    assert!(
        e.contains("collectives.alltoall") && e.contains("pairwise"),
        "{e}"
    );
    let e = load("[collectives]\nalltoal = \"pairwise\"\n").expect_err("refused");
    assert!(e.contains("alltoal"), "{e}");
}

#[test]
fn reduce_op_is_a_rate_or_a_time_per_byte() {
    // Default: like memcpy (1 GB/s).
    let m = load("").expect("loads");
    assert_relative_eq!(
        m.start(1).reduce_seconds(0, 1000),
        1.0e-6,
        max_relative = 1e-12
    );
    let with_rate = BASE.replace(
        "memcpy = \"1 GB/s\"",
        "memcpy = \"1 GB/s\"\nreduce_op = \"250 MB/s\"",
    );
    let m = LogGpMachine::from_toml_str(&with_rate, "t.toml").expect("loads");
    assert_relative_eq!(
        m.start(1).reduce_seconds(0, 1000),
        4.0e-6,
        max_relative = 1e-12
    );
    let per_byte = BASE.replace(
        "memcpy = \"1 GB/s\"",
        "memcpy = \"1 GB/s\"\nreduce_op = \"2 ns/B\"",
    );
    let m = LogGpMachine::from_toml_str(&per_byte, "t.toml").expect("loads");
    assert_relative_eq!(
        m.start(1).reduce_seconds(0, 1000),
        2.0e-6,
        max_relative = 1e-12
    );
    let bad = BASE.replace(
        "memcpy = \"1 GB/s\"",
        "memcpy = \"1 GB/s\"\nreduce_op = \"fast\"",
    );
    let e = LogGpMachine::from_toml_str(&bad, "t.toml")
        .expect_err("refused")
        .to_string();
    assert!(e.contains("node.reduce_op"), "{e}");
}

#[test]
fn call_overhead_is_a_time() {
    let m = load("").expect("loads");
    assert_eq!(m.start(2).collectives().call_overhead, 0.0);
    let m = load("[collectives]\ncall_overhead = \"0.35 us\"\n").expect("loads");
    assert_relative_eq!(
        m.start(2).collectives().call_overhead,
        0.35e-6,
        max_relative = 1e-12
    );
    assert!(
        m.describe()
            .contains("0.35 us per call beyond its messages")
    );
    let e = load("[collectives]\ncall_overhead = \"-1 us\"\n").expect_err("refused");
    assert!(e.contains("collectives.call_overhead"), "{e}");
    let e = load("[collectives]\ncall_overhead = \"fast\"\n").expect_err("refused");
    assert!(e.contains("collectives.call_overhead"), "{e}");
}

#[test]
fn call_overhead_per_kind_is_a_table_of_times() {
    let m = load(
        "[collectives]\ncall_overhead = { default = \"0.15 us\", allreduce = \"0.31 us\", reduce_scatter = \"0 us\" }\n",
    )
    .expect("loads");
    let run = m.start(2);
    let c = run.collectives();
    assert_relative_eq!(c.call_overhead, 0.15e-6, max_relative = 1e-12);
    assert_relative_eq!(
        c.call_overhead_for(CollKind::Allreduce),
        0.31e-6,
        max_relative = 1e-12
    );
    assert_eq!(c.call_overhead_for(CollKind::ReduceScatter), 0.0);
    assert_relative_eq!(
        c.call_overhead_for(CollKind::Bcast),
        0.15e-6,
        max_relative = 1e-12
    );
    let d = m.describe();
    assert!(
        d.contains("0.15 us per call beyond its messages (allreduce 0.31 us, reduce_scatter 0 us)"),
        "{d}"
    );
    // The table form without a default: 0 for the kinds it does not name.
    let m = load("[collectives.call_overhead]\nbcast = \"1 us\"\n").expect("loads");
    assert_eq!(m.start(2).collectives().call_overhead, 0.0);
    let e = load("[collectives]\ncall_overhead = { allreduse = \"1 us\" }\n").expect_err("refused");
    assert!(
        e.contains("collectives.call_overhead.allreduse") && e.contains("allreduce"),
        "{e}"
    );
    let e = load("[collectives]\ncall_overhead = { gather = \"-1 us\" }\n").expect_err("refused");
    assert!(e.contains("collectives.call_overhead.gather"), "{e}");
}

#[test]
fn intel_mpi_libraries_are_read() {
    for (name, lib) in [
        ("intelmpi", Library::IntelMpi2021),
        ("intelmpi-2021", Library::IntelMpi2021),
        ("impi", Library::IntelMpi2021),
        ("intelmpi-2019", Library::IntelMpi2019),
    ] {
        let m = load(&format!("[collectives]\nlibrary = \"{name}\"\n")).expect("loads");
        assert_eq!(m.start(1).collectives().library, lib, "{name}");
    }
    let e = load("[collectives]\nlibrary = \"intelmpi-2017\"\n").expect_err("refused");
    assert!(e.contains("intelmpi-2021"), "{e}");
}
