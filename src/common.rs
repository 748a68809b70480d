//! What the commands share: loading a program or a machine with the
//! command line's error messages (the flag added to the application
//! layer's errors), the runaway-limit flags, output to stdout, the outcome
//! that chooses the exit code.

use std::path::{Path, PathBuf};

use anyhow::bail;
use app::study::{self, Study, StudyError};

use clap::ValueEnum;
use models::AnyMachine;
use sim_core::engine::SimError;

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
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    Text,
    Json,
}

/// How the run ended, for the exit code.
pub(crate) enum Outcome {
    Ok,
    InputError,
    Deadlock,
    RuntimeError,
    /// A command's own exit code (`check`).
    Code(u8),
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

pub(crate) fn read_source(file: &Path) -> anyhow::Result<String> {
    Ok(app::scenario::Source::read(file)?.text)
}

/// Parses and lowers; on error prints the diagnostics and returns None.
pub(crate) fn compile(file: &Path, text: &str) -> Option<sim_core::ir::Program> {
    match app::scenario::compile(&file.display().to_string(), text) {
        Ok(p) => Some(p),
        Err(e) => {
            eprint!("{e}");
            None
        }
    }
}

/// A table reader's error, naming the option that settles it.
fn table_error(err: &calibrate::InputError) -> String {
    use calibrate::{Column, InputError};
    match err {
        InputError::UnknownFormat => err
            .to_string()
            .replace("(name the format)", "(give --format)"),
        InputError::ChooseColumn {
            message,
            column,
            available,
        } => {
            let flag = match column {
                Column::Bytes => "--bytes-col",
                Column::Time => "--time-col",
            };
            format!(
                "{message}; the columns are: {} (give {flag})",
                available.join(", ")
            )
        }
        InputError::DuplicateSize { .. } => err
            .to_string()
            .replace("(filter the table)", "(filter the table, e.g. --where)"),
        _ => err.to_string(),
    }
}

/// A table's column or benchmark to choose, naming the option.
fn choose_error(message: &str, columns: Option<&str>, choice: app::error::Choice) -> String {
    use app::error::Choice;
    match (choice, columns) {
        (Choice::TimeColumn, None) => format!("{message} (name it with --time-col)"),
        (Choice::TimeColumn, Some(c)) => format!("{message} (columns: {c}; give --time-col)"),
        (Choice::TimeOrSimulatedColumn, c) => format!(
            "{message} (columns: {}; give --time-col, or --column)",
            c.unwrap_or_default()
        ),
        (Choice::Benchmark, _) => format!("{message}; choose one with --benchmark"),
    }
}

/// A channel fit's error, naming the eager-limit option of the channel.
fn fit_error(err: &calibrate::ChannelError, eager_flag: &str) -> String {
    match err {
        calibrate::ChannelError::ControlNotEager { control, eager } => format!(
            "control messages of {control} B are not below the eager limit of {eager} B (give a larger {eager_flag})"
        ),
        _ => err.to_string(),
    }
}

/// An Alltoall table's error, naming `--memcpy`.
fn alltoall_error(err: &calibrate::channel::AlltoallError) -> String {
    match err {
        calibrate::channel::AlltoallError::CopyExceedsTime {
            bytes,
            measured_us,
            copy_us,
        } => format!(
            "{bytes} B: the local copy ({copy_us:.3} us at the memcpy bandwidth) is not shorter than the measured call ({measured_us:.3} us); give a faster --memcpy"
        ),
        _ => err.to_string(),
    }
}

/// A machine-file writer's error, naming `--shm` and `--ranks-per-node`.
fn machine_file_error(err: &calibrate::WriteError) -> String {
    match err {
        calibrate::WriteError::SmpWithoutShm(n) => format!(
            "{n} ranks per node need a shared-memory channel: give an intra-node table (--shm), or 1 rank per node"
        ),
        calibrate::WriteError::ShmWithoutSmp => {
            format!("{err} (--ranks-per-node)")
        }
        calibrate::WriteError::NoSockets | calibrate::WriteError::SocketWithOneSocket(_) => {
            format!("{err} (--sockets)")
        }
        calibrate::WriteError::SocketsWithoutSmp(_) => {
            format!("{err} (--ranks-per-node, --sockets)")
        }
        _ => err.to_string(),
    }
}

/// An application error as the command line says it: with the flag that
/// gave the bad value.
pub(crate) fn flagged(e: app::Error) -> anyhow::Error {
    match e {
        app::Error::ParamSyntax(m) => anyhow::anyhow!("--param {m}"),
        app::Error::Setting(m) => anyhow::anyhow!("--set {m}"),
        app::Error::NoRanks => anyhow::anyhow!("--ranks must be at least 1"),
        app::Error::Table { path, err } => {
            anyhow::anyhow!("{}: {}", path.display(), table_error(&err))
        }
        app::Error::Fit { path, channel, err } => anyhow::anyhow!(
            "{}: fit: {}",
            path.display(),
            fit_error(
                &err,
                match channel {
                    app::netfit::FitChannel::Network => "--eager-limit",
                    app::netfit::FitChannel::Shm => "--shm-eager-limit",
                    app::netfit::FitChannel::Socket => "--socket-eager-limit",
                }
            )
        ),
        app::Error::Alltoall { path, err } => {
            anyhow::anyhow!("{}: {}", path.display(), alltoall_error(&err))
        }
        app::Error::Choose {
            message,
            columns,
            choice,
        } => anyhow::anyhow!("{}", choose_error(&message, columns.as_deref(), choice)),
        app::Error::NoMpiCompiler { compiler, err } => {
            anyhow::anyhow!("cannot run `{compiler}` (install MPI, or give --mpicc): {err}")
        }
        app::Error::MachineFile(err) => anyhow::anyhow!("{}", machine_file_error(&err)),
        app::Error::RanksPerNode {
            ranks_per_node,
            reason,
        } => anyhow::anyhow!("--ppn {ranks_per_node}: {reason}"),
        e => e.into(),
    }
}

/// The machine of a file (the built-in one without), with `--ppn` applied.
pub(crate) fn load_machine(file: Option<&Path>, ppn: Option<u32>) -> Result<AnyMachine, String> {
    app::scenario::load_machine(file, ppn).map_err(|e| flagged(e).to_string())
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

/// Warns (stderr) about kernels whose calibrated time was extrapolated more
/// than 2x beyond the measured range of work.
pub(crate) fn warn_extrapolation(blocks: &app::scenario::Blocks, path: &Path) {
    for e in blocks.extrapolations(2.0) {
        eprintln!("{}", app::scenario::extrapolation_warning(&e, path));
    }
}

/// Loads what `run`, `report` and `check` simulate; an input error is
/// printed (diagnostics as rendered, anything else as `error: ...` naming
/// the flag) and comes back as the outcome to exit with.
pub(crate) fn load_scenario(
    r: &app::scenario::Request<'_>,
) -> Result<app::scenario::Scenario, Outcome> {
    app::scenario::Scenario::load(r).map_err(|e| {
        match e {
            app::Error::Compile(diagnostics) => eprint!("{diagnostics}"),
            e => eprintln!("error: {}", flagged(e)),
        }
        Outcome::InputError
    })
}

/// The exit code of a simulation that failed.
pub(crate) fn sim_outcome(e: &SimError) -> Outcome {
    match e {
        SimError::Deadlock { .. } => Outcome::Deadlock,
        SimError::KernelWithoutCost { .. } | SimError::Config(_) => Outcome::InputError,
        SimError::Runtime { .. }
        | SimError::CollectiveMismatch { .. }
        | SimError::Runaway { .. } => Outcome::RuntimeError,
    }
}

/// Progress of a command's long work on stderr (`crate::progress`).
#[derive(clap::Args, Clone)]
pub(crate) struct ProgressArgs {
    /// No progress on stderr.
    #[arg(long, short)]
    pub quiet: bool,
    /// When stderr is not a terminal (a batch job's log), a progress line
    /// every this many seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    pub progress_every: f64,
}

impl ProgressArgs {
    pub(crate) fn reporter(&self) -> crate::progress::Reporter {
        crate::progress::Reporter::new(self.quiet, self.progress_every)
    }
}

/// How a study derives and runs its points (`sweep`, `report --sweep`).
#[derive(clap::Args, Clone)]
pub(crate) struct StudyOptions {
    /// Weak scaling: the problem grows with the ranks (as in heat.mpl), so
    /// efficiency is T(first) / T(p) and speedup the scaled speedup.
    #[arg(long)]
    pub weak: bool,
    /// Parallel efficiency below which a curve has stopped scaling.
    #[arg(long, default_value_t = 0.5)]
    pub efficiency: f64,
    /// Simulations run at once (default: the number of cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Kernel times from `parsim calibrate blocks`; each run uses the level
    /// measured with as many copies at once as it places ranks on a node.
    #[arg(long, value_name = "BLOCKS.toml")]
    pub blocks: Option<std::path::PathBuf>,
    /// With --blocks: draw kernel times from their measured distributions
    /// (seeded, deterministic; see `run --noise`).
    #[arg(long, value_name = "SEED", num_args = 0..=1, default_missing_value = "1", requires = "blocks")]
    pub noise: Option<u64>,
    /// With --noise: N draws per point (seeds SEED, SEED+1, ...); the point
    /// is their median and the range of the middle 90% of draws (5th to
    /// 95th percentile) is reported and drawn as an error bar.
    #[arg(long, value_name = "N", requires = "noise", value_parser = clap::value_parser!(u32).range(2..=10_000))]
    pub samples: Option<u32>,
    /// Skip the iterations of a steady outer loop in every simulation (see
    /// `run --fast-forward`); a simulation it cannot skip runs in full.
    #[arg(long)]
    pub fast_forward: bool,
    /// Skip the memory check: a sweep with a rank count of 4,096 or more is
    /// first probed (per machine, at a quarter and a sixteenth of its
    /// largest rank count, at most 65,536) to measure the memory its
    /// simulations need at once (one per --jobs thread), and refused when
    /// that is more than the machine has available.
    #[arg(long)]
    pub no_memory_check: bool,
    /// No progress on stderr.
    #[arg(long, short)]
    pub quiet: bool,
    /// When stderr is not a terminal (a batch job's log), a progress line
    /// every this many seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    pub progress_every: f64,
}

impl StudyOptions {
    /// The study's options in the application layer's terms.
    pub(crate) fn options(&self) -> study::Options {
        study::Options {
            weak: self.weak,
            efficiency: self.efficiency,
            jobs: self.jobs,
            blocks: self.blocks.clone(),
            noise: self.noise,
            samples: self.samples,
            fast_forward: self.fast_forward,
            memory_check: !self.no_memory_check,
        }
    }
}

/// The curves of `--machine` files and `--set` what-ifs, errors naming the
/// flag.
pub(crate) fn curves(machines: &[PathBuf], sets: &[String]) -> anyhow::Result<Vec<study::Curve>> {
    study::curves(machines, sets).map_err(flagged)
}

/// Runs a study with progress on stderr (`quiet`, `every`: see
/// [`crate::progress`]); a failed simulation is rendered with its source
/// line. Returns the curves and the notes on what-ifs that changed nothing.
pub(crate) fn run_study(
    s: Study<'_>,
    source: &str,
    opts: &StudyOptions,
) -> anyhow::Result<(Vec<study::Series>, Vec<String>)> {
    let reporter = std::sync::Mutex::new(crate::progress::Reporter::new(
        opts.quiet,
        opts.progress_every,
    ));
    let report = |done: usize, total: usize| {
        // A poisoned lock only loses progress lines.
        if let Ok(mut r) = reporter.lock() {
            r.update(|r| crate::progress::counted("simulations", done, total, r.elapsed()));
        }
    };
    let s = Study {
        progress: Some(&report),
        ..s
    };
    let outcome = study::run_study(&s);
    if let Ok(mut r) = reporter.lock() {
        r.finish();
    }
    match outcome {
        Ok(out) => {
            if let Some(path) = &s.options.blocks {
                for e in &out.extrapolated {
                    eprintln!("{}", app::scenario::extrapolation_warning(e, path));
                }
            }
            Ok((out.series, out.notes))
        }
        Err(e) => Err(study_failure(e, s.file, source)),
    }
}

/// A study's error for people: a failed simulation with its source line.
pub(crate) fn study_failure(e: StudyError, file: &str, source: &str) -> anyhow::Error {
    match e {
        StudyError::Simulation {
            label,
            ranks,
            error,
        } => anyhow::anyhow!(
            "{label} on {ranks} ranks:\n{}",
            app::diagnostics::sim_error(&error, file, source)
        ),
        StudyError::Input(e) => e.into(),
    }
}

/// A list of rank counts (`1,2,4,...,64`) parsed by clap, so that a bad
/// one is a usage error (exit 2) like any other bad flag value.
#[derive(Debug, Clone)]
pub(crate) struct RankList(pub Vec<u32>);

/// clap's parser for a [`RankList`]: the message names what is wrong;
/// clap names the flag.
pub(crate) fn rank_list(spec: &str) -> Result<RankList, String> {
    study::parse_ranks(spec).map(RankList).map_err(|e| match e {
        study::RanksError::Ellipsis { after } => format!(
            "`...` needs two numbers before it{}",
            if after { " and one after" } else { "" }
        ),
        e => e.to_string(),
    })
}

/// Flags that cannot go together in a way clap cannot see (a
/// `--collective KEY=VALUE` against a table flag): exit 2, as clap's own
/// usage errors.
#[derive(Debug)]
pub(crate) struct UsageError(pub(crate) String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// A usage error (exit 2): a flag's value the command cannot take, or a
/// flag that needs another.
pub(crate) fn usage(message: impl Into<String>) -> anyhow::Error {
    UsageError(message.into()).into()
}

/// clap's parser for a single rank count: at least 1 (0 ranks is a usage
/// error, exit 2, in every command).
pub(crate) fn rank_count(text: &str) -> Result<u32, String> {
    match text.trim().parse::<u32>() {
        Ok(0) => Err("must be at least 1".to_owned()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("not a rank count ({e})")),
    }
}

/// clap's parser for `--ppn`: at least 1 rank per node (a usage error,
/// exit 2, in every command).
pub(crate) fn ranks_per_node(text: &str) -> Result<u32, String> {
    match text.trim().parse::<u32>() {
        Ok(0) => Err("must be at least 1".to_owned()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("not a number of ranks per node ({e})")),
    }
}

/// clap's parser for a file whose extension chooses its format: the
/// extensions `allowed` (without the dot, lowercase), compared without
/// regard to case; anything else is a usage error naming them, so that a
/// `--trace x.txt` does not silently get JSON.
fn file_with_extension(text: &str, allowed: &[&str], what: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(text);
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext {
        Some(e) if allowed.contains(&e.as_str()) => Ok(path),
        _ => Err(format!(
            "the file's extension chooses {what}: {}",
            allowed
                .iter()
                .map(|e| format!(".{e}"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// `--trace`: `.json` (Chrome trace events) or `.prv` (Paraver).
pub(crate) fn trace_file(text: &str) -> Result<PathBuf, String> {
    file_with_extension(
        text,
        &["json", "prv"],
        "the trace format (Chrome trace events or Paraver)",
    )
}

/// `--comm-matrix`: `.csv` (and an SVG heat map beside it), or the heat
/// map's `.svg` / `.png` (and the CSV beside it).
pub(crate) fn matrix_file(text: &str) -> Result<PathBuf, String> {
    file_with_extension(
        text,
        &["csv", "svg", "png"],
        "what is written (the CSV, or the heat map)",
    )
}

/// `--call-profile`: `.csv`.
pub(crate) fn csv_file(text: &str) -> Result<PathBuf, String> {
    file_with_extension(text, &["csv"], "what is written")
}

/// `--plot`: `.svg` or `.png`.
pub(crate) fn picture_file(text: &str) -> Result<PathBuf, String> {
    file_with_extension(text, &["svg", "png"], "the picture format")
}

/// `e` with the advice that names the flags of `emit-c`, `build-mpi` and
/// `validate --run` (`--kernels`, `--mpicc`), which the library cannot know.
pub(crate) fn cli_error(e: emit_c::EmitError) -> anyhow::Error {
    match &e {
        emit_c::EmitError::NoImplementation { kernel, .. } => anyhow::anyhow!(
            "{e}: give it `cost ...` or implement `parsim_kernel_{kernel}` in the --kernels library"
        ),
        emit_c::EmitError::NoCompiler { source, .. } => {
            anyhow::anyhow!("{e}: {source} (is MPI installed? name another with --mpicc)")
        }
        _ => e.into(),
    }
}

/// A non-negative fraction written as a percentage ("5%") or a number
/// (0.05); `flag` names the option in errors.
pub(crate) fn fraction_flag(flag: &str, text: &str) -> anyhow::Result<f64> {
    let text = text.trim();
    let value = match text.strip_suffix('%') {
        Some(percent) => percent.trim().parse::<f64>().map(|p| p / 100.0),
        None => text.parse::<f64>(),
    }
    .map_err(|_| anyhow::anyhow!("{flag} `{text}`: expected a percentage such as 5%"))?;
    if !(value.is_finite() && value >= 0.0) {
        bail!("{flag} `{text}`: must be at least 0");
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    #[test]
    fn tolerances() {
        use super::fraction_flag;
        assert!((fraction_flag("--tolerance", "5%").expect("ok") - 0.05).abs() < 1e-15);
        assert!((fraction_flag("--tolerance", "0.1").expect("ok") - 0.1).abs() < 1e-15);
        assert!(fraction_flag("--tolerance", "-1%").is_err());
        assert!(fraction_flag("--tolerance", "x").is_err());
    }
}
