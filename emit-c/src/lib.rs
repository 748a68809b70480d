//! A skeleton as a real C MPI program: the library behind `parsim emit-c`
//! and `parsim build-mpi` (and the real runs of `parsim validate --run`).
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
//! - [`program_name`]: the name a program reports in `PARSIM_RESULT`.
//!
//! Errors are [`EmitError`]s, worded in this library's terms (the kernel
//! library, the MPI compiler); a command line adds its flags' names.

mod build;
mod codegen;
mod kernels;

use std::path::{Path, PathBuf};
use std::process::ExitStatus;

pub use build::{BuildOptions, build, build_native};
pub use codegen::emit;
pub use kernels::native_kernels;

/// The kernel ABI header, written next to the C file when building.
pub const KERNEL_HEADER: &str = calibrate::blocks::library::KERNEL_HEADER;

/// The name the C program reports in `PARSIM_RESULT`: the file's name
/// (the whole path if it has none).
pub fn program_name(file: &Path) -> String {
    file.file_name().map_or_else(
        || file.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// Why a program could not be translated, a kernel library not read, or a
/// program not built. Messages are lowercase; the causes of I/O errors are
/// their `source`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EmitError {
    /// A `compute` statement runs a kernel that has neither a cost formula
    /// nor a native implementation in the kernel library.
    #[error(
        "kernel `{kernel}` (computed at line {line}) has neither a cost nor a native implementation"
    )]
    NoImplementation {
        /// The kernel's name.
        kernel: String,
        /// The line of the first such `compute`.
        line: u32,
    },
    /// The IR breaks one of its invariants (a bug in whatever made it).
    #[error("internal error: {0}")]
    Internal(String),
    /// A kernel library that is neither a C file nor a shared library.
    #[error("{}: a kernel library is a C file (.c) or a shared library (.so, .dylib)", .0.display())]
    NotAKernelLibrary(PathBuf),
    /// The kernel library did not compile or load (or has another ABI
    /// version).
    #[error(transparent)]
    Kernels(#[from] calibrate::blocks::BlocksError),
    /// A file could not be read.
    #[error("cannot read {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file could not be written.
    #[error("cannot write {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// No temporary directory for the build.
    #[error("cannot create a temporary directory")]
    TempDir(#[source] std::io::Error),
    /// The MPI compiler wrapper could not be started.
    #[error("cannot run the MPI compiler `{compiler}`")]
    NoCompiler {
        compiler: String,
        #[source]
        source: std::io::Error,
    },
    /// The MPI compiler wrapper failed; `output` is what it printed
    /// (stdout, then stderr).
    #[error("`{compiler}` failed ({status}):\n{output}")]
    CompilerFailed {
        compiler: String,
        status: ExitStatus,
        output: String,
    },
}

/// A temporary directory named `parsim-<what>-…`, removed on drop.
fn temp_dir(what: &str) -> Result<tempfile::TempDir, EmitError> {
    tempfile::Builder::new()
        .prefix(&format!("parsim-{what}-"))
        .tempdir()
        .map_err(EmitError::TempDir)
}
