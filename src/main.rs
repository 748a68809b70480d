//! The `parsim` command line: predict the run time of an MPI skeleton.
//!
//! Exit codes (documented in README.md):
//! 0 prediction made, 1 input error (parse, semantic, machine file),
//! 2 usage error, 3 deadlock found, 4 program error at run time
//! (invalid rank, truncation, runaway program, ...).

mod calibrate_cmd;
mod check_cmd;
mod report;
mod sweep_cmd;
mod validate_cmd;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use clap::{Parser, Subcommand, ValueEnum};
use models::AnyMachine;
use sim_core::engine::{PrintLine, SimConfig, SimError};

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
    Run(RunArgs),
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
    /// Fit a machine file from benchmark tables (`calibrate net`).
    Calibrate(calibrate_cmd::CalibrateArgs),
    /// Find deadlocks and MPI usage errors (also under zero buffering).
    Check(Box<check_cmd::CheckArgs>),
    /// A scaling study: predicted time, speedup and efficiency over rank
    /// counts, machines and what-if settings.
    Sweep(Box<sweep_cmd::SweepArgs>),
    /// Compare a benchmark skeleton's simulated table with a measured one.
    Validate(Box<validate_cmd::ValidateArgs>),
}

#[derive(clap::Args)]
struct RunArgs {
    /// The skeleton program (.mpl).
    file: PathBuf,
    /// Machine description (TOML); default: the built-in InfiniBand cluster.
    #[arg(long, short)]
    machine: Option<PathBuf>,
    /// Ranks per node for this run (overrides the machine file's, like
    /// `mpirun -ppn`).
    #[arg(long)]
    ppn: Option<u32>,
    /// Number of MPI ranks.
    #[arg(long, short = 'n')]
    ranks: u32,
    /// Override a `param`: --param name=value (repeatable).
    #[arg(long = "param", short = 'p', value_name = "NAME=VALUE")]
    params: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Print simulator statistics (events, events per second) on stderr.
    #[arg(long)]
    stats: bool,
    /// No progress line on stderr (it is shown only on a terminal anyway).
    #[arg(long, short)]
    quiet: bool,
    /// Stop a runaway program after this many events.
    #[arg(long, default_value_t = 2_000_000_000)]
    max_events: u64,
    /// Stop a runaway program once model time passes this many seconds.
    #[arg(long, default_value_t = 1.0e7)]
    max_sim_time: f64,
    /// Show every rank in the text report, not groups of ranks.
    #[arg(long)]
    all_ranks: bool,
    /// Write a timeline in Chrome trace-event format (opens in Perfetto
    /// and chrome://tracing): a track per rank, message arrows.
    #[arg(long, value_name = "FILE.json")]
    trace: Option<PathBuf>,
    /// At most this many timeline events (the rest is cut, and said so).
    #[arg(long, default_value_t = 1_000_000)]
    trace_limit: usize,
    /// Print the critical path: the chain of compute, messages and waits
    /// across ranks that determines the predicted time.
    #[arg(long)]
    critical_path: bool,
    /// Write the communication matrix: CSV (source, destination, messages,
    /// bytes, seconds) and an SVG heat map next to it (FILE with .svg).
    #[arg(long, value_name = "FILE.csv")]
    comm_matrix: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// How the run ended, for the exit code.
enum Outcome {
    Ok,
    InputError,
    Deadlock,
    RuntimeError,
    /// A command's own exit code (`check`).
    Code(u8),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => cmd_run(&args),
        Command::Graph { file } => cmd_graph(&file),
        Command::Machine { file } => cmd_machine(file.as_deref()),
        Command::Calibrate(args) => calibrate_cmd::run(&args).map(|()| Outcome::Ok),
        Command::Validate(args) => validate_cmd::run(&args).map(|()| Outcome::Ok),
        Command::Check(args) => check_cmd::run(&args).map(Outcome::Code),
        Command::Sweep(args) => sweep_cmd::run(&args).map(|()| Outcome::Ok),
    };
    match result {
        Ok(Outcome::Ok) => ExitCode::SUCCESS,
        Ok(Outcome::InputError) => ExitCode::from(1),
        Ok(Outcome::Deadlock) => ExitCode::from(3),
        Ok(Outcome::RuntimeError) => ExitCode::from(4),
        Ok(Outcome::Code(c)) => ExitCode::from(c),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}

/// Writes to stdout; a closed pipe (`parsim run ... | head`) ends the
/// process quietly with 141 (128 + SIGPIPE, as a shell reports it) instead
/// of a panic.
pub(crate) fn out(text: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(141);
        }
        eprintln!("error: cannot write to stdout: {e}");
        std::process::exit(1);
    }
}

fn read_source(file: &Path) -> anyhow::Result<String> {
    std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))
}

/// Parses and lowers; on error prints the diagnostics and returns None.
fn compile(file: &Path, source: &str) -> Option<sim_core::ir::Program> {
    let name = file.display().to_string();
    match frontend::compile(&name, source) {
        Ok(p) => Some(p),
        Err(diags) => {
            eprint!("{}", diags.render(&name, source));
            None
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

/// The machine of a file (the built-in one without), with `--ppn` applied.
pub(crate) fn load_machine(file: Option<&Path>, ppn: Option<u32>) -> Result<AnyMachine, String> {
    let machine = match file {
        None => AnyMachine::builtin_default(),
        Some(path) => AnyMachine::load(path).map_err(|e| e.to_string())?,
    };
    match ppn {
        None => Ok(machine),
        Some(p) => machine
            .with_ranks_per_node(p)
            .map_err(|e| format!("--ppn {p}: {e}")),
    }
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

pub(crate) fn parse_overrides(params: &[String]) -> Result<Vec<(String, String)>, String> {
    params
        .iter()
        .map(|p| match p.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_owned(), v.trim().to_owned())),
            _ => Err(format!("--param expects NAME=VALUE, got `{p}`")),
        })
        .collect()
}

fn cmd_run(args: &RunArgs) -> anyhow::Result<Outcome> {
    let source = read_source(&args.file)?;
    let name = args.file.display().to_string();
    let Some(mut program) = compile(&args.file, &source) else {
        return Ok(Outcome::InputError);
    };
    let overrides = match parse_overrides(&args.params) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(Outcome::InputError);
        }
    };
    if let Err(e) = frontend::apply_param_overrides(&mut program, &overrides) {
        eprintln!("error: {e}");
        return Ok(Outcome::InputError);
    }
    let mut machine = match load_machine(args.machine.as_deref(), args.ppn) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(Outcome::InputError);
        }
    };
    if args.ranks == 0 {
        eprintln!("error: --ranks must be at least 1");
        return Ok(Outcome::InputError);
    }
    let cfg = SimConfig {
        ranks: args.ranks,
        max_events: args.max_events,
        max_sim_time: args.max_sim_time,
        trace_limit: if args.trace.is_some() || args.critical_path {
            args.trace_limit.max(1)
        } else {
            0
        },
        comm_matrix: args.comm_matrix.is_some(),
        ..SimConfig::default()
    };
    let json = args.format == Format::Json;
    let mut printed: Vec<PrintLine> = Vec::new();
    let mut sink = |line: PrintLine| {
        if json {
            printed.push(line);
        } else {
            out(&format!("[{}] {}\n", line.rank, line.text));
        }
    };
    let start = Instant::now();
    // A progress line for long runs, on a terminal only, at most 5 times a
    // second: model time, events per second, ranks finished.
    let show_progress = !args.quiet && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut last_shown = start;
    let mut shown = false;
    let mut progress = |p: &sim_core::engine::Progress| {
        let now = Instant::now();
        if !show_progress || now.duration_since(last_shown).as_secs_f64() < 0.2 {
            return;
        }
        last_shown = now;
        shown = true;
        let rate = p.events as f64 / now.duration_since(start).as_secs_f64().max(1e-9) / 1e6;
        eprint!(
            "\r[parsim] model time {:.6} s, {:.1} M events/s, {} of {} ranks finished   ",
            p.sim_time, rate, p.finished, p.ranks
        );
    };
    let result = sim_core::engine::simulate_with_progress(
        &program,
        &mut machine,
        cfg,
        &mut sink,
        &mut progress,
    );
    if shown {
        // Erase the progress line (ANSI "erase line"; stderr is a terminal).
        eprint!("\r\x1b[2K");
    }
    let wall = start.elapsed().as_secs_f64();
    match result {
        Ok(rep) => {
            if let Some(v) = machine.violation() {
                eprintln!(
                    "error: the plugin model {} returned invalid times {} time(s); the prediction is not trustworthy\n  first: {} {} (used {} instead)",
                    v.library,
                    machine.violations(),
                    v.call,
                    v.problem,
                    v.replacement
                );
                return Ok(Outcome::InputError);
            }
            if args.stats {
                eprintln!(
                    "stats: {} events in {:.3} s wall ({:.2} M events/s), {} ranks, {} messages",
                    rep.events,
                    wall,
                    rep.events as f64 / wall.max(1e-9) / 1e6,
                    args.ranks,
                    rep.messages
                );
            }
            if args.critical_path {
                if rep.trace_truncated {
                    eprintln!(
                        "warning: the timeline was cut (--trace-limit): the critical path may be incomplete"
                    );
                }
                out(&report::critical_path_text(
                    &report::critical_path(&rep),
                    &name,
                ));
            }
            if let Some(path) = &args.comm_matrix {
                std::fs::write(path, report::matrix_csv(&rep))
                    .with_context(|| format!("cannot write {}", path.display()))?;
                let svg = path.with_extension("svg");
                std::fs::write(&svg, report::matrix_svg(&rep, args.ranks, &name))
                    .with_context(|| format!("cannot write {}", svg.display()))?;
            }
            if let Some(path) = &args.trace {
                let text = report::chrome_trace(&rep, args.ranks, &name);
                std::fs::write(path, text)
                    .with_context(|| format!("cannot write {}", path.display()))?;
                if rep.trace_truncated {
                    eprintln!(
                        "warning: the timeline was cut at {} events (--trace-limit)",
                        args.trace_limit
                    );
                }
            }
            if json {
                let v = report::json(&rep, &printed, wall, &name, machine.name(), args.ranks);
                out(&format!("{}\n", serde_json::to_string_pretty(&v)?));
            } else {
                out(&report::text(&rep, &name, machine.name(), args.all_ranks));
            }
            Ok(Outcome::Ok)
        }
        Err(e) => {
            if args.stats {
                eprintln!("stats: stopped after {wall:.3} s wall");
            }
            let outcome = match &e {
                SimError::Deadlock { .. } => Outcome::Deadlock,
                SimError::KernelWithoutCost { .. } | SimError::Config(_) => Outcome::InputError,
                SimError::Runtime { .. } | SimError::Runaway { .. } => Outcome::RuntimeError,
            };
            eprint!("{}", report::sim_error(&e, &name, &source));
            Ok(outcome)
        }
    }
}
