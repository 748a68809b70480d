//! Native kernel libraries: compiling a kernel C file into a shared library
//! and loading it (the ABI of `include/parsim_kernel.h`).

use std::path::{Path, PathBuf};
use std::process::Command;

use super::BlocksError;

/// `include/parsim_kernel.h`, written next to the sources the tools compile
/// so that they build from any directory.
pub const KERNEL_HEADER: &str = include_str!("../../../include/parsim_kernel.h");

/// The ABI version this parsim speaks (`PARSIM_KERNEL_ABI_VERSION`).
pub const KERNEL_ABI_VERSION: u32 = 1;

/// The C type of every kernel entry point:
/// `void parsim_kernel_NAME(const int64_t *arg, int32_t nargs)`.
pub type KernelFn = unsafe extern "C" fn(*const i64, i32);

type AbiVersionFn = unsafe extern "C" fn() -> u32;

/// How to compile a kernel source file.
#[derive(Debug, Clone)]
pub struct CompileOptions {
    /// The C compiler (`cc`).
    pub cc: String,
    /// Optimisation and other flags, split on whitespace (`-O2`).
    pub cflags: String,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            cc: "cc".to_owned(),
            cflags: "-O2".to_owned(),
        }
    }
}

/// The compiler's identification (`cc --version`, first line), for the
/// calibration's record; `None` if it does not answer.
pub fn compiler_version(cc: &str) -> Option<String> {
    let out = Command::new(cc).arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines().next().map(|l| l.trim().to_owned())
}

/// Compiles `source` (a C file using `parsim_kernel.h`) into a shared library
/// in `out_dir`, writing the header there first. Returns the library's path
/// and the command line used.
pub fn compile(
    source: &Path,
    out_dir: &Path,
    opts: &CompileOptions,
) -> Result<(PathBuf, String), BlocksError> {
    let io = |what: &str, e: std::io::Error| BlocksError::Io(format!("{what}: {e}"));
    std::fs::create_dir_all(out_dir).map_err(|e| io(&out_dir.display().to_string(), e))?;
    let header = out_dir.join("parsim_kernel.h");
    std::fs::write(&header, KERNEL_HEADER).map_err(|e| io(&header.display().to_string(), e))?;
    let stem = source
        .file_stem()
        .map_or("kernels".into(), |s| s.to_string_lossy().into_owned());
    let lib = out_dir.join(format!("lib{stem}.so"));
    let mut cmd = Command::new(&opts.cc);
    cmd.args(opts.cflags.split_whitespace())
        .args(["-fPIC", "-shared", "-I"])
        .arg(out_dir)
        .arg(source)
        .arg("-o")
        .arg(&lib);
    let line = format!(
        "{} {} -fPIC -shared -I {} {} -o {}",
        opts.cc,
        opts.cflags,
        out_dir.display(),
        source.display(),
        lib.display()
    );
    let out = cmd
        .output()
        .map_err(|e| BlocksError::Compile(format!("cannot run `{}`: {e}", opts.cc)))?;
    if !out.status.success() {
        return Err(BlocksError::Compile(format!(
            "`{line}` failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim_end()
        )));
    }
    Ok((lib, line))
}

/// A loaded kernel library.
pub struct KernelLibrary {
    path: PathBuf,
    // Invariant: the library stays loaded while `self` lives, so the
    // function pointers handed out by `kernel` stay valid as long as the
    // caller keeps `self` (they are only used inside `KernelLibrary`'s
    // owners' scopes: `timing::time_kernel` borrows the libraries).
    library: libloading::Library,
}

impl std::fmt::Debug for KernelLibrary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelLibrary")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl KernelLibrary {
    /// Loads a library and checks its ABI version.
    pub fn load(path: &Path) -> Result<KernelLibrary, BlocksError> {
        // SAFETY: loading runs the library's initialisers; a kernel library
        // is the user's own code, given to the tool to be run (like a
        // compiler plugin). Nothing else can be checked before loading.
        let library = unsafe { libloading::Library::new(path) }
            .map_err(|e| BlocksError::Load(format!("{}: {e}", path.display())))?;
        // SAFETY: the symbol's type is the one the header defines.
        let version: libloading::Symbol<AbiVersionFn> =
            unsafe { library.get(b"parsim_kernel_abi_version\0") }.map_err(|_| {
                BlocksError::Load(format!(
                    "{}: no `parsim_kernel_abi_version`: build kernel libraries with \
                     `#include \"parsim_kernel.h\"` and one `PARSIM_KERNEL_LIBRARY` line",
                    path.display()
                ))
            })?;
        // SAFETY: a C function without arguments returning uint32_t.
        let v = unsafe { version() };
        if v != KERNEL_ABI_VERSION {
            return Err(BlocksError::Load(format!(
                "{}: built for kernel ABI version {v}, this parsim speaks version \
                 {KERNEL_ABI_VERSION}: rebuild it with this parsim's parsim_kernel.h",
                path.display()
            )));
        }
        Ok(KernelLibrary {
            path: path.to_owned(),
            library,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The entry point of kernel `name`, if the library has one.
    pub fn kernel(&self, name: &str) -> Option<KernelFn> {
        let symbol = format!("parsim_kernel_{name}\0");
        // SAFETY: the symbol's type is fixed by the ABI (`KernelFn`); the
        // pointer is valid while `self.library` is loaded (see the invariant
        // on the field).
        unsafe { self.library.get::<KernelFn>(symbol.as_bytes()) }
            .ok()
            .map(|s| *s)
    }
}
