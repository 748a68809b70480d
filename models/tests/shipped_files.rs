//! The machine files shipped in `examples/machines/` load, and the default
//! file agrees with `LogGpMachine::builtin_default()`.

use std::path::PathBuf;

use approx::assert_relative_eq;
use models::{ChannelParams, CommModel, LogGpMachine, Placement};
use sim_core::model::{Machine, MachineDesc};

fn machine_file(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/machines")
        .join(name)
}

fn load(name: &str) -> LogGpMachine {
    match LogGpMachine::load(machine_file(name)) {
        Ok(machine) => machine,
        Err(err) => panic!("{name} does not load: {err}"),
    }
}

fn assert_channels_agree(a: &ChannelParams, b: &ChannelParams) {
    assert_relative_eq!(a.latency, b.latency, max_relative = 1e-12);
    assert_relative_eq!(a.send_overhead, b.send_overhead, max_relative = 1e-12);
    assert_relative_eq!(a.recv_overhead, b.recv_overhead, max_relative = 1e-12);
    assert_relative_eq!(a.gap, b.gap, max_relative = 1e-12);
    assert_relative_eq!(a.gap_per_byte, b.gap_per_byte, max_relative = 1e-12);
    assert_eq!(a.mtu, b.mtu);
    assert_eq!(a.eager_limit, b.eager_limit);
    assert_eq!(a.control_bytes, b.control_bytes);
}

#[test]
fn default_file_agrees_with_builtin() {
    let file = load("default-infiniband.toml");
    let builtin = LogGpMachine::builtin_default();
    let (f, b) = (file.spec(), builtin.spec());
    assert_eq!(f.name, b.name);
    assert_eq!(f.description, b.description);
    assert_eq!(f.model, b.model);
    assert_relative_eq!(f.node.cpu_rate, b.node.cpu_rate);
    assert_relative_eq!(
        f.node.memcpy_bandwidth,
        b.node.memcpy_bandwidth,
        max_relative = 1e-12
    );
    assert_eq!(f.node.ranks_per_node, b.node.ranks_per_node);
    assert_eq!(f.node.placement, b.node.placement);
    assert_channels_agree(&f.network, &b.network);
    match (&f.shm, &b.shm) {
        (Some(fs), Some(bs)) => assert_channels_agree(fs, bs),
        other => panic!("shm sections differ: {other:?}"),
    }
}

#[test]
fn builtin_default_numbers() {
    let machine = LogGpMachine::builtin_default();
    let net = machine.network();
    // ~1 us end to end: o_s + L + o_r.
    assert_relative_eq!(
        net.send_overhead + net.latency + net.recv_overhead,
        1.0e-6,
        max_relative = 1e-12
    );
    assert_relative_eq!(net.bandwidth(), 24.0e9, max_relative = 1e-12);
    assert_eq!(net.mtu, None);
    assert_eq!(net.eager_limit, 65_536);
    assert_eq!(machine.ranks_per_node(), 64);
    assert_eq!(machine.node().placement, Placement::Block);
    assert_eq!(machine.model(), CommModel::Smp);
    let shm = machine
        .shm()
        .expect("the default machine has shared-memory parameters");
    assert_relative_eq!(
        shm.send_overhead + shm.latency + shm.recv_overhead,
        0.3e-6,
        max_relative = 1e-12
    );
    assert_relative_eq!(shm.bandwidth(), 10.0e9, max_relative = 1e-12);
    // The built-in spec passes the same validation as a file.
    assert!(LogGpMachine::new(LogGpMachine::builtin_spec()).is_ok());
}

#[test]
fn paper_networks_load_with_their_parameters() {
    // (file, latency l, bandwidth b, MTU) from the ParJava paper, section 4.1.
    let cases = [
        ("myrinet.toml", 30e-6, 200e6, Some(9 * 1024)),
        ("fast-ethernet.toml", 160e-6, 10e6, Some(1500)),
        ("sci.toml", 4e-6, 300e6, None),
    ];
    for (file, latency, bandwidth, mtu) in cases {
        let machine = load(file);
        assert_eq!(machine.model(), CommModel::Smp, "{file}");
        assert_eq!(machine.ranks_per_node(), 2, "{file}");
        let net = machine.network().clone();
        // ParJava: Time(Post(0)) = d_p(0) = l, all of it latency.
        assert_relative_eq!(net.post_time(0), latency, max_relative = 1e-12);
        assert_relative_eq!(net.latency, latency, max_relative = 1e-12);
        assert_relative_eq!(net.bandwidth(), bandwidth, max_relative = 1e-12);
        assert_eq!(net.mtu, mtu, "{file}");
        // ParJava's k = 4: the service message size.
        assert_eq!(net.control_bytes, 4, "{file}");
        assert!(!machine.describe().is_empty());
        let run = machine.start(8);
        assert_relative_eq!(run.compute_seconds(0, 2.0), 2.0);
        assert!(
            run.uses_shm(0, 1),
            "{file}: ranks 0 and 1 share a dual node"
        );
        assert!(!run.uses_shm(1, 2), "{file}: ranks 1 and 2 do not");
    }
}
