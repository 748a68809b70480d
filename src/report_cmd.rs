//! `parsim report`: one self-contained HTML page about a run (no network
//! needed to open it: inline CSS, inline SVG, a few lines of inline script):
//! the summary, where the time goes per rank, the ranks that finish last,
//! the critical path, the scaling plot of an optional sweep, the
//! communication heat map and, for up to 64 ranks, the timeline.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use app::diagnostics::{fmt_time, sim_error};
use app::page::{MAX_PRINTED, Page};
use app::study::Study;
use sim_core::engine::{PrintLine, SimConfig};

use crate::Outcome;
use crate::StudyOptions;

#[derive(clap::Args)]
pub struct ReportArgs {
    /// The skeleton program (.mpl).
    file: PathBuf,
    /// Number of MPI ranks (at least 1).
    #[arg(long, short = 'n', value_parser = crate::rank_count)]
    ranks: u32,
    /// Machine description (TOML); default: the built-in InfiniBand cluster.
    #[arg(long, short)]
    machine: Option<PathBuf>,
    /// Ranks per node (overrides the machine file's, like `mpirun -ppn`).
    #[arg(long, value_parser = crate::ranks_per_node)]
    ppn: Option<u32>,
    /// Override a `param`: --param name=value (repeatable).
    #[arg(long = "param", short = 'p', value_name = "NAME=VALUE")]
    params: Vec<String>,
    /// Add a scaling study over these rank counts (`1,2,4,...,64`).
    #[arg(long, value_name = "RANKS", value_parser = crate::rank_list)]
    sweep: Option<crate::RankList>,
    /// Machines of the scaling study, one curve each (default: --machine).
    #[arg(long = "sweep-machine", value_name = "M.toml", num_args = 1..)]
    sweep_machines: Vec<PathBuf>,
    /// What-if settings of the scaling study, as `sweep --set KEY=V1,V2`.
    #[arg(long = "sweep-set", value_name = "KEY=V1,V2")]
    sweep_sets: Vec<String>,
    #[command(flatten)]
    study: StudyOptions,
    /// The HTML file to write.
    #[arg(long, short)]
    output: PathBuf,
    /// At most this many timeline events are recorded (for the critical
    /// path and the timeline; the rest is cut, and the page says so).
    #[arg(long, default_value_t = 1_000_000)]
    trace_limit: usize,
    #[command(flatten)]
    limits: crate::Limits,
}

pub fn run(args: &ReportArgs) -> anyhow::Result<Outcome> {
    let scenario = match crate::load_scenario(&app::scenario::Request {
        file: &args.file,
        params: &args.params,
        machine: args.machine.as_deref(),
        ranks_per_node: args.ppn,
        ranks: args.ranks,
        blocks: args.study.blocks.as_deref(),
        limits: args.limits.app(),
        require_ranks: true,
    }) {
        Ok(s) => s,
        Err(outcome) => return Ok(outcome),
    };
    let name = scenario.source.name.clone();
    let source = &scenario.source.text;
    let (program, machine, blocks) = (&scenario.program, &scenario.machine, &scenario.blocks);
    let overrides = &scenario.overrides;
    // Parse the sweep's rank list before the (maybe long) run.
    let sweep_ranks = args.sweep.as_ref().map(|list| list.0.clone());
    let cfg = SimConfig {
        trace_limit: args.trace_limit.max(1),
        comm_matrix: true,
        noise_seed: args.study.noise,
        ..scenario.config()
    };
    let mut printed: Vec<PrintLine> = Vec::new();
    let mut sink = |line: PrintLine| {
        if printed.len() <= MAX_PRINTED {
            printed.push(line);
        }
    };
    let start = Instant::now();
    let mut run = machine.start(cfg.ranks);
    let rep = match sim_core::simulate(program, &mut run, cfg, &mut sink) {
        Ok(rep) => rep,
        Err(e) => {
            eprint!("{}", sim_error(&e, &name, source));
            return Ok(crate::sim_outcome(&e));
        }
    };
    let wall = start.elapsed().as_secs_f64();
    if let Some(path) = &args.study.blocks {
        crate::warn_extrapolation(blocks, path);
    }
    if let Some(e) = app::diagnostics::plugin_violation(&run) {
        eprintln!("error: {e}");
        return Ok(Outcome::InputError);
    }
    let series = match &sweep_ranks {
        None => None,
        Some(ranks) => {
            let machines = if args.sweep_machines.is_empty() {
                args.machine.iter().cloned().collect()
            } else {
                args.sweep_machines.clone()
            };
            let curves = crate::curves(&machines, &args.sweep_sets)?;
            let (series, notes) = crate::run_study(
                Study {
                    program,
                    file: &name,
                    ranks,
                    curves: &curves,
                    ppn: args.ppn,
                    options: args.study.options(),
                    limits: args.limits.app(),
                    progress: None,
                },
                source,
                &args.study,
            )?;
            for note in notes {
                eprintln!("note: {note}");
            }
            Some(series)
        }
    };
    let page = Page {
        file: &name,
        source,
        machine: machine.name(),
        params: overrides,
        rep: &rep,
        wall,
        printed: &printed,
        series: series.as_deref(),
        weak: args.study.weak,
        advice: app::page::Advice {
            trace_limit: "--trace-limit",
            sweep: "--sweep 1,2,4,...,64",
            sweep_machines: "--sweep-machine A.toml B.toml",
            trace: "parsim run --trace FILE.json",
        },
    };
    std::fs::write(&args.output, page.html())
        .with_context(|| format!("cannot write {}", args.output.display()))?;
    crate::out(&format!(
        "predicted run time: {}\nreport: {}\n",
        fmt_time(rep.predicted_seconds),
        args.output.display()
    ));
    Ok(Outcome::Ok)
}
