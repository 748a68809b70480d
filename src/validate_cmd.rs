//! `parsim validate`: run a benchmark skeleton (an IMB-style program that
//! prints its own table) on a machine for every process count of a measured
//! table, and compare per message size: measured, predicted, error; then the
//! median and maximum absolute error per group and overall.
//!
//! The program prints, from one rank, IMB-style rows of numbers:
//! `bytes repetitions t_min t_max t_avg` (µs), or without `bytes` for
//! benchmarks that have no message size (Barrier). Other output is ignored.
//! A program gets the active process count as `--param active=K` when the
//! table has an active-process column (IMB's "k active of N": the program
//! runs the benchmark in a communicator of the first K ranks).

use std::path::{Path, PathBuf};

use anyhow::Context;

#[derive(clap::Args)]
pub struct ValidateArgs {
    /// The benchmark skeleton (e.g. examples/imb/alltoall.mpl).
    program: PathBuf,
    /// The measured table: IMB-MPI1 or PMB text output as the benchmark
    /// prints it (every process-count block is compared; "k active of N"
    /// from its "additional processes waiting" line), OSU output (with or
    /// without -f; the process count from --ranks), the table a skeleton
    /// run for real printed (`build-mpi`), or CSV with a time column in µs
    /// and optionally `bytes`, active-process and total-process columns. Or
    /// --run: real runs of the program.
    #[arg(long, required_unless_present = "run", conflicts_with = "run")]
    table: Option<PathBuf>,
    /// Machine description (TOML); default: the built-in machine.
    #[arg(long, short)]
    machine: Option<PathBuf>,
    /// Ranks per node for this run (overrides the machine file's, like
    /// `mpirun -ppn`).
    #[arg(long, value_parser = crate::ranks_per_node)]
    ppn: Option<u32>,
    /// The measured time column (CSV default: the time column named after
    /// --column, e.g. `t_avg[usec]`, else the first whose name contains
    /// "usec" or starts with "t_"; IMB default: the one --column names,
    /// e.g. `t_avg[usec]`, else `t[usec]`; OSU default: Avg/Min/Max
    /// Latency as --column says). Refused with an OSU bandwidth table,
    /// whose measured value is its MB/s.
    #[arg(long, conflicts_with = "run")]
    time_col: Option<String>,
    /// IMB output: the benchmark to compare (default: the one named like the
    /// program's file, e.g. Alltoall for alltoall.mpl, or the only one).
    /// Refused with other tables.
    #[arg(long, conflicts_with = "run")]
    benchmark: Option<String>,
    /// CSV: the column with the number of active processes (default:
    /// `active_procs`). Refused with other tables.
    #[arg(long, conflicts_with = "run")]
    active_col: Option<String>,
    /// CSV: the column with the total number of processes (default:
    /// `total_procs`). Refused with other tables.
    #[arg(long, conflicts_with = "run")]
    total_col: Option<String>,
    /// Ranks to run when the table does not say (CSV without process
    /// columns, OSU output but osu_mbw_mr's; default 2). Refused when the
    /// table sets them (IMB blocks, osu_mbw_mr's pairs, CSV process
    /// columns).
    #[arg(long, conflicts_with = "run")]
    ranks: Option<u32>,
    /// Which simulated column to compare: t_min, t_max or t_avg.
    #[arg(long, default_value = "t_avg", value_parser = ["t_min", "t_max", "t_avg"], conflicts_with = "run")]
    column: String,
    /// Override a `param` of the program (repeatable).
    #[arg(long = "param", short = 'p', value_name = "NAME=VALUE")]
    params: Vec<String>,
    /// Skip the steady repetitions of the benchmark's loops in each
    /// simulation (see `run --fast-forward`); the notes say what was
    /// skipped and the bound.
    #[arg(long, conflicts_with = "run")]
    fast_forward: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = crate::Format::Text)]
    format: crate::Format,
    #[command(flatten)]
    real: RunModeArgs,
    #[command(flatten)]
    progress: crate::ProgressArgs,
}

/// Exit status: 0; 2 for a flag the table makes meaningless (a usage
/// error, like clap's); 5 when run mode's `--max-median-error` is
/// exceeded.
pub fn run(args: &ValidateArgs) -> anyhow::Result<u8> {
    if args.real.run.is_some() {
        return run_real(&RunMode {
            program: &args.program,
            machine: args.machine.as_deref(),
            ppn: args.ppn,
            params: &args.params,
            json: args.format == crate::Format::Json,
            args: &args.real,
        });
    }
    let table = args
        .table
        .as_deref()
        .context("give --table MEASURED.csv, or --run LAUNCHER to measure")?;
    if args.ranks == Some(0) {
        return Err(crate::flagged(app::Error::NoRanks));
    }
    let query = app::validate::Query {
        time_col: args.time_col.clone(),
        benchmark: args.benchmark.clone(),
        active_col: args
            .active_col
            .clone()
            .unwrap_or_else(|| "active_procs".to_owned()),
        total_col: args
            .total_col
            .clone()
            .unwrap_or_else(|| "total_procs".to_owned()),
        ranks: args.ranks.unwrap_or(2),
        column: args.column.clone(),
        program_stem: args
            .program
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
        ranks_from: "--ranks".to_owned(),
        fast_forward: args.fast_forward,
    };
    let measured = app::validate::read_table(&query, table).map_err(crate::flagged)?;
    if let Some(refused) = ignored_flag(args, &measured) {
        eprintln!("error: {refused}");
        return Ok(2);
    }
    for skipped in &measured.skipped {
        eprintln!("warning: {skipped}");
    }
    let file = args.program.display().to_string();
    let (base, source) = crate::load_program_and_source(&args.program, &args.params)?;
    let machine =
        crate::load_machine(args.machine.as_deref(), args.ppn).map_err(anyhow::Error::msg)?;
    let reporter = std::cell::RefCell::new(args.progress.reporter());
    let progress = |done: usize, total: usize| {
        reporter
            .borrow_mut()
            .update(|r| crate::progress::counted("simulations", done, total, r.elapsed()));
    };
    let comparison = app::validate::compare(
        &base,
        &file,
        &source,
        &machine,
        &measured,
        &query,
        app::scenario::Limits::default(),
        &progress,
    );
    reporter.borrow_mut().finish();
    let comparison = comparison?;
    if args.format == crate::Format::Json {
        let json = serde_json::to_string_pretty(&comparison.json())?;
        crate::out(&format!("{json}\n"));
    } else {
        crate::out(&comparison.text());
    }
    Ok(0)
}

/// A flag given that the table makes meaningless, as the error that
/// refuses it: --ranks when the table sets the process counts,
/// --benchmark without IMB output, --active-col and --total-col without a
/// CSV table, --time-col with an OSU bandwidth table.
fn ignored_flag(args: &ValidateArgs, m: &app::validate::Measured) -> Option<String> {
    use app::validate::TableKind;
    let kind = m.kind.describe();
    if let (Some(ranks), Some(why)) = (args.ranks, &m.sets_ranks) {
        return Some(format!(
            "--ranks {ranks}: the table sets the process counts by {why}; leave --ranks out"
        ));
    }
    if let Some(b) = &args.benchmark
        && m.kind != TableKind::Imb
    {
        return Some(format!(
            "--benchmark {b}: the table is {kind}, not IMB output with benchmarks to choose from"
        ));
    }
    for (flag, value) in [
        ("--active-col", &args.active_col),
        ("--total-col", &args.total_col),
    ] {
        if let Some(v) = value
            && m.kind != TableKind::Csv
        {
            return Some(format!(
                "{flag} {v}: the table is {kind}, not CSV; it has no process columns to name"
            ));
        }
    }
    if let Some(c) = &args.time_col
        && m.kind == TableKind::OsuBandwidth
    {
        return Some(format!(
            "--time-col {c}: the table is {kind}: its MB/s column is what is compared"
        ));
    }
    None
}

// Run mode.
// `parsim validate FILE --run LAUNCHER`: the check against real runs. The
// skeleton is built into a real MPI program (`emit-c` + mpicc, with the
// native kernels), run with the user's launcher for every rank count and
// parameter set, several times each, and predicted with the calibrated
// machine and kernel times; the table shows measured, predicted and the
// error per point, then the median and maximum absolute error.
//
// The measured time of one run is the program's own `PARSIM_RESULT` line:
// the maximum over ranks of the time from a barrier after `MPI_Init` to the
// end of the program, the same span the simulator predicts. Of the
// repetitions the median is compared (a shared machine's noise shows in
// the min..max column).

/// The arguments of run mode (flattened into `parsim validate`).
#[derive(clap::Args, Debug, Clone)]
pub struct RunModeArgs {
    /// Run the real program with this launcher; `{ranks}` is replaced by
    /// the rank count, e.g. "mpirun -np {ranks}" or "srun -n {ranks}".
    /// The program is built under $TMPDIR: for ranks on other nodes, point
    /// it at a shared filesystem.
    #[arg(long, value_name = "LAUNCHER")]
    pub run: Option<String>,
    /// Rank counts to run (with --run; refused with --table, like every run-mode flag).
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "N,N,...",
        conflicts_with = "table",
        value_parser = crate::common::rank_count
    )]
    pub np: Vec<u32>,
    /// A parameter set, "n=256,iters=100" (repeatable; with --run): each is
    /// run at every rank count.
    #[arg(long = "set", value_name = "NAME=VALUE,...", conflicts_with = "table")]
    pub sets: Vec<String>,
    /// The native kernels (C file) linked into the real program.
    #[arg(long, conflicts_with = "table")]
    pub kernels: Option<PathBuf>,
    /// Kernel times from `parsim calibrate blocks` for the prediction.
    #[arg(long, conflicts_with = "table")]
    pub blocks: Option<PathBuf>,
    /// Runs per point.
    #[arg(long, default_value_t = 3, conflicts_with = "table")]
    pub repeat: u32,
    /// Predict with kernel times drawn from their measured distributions
    /// (see `run --noise`; needs --blocks).
    #[arg(long, value_name = "SEED", num_args = 0..=1, default_missing_value = "1", requires = "blocks")]
    pub noise: Option<u64>,
    /// Time a fixed reference workload before and after every real run and
    /// scale the calibrated kernel times by its time then over its time
    /// when they were measured (`calibrate blocks` records it): a machine
    /// whose speed drifts between the calibration and the runs is measured,
    /// not assumed steady. Needs --blocks; the uncorrected prediction is
    /// shown too.
    #[arg(long, requires = "blocks", conflicts_with_all = ["table", "retime"])]
    pub speed_reference: bool,
    /// Time the kernels of --blocks again just before every real run, each
    /// measured tuple for SECONDS (default 0.1), with the calibration's
    /// method (after its predecessor, as many copies at once), and predict
    /// each point with the median of its runs' measurements: kernels
    /// measured within a second of the runs they predict, on a machine
    /// whose speed drifts over minutes. Needs --blocks and --kernels; the
    /// uncorrected prediction is shown too.
    #[arg(long, value_name = "SECONDS", num_args = 0..=1, default_missing_value = "0.1",
          requires_all = ["blocks", "kernels"], conflicts_with = "table")]
    pub retime: Option<f64>,
    /// The MPI compiler wrapper.
    #[arg(long, default_value = "mpicc", conflicts_with = "table")]
    pub mpicc: String,
    /// Flags for the real program (use the ones the kernels were timed with).
    #[arg(long, default_value = "-O2", conflicts_with = "table")]
    pub cflags: String,
    /// Exit with status 5 if the median absolute error is above this
    /// ("10%" or 0.1).
    #[arg(long, value_name = "ERROR", conflicts_with = "table")]
    pub max_median_error: Option<String>,
}

/// Everything run mode needs from `parsim validate`.
pub struct RunMode<'a> {
    pub program: &'a Path,
    pub machine: Option<&'a Path>,
    pub ppn: Option<u32>,
    pub params: &'a [String],
    pub json: bool,
    pub args: &'a RunModeArgs,
}

fn run_real(m: &RunMode<'_>) -> anyhow::Result<u8> {
    let args = m.args;
    let Some(launcher) = &args.run else {
        return Err(crate::common::usage(
            "--run LAUNCHER is needed for a validation against real runs",
        ));
    };
    if !launcher.contains("{ranks}") {
        return Err(crate::common::usage(format!(
            "--run `{launcher}`: say where the rank count goes with {{ranks}}, e.g. \"mpirun -np {{ranks}}\""
        )));
    }
    // (a 0 is refused by --np's parser)
    if args.np.is_empty() {
        return Err(crate::common::usage(
            "--np: give rank counts of at least 1, e.g. --np 1,2",
        ));
    }
    if args.repeat == 0 {
        return Err(crate::common::usage("--repeat must be at least 1"));
    }
    if let Some(slice) = args.retime
        && !(slice.is_finite() && slice > 0.0 && slice <= 60.0)
    {
        return Err(crate::common::usage(format!(
            "--retime {slice}: give the seconds per tuple, above 0 and at most 60"
        )));
    }
    // --retime times kernels apart: meaningless for times measured inside
    // the program (refused before anything is built or run).
    if let (Some(_), Some(path)) = (args.retime, args.blocks.as_deref())
        && let Ok(file) = calibrate::blocks::file::BlocksFile::read(path)
        && let Err(e) = app::blocks::check_retimable(&file)
    {
        return Err(crate::common::usage(format!(
            "--blocks {}: {e}",
            path.display()
        )));
    }
    let threshold = args
        .max_median_error
        .as_deref()
        .map(|t| crate::fraction_flag("--max-median-error", t))
        .transpose()?;
    let sets = app::scenario::param_sets(&args.sets);
    for set in &sets {
        app::scenario::parse_overrides(set)
            .map_err(|e| anyhow::anyhow!("--set: {}", crate::flagged(e)))?;
    }

    // Build the real program once; parameters go on its command line.
    let tmp = tempfile::Builder::new()
        .prefix("parsim-validate-")
        .tempdir()
        .context("cannot create a temporary directory")?;
    let dir = tmp.path();
    let stem = m
        .program
        .file_stem()
        .map_or("program".into(), |s| s.to_string_lossy().into_owned());
    let binary = dir.join(&stem);
    build(m.program, args, &binary)?;

    let real = app::validate::RealRuns {
        program: m.program,
        params: m.params,
        sets: &sets,
        np: &args.np,
        repeat: args.repeat,
        machine: m.machine,
        ranks_per_node: m.ppn,
        blocks: args.blocks.as_deref(),
        noise: args.noise,
        limits: app::scenario::Limits::default(),
        launcher,
        binary: &binary,
        speed_reference: args.speed_reference,
        retime: match (args.retime, args.kernels.as_deref()) {
            (Some(slice), Some(kernels)) => Some(app::validate::Retime {
                kernels,
                cflags: &args.cflags,
                slice,
            }),
            _ => None,
        },
    };
    let compared =
        app::validate::real_runs(&real, &mut |line| eprintln!("{line}")).map_err(crate::flagged)?;
    if m.json {
        let json = serde_json::to_string_pretty(&compared.json(&real))?;
        crate::out(&format!("{json}\n"));
    } else {
        crate::out(&compared.text(&real));
    }
    Ok(match threshold {
        Some(t) if compared.exceeds(t) => {
            eprintln!(
                "error: median |error| {:.1}% is above --max-median-error {:.1}%",
                compared.median_abs_error * 100.0,
                t * 100.0
            );
            5
        }
        _ => 0,
    })
}

/// Builds the real program as `parsim build-mpi` does; its parameters are
/// given on its command line at each run.
fn build(program: &Path, args: &RunModeArgs, binary: &Path) -> anyhow::Result<()> {
    let ir = crate::load_program(program, &[])?;
    let opts = emit_c::BuildOptions {
        kernels: args.kernels.as_deref(),
        output: binary,
        mpicc: &args.mpicc,
        cflags: &args.cflags,
    };
    let name = emit_c::program_name(program);
    emit_c::build(&ir, &name, &opts, &mut |cmd| eprintln!("{cmd}"))
        .map_err(crate::cli_error)
        .with_context(|| format!("building the real program {}", program.display()))?;
    Ok(())
}
