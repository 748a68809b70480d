//! `parsim validate FILE --run LAUNCHER`: the check against real runs. The
//! skeleton is built into a real MPI program (`emit-c` + mpicc, with the
//! native kernels), run with the user's launcher for every rank count and
//! parameter set, several times each, and predicted with the calibrated
//! machine and kernel times; the table shows measured, predicted and the
//! error per point, then the median and maximum absolute error.
//!
//! The measured time of one run is the program's own `PARSIM_RESULT` line:
//! the maximum over ranks of the time from a barrier after `MPI_Init` to the
//! end of the program, the same span the simulator predicts. Of the
//! repetitions the median is compared (a shared machine's noise shows in
//! the min..max column).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

/// The arguments of run mode (flattened into `parsim validate`).
#[derive(clap::Args, Debug, Clone)]
pub struct RunModeArgs {
    /// Run the real program with this launcher; `{ranks}` is replaced by
    /// the rank count, e.g. "mpirun -np {ranks}" or "srun -n {ranks}".
    /// The program is built under $TMPDIR: for ranks on other nodes, point
    /// it at a shared filesystem.
    #[arg(long, value_name = "LAUNCHER")]
    pub run: Option<String>,
    /// Rank counts to run (with --run).
    #[arg(long, value_delimiter = ',', value_name = "N,N,...")]
    pub np: Vec<u32>,
    /// A parameter set, "n=256,iters=100" (repeatable; with --run): each is
    /// run at every rank count.
    #[arg(long = "set", value_name = "NAME=VALUE,...")]
    pub sets: Vec<String>,
    /// The native kernels (C file) linked into the real program.
    #[arg(long)]
    pub kernels: Option<PathBuf>,
    /// Kernel times from `parsim calibrate blocks` for the prediction.
    #[arg(long)]
    pub blocks: Option<PathBuf>,
    /// Runs per point.
    #[arg(long, default_value_t = 3)]
    pub repeat: u32,
    /// Predict with kernel times drawn from their measured distributions
    /// (see `run --noise`; needs --blocks).
    #[arg(long, value_name = "SEED", num_args = 0..=1, default_missing_value = "1", requires = "blocks")]
    pub noise: Option<u64>,
    /// The MPI compiler wrapper.
    #[arg(long, default_value = "mpicc")]
    pub mpicc: String,
    /// Flags for the real program (use the ones the kernels were timed with).
    #[arg(long, default_value = "-O2")]
    pub cflags: String,
    /// Exit with status 5 if the median absolute error is above this
    /// ("10%" or 0.1).
    #[arg(long, value_name = "ERROR")]
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

pub fn run(m: &RunMode<'_>) -> anyhow::Result<u8> {
    let args = m.args;
    let Some(launcher) = &args.run else {
        bail!("--run LAUNCHER is needed for a validation against real runs");
    };
    if !launcher.contains("{ranks}") {
        bail!(
            "--run `{launcher}`: say where the rank count goes with {{ranks}}, e.g. \"mpirun -np {{ranks}}\""
        );
    }
    if args.np.is_empty() || args.np.contains(&0) {
        bail!("--np: give rank counts of at least 1, e.g. --np 1,2");
    }
    if args.repeat == 0 {
        bail!("--repeat must be at least 1");
    }
    let threshold = args
        .max_median_error
        .as_deref()
        .map(|t| crate::calibrate_cmd::fraction_flag("--max-median-error", t))
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

    let rows = app::validate::real_runs(
        &app::validate::RealRuns {
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
        },
        &mut |line| eprintln!("{line}"),
    )
    .map_err(crate::flagged)?;
    let mut errors: Vec<f64> = rows.iter().map(|r| r.error.abs()).collect();
    let median = app::validate::median(&mut errors);
    let max = errors.last().copied().unwrap_or(f64::NAN);
    if m.json {
        let v = serde_json::json!({
            "program": m.program.display().to_string(),
            "launcher": launcher,
            "repeat": args.repeat,
            "rows": rows,
            "median_abs_error": median,
            "max_abs_error": max,
        });
        crate::out(&format!("{}\n", serde_json::to_string_pretty(&v)?));
    } else {
        crate::out(&table(m, launcher, &rows, median, max));
    }
    Ok(match threshold {
        Some(t) if median.is_nan() || median > t => {
            eprintln!(
                "error: median |error| {:.1}% is above --max-median-error {:.1}%",
                median * 100.0,
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
        .map_err(crate::emit_c_cmd::cli_error)
        .with_context(|| format!("building the real program {}", program.display()))?;
    Ok(())
}

fn table(
    m: &RunMode<'_>,
    launcher: &str,
    rows: &[app::validate::RealRow],
    median: f64,
    max: f64,
) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "program: {}   machine: {}   blocks: {}",
        m.program.display(),
        m.machine
            .map_or("built-in".into(), |p| p.display().to_string()),
        m.args
            .blocks
            .as_deref()
            .map_or("cost formulas".into(), |p| p.display().to_string())
    );
    let _ = writeln!(
        s,
        "real runs: `{launcher}`, {} run(s) per point, median compared\n",
        m.args.repeat
    );
    let _ = writeln!(
        s,
        "{:>5}  {:<28} {:>12} {:>25} {:>12} {:>8}",
        "ranks", "params", "measured s", "runs min .. max", "predicted s", "error"
    );
    for r in rows {
        let lo = r.runs.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = r.runs.iter().copied().fold(0.0, f64::max);
        let _ = writeln!(
            s,
            "{:>5}  {:<28} {:>12.6} {:>12.6} .. {:<10.6} {:>12.6} {:>+7.1}%",
            r.ranks,
            if r.params.is_empty() {
                "(defaults)"
            } else {
                &r.params
            },
            r.measured,
            lo,
            hi,
            r.predicted,
            r.error * 100.0
        );
    }
    let _ = writeln!(
        s,
        "\n{} points: median |error| {:.1}%, max |error| {:.1}%",
        rows.len(),
        median * 100.0,
        max * 100.0
    );
    s
}
