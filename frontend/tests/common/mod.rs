//! Checks of the IR invariants written at the top of `sim_core::ir`, by
//! `Program::validate` (the same check lowering debug-asserts).

use sim_core::ir::Program;

pub fn check_invariants(p: &Program) {
    if let Err(e) = p.validate() {
        panic!("lowering broke an IR invariant: {e}");
    }
}
