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

use std::fmt::Write as _;
use std::path::PathBuf;

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
    #[arg(long)]
    ppn: Option<u32>,
    /// The measured time column (CSV default: the first column whose name
    /// contains "usec" or "t_"; IMB default: the one --column names,
    /// e.g. `t_avg[usec]`, else `t[usec]`; OSU default: Avg/Min/Max
    /// Latency as --column says).
    #[arg(long)]
    time_col: Option<String>,
    /// IMB output: the benchmark to compare (default: the one named like the
    /// program's file, e.g. Alltoall for alltoall.mpl, or the only one).
    #[arg(long)]
    benchmark: Option<String>,
    /// The column with the number of active processes (default: `active_procs`).
    #[arg(long, default_value = "active_procs")]
    active_col: String,
    /// The column with the total number of processes (default: `total_procs`).
    #[arg(long, default_value = "total_procs")]
    total_col: String,
    /// Ranks to run when the table has no process columns (CSV without
    /// them, OSU output).
    #[arg(long, default_value_t = 2)]
    ranks: u32,
    /// Which simulated column to compare: t_min, t_max or t_avg.
    #[arg(long, default_value = "t_avg", value_parser = ["t_min", "t_max", "t_avg"])]
    column: String,
    /// Override a `param` of the program (repeatable).
    #[arg(long = "param", short = 'p', value_name = "NAME=VALUE")]
    params: Vec<String>,
    /// Output format.
    #[arg(long, default_value = "text", value_parser = ["text", "json"])]
    format: String,
    #[command(flatten)]
    real: crate::validate_run::RunModeArgs,
}

/// Exit status: 0, or 5 when run mode's `--max-median-error` is exceeded.
pub fn run(args: &ValidateArgs) -> anyhow::Result<u8> {
    if args.real.run.is_some() {
        return crate::validate_run::run(&crate::validate_run::RunMode {
            program: &args.program,
            machine: args.machine.as_deref(),
            ppn: args.ppn,
            params: &args.params,
            json: args.format == "json",
            args: &args.real,
        });
    }
    let table = args
        .table
        .as_deref()
        .context("give --table MEASURED.csv, or --run LAUNCHER to measure")?;
    let query = app::validate::Query {
        time_col: args.time_col.clone(),
        benchmark: args.benchmark.clone(),
        active_col: args.active_col.clone(),
        total_col: args.total_col.clone(),
        ranks: args.ranks,
        column: args.column.clone(),
        program_stem: args
            .program
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
    };
    let measured = app::validate::read_table(&query, table)?;
    let file = args.program.display().to_string();
    let (base, source) = crate::load_program_and_source(&args.program, &args.params)?;
    let machine =
        crate::load_machine(args.machine.as_deref(), args.ppn).map_err(anyhow::Error::msg)?;
    let app::validate::Comparison {
        rows,
        groups: per_group,
        median_abs_error: overall_median,
        max_abs_error: overall_max,
    } = app::validate::compare(
        &base,
        &file,
        &source,
        &machine,
        &measured,
        &query,
        app::scenario::Limits::default(),
    )?;
    let origin = measured.origin;
    if args.format == "json" {
        let per_group: Vec<serde_json::Value> = per_group
            .iter()
            .map(|g| {
                serde_json::json!({
                    "active": g.active, "total": g.total, "median_abs_error": g.median_abs_error, "max_abs_error": g.max_abs_error,
                })
            })
            .collect();
        let v = serde_json::json!({
            "program": file,
            "machine": machine.name(),
            "column": args.column,
            "measured": origin,
            "rows": rows,
            "groups": per_group,
            "median_abs_error": overall_median,
            "max_abs_error": overall_max,
        });
        crate::out(&format!("{}\n", serde_json::to_string_pretty(&v)?));
        return Ok(0);
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "program: {file}\nmachine: {}\ncompared: simulated {} against {origin}\n",
        machine.name(),
        args.column,
    );
    let _ = writeln!(
        out,
        "| active/total | bytes | measured (us) | predicted (us) | error |"
    );
    let _ = writeln!(out, "| ---: | ---: | ---: | ---: | ---: |");
    for r in &rows {
        let _ = writeln!(
            out,
            "| {}/{} | {} | {:.2} | {:.2} | {:+.1}% |",
            r.active,
            r.total,
            r.bytes.map_or("-".to_owned(), |b| b.to_string()),
            r.measured_usec,
            r.predicted_usec,
            r.error * 100.0
        );
    }
    let _ = writeln!(out);
    for g in &per_group {
        let _ = writeln!(
            out,
            "{} of {}: {} points, median |error| {:.1}%, max |error| {:.1}%",
            g.active,
            g.total,
            g.points,
            g.median_abs_error * 100.0,
            g.max_abs_error * 100.0
        );
    }
    let _ = writeln!(
        out,
        "all: {} points, median |error| {:.1}%, max |error| {:.1}%",
        rows.len(),
        overall_median * 100.0,
        overall_max * 100.0
    );
    crate::out(&out);
    Ok(0)
}
