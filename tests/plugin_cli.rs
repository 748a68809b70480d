//! A user's model plugin through the command line: it loads, changes the
//! prediction, and a plugin built for another ABI version is refused.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::parsim;

/// Builds `examples/plugin` (with `features`) into a target directory of
/// its own, so that the outer cargo's build lock is not needed; returns the
/// machine file written next to the library.
fn plugin_machine(variant: &str, features: &str) -> PathBuf {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-plugin-{variant}"));
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args([
        "build",
        "--offline",
        "--locked",
        "--quiet",
        "--manifest-path",
    ])
    .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/plugin/Cargo.toml"))
    .arg("--target-dir")
    .arg(&target);
    if !features.is_empty() {
        cmd.args(["--features", features]);
    }
    let out = cmd.output().expect("cargo runs");
    assert!(
        out.status.success(),
        "building the plugin failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lib = format!(
        "debug/{}parsim_torus_model{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    let file = target.join("machine.toml");
    let text = format!(
        "name = \"torus\"\nmodel = \"plugin\"\n[plugin]\nlibrary = \"{lib}\"\n[plugin.params]\n\
         dims = \"4x4\"\nlatency = 4.5e-6\nper_hop = 0.2e-6\nbandwidth = 80e6\noverhead = 0.5e-6\n\
         eager_limit = 65536\ncontrol_bytes = 64\ncpu_rate = 1.0\nmemcpy = 300e6\n"
    );
    std::fs::write(&file, text).expect("write machine file");
    file
}

fn predicted(machine: &str) -> f64 {
    let o = parsim(&[
        "run",
        "examples/heat.mpl",
        "--ranks",
        "16",
        "--machine",
        machine,
        "--param",
        "iters=20",
        "--param",
        "n=200",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    v["predicted_seconds"].as_f64().expect("a number")
}

#[test]
fn a_plugin_model_loads_and_changes_the_prediction() {
    let m = plugin_machine("default", "");
    let with_plugin = predicted(m.to_str().expect("utf-8"));
    let with_sci = predicted("examples/machines/sci.toml");
    // 20 steps of 4e-9 * 200 * 200 s of compute plus halo exchanges of
    // 1600 B: the plugin's 80 MB/s and 4.5 us + hops make the exchanges
    // cost more than on SCI's 300 MB/s and 4 us.
    assert!(
        with_plugin > with_sci,
        "plugin {with_plugin} sci {with_sci}"
    );
    let o = parsim(&["machine", m.to_str().expect("utf-8")]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("torus"));
}

#[test]
fn a_plugin_for_another_abi_version_is_refused() {
    let m = plugin_machine("wrong-abi", "wrong-abi");
    let o = parsim(&[
        "run",
        "examples/heat.mpl",
        "--ranks",
        "4",
        "--machine",
        m.to_str().expect("utf-8"),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("999") && err.contains("version"), "{err}");
}
