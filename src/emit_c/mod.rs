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
pub(crate) use cli::{BuildArgs, EmitArgs, run_build, run_emit};
pub use codegen::emit;
pub use kernels::native_kernels;

/// The kernel ABI header, written next to the C file when building.
pub const KERNEL_HEADER: &str = include_str!("../../include/parsim_kernel.h");

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

/// A directory under the system's temporary directory, removed on drop.
pub(crate) struct TempDir(std::path::PathBuf);

impl TempDir {
    pub(crate) fn new(what: &str) -> Result<TempDir, EmitError> {
        use std::sync::atomic::{AtomicU32, Ordering};
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let base = std::env::temp_dir();
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        for _ in 0..100 {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let dir = base.join(format!("parsim-{what}-{}-{nanos}-{n}", std::process::id()));
            match std::fs::create_dir(&dir) {
                Ok(()) => return Ok(TempDir(dir)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(EmitError(format!(
                        "cannot create a temporary directory in {}: {e}",
                        base.display()
                    )));
                }
            }
        }
        Err(EmitError(format!(
            "cannot create a temporary directory in {}",
            base.display()
        )))
    }

    pub(crate) fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        // Best effort: a leftover temporary directory is harmless.
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
