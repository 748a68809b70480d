//! Guards the accuracy achieved against the EKSS-1 measurements
//! (`../shared/validation/ekss1/`, see VALIDATION.md): `parsim validate`
//! with the fitted `examples/machines/ekss1.toml` (calibrated from the
//! PingPong, PingPing and 2-rank intra-node tables only) on the PMB
//! PingPong and PingPing (the calibration inputs: within 5% median), and on
//! the held-out Alltoall (1 process per node, 2, 4, 8, 16 active of 16)
//! and Barrier tables. Issue 12 asks for 10% median per Alltoall group and
//! 15% for Barrier; every group meets it since the network's segments have
//! a duplex of their own where PingPing shows one. The bounds are the
//! achieved figures with a little room, so that a change that makes the
//! predictions worse fails.

mod support;

/// The path of a table of the shared EKSS-1 data, or `None` after a skip
/// note (a failure under CI; see `support::requires`).
fn data(name: &str) -> Option<String> {
    let dir = support::shared_data("validation/ekss1", name)?;
    Some(dir.join(name).to_string_lossy().into_owned())
}

fn validate(program: &str, table: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "validate",
        program,
        "--table",
        table,
        "--machine",
        "examples/machines/ekss1.toml",
        "--ppn",
        "1",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    let o = support::parsim(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("JSON")
}

#[test]
fn alltoall_1ppn_per_group_median_error() {
    let Some(table) = data("pmb_alltoall_1ppn.csv") else {
        return;
    };
    let v = validate("examples/imb/alltoall.mpl", &table, &[]);
    // Achieved 3.9, 5.8, 7.0, 6.0% (VALIDATION.md 2.2), each within the
    // issue's 10%.
    let bounds = [(2, 0.045), (4, 0.065), (8, 0.08), (16, 0.07)];
    for g in v["groups"].as_array().expect("groups") {
        let active = g["active"].as_u64().expect("active");
        let median = g["median_abs_error"].as_f64().expect("median");
        let bound = bounds
            .iter()
            .find(|b| b.0 == active)
            .map(|b| b.1)
            .expect("a known group");
        assert!(
            median <= bound,
            "{active} active: median |error| {median} > {bound}"
        );
    }
    // Achieved 20.9%.
    assert!(v["max_abs_error"].as_f64().expect("max") <= 0.22);
}

#[test]
fn pingpong_and_pingping_reproduce_their_tables() {
    for (program, name, bound) in [
        // Achieved 1.2% and 2.0% (VALIDATION.md 2.4).
        ("examples/imb/pingpong.mpl", "pmb_pingpong_1ppn.csv", 0.02),
        ("examples/imb/pingping.mpl", "pmb_pingping_1ppn.csv", 0.03),
    ] {
        let Some(table) = data(name) else {
            return;
        };
        let v = validate(program, &table, &[]);
        let median = v["median_abs_error"].as_f64().expect("median");
        assert!(median <= bound, "{name}: median |error| {median} > {bound}");
    }
}

#[test]
fn barrier_1ppn_median_error() {
    let Some(table) = data("pmb_barrier_1ppn.csv") else {
        return;
    };
    let v = validate(
        "examples/imb/barrier.mpl",
        &table,
        &["--time-col", "ekss1_H_usec"],
    );
    let median = v["median_abs_error"].as_f64().expect("median");
    // Achieved 8.0% (36.8% before the adapter's per-message occupancy and
    // the PingPing calibration: VALIDATION.md 2.3).
    assert!(median <= 0.09, "median |error| {median}");
    assert!(median <= 0.15, "the issue's bound");
}
