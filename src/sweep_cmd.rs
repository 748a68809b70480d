//! `parsim sweep`: a scaling study. Runs a skeleton for a list of rank
//! counts on one or more machines (and what-if settings of machine keys),
//! in parallel on the cores, and prints time, speedup and parallel
//! efficiency per curve with the scalability limit; `--plot` draws them.

use std::fmt::Write as _;
use std::path::PathBuf;

use app::study::{self, Study};

use crate::{StudyOptions, curves, run_study};

#[derive(clap::Args)]
pub struct SweepArgs {
    /// The skeleton program (.mpl).
    file: PathBuf,
    /// Rank counts: `1,2,4,...,1024` (a `...` continues the geometric or
    /// arithmetic progression of the two numbers before it, rising or
    /// falling); they run and show in ascending order.
    #[arg(long, short = 'n', value_parser = crate::rank_list)]
    ranks: crate::RankList,
    /// Machine description(s); one curve each (default: the built-in machine).
    #[arg(long = "machine", short)]
    machines: Vec<PathBuf>,
    /// What-if: `--set network.bandwidth=1GB/s,10GB/s` overrides a
    /// machine-file key, one curve per value (repeatable: all combinations).
    #[arg(long = "set", value_name = "KEY=V1,V2")]
    sets: Vec<String>,
    /// Override a `param` of the program (repeatable).
    #[arg(long = "param", short = 'p', value_name = "NAME=VALUE")]
    params: Vec<String>,
    /// Ranks per node (overrides the machine files').
    #[arg(long, value_parser = crate::ranks_per_node)]
    ppn: Option<u32>,
    #[command(flatten)]
    study: StudyOptions,
    /// Write a chart of time, speedup and efficiency: SVG, or PNG when the
    /// name ends in `.png` (another extension is a usage error).
    #[arg(long, value_parser = crate::picture_file)]
    plot: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = crate::Format::Text)]
    format: crate::Format,
    /// Instead of running the sweep here, write a job array that runs each
    /// of its simulations as an array task on a cluster, into --job-dir:
    /// `slurm` (sbatch --array) or `pbs` (PBS Pro, qsub -J). Prints how to
    /// submit it and the --gather command that prints the sweep after.
    #[arg(long, value_name = "SCHEDULER", value_parser = ["slurm", "pbs"], requires = "job_dir",
          conflicts_with_all = ["task", "gather"])]
    emit_job: Option<String>,
    /// The directory of a job array: its script, and each task's result
    /// (`task-N.json`) and log.
    #[arg(long, value_name = "DIR")]
    job_dir: Option<PathBuf>,
    /// Run only simulation N of the sweep (0 is the first: curves, then
    /// rank counts, then --samples draws, in order) and write its result to
    /// --job-dir: what each array task of --emit-job runs.
    #[arg(
        long,
        value_name = "N",
        requires = "job_dir",
        conflicts_with = "gather"
    )]
    task: Option<usize>,
    /// Print the sweep from the results a job array's tasks wrote to DIR,
    /// exactly as the sweep run here prints it (table, --format json,
    /// --plot). Give the sweep's own arguments with it.
    #[arg(long, value_name = "DIR", conflicts_with = "job_dir")]
    gather: Option<PathBuf>,
}

pub fn run(args: &SweepArgs) -> anyhow::Result<()> {
    let ranks = args.ranks.0.clone();
    let file = args.file.display().to_string();
    let (program, source) = crate::load_program_and_source(&args.file, &args.params)?;
    let curves = curves(&args.machines, &args.sets)?;
    let study = Study {
        program: &program,
        file: &file,
        ranks: &ranks,
        curves: &curves,
        ppn: args.ppn,
        options: args.study.options(),
        limits: app::scenario::Limits::default(),
        progress: None,
    };
    if let Some(scheduler) = &args.emit_job {
        return crate::job_array::emit(&study, scheduler, args.job_dir.as_deref());
    }
    if let Some(index) = args.task {
        return crate::job_array::run_task(&study, index, args.job_dir.as_deref(), &source);
    }
    let (series, notes) = match &args.gather {
        Some(dir) => crate::job_array::gather(&study, dir, &args.study)?,
        None => run_study(study, &source, &args.study)?,
    };
    if let Some(p) = &args.plot {
        app::chart::write_picture(p, &study::svg(&series, &file))?;
    }
    if args.format == crate::Format::Json {
        crate::out(&format!(
            "{}\n",
            serde_json::to_string_pretty(
                &serde_json::json!({"program": file, "series": series, "notes": notes})
            )?
        ));
        return Ok(());
    }
    let mut out = study::text(&series, &file, args.study.efficiency);
    for note in &notes {
        let _ = writeln!(out, "note: {note}");
    }
    if let Some(p) = &args.plot {
        let _ = writeln!(out, "plot: {}", p.display());
    }
    crate::out(&out);
    Ok(())
}
