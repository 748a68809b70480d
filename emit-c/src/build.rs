//! Building: emit the C program, then compile and link it (and the kernel
//! library) with an MPI compiler wrapper.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use sim_core::ir::Program;

use crate::{EmitError, KERNEL_HEADER, emit, native_kernels, temp_dir};

/// How to build.
#[derive(Debug, Clone)]
pub struct BuildOptions<'a> {
    /// Native kernels: a C file (compiled with the program) or a shared
    /// library (linked, with an rpath to its directory).
    pub kernels: Option<&'a Path>,
    /// The executable to write.
    pub output: &'a Path,
    /// The compiler wrapper: `mpicc`, `smpicc`, ...
    pub mpicc: &'a str,
    /// Compiler flags, split at whitespace (`-O2 -march=native`).
    pub cflags: &'a str,
}

/// Builds `program` into the MPI executable `opts.output` and returns its
/// path. `log` receives the exact compile command (shell-quoted) before it
/// runs; a failing compiler's output is in the error.
pub fn build(
    program: &Program,
    source_name: &str,
    opts: &BuildOptions<'_>,
    log: &mut dyn FnMut(&str),
) -> Result<PathBuf, EmitError> {
    let native = match opts.kernels {
        Some(k) => native_kernels(k, program)?,
        None => BTreeSet::new(),
    };
    build_native(program, source_name, opts, &native, log)
}

/// [`build`] with the kernels of `opts.kernels` that have a native
/// implementation already known (`native_kernels`, which compiles and
/// loads a C library to find them: a caller that needs the set too asks
/// once).
pub fn build_native(
    program: &Program,
    source_name: &str,
    opts: &BuildOptions<'_>,
    native: &BTreeSet<String>,
    log: &mut dyn FnMut(&str),
) -> Result<PathBuf, EmitError> {
    let c = emit(program, source_name, native)?;
    let dir = temp_dir("build")?;
    let stem = Path::new(source_name)
        .file_stem()
        .and_then(|s| s.to_str())
        .filter(|s| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        })
        .unwrap_or("program");
    let c_file = dir.path().join(format!("{stem}.c"));
    let write = |path: &Path, text: &str| {
        std::fs::write(path, text).map_err(|source| EmitError::Write {
            path: path.to_owned(),
            source,
        })
    };
    write(&c_file, &c)?;
    write(&dir.path().join("parsim_kernel.h"), KERNEL_HEADER)?;

    let mut args: Vec<String> = opts.cflags.split_whitespace().map(str::to_owned).collect();
    args.push("-I".to_owned());
    args.push(dir.path().display().to_string());
    args.push("-o".to_owned());
    args.push(opts.output.display().to_string());
    args.push(c_file.display().to_string());
    if let Some(k) = opts.kernels {
        let is_c = k.extension().and_then(|e| e.to_str()) == Some("c");
        if is_c {
            args.push(k.display().to_string());
        } else {
            let abs = std::fs::canonicalize(k).map_err(|source| EmitError::Read {
                path: k.to_owned(),
                source,
            })?;
            args.push(abs.display().to_string());
            if let Some(parent) = abs.parent() {
                args.push(format!("-Wl,-rpath,{}", parent.display()));
            }
        }
    }
    args.push("-lm".to_owned());
    let command = std::iter::once(opts.mpicc)
        .chain(args.iter().map(String::as_str))
        .map(shell_quote)
        .collect::<Vec<_>>()
        .join(" ");
    log(&command);
    let out = Command::new(opts.mpicc)
        .args(&args)
        .output()
        .map_err(|source| EmitError::NoCompiler {
            compiler: opts.mpicc.to_owned(),
            source,
        })?;
    if !out.status.success() {
        return Err(EmitError::CompilerFailed {
            compiler: opts.mpicc.to_owned(),
            status: out.status,
            output: format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        });
    }
    Ok(opts.output.to_path_buf())
}

/// `s` as one shell word.
fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=+,:@%".contains(&b));
    if plain {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::shell_quote;

    #[test]
    fn commands_are_quoted_for_the_shell() {
        assert_eq!(shell_quote("-O2"), "-O2");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
    }
}
