//! `parsim calibrate blocks`: profile a skeleton, time its native kernels on
//! this machine, fit a cost per kernel and write `blocks.toml` (the
//! `calibrate::blocks` crate module does the measuring and fitting), or
//! write a batch job that does it on a cluster's compute node.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::bail;

use app::shell::word as shell_word;

#[derive(clap::Args)]
pub struct BlocksArgs {
    /// The skeleton program (.mpl) whose kernels to time.
    file: PathBuf,
    /// Profile the program at these rank counts (the argument tuples of the
    /// kernels usually depend on them): "2" or "1,2,4".
    #[arg(
        long,
        short = 'n',
        value_delimiter = ',',
        required = true,
        value_parser = crate::common::rank_count
    )]
    ranks: Vec<u32>,
    /// Override a `param` for the profile runs: --param name=value.
    #[arg(long = "param", short = 'p', value_name = "NAME=VALUE")]
    params: Vec<String>,
    /// A parameter set to profile, "n=256,iters=100" (repeatable): the
    /// tuples of every set and rank count are timed together.
    #[arg(long = "set", value_name = "NAME=VALUE,...")]
    sets: Vec<String>,
    /// The native kernels: a C file using parsim_kernel.h (compiled here) or
    /// a shared library built from one.
    #[arg(long)]
    kernels: PathBuf,
    /// The C compiler for a .c --kernels.
    #[arg(long, default_value = "cc")]
    cc: String,
    /// Compiler flags (use the flags the real program is built with).
    #[arg(long, default_value = "-O2")]
    cflags: String,
    /// Time this many copies of each kernel at once, one per core, as ranks
    /// sharing a node run; a list (1,2) times every level, and a run uses
    /// the level of its ranks per node.
    #[arg(long, value_delimiter = ',', default_value = "1")]
    concurrent: Vec<u32>,
    /// Stop measuring a tuple once the mean's relative standard error is
    /// below this.
    #[arg(long, default_value_t = 0.005)]
    rse: f64,
    /// Measuring time per argument tuple, seconds.
    #[arg(long, default_value_t = 1.0)]
    budget: f64,
    /// Measure each tuple at least this long, seconds, so that the
    /// machine's interference is averaged in as a long run sees it.
    #[arg(long, default_value_t = 0.25)]
    min_time: f64,
    /// At most this many argument tuples per kernel (a spread over the
    /// range, and the most called ones).
    #[arg(long, default_value_t = 8)]
    max_points: usize,
    /// Machine for the profile run (matters only if the control flow depends
    /// on time).
    #[arg(long, short)]
    machine: Option<PathBuf>,
    /// Time every call alone, repeated, instead of after the call that
    /// precedes it in the program (which leaves the caches as the call
    /// meets them).
    #[arg(long)]
    isolated: bool,
    /// Bind copy j of the kernels (at every --concurrent level) to the
    /// j-th CPU this process may use, as `mpirun -bind-to core` binds a
    /// node's rank j (cores need not run a kernel equally fast; bind the
    /// real runs the same way). Linux.
    #[arg(long)]
    pin: bool,
    /// Time the kernels inside the real program instead of apart: build it
    /// as build-mpi does with every native kernel call timed, run it with
    /// this launcher at every --ranks and --set ("mpirun -np {ranks}"), and
    /// keep each rank's calls (copy j of a level = the node's ranks j,
    /// j + K, ...; K = min(ranks, the --machine's ranks per node), all
    /// ranks on one node without --machine).
    #[arg(
        long,
        value_name = "LAUNCHER",
        conflicts_with_all = ["concurrent", "isolated", "pin", "emit_job", "max_points", "rse", "budget", "min_time"]
    )]
    in_program: Option<String>,
    /// The MPI compiler wrapper for --in-program.
    #[arg(long, default_value = "mpicc", requires = "in_program")]
    mpicc: String,
    /// Write the times here.
    #[arg(long, short, default_value = "blocks.toml")]
    output: PathBuf,
    /// Instead of timing here, write a batch script that runs this
    /// calibration on a compute node of the target cluster.
    #[arg(long, value_name = "slurm|pbs", value_parser = ["slurm", "pbs"])]
    emit_job: Option<String>,
}

pub fn run(args: &BlocksArgs) -> anyhow::Result<()> {
    let mut levels = args.concurrent.clone();
    levels.sort_unstable();
    levels.dedup();
    if levels.iter().any(|k| !(1..=1024).contains(k)) {
        return Err(crate::common::usage(
            "--concurrent levels must be in 1..=1024",
        ));
    }
    if !(args.rse > 0.0 && args.budget > 0.0 && args.budget.is_finite()) {
        return Err(crate::common::usage("--rse and --budget must be positive"));
    }
    if !(args.min_time >= 0.0 && args.min_time <= args.budget) {
        return Err(crate::common::usage(
            "--min-time must be between 0 and --budget",
        ));
    }
    let program = crate::load_program(&args.file, &args.params)?;
    if args.emit_job.is_none() && !args.kernels.is_file() {
        bail!("--kernels {}: no such file", args.kernels.display());
    }
    if let Some(kind) = &args.emit_job {
        return emit_job(args, kind, &program);
    }

    let plan = app::blocks::Plan {
        file: args.file.clone(),
        ranks: args.ranks.clone(),
        params: args.params.clone(),
        sets: args.sets.clone(),
        kernels: args.kernels.clone(),
        cc: args.cc.clone(),
        cflags: args.cflags.clone(),
        levels,
        rse: args.rse,
        budget: args.budget,
        min_time: args.min_time,
        max_points: args.max_points,
        machine: args.machine.clone(),
        isolated: args.isolated,
        pin: args.pin,
        limits: app::scenario::Limits::default(),
        run_with_blocks: "run --blocks".into(),
    };
    let (file, summary) = match &args.in_program {
        Some(launcher) => {
            if !launcher.contains("{ranks}") {
                return Err(crate::common::UsageError(format!(
                    "--in-program {launcher:?}: the launcher needs {{ranks}} where the rank count goes"
                ))
                .into());
            }
            let ranks_per_node = match &args.machine {
                Some(m) => app::scenario::load_machine(Some(m.as_path()), None)
                    .map_err(crate::flagged)?
                    .ranks_per_node(),
                None => u32::MAX,
            };
            let how = app::blocks::InProgram {
                launcher: launcher.clone(),
                mpicc: args.mpicc.clone(),
                ranks_per_node,
            };
            app::blocks::calibrate_in_program(&plan, &program, &how, &mut |m| eprintln!("{m}"))?
        }
        None => app::blocks::calibrate_blocks(&plan, &program, &mut |m| eprintln!("{m}"))?,
    };
    let text = file.to_toml()?;
    crate::write_atomically(&args.output, &text)?;
    crate::out(&summary);
    eprintln!("wrote {}", args.output.display());
    Ok(())
}

/// Writes a Slurm or PBS script that runs this calibration on one compute
/// node of the target cluster.
fn emit_job(args: &BlocksArgs, kind: &str, program: &sim_core::ir::Program) -> anyhow::Result<()> {
    let mut cmd = vec![
        "\"$PARSIM\"".to_owned(),
        "calibrate".into(),
        "blocks".into(),
        shell_word(&args.file.display().to_string()),
        "--ranks".into(),
        args.ranks
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(","),
    ];
    for p in &args.params {
        cmd.push("--param".into());
        cmd.push(shell_word(p));
    }
    for p in &args.sets {
        cmd.push("--set".into());
        cmd.push(shell_word(p));
    }
    if args.isolated {
        cmd.push("--isolated".into());
    }
    if args.pin {
        cmd.push("--pin".into());
    }
    cmd.extend([
        "--kernels".into(),
        shell_word(&args.kernels.display().to_string()),
        "--cc".into(),
        shell_word(&args.cc),
        "--cflags".into(),
        shell_word(&args.cflags),
        "--concurrent".into(),
        args.concurrent
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(","),
        "--rse".into(),
        args.rse.to_string(),
        "--budget".into(),
        args.budget.to_string(),
        "--min-time".into(),
        args.min_time.to_string(),
        "--max-points".into(),
        args.max_points.to_string(),
        "-o".into(),
        shell_word(&args.output.display().to_string()),
    ]);
    // Wall time: every kernel's tuples at most (budget + a call) each, with
    // a generous margin for compiling and slow first calls.
    let copies = args.concurrent.iter().copied().max().unwrap_or(1);
    let tuples = (program.kernels.len() * args.max_points * args.concurrent.len()).max(1) as f64;
    let minutes = ((tuples * args.budget * 3.0) / 60.0).ceil() as u64 + 10;
    let walltime = format!("{:02}:{:02}:00", minutes / 60, minutes % 60);
    let mut s = String::from("#!/bin/bash\n");
    match kind {
        "slurm" => {
            let _ = write!(
                s,
                "#SBATCH --job-name=parsim-blocks\n#SBATCH --nodes=1\n#SBATCH --ntasks=1\n\
                 #SBATCH --cpus-per-task={copies}\n#SBATCH --exclusive\n#SBATCH --time={walltime}\n\
                 #SBATCH --output=parsim-blocks-%j.log\n"
            );
        }
        _ => {
            let _ = write!(
                s,
                "#PBS -N parsim-blocks\n#PBS -l nodes=1:ppn={copies}\n#PBS -l walltime={walltime}\n\
                 #PBS -j oe\n"
            );
        }
    }
    let workdir = if kind == "slurm" {
        "${SLURM_SUBMIT_DIR:-.}"
    } else {
        "${PBS_O_WORKDIR:-.}"
    };
    let _ = write!(
        s,
        "# Times the native kernels of {file} on one compute node (the whole node,\n\
         # so that nothing else shares its memory bandwidth), as `parsim calibrate\n\
         # blocks` would here. Needs on the node: parsim (or PARSIM=/path/to/parsim),\n\
         # a C compiler, and these files in the submit directory: {file}, {kernels}.\n\
         # Bring back: {output}; then `parsim run {file} --blocks {output} ...`.\n\
         set -euo pipefail\n\
         PARSIM=\"${{PARSIM:-parsim}}\"\n\
         cd \"{workdir}\"\n\
         {cmd}\n\
         echo \"parsim-blocks: done; bring back {output}\"\n",
        file = args.file.display(),
        kernels = args.kernels.display(),
        output = args.output.display(),
        cmd = cmd.join(" "),
    );
    let path = job_path(&args.output, kind);
    crate::write_atomically(&path, &s)?;
    crate::out(&format!(
        "wrote {} ({kind}): submit it on the cluster ({}) and bring back {}\n",
        path.display(),
        if kind == "slurm" { "sbatch" } else { "qsub" },
        args.output.display()
    ));
    Ok(())
}

fn job_path(output: &Path, kind: &str) -> PathBuf {
    let stem = output
        .file_stem()
        .map_or("blocks".into(), |s| s.to_string_lossy().into_owned());
    output.with_file_name(format!("{stem}.{kind}.sh"))
}
