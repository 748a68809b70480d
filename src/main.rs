//! The `parsim` command line: predict the run time of an MPI skeleton.
//!
//! Exit codes (documented in README.md):
//! 0 prediction made, 1 input error (parse, semantic, machine file),
//! 2 usage error, 3 deadlock found, 4 program error at run time
//! (invalid rank, truncation, runaway program, ...).

mod calibrate_blocks;
mod calibrate_cmd;
mod check_cmd;
mod emit_c_cmd;
mod monitor;
mod report;
mod report_cmd;
mod sweep_cmd;
mod validate_cmd;
mod validate_run;

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
    /// Calibrate on the target machine: the network (`calibrate net`, from
    /// benchmark tables or by running a benchmark) and the kernels
    /// (`calibrate blocks`).
    Calibrate(calibrate_cmd::CalibrateArgs),
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
    /// A live view of the ranks in the terminal (ParJava's monitor): green
    /// computing, yellow communicating, red waiting; p or space pauses, q
    /// quits. Without a terminal the run goes on without it.
    #[arg(long)]
    monitor: bool,
    #[command(flatten)]
    limits: Limits,
    /// Show every rank in the text report, not groups of ranks.
    #[arg(long)]
    all_ranks: bool,
    /// Write a timeline: FILE.json in Chrome trace-event format (opens in
    /// Perfetto and chrome://tracing: a track per rank, message arrows), or
    /// FILE.prv as a Paraver trace (with FILE.pcf and FILE.row).
    #[arg(long, value_name = "FILE.json|FILE.prv")]
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
    /// Given FILE.svg or FILE.png, the heat map is written there (as PNG
    /// for .png) and the CSV next to it.
    #[arg(long, value_name = "FILE.csv")]
    comm_matrix: Option<PathBuf>,
    /// Kernel times measured by `parsim calibrate blocks` (blocks.toml):
    /// they replace the kernels' cost formulas.
    #[arg(long, value_name = "BLOCKS.toml")]
    blocks: Option<PathBuf>,
    /// With --blocks: draw each kernel call's time from its measured
    /// distribution (one deterministic stream per rank from SEED, default 1)
    /// instead of charging the mean, so that ranks waiting for each other pay
    /// for the slowest, as on a real machine.
    #[arg(long, value_name = "SEED", num_args = 0..=1, default_missing_value = "1")]
    noise: Option<u64>,
    /// With --noise: simulate N draws (seeds SEED, SEED+1, ...; in parallel
    /// on the cores) and report the spread of the predicted run time
    /// (median, 5th and 95th percentiles, min, max); the report above it is
    /// the first draw's.
    #[arg(long, value_name = "N", requires = "noise", value_parser = clap::value_parser!(u32).range(2..=100_000))]
    samples: Option<u32>,
}

/// The limits that stop a runaway program (`run`, `report`, `check`).
#[derive(clap::Args, Clone, Copy)]
pub(crate) struct Limits {
    /// Stop a runaway program after this many events plus communication
    /// calls (zero-byte collectives make no events).
    #[arg(long, default_value_t = 2_000_000_000)]
    max_events: u64,
    /// Stop a runaway program once model time passes this many seconds.
    #[arg(long, default_value_t = 1.0e7)]
    max_sim_time: f64,
    /// Stop a rank that runs this many basic blocks in a row without its
    /// model time advancing and without communicating (a loop that never
    /// ends and costs nothing).
    #[arg(long, default_value_t = 100_000_000)]
    max_zero_time_blocks: u64,
}

impl Limits {
    /// The limits in the application layer's terms.
    pub(crate) fn app(self) -> app::scenario::Limits {
        app::scenario::Limits {
            max_events: self.max_events,
            max_sim_time: self.max_sim_time,
            max_zero_time_blocks: self.max_zero_time_blocks,
        }
    }

    /// `cfg` with these limits.
    pub(crate) fn apply(self, cfg: SimConfig) -> SimConfig {
        self.app().apply(cfg)
    }
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
    Ok(app::scenario::Source::read(file)?.text)
}

/// Parses and lowers; on error prints the diagnostics and returns None.
fn compile(file: &Path, text: &str) -> Option<sim_core::ir::Program> {
    let source = app::scenario::Source {
        name: file.display().to_string(),
        text: text.to_owned(),
    };
    match source.compile() {
        Ok(p) => Some(p),
        Err(e) => {
            eprint!("{e}");
            None
        }
    }
}

/// An application error as the command line says it: with the flag that
/// gave the bad value.
pub(crate) fn flagged(e: app::Error) -> anyhow::Error {
    match e {
        app::Error::ParamSyntax(m) => anyhow::anyhow!("--param {m}"),
        app::Error::Setting(m) => anyhow::anyhow!("--set {m}"),
        app::Error::RanksPerNode {
            ranks_per_node,
            reason,
        } => anyhow::anyhow!("--ppn {ranks_per_node}: {reason}"),
        e => e.into(),
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
    app::scenario::load_machine(file, ppn).map_err(|e| match e {
        app::scenario::MachineLoadError::RanksPerNode {
            ranks_per_node,
            reason,
        } => format!("--ppn {ranks_per_node}: {reason}"),
        e => e.to_string(),
    })
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

/// Reads, compiles and applies `--param` overrides; diagnostics go into the
/// error.
pub(crate) fn load_program(
    file: &Path,
    params: &[String],
) -> anyhow::Result<sim_core::ir::Program> {
    load_program_and_source(file, params).map(|(program, _)| program)
}

/// [`load_program`], keeping the source text for rendering run-time errors.
pub(crate) fn load_program_and_source(
    file: &Path,
    params: &[String],
) -> anyhow::Result<(sim_core::ir::Program, String)> {
    app::scenario::load_program(file, params)
        .map(|(program, source)| (program, source.text))
        .map_err(flagged)
}

/// Writes a file whole or not at all.
pub(crate) fn write_atomically(path: &Path, text: &str) -> anyhow::Result<()> {
    Ok(app::scenario::write_atomically(path, text)?)
}

/// The calibrated kernel times of a blocks file for runs with
/// `ranks_on_node` ranks sharing a node.
pub(crate) fn load_blocks(
    path: &Path,
    ranks_on_node: u32,
) -> anyhow::Result<app::scenario::Blocks> {
    Ok(app::scenario::Blocks::load(path, ranks_on_node)?)
}

/// Warns (stderr) about kernels whose calibrated time was extrapolated more
/// than 2x beyond the measured range of work.
pub(crate) fn warn_extrapolation(blocks: &app::scenario::Blocks, path: &Path) {
    for e in blocks.extrapolations(2.0) {
        eprintln!("{}", app::scenario::extrapolation_warning(&e, path));
    }
}

/// What `run` and `report` simulate: the source, the program with its
/// `--param` overrides applied, and the machine with `--ppn`.
pub(crate) struct RunInput {
    pub source: String,
    pub name: String,
    pub program: sim_core::ir::Program,
    pub overrides: Vec<(String, String)>,
    pub machine: AnyMachine,
}

/// Reads, compiles and loads a run's inputs; an input error is printed and
/// comes back as the outcome to exit with.
pub(crate) fn prepare_run(
    file: &Path,
    params: &[String],
    machine: Option<&Path>,
    ppn: Option<u32>,
    ranks: u32,
) -> anyhow::Result<Result<RunInput, Outcome>> {
    let source = read_source(file)?;
    let name = file.display().to_string();
    let Some(mut program) = compile(file, &source) else {
        return Ok(Err(Outcome::InputError));
    };
    let checked = (|| {
        let overrides = app::scenario::apply_overrides(&mut program, params)
            .map_err(|e| flagged(e).to_string())?;
        let machine = load_machine(machine, ppn)?;
        if ranks == 0 {
            return Err("--ranks must be at least 1".to_owned());
        }
        Ok((overrides, machine))
    })();
    match checked {
        Ok((overrides, machine)) => Ok(Ok(RunInput {
            source,
            name,
            program,
            overrides,
            machine,
        })),
        Err(e) => {
            eprintln!("error: {e}");
            Ok(Err(Outcome::InputError))
        }
    }
}

fn cmd_run(args: &RunArgs) -> anyhow::Result<Outcome> {
    let RunInput {
        source,
        name,
        program,
        machine,
        ..
    } = match prepare_run(
        &args.file,
        &args.params,
        args.machine.as_deref(),
        args.ppn,
        args.ranks,
    )? {
        Ok(input) => input,
        Err(outcome) => return Ok(outcome),
    };
    let blocks = match &args.blocks {
        None => app::scenario::Blocks::default(),
        Some(path) => match load_blocks(path, args.ranks.min(machine.ranks_per_node())) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("error: {e:#}");
                return Ok(Outcome::InputError);
            }
        },
    };
    if args.noise.is_some() && args.blocks.is_none() {
        eprintln!("error: --noise draws calibrated kernel times: it needs --blocks");
        return Ok(Outcome::InputError);
    }
    let limits = args.limits.app();
    let cfg = SimConfig {
        kernel_times: blocks.times.clone(),
        noise_seed: args.noise,
        trace_limit: if args.trace.is_some() || args.critical_path {
            args.trace_limit.max(1)
        } else {
            0
        },
        comm_matrix: args.comm_matrix.is_some(),
        ..limits.config(args.ranks)
    };
    let json = args.format == Format::Json;
    let mut monitor = if args.monitor {
        monitor::Monitor::start()
    } else {
        None
    };
    // The monitor has the screen: `print` output waits until it is closed.
    let buffered = json || monitor.is_some();
    let mut printed: Vec<PrintLine> = Vec::new();
    let mut sink = |line: PrintLine| {
        if buffered {
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
        if let Some(m) = monitor.as_mut() {
            m.update(p);
            return;
        }
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
    let mut run = machine.start(cfg.ranks);
    let result =
        sim_core::engine::simulate_with_progress(&program, &mut run, cfg, &mut sink, &mut progress);
    let violation = plugin_violation(&run);
    drop(run);
    if shown {
        // Erase the progress line (ANSI "erase line"; stderr is a terminal).
        eprint!("\r\x1b[2K");
    }
    if monitor.take().is_some() && !json {
        for line in printed.drain(..) {
            out(&format!("[{}] {}\n", line.rank, line.text));
        }
    }
    let wall = start.elapsed().as_secs_f64();
    if let Some(path) = &args.blocks {
        warn_extrapolation(&blocks, path);
    }
    match result {
        Ok(rep) => {
            if let Some(e) = violation {
                eprintln!("error: {e}");
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
                    &app::analysis::critical_path(&rep),
                    &name,
                ));
            }
            if let Some(path) = &args.comm_matrix {
                let picture = path.extension().is_some_and(|e| {
                    e.eq_ignore_ascii_case("svg") || e.eq_ignore_ascii_case("png")
                });
                let (csv, image) = if picture {
                    (path.with_extension("csv"), path.clone())
                } else {
                    (path.clone(), path.with_extension("svg"))
                };
                std::fs::write(&csv, app::export::matrix_csv(&rep))
                    .with_context(|| format!("cannot write {}", csv.display()))?;
                app::chart::write_picture(
                    &image,
                    &app::export::matrix_svg(&rep, args.ranks, &name),
                )?;
            }
            if let Some(path) = &args.trace {
                if path.extension().is_some_and(|e| e == "prv") {
                    let (prv, pcf, row) =
                        app::paraver::trace(&rep, args.ranks, &name, &app::clock::paraver_date());
                    for (p, text) in [
                        (path.clone(), prv),
                        (path.with_extension("pcf"), pcf),
                        (path.with_extension("row"), row),
                    ] {
                        std::fs::write(&p, text)
                            .with_context(|| format!("cannot write {}", p.display()))?;
                    }
                } else {
                    let text = app::export::chrome_trace(&rep, args.ranks, &name);
                    std::fs::write(path, text)
                        .with_context(|| format!("cannot write {}", path.display()))?;
                }
                if rep.trace_truncated {
                    eprintln!(
                        "warning: the timeline was cut at {} events (--trace-limit)",
                        args.trace_limit
                    );
                }
            }
            let draws = match (args.samples, args.noise) {
                (Some(n), Some(seed)) => {
                    let base = SimConfig {
                        kernel_times: blocks.times.clone(),
                        ..limits.config(args.ranks)
                    };
                    match app::study::noise_draws(&program, &machine, &base, seed, n) {
                        Ok(mut rest) => {
                            rest.insert(0, (seed, rep.predicted_seconds));
                            Some(rest)
                        }
                        Err(e) => {
                            eprint!("{}", report::sim_error(&e, &name, &source));
                            return Ok(sim_outcome(&e));
                        }
                    }
                }
                _ => None,
            };
            if json {
                let mut v = report::json(&rep, &printed, wall, &name, machine.name(), args.ranks);
                if let Some(d) = &draws {
                    v["noise_draws"] = draws_json(d);
                }
                out(&format!("{}\n", serde_json::to_string_pretty(&v)?));
            } else {
                out(&report::text(&rep, &name, machine.name(), args.all_ranks));
                if let Some(d) = &draws {
                    out(&draws_text(d));
                }
            }
            Ok(Outcome::Ok)
        }
        Err(e) => {
            if args.stats {
                eprintln!("stats: stopped after {wall:.3} s wall");
            }
            eprint!("{}", report::sim_error(&e, &name, &source));
            Ok(sim_outcome(&e))
        }
    }
}

/// Median, 5th and 95th percentiles (type 7), min and max of the draws.
fn draw_stats(draws: &[(u64, f64)]) -> [f64; 5] {
    app::study::spread_of(draws.iter().map(|d| d.1).collect())
}

fn draws_text(draws: &[(u64, f64)]) -> String {
    let [median, p5, p95, min, max] = draw_stats(draws);
    let first = draws.first().map_or(0, |d| d.0);
    let last = draws.last().map_or(0, |d| d.0);
    format!(
        "\nnoise: {} draws (seeds {first}..{last}): predicted run time median {}, \
         90% of draws in {} .. {}, min {}, max {}\n",
        draws.len(),
        report::fmt_time(median),
        report::fmt_time(p5),
        report::fmt_time(p95),
        report::fmt_time(min),
        report::fmt_time(max),
    )
}

fn draws_json(draws: &[(u64, f64)]) -> serde_json::Value {
    let [median, p5, p95, min, max] = draw_stats(draws);
    serde_json::json!({
        "seeds": draws.iter().map(|d| d.0).collect::<Vec<_>>(),
        "predicted_seconds": draws.iter().map(|d| d.1).collect::<Vec<_>>(),
        "median": median, "p5": p5, "p95": p95, "min": min, "max": max,
    })
}

/// The exit code of a simulation that failed.
fn sim_outcome(e: &SimError) -> Outcome {
    match e {
        SimError::Deadlock { .. } => Outcome::Deadlock,
        SimError::KernelWithoutCost { .. } | SimError::Config(_) => Outcome::InputError,
        SimError::Runtime { .. } | SimError::Runaway { .. } => Outcome::RuntimeError,
    }
}

/// A plugin model that returned invalid times makes the prediction
/// untrustworthy: the message to stop with.
fn plugin_violation(run: &models::AnyRun<'_>) -> Option<String> {
    let v = run.violation()?;
    Some(format!(
        "the plugin model {} returned invalid times {} time(s); the prediction is not trustworthy\n  first: {} {} (used {} instead)",
        v.library,
        run.violations(),
        v.call,
        v.problem,
        v.replacement
    ))
}
