//! `[[node.memcpy_segments]]` and `[[node.reduce_segments]]`: a copy's and
//! a reduction's cost by their size.

use approx::assert_relative_eq;
use models::LogGpMachine;
use models::config::write;
use sim_core::model::{Machine, MachineDesc};

const BASE: &str = r#"
name = "t"
model = "hardware"
[node]
memcpy = "1 GB/s"
reduce_op = "500 MB/s"
reduce_overhead = "0.1 us"
[network]
latency = "1 us"
bandwidth = "1 GB/s"
eager_limit = "64 KiB"
"#;

const SEGMENTS: &str = r#"
[[node.memcpy_segments]]
from = "1 KiB"
overhead = "0.01 us"
bandwidth = "200 GB/s"

[[node.memcpy_segments]]
from = "32 KiB"
bandwidth = "40 GB/s"

[[node.memcpy_segments]]
from = "1 MiB"
bandwidth = "10 GB/s"

[[node.reduce_segments]]
from = "0 B"
overhead = "0.05 us"
bandwidth = "40 GB/s"

[[node.reduce_segments]]
from = "512 KiB"
bandwidth = "unlimited"
"#;

fn load(extra: &str) -> Result<LogGpMachine, String> {
    LogGpMachine::from_toml_str(&format!("{BASE}{extra}"), "t.toml").map_err(|e| e.to_string())
}

#[test]
fn a_library_copy_costs_what_the_segment_of_its_size_says() {
    let m = load(SEGMENTS).expect("loads");
    let run = m.start(1);
    // Below the first segment: node.memcpy.
    assert_relative_eq!(
        run.library_copy_seconds(0, 1000),
        1000.0 / 1e9,
        max_relative = 1e-12
    );
    // The program's own copies stay at node.memcpy, whatever their size.
    assert_relative_eq!(
        run.copy_seconds(0, 32768),
        32768.0 / 1e9,
        max_relative = 1e-12
    );
    // [1 KiB, 32 KiB): 0.01 us + n / 200 GB/s.
    assert_relative_eq!(
        run.library_copy_seconds(0, 1024),
        0.01e-6 + 1024.0 / 200e9,
        max_relative = 1e-12
    );
    assert_relative_eq!(
        run.library_copy_seconds(0, 32767),
        0.01e-6 + 32767.0 / 200e9,
        max_relative = 1e-12
    );
    // [32 KiB, 1 MiB): n / 40 GB/s; from 1 MiB: n / 10 GB/s, also far past it.
    assert_relative_eq!(
        run.library_copy_seconds(0, 32768),
        32768.0 / 40e9,
        max_relative = 1e-12
    );
    assert_relative_eq!(
        run.library_copy_seconds(0, 1 << 20),
        (1u64 << 20) as f64 / 10e9,
        max_relative = 1e-12
    );
    assert_relative_eq!(
        run.library_copy_seconds(0, 1 << 30),
        (1u64 << 30) as f64 / 10e9,
        max_relative = 1e-12
    );
}

#[test]
fn a_reduction_costs_what_the_segment_of_its_size_says() {
    let m = load(SEGMENTS).expect("loads");
    let run = m.start(1);
    // The segment's overhead replaces reduce_overhead.
    assert_relative_eq!(
        run.reduce_seconds(0, 4096),
        0.05e-6 + 4096.0 / 40e9,
        max_relative = 1e-12
    );
    // "unlimited": no cost per byte.
    assert_relative_eq!(run.reduce_seconds(0, 1 << 20), 0.0, epsilon = 1e-18);
    // Without segments: reduce_overhead + n / reduce_op, as before.
    let m = load("").expect("loads");
    assert_relative_eq!(
        m.start(1).reduce_seconds(0, 4096),
        0.1e-6 + 4096.0 / 500e6,
        max_relative = 1e-12
    );
}

#[test]
fn bad_segments_name_the_key() {
    let e = load("[[node.memcpy_segments]]\nfrom = \"1 KiB\"\n").expect_err("refused");
    assert!(e.contains("node.memcpy_segments[0].bandwidth"), "{e}");
    let e = load(
        "[[node.reduce_segments]]\nfrom = \"1 KiB\"\nbandwidth = \"1 GB/s\"\n\
         [[node.reduce_segments]]\nfrom = \"1 KiB\"\nbandwidth = \"1 GB/s\"\n",
    )
    .expect_err("refused");
    assert!(e.contains("node.reduce_segments[1].from"), "{e}");
    let e = load("[[node.memcpy_segments]]\nfrom = \"1 KiB\"\nbandwidth = \"0 GB/s\"\n")
        .expect_err("refused");
    assert!(e.contains("node.memcpy_segments[0].bandwidth"), "{e}");
    let e = load(
        "[[node.memcpy_segments]]\nfrom = \"1 KiB\"\nbandwidth = \"1 GB/s\"\nlatency = \"1 us\"\n",
    )
    .expect_err("refused");
    assert!(e.contains("latency"), "{e}");
    let e = load("[node.memcpy_segments]\nfrom = \"1 KiB\"\n").expect_err("refused");
    assert!(e.contains("node.memcpy_segments"), "{e}");
}

#[test]
fn segments_survive_a_write_and_a_read() {
    let m = load(SEGMENTS).expect("loads");
    let spec = m.spec();
    let text = write::machine_file(&write::MachineFile {
        header: Vec::new(),
        name: "t".into(),
        description: "t".into(),
        model: spec.model,
        node: spec.node.clone(),
        network: None,
        shm: None,
        socket: None,
        collectives: Vec::new(),
    });
    let text = format!(
        "{text}\n[network]\nlatency = \"1 us\"\nbandwidth = \"1 GB/s\"\neager_limit = \"64 KiB\"\n"
    );
    let again = LogGpMachine::from_toml_str(&text, "again.toml").expect("reads back");
    let (a, b) = (&spec.node, &again.spec().node);
    assert_eq!(a.memcpy_segments.len(), b.memcpy_segments.len());
    assert_eq!(a.reduce_segments.len(), b.reduce_segments.len());
    for (x, y) in a
        .memcpy_segments
        .iter()
        .chain(&a.reduce_segments)
        .zip(b.memcpy_segments.iter().chain(&b.reduce_segments))
    {
        assert_eq!(x.from, y.from);
        assert_relative_eq!(x.overhead, y.overhead, max_relative = 1e-6, epsilon = 1e-15);
        assert_relative_eq!(x.per_byte, y.per_byte, max_relative = 1e-6, epsilon = 1e-20);
    }
}
