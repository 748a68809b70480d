//! `parsim emit-c` and `parsim build-mpi`: a skeleton as a real C MPI
//! program.
//!
//! The translation starts from the IR (`sim_core::ir`), not the syntax tree,
//! so the C program is exactly what the simulator interprets: one C
//! function per IR function, basic blocks as labels with `goto`s, variables
//! as an array of tagged values, and a small C runtime (`runtime.c`, emitted
//! at the top of the file) with the value semantics of `sim_core::value`
//! and the MPI call of every operation. `docs/emit-c.md` maps every
//! statement and operation to MPI.
//!
//! - [`emit`]: the C text of a program.
//! - [`native_kernels`]: which kernels a kernel library (C source or shared
//!   library, ABI of `include/parsim_kernel.h`) implements.
//! - [`build`]: emit, then compile and link with `mpicc` (or `smpicc`).

mod build;
mod cli;
mod codegen;
mod kernels;

pub use build::{BuildOptions, build};
pub(crate) use cli::{BuildArgs, EmitArgs, program_name, run_build, run_emit};
pub use codegen::emit;
pub use kernels::native_kernels;

/// The kernel ABI header, written next to the C file when building.
pub const KERNEL_HEADER: &str = calibrate::blocks::library::KERNEL_HEADER;

/// Why a program could not be translated, a kernel library not read, or a
/// program not built. The message is complete and lowercase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmitError(pub String);

impl std::fmt::Display for EmitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for EmitError {}

/// A temporary directory, removed on drop.
pub(crate) struct TempDir(crate::tempdir::TempDir);

impl TempDir {
    pub(crate) fn new(what: &str) -> Result<TempDir, EmitError> {
        crate::tempdir::TempDir::new(what)
            .map(TempDir)
            .map_err(EmitError)
    }

    pub(crate) fn path(&self) -> &std::path::Path {
        self.0.path()
    }
}
