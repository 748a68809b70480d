//! The `emit-c` and `build-mpi` subcommands over the `emit_c` crate: their
//! arguments, output and exit codes, and the crate's errors in the terms of
//! the command line ([`crate::common::cli_error`]).

use std::collections::BTreeSet;
use std::path::PathBuf;

use anyhow::Context;
use emit_c::{BuildOptions, build, emit, native_kernels, program_name};

use crate::Outcome;

#[derive(clap::Args)]
pub struct EmitArgs {
    /// The skeleton program (.mpl).
    file: PathBuf,
    /// Native kernels: a C file in the ABI of parsim_kernel.h, or a shared
    /// library; its `parsim_kernel_NAME` functions replace the cost of
    /// kernel NAME.
    #[arg(long, value_name = "K.c|K.so")]
    kernels: Option<PathBuf>,
    /// Write the C program here instead of to stdout.
    #[arg(long, short, value_name = "OUT.c")]
    output: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct BuildArgs {
    /// The skeleton program (.mpl).
    file: PathBuf,
    /// Native kernels: a C file in the ABI of parsim_kernel.h (compiled
    /// with the program), or a shared library (linked).
    #[arg(long, value_name = "K.c")]
    kernels: Option<PathBuf>,
    /// The executable to write.
    #[arg(long, short, value_name = "BINARY")]
    output: PathBuf,
    /// The MPI compiler wrapper (`smpicc` builds for SimGrid's smpirun).
    #[arg(long, default_value = "mpicc")]
    mpicc: String,
    /// Compiler flags, split at whitespace.
    #[arg(long, default_value = "-O2", allow_hyphen_values = true)]
    cflags: String,
}

pub(crate) fn run_emit(args: &EmitArgs) -> anyhow::Result<Outcome> {
    let source = crate::read_source(&args.file)?;
    let Some(program) = crate::compile(&args.file, &source) else {
        return Ok(Outcome::InputError);
    };
    let native = match &args.kernels {
        Some(k) => native_kernels(k, &program)
            .map_err(crate::cli_error)
            .with_context(|| format!("kernel library {}", k.display()))?,
        None => BTreeSet::new(),
    };
    let c = emit(&program, &program_name(&args.file), &native)
        .map_err(crate::cli_error)
        .with_context(|| format!("cannot translate {}", args.file.display()))?;
    match &args.output {
        Some(path) => {
            std::fs::write(path, c).with_context(|| format!("cannot write {}", path.display()))?
        }
        None => crate::out(&c),
    }
    Ok(Outcome::Ok)
}

pub(crate) fn run_build(args: &BuildArgs) -> anyhow::Result<Outcome> {
    let source = crate::read_source(&args.file)?;
    let Some(program) = crate::compile(&args.file, &source) else {
        return Ok(Outcome::InputError);
    };
    let opts = BuildOptions {
        kernels: args.kernels.as_deref(),
        output: &args.output,
        mpicc: &args.mpicc,
        cflags: &args.cflags,
    };
    let binary = build(&program, &program_name(&args.file), &opts, &mut |cmd| {
        crate::out(&format!("{cmd}\n"))
    })
    .map_err(crate::cli_error)
    .with_context(|| format!("cannot build {}", args.file.display()))?;
    crate::out(&format!("built {}\n", binary.display()));
    Ok(Outcome::Ok)
}
