//! The `parsim` command line: predict the run time of an MPI skeleton.
//!
//! Exit codes (documented in README.md):
//! 0 prediction made, 1 input error (parse, semantic, machine file),
//! 2 usage error (also a flag the input makes meaningless), 3 deadlock found, 4 program error at run time
//! (invalid rank, truncation, runaway program, ...).

mod calibrate_blocks;
mod calibrate_cmd;
mod check_cmd;
mod common;
mod emit_c_cmd;
mod job_array;
mod monitor;
mod progress;
mod report_cmd;
mod run_cmd;
mod sweep_cmd;
mod validate_cmd;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The heap counted, for the memory probes of run, check and sweep
/// (`app::memory`).
#[global_allocator]
static ALLOCATOR: app::memory::Counting = app::memory::Counting;

// The helpers every command shares (loading, flags, output), as
// `crate::NAME`.
pub(crate) use common::*;

#[derive(Parser)]
#[command(
    name = "parsim",
    version,
    about = "Predict how long an MPI program runs on a cluster, from a skeleton, on a laptop"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Simulate a skeleton and print the predicted run time.
    Run(run_cmd::RunArgs),
    /// Print the basic-block graph of a skeleton as Graphviz DOT.
    Graph {
        /// The skeleton program (.mpl).
        file: PathBuf,
    },
    /// Describe a machine file (or the built-in default).
    Machine {
        /// Machine description (TOML); the built-in default when omitted.
        file: Option<PathBuf>,
    },
    /// Calibrate on the target machine: the network (`calibrate net`, from
    /// benchmark tables or by running a benchmark) and the kernels
    /// (`calibrate blocks`).
    Calibrate(CalibrateArgs),
    /// Find deadlocks and MPI usage errors (also under zero buffering).
    Check(Box<check_cmd::CheckArgs>),
    /// A scaling study: predicted time, speedup and efficiency over rank
    /// counts, machines and what-if settings.
    Sweep(Box<sweep_cmd::SweepArgs>),
    /// Compare predictions with reality: a benchmark skeleton's table with
    /// a measured one (--table), or real runs of the skeleton (--run).
    Validate(Box<validate_cmd::ValidateArgs>),
    /// Write one self-contained HTML page about a run: summary, per-rank
    /// breakdown, critical path, scaling plot, heat map, timeline.
    Report(Box<report_cmd::ReportArgs>),
    /// Translate a skeleton into one self-contained C MPI program.
    EmitC(emit_c_cmd::EmitArgs),
    /// Build a real MPI executable from a skeleton (mpicc or smpicc).
    BuildMpi(Box<emit_c_cmd::BuildArgs>),
}

#[derive(clap::Args)]
struct CalibrateArgs {
    #[command(subcommand)]
    command: CalibrateCommand,
}

#[derive(Subcommand)]
enum CalibrateCommand {
    /// Fit the network (and shared-memory) parameters of a machine from
    /// ping-pong tables (IMB/PMB or OSU output, or CSV), or measure them
    /// with --run / --shm-run.
    Net(Box<calibrate_cmd::NetArgs>),
    /// Time the native kernels of a skeleton on this machine (the ParJava
    /// block measurement) and write blocks.toml for `run --blocks`.
    Blocks(Box<calibrate_blocks::BlocksArgs>),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => run_cmd::cmd_run(&args),
        Command::Graph { file } => cmd_graph(&file),
        Command::Machine { file } => cmd_machine(file.as_deref()),
        Command::Calibrate(args) => match args.command {
            CalibrateCommand::Net(net) => calibrate_cmd::run_net(&net),
            CalibrateCommand::Blocks(b) => calibrate_blocks::run(&b),
        }
        .map(|()| Outcome::Ok),
        Command::Validate(args) => validate_cmd::run(&args).map(Outcome::Code),
        Command::Check(args) => check_cmd::run(&args).map(Outcome::Code),
        Command::Sweep(args) => sweep_cmd::run(&args).map(|()| Outcome::Ok),
        Command::Report(args) => report_cmd::run(&args),
        Command::EmitC(args) => emit_c_cmd::run_emit(&args),
        Command::BuildMpi(args) => emit_c_cmd::run_build(&args),
    };
    match result {
        Ok(Outcome::Ok) => ExitCode::SUCCESS,
        Ok(Outcome::InputError) => ExitCode::from(1),
        Ok(Outcome::Deadlock) => ExitCode::from(3),
        Ok(Outcome::RuntimeError) => ExitCode::from(4),
        Ok(Outcome::Code(c)) => ExitCode::from(c),
        Err(e) => {
            eprintln!("error: {e:#}");
            if e.downcast_ref::<common::UsageError>().is_some() {
                ExitCode::from(2)
            } else {
                ExitCode::from(1)
            }
        }
    }
}

fn cmd_graph(file: &Path) -> anyhow::Result<Outcome> {
    let source = read_source(file)?;
    let Some(program) = compile(file, &source) else {
        return Ok(Outcome::InputError);
    };
    out(&sim_core::dot::to_dot(&program));
    Ok(Outcome::Ok)
}

fn cmd_machine(file: Option<&Path>) -> anyhow::Result<Outcome> {
    match load_machine(file, None) {
        Ok(m) => {
            out(&format!("{}\n", m.describe()));
            Ok(Outcome::Ok)
        }
        Err(e) => {
            eprintln!("error: {e}");
            Ok(Outcome::InputError)
        }
    }
}
