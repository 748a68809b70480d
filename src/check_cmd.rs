//! `parsim check`: run the skeleton to find deadlocks and MPI usage errors
//! before the job is submitted.
//!
//! Two runs: on the machine as described, and with zero buffering (every
//! send waits for its matching receive, as on an MPI that does not buffer),
//! so that a program that completes only thanks to eager buffering is
//! flagged. Findings: deadlocks (with the wait-for cycle), run-time errors
//! (collective mismatches, invalid ranks or roots, truncation), messages
//! never received, receives never matched, requests never completed, and
//! buffering hazards (`app::check`). Exit codes: 0 clean, 3 deadlock,
//! 4 other errors, 5 warnings only (the lowest of 3, 4, 5 that applies wins).

use std::path::PathBuf;

use app::check::Severity;

#[derive(clap::Args)]
pub struct CheckArgs {
    /// The skeleton program (.mpl).
    file: PathBuf,
    /// Number of MPI ranks (at least 1).
    #[arg(long, short = 'n', value_parser = crate::rank_count)]
    ranks: u32,
    /// Machine description (TOML); default: the built-in machine.
    #[arg(long, short)]
    machine: Option<PathBuf>,
    /// Ranks per node for this run (overrides the machine file's).
    #[arg(long, value_parser = crate::ranks_per_node)]
    ppn: Option<u32>,
    /// Kernel times from `parsim calibrate blocks` (for kernels without a
    /// cost formula, and for timing as measured).
    #[arg(long, value_name = "BLOCKS.toml")]
    blocks: Option<PathBuf>,
    /// Override a `param`: --param name=value (repeatable).
    #[arg(long = "param", short = 'p', value_name = "NAME=VALUE")]
    params: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = crate::Format::Text)]
    format: crate::Format,
    #[command(flatten)]
    limits: crate::Limits,
    /// Re-run with each alternative match of racing ANY_SOURCE receives
    /// forced (as ISP and DAMPI do), at most N runs (default 16).
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "16")]
    explore: Option<u32>,
    /// Skip the memory check: a check of 4,096 ranks and more is first
    /// probed at a quarter and a sixteenth of its ranks (at most 65,536;
    /// with the checker's records) to measure the memory a run needs, and
    /// refused when it is more than the machine has available.
    #[arg(long)]
    no_memory_check: bool,
    #[command(flatten)]
    progress: crate::ProgressArgs,
}

pub fn run(args: &CheckArgs) -> anyhow::Result<u8> {
    let Ok(scenario) = crate::load_scenario(&app::scenario::Request {
        file: &args.file,
        params: &args.params,
        machine: args.machine.as_deref(),
        ranks_per_node: args.ppn,
        ranks: args.ranks,
        blocks: args.blocks.as_deref(),
        limits: args.limits.app(),
        // A run of 0 ranks is the engine's error (exit 4) here.
        require_ranks: false,
    }) else {
        return Ok(1);
    };
    let file = &scenario.source.name;
    let source = &scenario.source.text;
    let cfg = scenario.config();
    // The checker's runs go one at a time, each with its wildcard records
    // (`app::check`): the probe runs with them too.
    if !args.no_memory_check {
        let probe = app::check::run_config(cfg.clone());
        if let (Some(e), Some(avail)) = (
            app::memory::estimate(&scenario.program, &scenario.machine, &probe, args.ranks),
            app::memory::available(),
        ) && let Some(why) = app::memory::refusal(args.ranks, &e, avail as f64)
        {
            eprintln!("error: {why}");
            return Ok(1);
        }
    }
    let reporter = std::cell::RefCell::new(args.progress.reporter());
    let most = args.explore.map(|b| b.saturating_add(2));
    let progress = |runs: u32| {
        reporter.borrow_mut().update(|r| {
            let elapsed = crate::progress::duration(r.elapsed());
            match most {
                Some(m) => format!("check: {runs} runs done (of at most {m}), {elapsed} elapsed"),
                None => format!("check: {runs} runs done, {elapsed} elapsed"),
            }
        });
    };
    let checked = app::check::check(
        &scenario.program,
        file,
        source,
        &scenario.machine,
        cfg,
        args.explore,
        &app::check::Advice {
            explore: "--explore",
        },
        &progress,
    );
    reporter.borrow_mut().finish();
    let code = match checked.worst() {
        Some(Severity::Deadlock) => 3,
        Some(Severity::Error) => 4,
        Some(Severity::Warning) => 5,
        None => 0,
    };
    if args.format == crate::Format::Json {
        let v = serde_json::json!({ "program": file, "ranks": args.ranks, "findings": checked.findings, "exit_code": code });
        crate::out(&format!("{}\n", serde_json::to_string_pretty(&v)?));
    } else {
        crate::out(&checked.report(file, args.ranks));
    }
    Ok(code)
}
