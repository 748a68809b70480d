//! Bruck's alltoall builds a derived datatype in every step and sends and
//! receives through it (MPICH `MPIR_Alltoall_intra_brucks`, Open MPI
//! `ompi_coll_base_alltoall_intra_bruck`): `[node] type_create*` and
//! `type_pack*` are charged per step, checked against a machine where they
//! are 0.
//!
//! Machine: tests/support `closed_form_machine` (one rank per node, LogGP
//! with o_s = 1 us, L = 5 us, o_r = 2 us), alltoall forced to Bruck.

mod support;

use approx::assert_relative_eq;

/// Finish times of `alltoall(bytes: 8)` on 4 ranks with the datatype costs
/// `costs` (TOML lines of `[node]`) under `library`.
fn run(costs: &str, library: &str) -> Vec<f64> {
    let dir = support::temp_dir();
    let m = support::closed_form_machine(&dir, "100 MB/s", "alltoall = \"bruck\"");
    let text = std::fs::read_to_string(&m)
        .expect("machine")
        .replace("[node]\n", &format!("[node]\n{costs}"))
        .replace("library = \"mpich\"", &format!("library = \"{library}\""));
    let m = dir.file("dt.toml", &text);
    let prog = dir.file("a2a.mpl", "alltoall(bytes: 8)\n");
    support::finish_times(&support::run_json(&prog, 4, &m))
}

const ZERO: &str = "type_create = \"0 us\"\ntype_create_per_block = \"0 ns\"\ntype_pack = \"0 us\"\ntype_pack_per_block = \"0 ns\"\n";
const COSTS: &str = "type_create = \"1 us\"\ntype_create_per_block = \"10 ns\"\ntype_pack = \"0.5 us\"\ntype_pack_per_block = \"5 ns\"\n";

#[test]
fn each_bruck_step_builds_packs_and_unpacks_a_datatype() {
    // 4 ranks: 2 steps of 2 blocks each. Per step every rank creates the
    // type (1 us + 2 · 10 ns) and packs (0.5 us + 2 · 5 ns) before its
    // messages and unpacks after them; the schedule is the same on every
    // rank, so each rank finishes later by 2 · (1.02 + 2 · 0.51) us.
    let base = run(ZERO, "mpich");
    let with = run(COSTS, "mpich");
    let per_step = 1.02e-6 + 2.0 * 0.51e-6;
    for (b, w) in base.iter().zip(&with) {
        assert_relative_eq!(*w, b + 2.0 * per_step, max_relative = 1e-9);
    }
    // Open MPI also copies the received blocks back through the type.
    let base = run(ZERO, "openmpi-4");
    let with = run(COSTS, "openmpi-4");
    for (b, w) in base.iter().zip(&with) {
        assert_relative_eq!(*w, b + 2.0 * (per_step + 0.51e-6), max_relative = 1e-9);
    }
}

#[test]
fn unknown_costs_are_refused_by_name() {
    let dir = support::temp_dir();
    let m = support::closed_form_machine(&dir, "100 MB/s", "");
    let text = std::fs::read_to_string(&m)
        .expect("machine")
        .replace("[node]\n", "[node]\ntype_pack = \"fast\"\n");
    let m = dir.file("bad.toml", &text);
    let out = support::parsim(&["machine", m.to_str().expect("utf-8 path")]);
    assert!(!out.status.success());
    let err = support::stderr(&out);
    assert!(err.contains("node.type_pack"), "{err}");
}

#[test]
fn the_machine_states_its_datatype_costs() {
    let dir = support::temp_dir();
    let m = support::closed_form_machine(&dir, "100 MB/s", "");
    let text = std::fs::read_to_string(&m)
        .expect("machine")
        .replace("[node]\n", &format!("[node]\n{COSTS}"));
    let m = dir.file("dt.toml", &text);
    let out = support::parsim(&["machine", m.to_str().expect("utf-8 path")]);
    assert!(out.status.success(), "{}", support::stderr(&out));
    let text = support::stdout(&out);
    assert!(
        text.contains("a derived datatype of k blocks created in 1 us + k x 0.01 us, packed in 0.5 us + k x 0.005 us,"),
        "{text}"
    );
}
