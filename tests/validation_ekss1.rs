//! Guards the accuracy achieved against the EKSS-1 measurements
//! (`../shared/validation/ekss1/`, see VALIDATION.md): `parsim validate`
//! with the fitted `examples/machines/ekss1.toml` on the PMB Alltoall
//! (1 process per node, 2, 4, 8, 16 active of 16) and Barrier tables. The
//! bounds are the errors achieved when this test was written, so that a
//! change that makes the predictions worse fails; they are not targets.

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
    let bounds = [(2, 0.145), (4, 0.145), (8, 0.10), (16, 0.085)];
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
        assert!(median <= 0.15, "the issue's bound");
    }
    assert!(v["max_abs_error"].as_f64().expect("max") <= 0.425);
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
    // Achieved 36.8%, far above the 15%: the model has no cost for
    // two small messages crossing (VALIDATION.md 2.3, 2.5).
    assert!(median <= 0.37, "median |error| {median}");
}
