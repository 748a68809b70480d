//! `parsim run`: simulate a skeleton and print the predicted run time, with
//! the progress line or the live monitor, the timeline, the communication
//! matrix, the critical path and noise draws on request.

use std::path::PathBuf;
use std::time::Instant;

use app::diagnostics::{plugin_violation, sim_error};
use app::report::NoiseDraws;
use sim_core::engine::{PrintLine, SimConfig};

use crate::{Format, Limits, Outcome, monitor, out, sim_outcome, warn_extrapolation};

/// How the text report names the ways to see every rank.
const EVERY_RANK: app::report::Advice<'static> = app::report::Advice {
    every_rank: "--all-ranks or --format json",
};

#[derive(clap::Args)]
pub(crate) struct RunArgs {
    /// The skeleton program (.mpl).
    file: PathBuf,
    /// Machine description (TOML); default: the built-in InfiniBand cluster.
    #[arg(long, short)]
    machine: Option<PathBuf>,
    /// Ranks per node for this run (overrides the machine file's, like
    /// `mpirun -ppn`).
    #[arg(long, value_parser = crate::ranks_per_node)]
    ppn: Option<u32>,
    /// Number of MPI ranks (at least 1).
    #[arg(long, short = 'n', value_parser = crate::rank_count)]
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
    /// No progress on stderr.
    #[arg(long, short)]
    quiet: bool,
    /// When stderr is not a terminal (a batch job's log), a progress line
    /// every this many seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    progress_every: f64,
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
    #[arg(long, value_name = "FILE.json|FILE.prv", value_parser = crate::trace_file)]
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
    #[arg(long, value_name = "FILE.csv", value_parser = crate::matrix_file)]
    comm_matrix: Option<PathBuf>,
    /// Write the communication calls counted per rank and source line, as
    /// an MPI profiling wrapper counts them (CSV: rank, site, operation,
    /// peer, bytes, comm_size, calls; validation/npb/mpicount.c writes the
    /// same columns for a real run).
    #[arg(long, value_name = "FILE.csv", value_parser = crate::csv_file)]
    call_profile: Option<PathBuf>,
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
    /// Skip the memory check: runs of 4,096 ranks and more are first
    /// probed at a quarter and a sixteenth of their ranks (at most 65,536)
    /// to measure the memory they need, and refused when it is more than
    /// the machine has available.
    #[arg(long)]
    no_memory_check: bool,
    /// With --noise: simulate N draws (seeds SEED, SEED+1, ...; in parallel
    /// on the cores) and report the spread of the predicted run time
    /// (median, 5th and 95th percentiles, min, max); the report above it is
    /// the first draw's.
    #[arg(long, value_name = "N", requires = "noise", value_parser = clap::value_parser!(u32).range(2..=100_000))]
    samples: Option<u32>,
    /// Skip the iterations of an outer loop of the program once every rank
    /// repeats it in a steady state (same period, variables and traffic per
    /// iteration), all but the last two; says what it skipped and the bound
    /// on what that can change. A program whose messages cross the loop's
    /// iterations runs in full. The skipped iterations record nothing, so
    /// it cannot be combined with the timeline, the matrices or the
    /// critical path.
    #[arg(long, conflicts_with_all = ["trace", "critical_path", "comm_matrix", "call_profile"])]
    fast_forward: bool,
}

pub(crate) fn cmd_run(args: &RunArgs) -> anyhow::Result<Outcome> {
    let scenario = match crate::load_scenario(&app::scenario::Request {
        file: &args.file,
        params: &args.params,
        machine: args.machine.as_deref(),
        ranks_per_node: args.ppn,
        ranks: args.ranks,
        blocks: args.blocks.as_deref(),
        limits: args.limits.app(),
        require_ranks: true,
    }) {
        Ok(s) => s,
        Err(outcome) => return Ok(outcome),
    };
    let name = scenario.source.name.clone();
    let source = &scenario.source.text;
    let program = &scenario.program;
    let machine = &scenario.machine;
    let blocks = &scenario.blocks;
    if args.noise.is_some() && args.blocks.is_none() {
        eprintln!("error: --noise draws calibrated kernel times: it needs --blocks");
        return Ok(Outcome::InputError);
    }
    let cfg = SimConfig {
        noise_seed: args.noise,
        trace_limit: if args.trace.is_some() || args.critical_path {
            args.trace_limit.max(1)
        } else {
            0
        },
        comm_matrix: args.comm_matrix.is_some(),
        call_profile: args.call_profile.is_some(),
        fast_forward: args.fast_forward,
        ..scenario.config()
    };
    // Large runs: the memory they need, measured on a probe
    // (`app::memory`), against what the machine has.
    let estimate = if args.no_memory_check {
        None
    } else {
        app::memory::estimate(program, machine, &cfg, args.ranks)
    };
    if let (Some(e), Some(avail)) = (estimate, app::memory::available())
        && let Some(why) = app::memory::refusal(args.ranks, &e, avail as f64)
    {
        eprintln!("error: {why}");
        return Ok(Outcome::InputError);
    }
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
    // The run's own heap high-water mark, not the probes'.
    app::memory::reset_heap_peak();
    let start = Instant::now();
    // Progress of a long run (`crate::progress`): model time, events per
    // second, ranks finished. A simulation's end is not known in advance,
    // so there is no percentage.
    let mut reporter = crate::progress::Reporter::new(args.quiet, args.progress_every);
    let mut progress = |p: &sim_core::engine::Progress| {
        if let Some(m) = monitor.as_mut() {
            m.update(p);
            return;
        }
        reporter.update(|r| {
            let elapsed = r.elapsed();
            let rate = p.events as f64 / elapsed.as_secs_f64().max(1e-9) / 1e6;
            format!(
                "model time {:.6} s, {:.1} M events/s, {} of {} ranks finished, {} elapsed",
                p.sim_time,
                rate,
                p.finished,
                p.ranks,
                crate::progress::duration(elapsed)
            )
        });
    };
    let mut run = machine.start(cfg.ranks);
    let result =
        sim_core::engine::simulate_with_progress(program, &mut run, cfg, &mut sink, &mut progress);
    let violation = plugin_violation(&run);
    drop(run);
    reporter.finish();
    if monitor.take().is_some() && !json {
        for line in printed.drain(..) {
            out(&format!("[{}] {}\n", line.rank, line.text));
        }
    }
    let wall = start.elapsed().as_secs_f64();
    if let Some(path) = &args.blocks {
        warn_extrapolation(blocks, path);
    }
    match result {
        Ok(rep) => {
            if let Some(e) = violation {
                eprintln!("error: {e}");
                return Ok(Outcome::InputError);
            }
            for warning in app::scenario::channel_extrapolations(machine, &rep.largest_message) {
                eprintln!("warning: {warning}");
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
                if let Some(peak) = app::memory::peak_resident() {
                    let mut line = format!(
                        "stats: memory peak {} ({:.0} B per rank)",
                        app::memory::human(peak as f64),
                        peak as f64 / f64::from(args.ranks)
                    );
                    if app::memory::counting() {
                        let heap = app::memory::heap().1 as f64;
                        line.push_str(&format!(
                            ", heap {} ({:.0} B per rank)",
                            app::memory::human(heap),
                            heap / f64::from(args.ranks)
                        ));
                    }
                    if let Some(e) = estimate {
                        line.push_str(&format!(
                            ", estimated {} ({:.0} B per rank: {} before the run, {:.0} B per \
                             rank from {})",
                            app::memory::human(e.bytes),
                            e.bytes / f64::from(args.ranks),
                            app::memory::human(e.base),
                            e.bytes_per_rank,
                            e.probes()
                        ));
                    }
                    eprintln!("{line}");
                }
            }
            analyses(args, &rep, &name)?;
            let draws = match noise_draws(args, &scenario, rep.predicted_seconds) {
                Ok(d) => d.as_deref().map(NoiseDraws::of),
                Err(outcome) => return Ok(outcome),
            };
            if json {
                let mut v = app::report::Prediction::new(
                    &rep,
                    &printed,
                    wall,
                    &name,
                    machine.name(),
                    args.ranks,
                );
                v.noise_draws = draws;
                out(&format!("{}\n", serde_json::to_string_pretty(&v)?));
            } else {
                out(&app::report::text(
                    &rep,
                    &name,
                    machine.name(),
                    args.all_ranks,
                    &EVERY_RANK,
                ));
                if let Some(f) = &rep.fast_forward {
                    out(&app::report::fast_forward_text(f, rep.predicted_seconds));
                }
                if let Some(d) = &draws {
                    out(&d.text());
                }
            }
            Ok(Outcome::Ok)
        }
        Err(e) => {
            if args.stats {
                eprintln!("stats: stopped after {wall:.3} s wall");
            }
            eprint!("{}", sim_error(&e, &name, source));
            Ok(sim_outcome(&e))
        }
    }
}

/// What `run` writes besides its report: the critical path, the
/// communication matrix and the timeline.
fn analyses(args: &RunArgs, rep: &sim_core::SimReport, name: &str) -> anyhow::Result<()> {
    if args.critical_path {
        if rep.trace_truncated {
            eprintln!(
                "warning: the timeline was cut (--trace-limit): the critical path may be incomplete"
            );
        }
        out(&app::analysis::path_text(
            &app::analysis::critical_path(rep),
            name,
        ));
    }
    if let Some(path) = &args.comm_matrix {
        let written = app::export::write_comm_matrix(path, rep, args.ranks, name)?;
        eprintln!("wrote {}", written_list(&written));
    }
    if let Some(path) = &args.call_profile {
        app::export::write_call_profile(path, rep, name)?;
        eprintln!("wrote {}", path.display());
    }
    if let Some(path) = &args.trace {
        let written = app::export::write_trace(path, rep, args.ranks, name)?;
        eprintln!("wrote {}", written_list(&written));
        if rep.trace_truncated {
            eprintln!(
                "warning: the timeline was cut at {} events (--trace-limit)",
                args.trace_limit
            );
        }
    }
    Ok(())
}

/// The files a run wrote, for its "wrote ..." line.
fn written_list(files: &[PathBuf]) -> String {
    files
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `--samples N`: the first draw's time `first` and the N - 1 further
/// draws, `(seed, predicted seconds)`; a failed draw is reported and ends
/// the run with its outcome.
fn noise_draws(
    args: &RunArgs,
    scenario: &app::scenario::Scenario,
    first: f64,
) -> Result<Option<Vec<(u64, f64)>>, Outcome> {
    let (Some(n), Some(seed)) = (args.samples, args.noise) else {
        return Ok(None);
    };
    let base = scenario.config();
    match app::study::noise_draws(&scenario.program, &scenario.machine, &base, seed, n) {
        Ok(mut rest) => {
            rest.insert(0, (seed, first));
            Ok(Some(rest))
        }
        Err(e) => {
            eprint!(
                "{}",
                sim_error(&e, &scenario.source.name, &scenario.source.text)
            );
            Err(sim_outcome(&e))
        }
    }
}
