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

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use models::AnyMachine;
use sim_core::engine::{PrintLine, SimConfig};

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

/// One measured point.
#[derive(Debug, Clone)]
struct Point {
    active: Option<u32>,
    total: Option<u32>,
    bytes: Option<u64>,
    usec: f64,
}

/// One compared point.
#[derive(Debug, Clone, serde::Serialize)]
struct Row {
    active: u32,
    total: u32,
    bytes: Option<u64>,
    measured_usec: f64,
    predicted_usec: f64,
    error: f64,
}

/// The measured points, whether they have message sizes, and what they
/// were read as.
fn read_table(args: &ValidateArgs, table: &Path) -> anyhow::Result<(Vec<Point>, bool, String)> {
    let text = std::fs::read_to_string(table)
        .with_context(|| format!("cannot read {}", table.display()))?;
    let text = strip_rank_prefixes(&text);
    match calibrate::Format::detect(&text) {
        Some(calibrate::Format::Imb) => return read_imb(args, table, &text),
        Some(calibrate::Format::OsuLatency | calibrate::Format::OsuBw) => {
            return read_osu(args, table, &text);
        }
        _ => {}
    }
    let mut lines = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
    let Some(header) = lines.next() else {
        bail!("{}: the table is empty", table.display())
    };
    let cols: Vec<String> = header.split(',').map(|c| c.trim().to_owned()).collect();
    let find = |name: &str| cols.iter().position(|c| c == name);
    let time = match &args.time_col {
        Some(c) => find(c).with_context(|| {
            format!(
                "{}: no column `{c}` (columns: {})",
                table.display(),
                cols.join(", ")
            )
        })?,
        None => cols
            .iter()
            .position(|c| c.contains("usec") || c.starts_with("t_"))
            .with_context(|| {
                format!(
                    "{}: no time column (name it with --time-col)",
                    table.display()
                )
            })?,
    };
    let bytes = find("bytes");
    let active = find(&args.active_col);
    let total = find(&args.total_col);
    let mut points = Vec::new();
    for (i, line) in lines.enumerate() {
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        let cell = |ix: usize| -> anyhow::Result<&str> {
            cells
                .get(ix)
                .copied()
                .with_context(|| format!("{}: row {} is short", table.display(), i + 2))
        };
        let num = |ix: usize| -> anyhow::Result<f64> {
            let c = cell(ix)?;
            c.parse::<f64>().with_context(|| {
                format!("{}: row {}: `{c}` is not a number", table.display(), i + 2)
            })
        };
        let count = |ix: usize| -> anyhow::Result<u32> {
            let c = cell(ix)?;
            c.parse::<u32>().ok().filter(|&n| n >= 1).with_context(|| {
                format!(
                    "{}: row {}: `{c}` is not a process count (a whole number from 1)",
                    table.display(),
                    i + 2
                )
            })
        };
        let usec = num(time)?;
        if !(usec.is_finite() && usec > 0.0) {
            bail!(
                "{}: row {}: the time must be a positive number, got {usec}",
                table.display(),
                i + 2
            );
        }
        let size = bytes.map(&num).transpose()?;
        if size.is_some_and(|b| !(b.is_finite() && b >= 0.0 && b.fract() == 0.0)) {
            bail!(
                "{}: row {}: the message size must be a whole number of bytes",
                table.display(),
                i + 2
            );
        }
        points.push(Point {
            active: active.map(count).transpose()?,
            total: total.map(count).transpose()?,
            bytes: size.map(|x| x as u64),
            usec,
        });
    }
    let origin = format!("{}, column {}", table.display(), cols[time]);
    Ok((points, bytes.is_some(), origin))
}

/// The output of `parsim run` or of a `build-mpi` program prefixes every
/// line with its rank, `[0] `: dropped, so that a skeleton's own table run
/// for real can be compared line for line. Other text is unchanged.
fn strip_rank_prefixes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let rest = line
            .strip_prefix('[')
            .and_then(|r| r.split_once("] "))
            .filter(|(rank, _)| !rank.is_empty() && rank.bytes().all(|b| b.is_ascii_digit()))
            .map_or(line, |(_, rest)| rest);
        out.push_str(rest);
        out.push('\n');
    }
    out
}

/// OSU Micro-Benchmarks output (`osu_latency`, `osu_allreduce`,
/// `osu_barrier`, ...; with or without `-f`): a title `# OSU MPI ... Test`,
/// a header `# Size  Avg Latency(us)  Min Latency(us) ...` (`# Avg
/// Latency(us)` for Barrier, `# Size  Latency (us)` for osu_latency), rows.
/// The output does not say how many processes ran: `--ranks`.
fn read_osu(
    args: &ValidateArgs,
    table: &Path,
    text: &str,
) -> anyhow::Result<(Vec<Point>, bool, String)> {
    let path = table.display();
    let calibrate::OsuTable {
        title,
        columns,
        rows,
    } = calibrate::osu_table(text).map_err(|e| anyhow::anyhow!("{path}: {e}"))?;
    if columns
        .iter()
        .any(|c| c.contains("Bandwidth") || c.contains("MB/s"))
    {
        bail!(
            "{path}: a bandwidth table ({}); validate compares times: give a latency benchmark's output",
            columns.join(", ")
        );
    }
    let has_bytes = columns.first().is_some_and(|c| c == "Size");
    let time = match &args.time_col {
        Some(c) => columns.iter().position(|x| x.eq_ignore_ascii_case(c)),
        None => {
            let want = match args.column.as_str() {
                "t_min" => "Min",
                "t_max" => "Max",
                _ => "Avg",
            };
            columns
                .iter()
                .position(|c| c.starts_with(want))
                .or_else(|| {
                    // osu_latency's one column: the average of rank 0's
                    // round trips.
                    (args.column == "t_avg")
                        .then(|| columns.iter().position(|c| c.starts_with("Latency")))
                        .flatten()
                })
        }
    }
    .with_context(|| {
        format!(
            "{path}: no column for {} (columns: {}; give --time-col, or --column)",
            args.time_col.as_deref().unwrap_or(&args.column),
            columns.join(", ")
        )
    })?;
    let ranks = args.ranks;
    let mut points = Vec::new();
    for (line, cells) in &rows {
        let (usec, bytes) = row_values(&path, *line, cells, &columns, time, has_bytes)?;
        points.push(Point {
            active: Some(ranks),
            total: Some(ranks),
            bytes,
            usec,
        });
    }
    if points.is_empty() {
        bail!("{path}: the OSU table has no rows");
    }
    let origin = format!(
        "{path}, {title}, column {} ({ranks} processes, from --ranks)",
        columns[time]
    );
    Ok((points, has_bytes, origin))
}

/// One row of an IMB or OSU table: the time in the column `time` (a
/// positive number of µs) and, when the first column is the message size,
/// the size (a whole number of bytes).
fn row_values(
    path: &impl std::fmt::Display,
    line: usize,
    cells: &[String],
    columns: &[String],
    time: usize,
    has_bytes: bool,
) -> anyhow::Result<(f64, Option<u64>)> {
    let num = |ix: usize| -> anyhow::Result<f64> {
        let c = cells.get(ix).with_context(|| {
            format!(
                "{path}:{line}: expected {} columns ({})",
                columns.len(),
                columns.join(", ")
            )
        })?;
        c.parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && *x >= 0.0)
            .with_context(|| format!("{path}:{line}: `{c}` is not a number"))
    };
    let usec = num(time)?;
    if usec <= 0.0 {
        bail!("{path}:{line}: the time must be positive");
    }
    if !has_bytes {
        return Ok((usec, None));
    }
    let b = num(0)?;
    if b.fract() != 0.0 {
        bail!("{path}:{line}: the size must be a whole number of bytes");
    }
    Ok((usec, Some(b as u64)))
}

/// IMB-MPI1 / PMB text output: the blocks of one benchmark.
fn read_imb(
    args: &ValidateArgs,
    table: &Path,
    text: &str,
) -> anyhow::Result<(Vec<Point>, bool, String)> {
    let path = table.display();
    let blocks = calibrate::imb_blocks(text).map_err(|e| anyhow::anyhow!("{path}: {e}"))?;
    let mut names: Vec<&str> = Vec::new();
    for name in blocks.iter().filter_map(|b| b.benchmark.as_deref()) {
        if !names.iter().any(|n| n.eq_ignore_ascii_case(name)) {
            names.push(name);
        }
    }
    let stem = args
        .program
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let wanted: Option<String> = match &args.benchmark {
        Some(b) => Some(b.clone()),
        None => match names.as_slice() {
            [] => None,
            [only] => Some((*only).to_owned()),
            _ => Some(
                names
                    .iter()
                    .find(|n| n.eq_ignore_ascii_case(&stem))
                    .map(|n| (*n).to_owned())
                    .with_context(|| {
                        format!(
                            "{path}: several benchmarks ({}); choose one with --benchmark",
                            names.join(", ")
                        )
                    })?,
            ),
        },
    };
    let chosen: Vec<&calibrate::ImbBlock> = blocks
        .iter()
        .filter(|b| match (&wanted, &b.benchmark) {
            (Some(w), Some(name)) => name.eq_ignore_ascii_case(w),
            _ => true,
        })
        .filter(|b| !b.columns.is_empty())
        .collect();
    let name = wanted.unwrap_or_else(|| stem.clone());
    if chosen.is_empty() {
        bail!(
            "{path}: no table for benchmark {name} (the file has: {})",
            if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            }
        );
    }
    let want_col = match &args.time_col {
        Some(c) => vec![c.clone()],
        None => vec![format!("{}[usec]", args.column), "t[usec]".to_owned()],
    };
    let mut points = Vec::new();
    let mut has_bytes = true;
    let mut used_col = String::new();
    for block in &chosen {
        let time = want_col
            .iter()
            .find_map(|w| block.columns.iter().position(|c| c.eq_ignore_ascii_case(w)))
            .with_context(|| {
                format!(
                    "{path}: benchmark {name} has no column {} (columns: {}; give --time-col)",
                    want_col.join(" or "),
                    block.columns.join(" ")
                )
            })?;
        used_col.clone_from(&block.columns[time]);
        let bytes = block.columns.first().is_some_and(|c| c == "#bytes");
        has_bytes &= bytes;
        let active = block.processes.unwrap_or(args.ranks);
        if active == 0 {
            bail!("{path}: benchmark {name} has a block for 0 processes");
        }
        let total = active.checked_add(block.waiting).with_context(|| {
            format!(
                "{path}: benchmark {name}: {active} processes and {} waiting is too many",
                block.waiting
            )
        })?;
        for (line, cells) in &block.rows {
            let (usec, size) = row_values(&path, *line, cells, &block.columns, time, bytes)?;
            points.push(Point {
                active: Some(active),
                total: Some(total),
                bytes: size,
                usec,
            });
        }
    }
    let origin = format!("{path}, IMB benchmark {name}, column {used_col}");
    Ok((points, has_bytes, origin))
}

/// Runs the program and returns rank-0's (or the first printing rank's)
/// rows of numbers.
fn simulate(
    program: &sim_core::ir::Program,
    machine: &AnyMachine,
    ranks: u32,
    file: &str,
    source: &str,
) -> anyhow::Result<Vec<Vec<f64>>> {
    let mut lines: Vec<PrintLine> = Vec::new();
    let mut sink = |l: PrintLine| lines.push(l);
    let cfg = SimConfig {
        ranks,
        ..SimConfig::default()
    };
    if let Err(e) = sim_core::simulate(program, &mut machine.start(ranks), cfg, &mut sink) {
        bail!(
            "the simulation failed:\n{}",
            crate::report::sim_error(&e, file, source)
        );
    }
    let Some(first) = lines.iter().map(|l| l.rank).min() else {
        return Ok(Vec::new());
    };
    Ok(lines
        .iter()
        .filter(|l| l.rank == first)
        .filter_map(|l| {
            let nums: Option<Vec<f64>> = l
                .text
                .split_whitespace()
                .map(|w| w.parse::<f64>().ok())
                .collect();
            nums.filter(|n| n.len() >= 4)
        })
        .collect())
}

/// The median (sorts `v`); NaN when empty.
pub(crate) fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
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
    let (points, has_bytes, origin) = read_table(args, table)?;
    let file = args.program.display().to_string();
    let (base, source) = crate::load_program_and_source(&args.program, &args.params)?;
    let machine =
        crate::load_machine(args.machine.as_deref(), args.ppn).map_err(anyhow::Error::msg)?;
    let has_active_param = base.params.iter().any(|p| p.name == "active");
    let column = match args.column.as_str() {
        "t_min" => 0,
        "t_max" => 1,
        _ => 2,
    };
    // Group the table by (active, total) processes.
    let mut groups: BTreeMap<(u32, u32), Vec<&Point>> = BTreeMap::new();
    for p in &points {
        let total = p.total.or(p.active).unwrap_or(args.ranks);
        let active = p.active.unwrap_or(total);
        groups.entry((active, total)).or_default().push(p);
    }
    let mut rows = Vec::new();
    for (&(active, total), pts) in &groups {
        let mut program = base.clone();
        if has_active_param {
            frontend::apply_param_overrides(
                &mut program,
                &[("active".to_owned(), active.to_string())],
            )
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        } else if active != total {
            bail!(
                "the table has {active} active of {total} processes but {file} has no `param active`"
            );
        }
        let sim = simulate(&program, &machine, total, &file, &source)?;
        for p in pts {
            let found = if has_bytes {
                sim.iter()
                    .find(|r| r.len() >= 5 && Some(r[0] as u64) == p.bytes)
                    .map(|r| r[2 + column])
            } else {
                sim.iter().find(|r| r.len() == 4).map(|r| r[1 + column])
            };
            let Some(pred) = found else {
                bail!(
                    "{file} printed no row for {} on {active} of {total} processes",
                    p.bytes
                        .map_or("the benchmark".to_owned(), |b| format!("{b} bytes"))
                );
            };
            rows.push(Row {
                active,
                total,
                bytes: p.bytes,
                measured_usec: p.usec,
                predicted_usec: pred,
                error: (pred - p.usec) / p.usec,
            });
        }
    }
    let mut all: Vec<f64> = rows.iter().map(|r| r.error.abs()).collect();
    let overall_median = median(&mut all);
    let overall_max = all.iter().copied().fold(0.0, f64::max);
    // Per (active, total) group: points, median and maximum |error|.
    let per_group: Vec<(u32, u32, usize, f64, f64)> = groups
        .keys()
        .map(|&(active, total)| {
            let mut e: Vec<f64> = rows
                .iter()
                .filter(|r| r.active == active && r.total == total)
                .map(|r| r.error.abs())
                .collect();
            let max = e.iter().copied().fold(0.0, f64::max);
            (active, total, e.len(), median(&mut e), max)
        })
        .collect();
    if args.format == "json" {
        let per_group: Vec<serde_json::Value> = per_group
            .iter()
            .map(|&(active, total, _, median, max)| {
                serde_json::json!({
                    "active": active, "total": total, "median_abs_error": median, "max_abs_error": max,
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
    for &(active, total, points, median, max) in &per_group {
        let _ = writeln!(
            out,
            "{active} of {total}: {points} points, median |error| {:.1}%, max |error| {:.1}%",
            median * 100.0,
            max * 100.0
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
