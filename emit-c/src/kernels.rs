//! Which kernels a kernel library implements natively (the ABI of
//! `include/parsim_kernel.h`): a C source is compiled to a temporary shared
//! library with `cc`, a shared library is loaded as it is (both through
//! `calibrate::blocks::library`, which checks the ABI version), and the
//! `parsim_kernel_NAME` symbols are looked up.

use std::collections::BTreeSet;
use std::path::Path;

use calibrate::blocks::library::{CompileOptions, KernelLibrary, compile};
use sim_core::ir::Program;

use crate::{EmitError, temp_dir};

/// The kernels of `program` that `kernels` implements: a C source (`.c`,
/// compiled with `cc -O2 -fPIC -shared`) or a shared library (`.so`,
/// `.dylib`) exporting `parsim_kernel_abi_version()` == 1 and
/// `parsim_kernel_NAME` per kernel.
pub fn native_kernels(kernels: &Path, program: &Program) -> Result<BTreeSet<String>, EmitError> {
    let dir = temp_dir("kernels")?;
    let library = match kernels.extension().and_then(|e| e.to_str()) {
        Some("c") => {
            let (lib, _) = compile(kernels, dir.path(), &CompileOptions::default())?;
            KernelLibrary::load(&lib)?
        }
        Some("so" | "dylib") => {
            // An absolute path: `dlopen` searches the library path for a
            // bare file name.
            let abs = std::fs::canonicalize(kernels).map_err(|source| EmitError::Read {
                path: kernels.to_owned(),
                source,
            })?;
            KernelLibrary::load(&abs)?
        }
        _ => {
            return Err(EmitError::NotAKernelLibrary(kernels.to_owned()));
        }
    };
    Ok(program
        .kernels
        .iter()
        .filter(|k| library.kernel(&k.name).is_some())
        .map(|k| k.name.clone())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_files_are_not_kernel_libraries() {
        let p = frontend::compile("k.mpl", "kernel k(n)\ncompute k(3)\n").expect("valid program");
        let e = native_kernels(Path::new("notes.txt"), &p).expect_err("not a library");
        assert!(matches!(&e, EmitError::NotAKernelLibrary(path) if path == Path::new("notes.txt")));
        assert_eq!(
            e.to_string(),
            "notes.txt: a kernel library is a C file (.c) or a shared library (.so, .dylib)"
        );
    }
}
