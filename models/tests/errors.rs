//! Every kind of machine-file error names the file and the key path.

use models::{LogGpMachine, MachineError};

const GOOD: &str = r#"
name = "good"
description = "a valid file the tests break one key at a time"
model = "smp"
[node]
cpu_rate = 1.0
memcpy = "1 GB/s"
ranks_per_node = 2
placement = "block"
[network]
latency = "30 us"
bandwidth = "200 MB/s"
send_overhead = "1 us"
recv_overhead = "1 us"
gap = "0 us"
mtu = "9 KiB"
eager_limit = "64 KiB"
control_bytes = "0 B"
[shm]
latency = "1 us"
bandwidth = "1 GB/s"
eager_limit = "64 KiB"
"#;

const FILE: &str = "broken.toml";

/// `GOOD` with `from` replaced by `to` (which must occur).
fn edit(from: &str, to: &str) -> String {
    assert!(GOOD.contains(from), "test bug: {from:?} not in GOOD");
    GOOD.replacen(from, to, 1)
}

fn error(text: &str) -> MachineError {
    match LogGpMachine::from_toml_str(text, FILE) {
        Ok(_) => panic!("should be refused:\n{text}"),
        Err(err) => err,
    }
}

/// The error's message, after checking that it names the file and the key.
fn message(err: &MachineError, key: &str) -> String {
    let text = err.to_string();
    assert_eq!(err.file(), FILE);
    assert_eq!(err.key(), Some(key), "{text}");
    assert!(text.starts_with(&format!("{FILE}: ")), "{text}");
    assert!(text.contains(&format!("`{key}`")), "{text}");
    text
}

#[test]
fn the_good_file_loads() {
    assert!(LogGpMachine::from_toml_str(GOOD, FILE).is_ok());
}

#[test]
fn unknown_keys_suggest_the_closest() {
    let err = error(&edit("latency = \"30 us\"", "latncy = \"30 us\""));
    assert!(matches!(err, MachineError::UnknownKey { .. }));
    assert_eq!(
        message(&err, "network.latncy"),
        "broken.toml: unknown key `network.latncy` (did you mean `latency`?)"
    );

    let err = error(&edit("[network]", "[netwrok]"));
    assert_eq!(
        message(&err, "netwrok"),
        "broken.toml: unknown key `netwrok` (did you mean `network`?)"
    );

    let err = error(&edit("memcpy", "memcopy"));
    message(&err, "node.memcopy");

    let err = error(&edit("[shm]", "[shm]\ncolour = \"blue\""));
    assert_eq!(
        message(&err, "shm.colour"),
        "broken.toml: unknown key `shm.colour`"
    );
}

#[test]
fn bad_units_name_the_key() {
    let err = error(&edit("\"30 us\"", "\"30 parsec\""));
    assert!(matches!(err, MachineError::BadValue { .. }));
    let text = message(&err, "network.latency");
    assert!(
        text.starts_with(
            "broken.toml: key `network.latency`: expected a time such as \"30 us\", got \"30 parsec\""
        ),
        "{text}"
    );
    assert!(text.contains("unknown unit `parsec`"), "{text}");

    // A number without its unit.
    let text = message(&error(&edit("\"30 us\"", "30")), "network.latency");
    assert!(text.contains("got 30"), "{text}");

    let text = message(
        &error(&edit("\"200 MB/s\"", "\"200 Mb/s\"")),
        "network.bandwidth",
    );
    assert!(text.contains("ambiguous"), "{text}");

    message(&error(&edit("\"9 KiB\"", "\"9 KB/s\"")), "network.mtu");
    message(&error(&edit("\"1 GB/s\"", "\"1 GB\"")), "node.memcpy");
    message(
        &error(&edit("\"64 KiB\"", "\"64 kibibytes\"")),
        "network.eager_limit",
    );
    message(
        &error(&edit("control_bytes = \"0 B\"", "control_bytes = \"0\"")),
        "network.control_bytes",
    );
}

#[test]
fn bad_values_name_the_key() {
    message(
        &error(&edit("\"block\"", "\"round-robin\"")),
        "node.placement",
    );
    message(
        &error(&edit("model = \"smp\"", "model = \"cluster\"")),
        "model",
    );
    message(
        &error(&edit("ranks_per_node = 2", "ranks_per_node = 2.5")),
        "node.ranks_per_node",
    );
    message(
        &error(&edit("cpu_rate = 1.0", "cpu_rate = \"fast\"")),
        "node.cpu_rate",
    );
    message(&error(&edit("name = \"good\"", "name = 7")), "name");
    // A section that is not a table.
    let cut = GOOD.find("[shm]").map_or(GOOD.len(), |at| at);
    let text = GOOD[..cut].replacen("model = \"smp\"\n", "model = \"smp\"\nshm = 5\n", 1);
    let text = message(&error(&text), "shm");
    assert!(text.contains("expected a table `[shm]`, got 5"), "{text}");
}

#[test]
fn missing_keys_are_named() {
    let err = error(&edit("latency = \"30 us\"\n", ""));
    assert!(matches!(err, MachineError::MissingKey { .. }));
    assert_eq!(
        message(&err, "network.latency"),
        "broken.toml: missing required key `network.latency`"
    );

    let text = message(
        &error(&edit("bandwidth = \"200 MB/s\"\n", "")),
        "network.bandwidth",
    );
    assert!(text.contains("network.gap_per_byte"), "{text}");

    message(&error(&edit("memcpy = \"1 GB/s\"\n", "")), "node.memcpy");
    message(&error(&edit("name = \"good\"\n", "")), "name");
    message(&error(&edit("model = \"smp\"\n", "")), "model");

    // model = "smp" with 2 ranks per node needs [shm].
    let cut = GOOD.find("[shm]").map_or(GOOD.len(), |at| at);
    message(&error(&GOOD[..cut]), "shm");
    // ... but not with 1 rank per node, nor in the Hardware model.
    let one_per_node = GOOD[..cut].replace("ranks_per_node = 2", "ranks_per_node = 1");
    assert!(LogGpMachine::from_toml_str(&one_per_node, FILE).is_ok());
    let hardware = one_per_node.replace("model = \"smp\"", "model = \"hardware\"");
    assert!(LogGpMachine::from_toml_str(&hardware, FILE).is_ok());
}

#[test]
fn bandwidth_and_gap_per_byte_exclude_each_other() {
    let err = error(&edit(
        "bandwidth = \"200 MB/s\"",
        "bandwidth = \"200 MB/s\"\ngap_per_byte = \"5 ns\"",
    ));
    assert!(matches!(err, MachineError::Conflict { .. }));
    let text = message(&err, "network.bandwidth");
    assert!(text.contains("`network.gap_per_byte`"), "{text}");
    // gap_per_byte alone is the same machine as 200 MB/s.
    let alone = edit("bandwidth = \"200 MB/s\"", "gap_per_byte = \"5 ns\"");
    let machine = match LogGpMachine::from_toml_str(&alone, FILE) {
        Ok(machine) => machine,
        Err(err) => panic!("{err}"),
    };
    approx::assert_relative_eq!(machine.network().bandwidth(), 200e6, max_relative = 1e-12);
}

#[test]
fn out_of_range_values_name_the_key() {
    let cases = [
        (("\"30 us\"", "\"-1 us\""), "network.latency"),
        (
            ("send_overhead = \"1 us\"", "send_overhead = \"-1 ns\""),
            "network.send_overhead",
        ),
        (("\"200 MB/s\"", "\"0 MB/s\""), "network.bandwidth"),
        (("\"200 MB/s\"", "\"-5 MB/s\""), "network.bandwidth"),
        (("\"1 GB/s\"", "\"0 GB/s\""), "node.memcpy"),
        (("cpu_rate = 1.0", "cpu_rate = 0"), "node.cpu_rate"),
        (("cpu_rate = 1.0", "cpu_rate = -2.5"), "node.cpu_rate"),
        (("cpu_rate = 1.0", "cpu_rate = nan"), "node.cpu_rate"),
        (
            ("ranks_per_node = 2", "ranks_per_node = 0"),
            "node.ranks_per_node",
        ),
        (
            ("ranks_per_node = 2", "ranks_per_node = -3"),
            "node.ranks_per_node",
        ),
        (
            ("ranks_per_node = 2", "ranks_per_node = 5000000000"),
            "node.ranks_per_node",
        ),
        (("\"9 KiB\"", "\"0 B\""), "network.mtu"),
        (
            (
                "eager_limit = \"64 KiB\"\ncontrol",
                "eager_limit = \"0.5 B\"\ncontrol",
            ),
            "network.eager_limit",
        ),
        (
            (
                "eager_limit = \"64 KiB\"\ncontrol",
                "eager_limit = \"-1 KiB\"\ncontrol",
            ),
            "network.eager_limit",
        ),
    ];
    for ((from, to), key) in cases {
        let err = error(&edit(from, to));
        assert!(
            matches!(err, MachineError::OutOfRange { .. }),
            "{key}: {err}"
        );
        message(&err, key);
    }
    // The Hardware model has one rank per node.
    let err = error(&edit("model = \"smp\"", "model = \"hardware\""));
    let text = message(&err, "node.ranks_per_node");
    assert!(text.contains("hardware"), "{text}");
}

#[test]
fn syntax_and_io_errors_name_the_file() {
    let err = error("name = \"unterminated\n");
    assert!(matches!(err, MachineError::Syntax { .. }));
    assert!(err.to_string().starts_with("broken.toml: "), "{err}");
    assert_eq!(err.key(), None);

    let missing = std::env::temp_dir().join("parsim-no-such-machine-file.toml");
    match LogGpMachine::load(&missing) {
        Ok(_) => panic!("a missing file loads"),
        Err(err) => {
            assert!(matches!(err, MachineError::Io { .. }));
            assert!(
                err.to_string().contains("parsim-no-such-machine-file.toml"),
                "{err}"
            );
        }
    }
}

#[test]
fn specs_built_in_code_are_validated() {
    let mut spec = LogGpMachine::builtin_spec();
    spec.network.latency = -1.0;
    match LogGpMachine::new(spec) {
        Ok(_) => panic!("negative latency accepted"),
        Err(err) => assert_eq!(err.key(), Some("network.latency"), "{err}"),
    }
    let mut spec = LogGpMachine::builtin_spec();
    spec.shm = None;
    match LogGpMachine::new(spec) {
        Ok(_) => panic!("smp without shm accepted"),
        Err(err) => assert_eq!(err.key(), Some("shm"), "{err}"),
    }
    let mut spec = LogGpMachine::builtin_spec();
    spec.network.mtu = Some(0);
    assert!(LogGpMachine::new(spec).is_err());
}

#[test]
fn wrong_values_are_reported_before_missing_keys() {
    // No name, no [node], no bandwidth: the bad unit is still what is reported.
    let text = "model = \"hardware\"\n[network]\nlatency = \"30 parsec\"\n";
    let err = error(text);
    assert!(matches!(err, MachineError::BadValue { .. }), "{err}");
    message(&err, "network.latency");
    // With the value fixed, the first missing key (in walking order) is reported.
    let err = error("model = \"hardware\"\n[network]\nlatency = \"30 us\"\n");
    message(&err, "name");
}
