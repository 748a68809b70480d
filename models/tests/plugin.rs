//! The model plugin: the example plugin of `examples/plugin` is built with
//! cargo into its own target directory (offline; it has no dependencies),
//! loaded from a machine file, and its answers compared with its formula;
//! the wrong-ABI, missing-symbol and faulty builds are refused or checked.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use approx::assert_relative_eq;
use models::{AnyMachine, LogGpMachine, MachineError, PLUGIN_ABI_VERSION, load_machine};
use sim_core::model::{Machine, MessageKind};

const US: f64 = 1e-6;

fn plugin_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/plugin")
}

/// Builds the example plugin with `features` into
/// `CARGO_TARGET_TMPDIR/plugin-<variant>` (a target directory of its own, so
/// the outer cargo's lock is not taken) and returns that directory.
fn build(variant: &str, features: &str) -> PathBuf {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("plugin-{variant}"));
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .args([
            "build",
            "--offline",
            "--locked",
            "--quiet",
            "--manifest-path",
        ])
        .arg(plugin_dir().join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target);
    if !features.is_empty() {
        command.args(["--features", features]);
    }
    let output = match command.output() {
        Ok(output) => output,
        Err(err) => panic!("cannot run cargo to build the plugin: {err}"),
    };
    assert!(
        output.status.success(),
        "building the plugin ({variant}) failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    target
}

/// The library's path relative to its target directory.
fn library_in_target() -> String {
    format!(
        "debug/{}parsim_torus_model{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    )
}

/// The target directory of a variant, built once per test process.
fn built(variant: &'static str) -> &'static Path {
    static DEFAULT: OnceLock<PathBuf> = OnceLock::new();
    static WRONG_ABI: OnceLock<PathBuf> = OnceLock::new();
    static MISSING_SYMBOL: OnceLock<PathBuf> = OnceLock::new();
    static FAULTY: OnceLock<PathBuf> = OnceLock::new();
    let (cell, features) = match variant {
        "default" => (&DEFAULT, ""),
        "wrong-abi" => (&WRONG_ABI, "wrong-abi"),
        "missing-symbol" => (&MISSING_SYMBOL, "missing-symbol"),
        "faulty" => (&FAULTY, "faulty"),
        _ => panic!("test bug: unknown variant {variant}"),
    };
    cell.get_or_init(|| build(variant, features))
}

/// The test machine's parameters: a = 2.5 us, h = 0.1 us, 100 MB/s
/// (b = 10 ns/B), o = 1 us, eager limit 4096 B, control messages 32 B,
/// cpu_rate 2, memcpy 1 GB/s, on a 4 x 4 torus.
const PARAMS: &str = r#"
[plugin.params]
dims = "4x4"
latency = 2.5e-6
per_hop = 1e-7
bandwidth = "1e8"
overhead = 1e-6
eager_limit = 4096
control_bytes = 32
cpu_rate = 2.0
memcpy = 1e9
"#;

/// Writes a machine file into the variant's target directory, naming the
/// library relative to it, and returns its path.
fn machine_file(variant: &'static str, name: &str, params: &str) -> PathBuf {
    let dir = built(variant);
    let text = format!(
        "name = \"torus-test\"\ndescription = \"the example plugin\"\nmodel = \"plugin\"\n\
         [plugin]\nlibrary = \"{}\"\n{params}",
        library_in_target()
    );
    let path = dir.join(name);
    if let Err(err) = std::fs::write(&path, text) {
        panic!("cannot write {}: {err}", path.display());
    }
    path
}

fn load_ok(path: &Path) -> AnyMachine {
    match load_machine(path) {
        Ok(machine) => machine,
        Err(err) => panic!("{} does not load: {err}", path.display()),
    }
}

fn load_err(path: &Path) -> MachineError {
    match load_machine(path) {
        Ok(_) => panic!("{} should be refused", path.display()),
        Err(err) => err,
    }
}

/// Torus distance on 4 x 4, node = x + 4·y.
fn hops(a: u32, b: u32) -> u32 {
    let ring = |p: u32, q: u32| {
        let d = p.abs_diff(q);
        d.min(4 - d)
    };
    ring(a % 4, b % 4) + ring(a / 4, b / 4)
}

/// The plugin's formula: T(n) = a + hops·h + n·b.
fn hockney(src: u32, dst: u32, bytes: u64) -> f64 {
    2.5 * US + f64::from(hops(src, dst)) * 0.1 * US + bytes as f64 * 1e-8
}

#[test]
fn plugin_answers_follow_its_formula() {
    let path = machine_file("default", "formula.toml", PARAMS);
    let machine = load_ok(&path);
    assert!(machine.as_plugin().is_some());
    assert_eq!(machine.name(), "torus-test");
    assert_eq!(machine.description(), "the example plugin");
    let text = machine.describe();
    assert!(text.contains("parsim_torus_model"), "{text}");
    assert!(text.contains("C ABI version 1"), "{text}");
    assert!(text.contains("dims = \"4x4\""), "{text}");
    // A float parameter is passed as the shortest text that reads back.
    assert!(text.contains("latency = \"2.5e-6\""), "{text}");
    assert!(text.contains("eager_limit = \"4096\""), "{text}");

    let mut machine = machine.start(16);
    assert_relative_eq!(machine.compute_seconds(3, 3.0), 1.5);
    assert_relative_eq!(
        machine.copy_seconds(3, 1000),
        1.0 * US,
        max_relative = 1e-12
    );
    assert_eq!(machine.eager_limit(0, 5), 4096);
    assert_eq!(machine.control_bytes(0, 5), 32);
    assert_relative_eq!(
        machine.send_overhead(0, 5, 10),
        1.0 * US,
        max_relative = 1e-12
    );
    assert_relative_eq!(
        machine.recv_overhead(0, 5, 10),
        1.0 * US,
        max_relative = 1e-12
    );

    // From idle links, every pair of the 4 x 4 torus: arrival = ready + T(n),
    // the sender's buffer free after n·b.
    for src in 0..16 {
        for dst in 0..16 {
            machine.reset(16);
            let tr = machine.transfer(src, dst, 1000, MessageKind::Eager, 1.0);
            assert_relative_eq!(
                tr.arrival,
                1.0 + hockney(src, dst, 1000),
                max_relative = 1e-12
            );
            assert_relative_eq!(tr.cpu_free, 1.0 + 10.0 * US, max_relative = 1e-12);
        }
    }
    // Hand-computed: 0 = (0,0) to 10 = (2,2) is 4 hops; 1000 B:
    // 2.5 + 0.4 + 10 = 12.9 us.
    machine.reset(16);
    let first = machine.transfer(0, 10, 1000, MessageKind::Eager, 0.0);
    assert_relative_eq!(first.arrival, 12.9 * US, max_relative = 1e-12);
    // 0 to 3 = (3,0) wraps around: 1 hop. Rank 0's link is busy until
    // 10 us: arrival = 10 + 2.5 + 0.1 us.
    let second = machine.transfer(0, 3, 0, MessageKind::Eager, 0.0);
    assert_relative_eq!(second.arrival, 12.6 * US, max_relative = 1e-12);
    assert_relative_eq!(second.cpu_free, 10.0 * US, max_relative = 1e-12);
    // 12 = (0,3) to 0: 1 hop; 5 = (1,1) to 15 = (3,3): 4 hops.
    assert_eq!((hops(12, 0), hops(5, 15)), (1, 4));
    let wrap = machine.transfer(12, 0, 0, MessageKind::RendezvousRts, 0.0);
    assert_relative_eq!(wrap.arrival, 2.6 * US, max_relative = 1e-12);
    assert_eq!(machine.violations(), 0);
    assert!(machine.violation().is_none());
}

#[test]
fn a_plugin_changes_predictions() {
    // A LogGP machine with the plugin's a and b (L = 2.5 us, 100 MB/s, no
    // overheads) predicts the same time for every pair; the plugin adds the
    // hop term.
    let loggp_text = r#"
name = "flat"
model = "hardware"
[node]
memcpy = "1 GB/s"
[network]
latency = "2.5 us"
bandwidth = "100 MB/s"
eager_limit = "4 KiB"
"#;
    let loggp = match AnyMachine::from_toml_str(loggp_text, "flat.toml", Path::new(".")) {
        Ok(machine) => machine,
        Err(err) => panic!("{err}"),
    };
    let plugin = load_ok(&machine_file("default", "changes.toml", PARAMS));
    for (src, dst) in [(0, 1), (0, 10), (5, 15), (12, 0)] {
        let mut loggp = loggp.start(16);
        let mut plugin = plugin.start(16);
        let flat = loggp.transfer(src, dst, 1000, MessageKind::Eager, 0.0);
        let torus = plugin.transfer(src, dst, 1000, MessageKind::Eager, 0.0);
        assert_relative_eq!(flat.arrival, 12.5 * US, max_relative = 1e-12);
        assert_relative_eq!(
            torus.arrival - flat.arrival,
            f64::from(hops(src, dst)) * 0.1 * US,
            max_relative = 1e-9
        );
    }
}

#[test]
fn a_plugin_out_of_range_rank_is_recorded_not_fatal() {
    let path = machine_file("default", "range.toml", PARAMS);
    let machine = load_ok(&path);
    let mut machine = machine.start(4);
    // Rank 7 is outside the run: the plugin returns an error code.
    let tr = machine.transfer(7, 0, 8, MessageKind::Eager, 2.0);
    assert_eq!((tr.cpu_free, tr.arrival), (2.0, 2.0));
    assert_eq!(machine.violations(), 1);
    let violation = machine.violation().map(ToString::to_string);
    let text = violation.unwrap_or_default();
    assert!(
        text.contains("parsim_model_transfer(src 7, dst 0, 8 B, eager"),
        "{text}"
    );
    assert!(text.contains("returned error code 1"), "{text}");
    // A reset starts over.
    machine.reset(4);
    assert_eq!(machine.violations(), 0);
}

#[test]
fn wrong_abi_version_is_refused() {
    let path = machine_file("wrong-abi", "wrong-abi.toml", PARAMS);
    let err = load_err(&path);
    assert!(
        matches!(
            err,
            MachineError::PluginAbi {
                found: 999,
                expected: PLUGIN_ABI_VERSION,
                ..
            }
        ),
        "{err}"
    );
    let text = err.to_string();
    assert!(text.starts_with(&path.display().to_string()), "{text}");
    assert!(text.contains("parsim_torus_model"), "{text}");
    assert!(
        text.contains("implements parsim model ABI version 999, but this parsim needs version 1"),
        "{text}"
    );
    assert_eq!(err.key(), Some("plugin.library"));
}

#[test]
fn a_missing_symbol_is_named() {
    let path = machine_file("missing-symbol", "missing.toml", PARAMS);
    let err = load_err(&path);
    assert!(matches!(err, MachineError::PluginSymbol { .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("does not export `parsim_model_copy_seconds`"),
        "{text}"
    );
}

#[test]
fn create_errors_carry_the_plugin_message() {
    let bad_dims = PARAMS.replace("\"4x4\"", "\"4xq\"");
    let err = load_err(&machine_file("default", "bad-dims.toml", &bad_dims));
    assert!(matches!(err, MachineError::PluginCreate { .. }), "{err}");
    assert_eq!(err.key(), Some("plugin.params"));
    let text = err.to_string();
    assert!(text.contains("refused its parameters"), "{text}");
    assert!(
        text.contains("dims: expected dimensions such as \"4x4\", got \"4xq\""),
        "{text}"
    );
    let unknown = format!("{PARAMS}colour = \"blue\"\n");
    let text = load_err(&machine_file("default", "unknown.toml", &unknown)).to_string();
    assert!(text.contains("unknown parameter `colour`"), "{text}");
    let negative = PARAMS.replace("per_hop = 1e-7", "per_hop = -1");
    let text = load_err(&machine_file("default", "negative.toml", &negative)).to_string();
    assert!(text.contains("per_hop: must not be negative"), "{text}");
}

#[test]
fn bad_results_are_clamped_and_recorded() {
    // The `faulty` build returns bad values for some sizes (see its source).
    let path = machine_file("faulty", "faulty.toml", PARAMS);
    let machine = load_ok(&path);
    let mut machine = machine.start(16);
    // 13 B: arrival NaN -> ready.
    let tr = machine.transfer(0, 1, 13, MessageKind::Eager, 1.0);
    assert_eq!(tr.arrival, 1.0);
    let first = machine
        .violation()
        .map(ToString::to_string)
        .unwrap_or_default();
    assert!(
        first.contains("parsim_model_transfer(src 0, dst 1, 13 B, eager, ready 1 s)"),
        "{first}"
    );
    assert!(
        first.contains("gave arrival NaN, not a finite time at or after ready"),
        "{first}"
    );
    assert!(first.contains("parsim used 1 s instead"), "{first}");
    // 14 B: arrival before ready -> ready.
    let tr = machine.transfer(2, 3, 14, MessageKind::Eager, 1.0);
    assert_eq!(tr.arrival, 1.0);
    // 15 B: negative cpu_free -> ready; the arrival is fine.
    let tr = machine.transfer(4, 5, 15, MessageKind::Eager, 1.0);
    assert_eq!(tr.cpu_free, 1.0);
    assert!(tr.arrival > 1.0);
    // 16 B of rendezvous data: arrival = ready, before the pair's previous
    // arrival -> that one.
    let before = machine.transfer(6, 7, 4000, MessageKind::Eager, 1.0);
    let tr = machine.transfer(6, 7, 16, MessageKind::RendezvousData, 1.0);
    assert_eq!(tr.arrival, before.arrival);
    // 17 B: error code 7 -> ready for both.
    let tr = machine.transfer(8, 9, 17, MessageKind::Eager, 1.0);
    assert_eq!((tr.cpu_free, tr.arrival), (1.0, 1.0));
    // NaN compute time, negative receive overhead -> 0.
    assert_eq!(machine.compute_seconds(0, 13.0), 0.0);
    assert_eq!(machine.recv_overhead(0, 1, 13), 0.0);
    assert_eq!(machine.violations(), 7);
    // The first one is kept.
    let still = machine
        .violation()
        .map(ToString::to_string)
        .unwrap_or_default();
    assert_eq!(still, first);
    // Every returned time honours the trait's contract.
    for bytes in [13, 14, 15, 16, 17] {
        let tr = machine.transfer(10, 11, bytes, MessageKind::RendezvousData, 5.0);
        assert!(tr.arrival.is_finite() && tr.arrival >= 5.0);
        assert!(tr.cpu_free.is_finite() && tr.cpu_free >= 5.0);
    }
}

#[test]
fn plugin_file_errors_name_the_key() {
    let dir = built("default");
    let library = library_in_target();
    let cases = [
        (
            "model = \"plugin\"\nname = \"x\"\n[plugin]\n".to_owned(),
            "plugin.library",
            "missing required key",
        ),
        (
            format!("model = \"plugin\"\nname = \"x\"\n[plugin]\nlibary = \"{library}\"\n"),
            "plugin.libary",
            "did you mean `library`",
        ),
        (
            format!(
                "model = \"plugin\"\nname = \"x\"\n[plugin]\nlibrary = \"{library}\"\n\
                 [plugin.params]\ndims = [4, 4]\n"
            ),
            "plugin.params.dims",
            "a string, number or boolean",
        ),
        (
            format!(
                "model = \"plugin\"\nname = \"x\"\n[plugin]\nlibrary = \"{library}\"\n\
                 [network]\nlatency = \"1 us\"\n"
            ),
            "network",
            "unknown key",
        ),
        (
            "model = \"plugin\"\nname = \"x\"\n".to_owned(),
            "plugin",
            "missing required key",
        ),
        (
            "model = \"plugin\"\nname = \"x\"\n[plugin]\nlibrary = \"no/such/libx.so\"\n"
                .to_owned(),
            "plugin.library",
            "no such file",
        ),
        (
            // Not a shared library: the loader's message.
            "model = \"plugin\"\nname = \"x\"\n[plugin]\nlibrary = \"not-a-library.toml\"\n"
                .to_owned(),
            "plugin.library",
            "cannot load the model plugin",
        ),
    ];
    // The file the last case names as its library.
    if let Err(err) = std::fs::write(dir.join("not-a-library.toml"), "x = 1\n") {
        panic!("{err}");
    }
    for (index, (text, key, needle)) in cases.into_iter().enumerate() {
        let path = dir.join(format!("error-{index}.toml"));
        if let Err(err) = std::fs::write(&path, &text) {
            panic!("{err}");
        }
        let err = load_err(&path);
        let message = err.to_string();
        assert_eq!(err.key(), Some(key), "{message}");
        assert!(message.contains(needle), "{needle:?} not in: {message}");
        assert!(
            message.starts_with(&path.display().to_string()),
            "{message}"
        );
    }
}

#[test]
fn the_example_machine_file_loads_with_the_built_library() {
    let example = plugin_dir().join("torus-4x4.toml");
    let text = match std::fs::read_to_string(&example) {
        Ok(text) => text,
        Err(err) => panic!("{}: {err}", example.display()),
    };
    let shipped = "target/release/libparsim_torus_model.so";
    assert!(text.contains(shipped), "the example names {shipped}");
    let built = built("default").join(library_in_target());
    let text = text.replace(shipped, &built.display().to_string());
    let machine = match AnyMachine::from_toml_str(&text, "torus-4x4.toml", &plugin_dir()) {
        Ok(machine) => machine,
        Err(err) => panic!("{err}"),
    };
    assert_eq!(machine.name(), "torus-4x4-hockney");
    let mut machine = machine.start(16);
    // a = 4.5 us, h = 0.2 us, 80 MB/s: 0 -> 10 (4 hops), 800 B: 4.5 + 0.8 + 10 us.
    let tr = machine.transfer(0, 10, 800, MessageKind::Eager, 0.0);
    assert_relative_eq!(tr.arrival, 15.3 * US, max_relative = 1e-12);
}

#[test]
fn load_machine_reads_loggp_files_too() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/machines");
    for file in [
        "default-infiniband.toml",
        "myrinet.toml",
        "fast-ethernet.toml",
        "sci.toml",
    ] {
        let any = load_ok(&dir.join(file));
        let loggp = match LogGpMachine::load(dir.join(file)) {
            Ok(machine) => machine,
            Err(err) => panic!("{err}"),
        };
        assert!(any.as_loggp().is_some(), "{file}");
        assert_eq!(any.name(), loggp.name());
        assert_eq!(any.describe(), loggp.describe());
        assert_eq!(any.start(2).violations(), 0);
    }
    let builtin = AnyMachine::builtin_default();
    assert_eq!(builtin.name(), "default-infiniband");
    // A LogGP loader refuses a plugin file and says what to use.
    let text = "name = \"x\"\nmodel = \"plugin\"\n[plugin]\nlibrary = \"x.so\"\n";
    match LogGpMachine::from_toml_str(text, "p.toml") {
        Ok(_) => panic!("LogGpMachine accepted a plugin file"),
        Err(err) => {
            assert_eq!(err.key(), Some("model"));
            assert!(err.to_string().contains("load_machine"), "{err}");
        }
    }
    // `AnyMachine` is a description that threads share.
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<AnyMachine>();
}

#[test]
fn runs_of_one_plugin_description_are_serialised_and_independent() {
    let path = machine_file("default", "runs.toml", PARAMS);
    let machine = load_ok(&path);
    // 0 -> 10 is 4 hops, 1000 B on idle links: 2.5 + 0.4 + 10 = 12.9 us;
    // then 0 -> 3 waits for rank 0's link: 10 + 2.5 + 0.1 us.
    let run = |machine: &AnyMachine| {
        let mut run = machine.start(16);
        let first = run.transfer(0, 10, 1000, MessageKind::Eager, 0.0);
        let second = run.transfer(0, 3, 0, MessageKind::Eager, 0.0);
        (first.arrival, second.arrival, run.violations())
    };
    let check = |(first, second, violations): (f64, f64, u64)| {
        assert_relative_eq!(first, 12.9 * US, max_relative = 1e-12);
        assert_relative_eq!(second, 12.6 * US, max_relative = 1e-12);
        assert_eq!(violations, 0);
    };
    // One run after the other: the second starts from idle links.
    check(run(&machine));
    check(run(&machine));
    // From several threads: the runs take turns with the one model object,
    // and each starts from idle links.
    let results: Vec<(f64, f64, u64)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4).map(|_| scope.spawn(|| run(&machine))).collect();
        handles
            .into_iter()
            .map(|handle| match handle.join() {
                Ok(result) => result,
                Err(_) => panic!("a run panicked"),
            })
            .collect()
    });
    assert_eq!(results.len(), 4);
    results.into_iter().for_each(check);
    // Zero buffering overrides the plugin's eager limit (4096 B) only.
    let zero = machine.zero_buffering();
    assert_eq!(machine.start(16).eager_limit(0, 5), 4096);
    let zero_run = zero.start(16);
    assert_eq!(zero_run.eager_limit(0, 5), 0);
    assert_eq!(zero_run.control_bytes(0, 5), 32);
    drop(zero_run);
    check(run(&zero));
}

#[test]
fn violations_belong_to_their_run() {
    let path = machine_file("faulty", "faulty-runs.toml", PARAMS);
    let machine = load_ok(&path);
    let mut first = machine.start(16);
    // 13 B: arrival NaN, replaced by ready.
    let tr = first.transfer(0, 1, 13, MessageKind::Eager, 1.0);
    assert_eq!(tr.arrival, 1.0);
    assert_eq!(first.violations(), 1);
    drop(first);
    let second = machine.start(16);
    assert_eq!(second.violations(), 0);
    assert!(second.violation().is_none());
}
