//! Which kernels a kernel library implements natively (the ABI of
//! `include/parsim_kernel.h`): a C source is compiled to a temporary shared
//! library with `cc`, a shared library is loaded as it is, and the
//! `parsim_kernel_NAME` symbols are looked up with `libloading`.
//!
//! # Safety argument
//!
//! 1. **Loading runs foreign code**: the library's initialisers run with
//!    our privileges. It is the library the user named with `--kernels`
//!    (or compiled from the C file they named), as much trust as building
//!    it into their MPI program, which is what it is for.
//! 2. **Symbol types**: the only function called is
//!    `parsim_kernel_abi_version`, whose type `uint32_t (void)` the header
//!    fixes for every version. The kernel entry points are only looked up
//!    (their existence is all we need), never called.
//! 3. **Lifetimes**: no symbol outlives the [`Library`], which is dropped at
//!    the end of [`lookup`].

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use libloading::Library;
use sim_core::ir::Program;

use super::{EmitError, KERNEL_HEADER, TempDir};

/// `PARSIM_KERNEL_ABI_VERSION` of `include/parsim_kernel.h`.
pub const KERNEL_ABI_VERSION: u32 = 1;

/// The kernels of `program` that `kernels` implements: a C source (`.c`,
/// compiled with `cc -O2 -fPIC -shared`) or a shared library (`.so`,
/// `.dylib`) exporting `parsim_kernel_abi_version()` ==
/// [`KERNEL_ABI_VERSION`] and `parsim_kernel_NAME` per kernel.
pub fn native_kernels(kernels: &Path, program: &Program) -> Result<BTreeSet<String>, EmitError> {
    let names = program.kernels.iter().map(|k| k.name.as_str());
    match kernels.extension().and_then(|e| e.to_str()) {
        Some("c") => {
            let dir = TempDir::new("kernels")?;
            std::fs::write(dir.path().join("parsim_kernel.h"), KERNEL_HEADER)
                .map_err(|e| EmitError(format!("cannot write to {}: {e}", dir.path().display())))?;
            let lib = dir.path().join("libparsim_kernels.so");
            let out = Command::new("cc")
                .args(["-O2", "-fPIC", "-shared", "-I"])
                .arg(dir.path())
                .arg("-o")
                .arg(&lib)
                .arg(kernels)
                .output()
                .map_err(|e| EmitError(format!("cannot run the C compiler `cc`: {e}")))?;
            if !out.status.success() {
                return Err(EmitError(format!(
                    "cannot compile {} with `cc -O2 -fPIC -shared` ({}):\n{}{}",
                    kernels.display(),
                    out.status,
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                )));
            }
            lookup(&lib, kernels, names)
        }
        Some("so" | "dylib") => {
            // An absolute path: `dlopen` searches the library path for a
            // bare file name.
            let abs = std::fs::canonicalize(kernels)
                .map_err(|e| EmitError(format!("cannot read {}: {e}", kernels.display())))?;
            lookup(&abs, kernels, names)
        }
        _ => Err(EmitError(format!(
            "{}: a kernel library is a C file (.c) or a shared library (.so, .dylib)",
            kernels.display()
        ))),
    }
}

fn lookup<'a>(
    lib: &Path,
    shown: &Path,
    names: impl Iterator<Item = &'a str>,
) -> Result<BTreeSet<String>, EmitError> {
    // SAFETY: point 1 of the module's safety argument.
    let library = unsafe { Library::new(lib) }
        .map_err(|e| EmitError(format!("cannot load {}: {e}", shown.display())))?;
    // SAFETY: point 2: the symbol has this type in every ABI version.
    let version = unsafe {
        library.get::<unsafe extern "C" fn() -> u32>(b"parsim_kernel_abi_version\0")
    }
    .map_err(|_| {
        EmitError(format!(
            "{} is not a parsim kernel library: it does not export `parsim_kernel_abi_version` (add a `PARSIM_KERNEL_LIBRARY` line, see parsim_kernel.h)",
            shown.display()
        ))
    })?;
    // SAFETY: point 2: `uint32_t parsim_kernel_abi_version(void)`, no arguments.
    let v = unsafe { version() };
    if v != KERNEL_ABI_VERSION {
        return Err(EmitError(format!(
            "{} was built for kernel ABI version {v}, but this parsim implements version {KERNEL_ABI_VERSION}: rebuild it with this parsim's parsim_kernel.h",
            shown.display()
        )));
    }
    let mut found = BTreeSet::new();
    for name in names {
        let symbol = format!("parsim_kernel_{name}\0");
        // SAFETY: point 2: only looked up, never called; point 3: the
        // symbol is dropped at once.
        let exists = unsafe {
            library
                .get::<unsafe extern "C" fn(*const i64, i32)>(symbol.as_bytes())
                .is_ok()
        };
        if exists {
            found.insert(name.to_owned());
        }
    }
    Ok(found)
}
