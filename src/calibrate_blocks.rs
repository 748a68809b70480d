//! `parsim calibrate blocks`: profile a skeleton, time its native kernels on
//! this machine, fit a cost per kernel and write `blocks.toml` (the
//! `calibrate::blocks` crate module does the measuring and fitting), or
//! write a batch job that does it on a cluster's compute node.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};
use calibrate::blocks::file::{BlocksFile, CalibrationInfo, CopyEntry, KernelEntry, PointEntry};
use calibrate::blocks::library::{CompileOptions, KernelLibrary, compile, compiler_version};
use calibrate::blocks::timing::{Before, TimingOptions, time_kernel, timer_overhead};
use calibrate::blocks::{fit, integer_args, select_points};
use sim_core::engine::{PrintLine, SimConfig};
use sim_core::kernels::KernelProfile;

use crate::calibrate_cmd::{shell_word, utc_timestamp};

#[derive(clap::Args)]
pub struct BlocksArgs {
    /// The skeleton program (.mpl) whose kernels to time.
    file: PathBuf,
    /// Profile the program at these rank counts (the argument tuples of the
    /// kernels usually depend on them): "2" or "1,2,4".
    #[arg(long, short = 'n', value_delimiter = ',', required = true)]
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
    /// Write the times here.
    #[arg(long, short, default_value = "blocks.toml")]
    output: PathBuf,
    /// Instead of timing here, write a batch script that runs this
    /// calibration on a compute node of the target cluster.
    #[arg(long, value_name = "slurm|pbs", value_parser = ["slurm", "pbs"])]
    emit_job: Option<String>,
}

pub fn run(args: &BlocksArgs) -> anyhow::Result<()> {
    if args.ranks.contains(&0) {
        bail!("--ranks must be at least 1");
    }
    let mut levels = args.concurrent.clone();
    levels.sort_unstable();
    levels.dedup();
    if levels.iter().any(|k| !(1..=1024).contains(k)) {
        bail!("--concurrent levels must be in 1..=1024");
    }
    let copies = levels.last().copied().unwrap_or(1);
    if !(args.rse > 0.0 && args.budget > 0.0 && args.budget.is_finite()) {
        bail!("--rse and --budget must be positive");
    }
    if !(args.min_time >= 0.0 && args.min_time <= args.budget) {
        bail!("--min-time must be between 0 and --budget");
    }
    let program = crate::load_program(&args.file, &args.params)?;
    if args.emit_job.is_none() && !args.kernels.is_file() {
        bail!("--kernels {}: no such file", args.kernels.display());
    }
    if let Some(kind) = &args.emit_job {
        return emit_job(args, kind, &program);
    }

    // 1. Which kernels are called with which arguments.
    let profile = profile(args)?;
    if profile.is_empty() {
        bail!("{} calls no kernel: nothing to time", args.file.display());
    }

    // 2. The library, once per concurrent copy (each copy its own data).
    let tmp = crate::tempdir::TempDir::new("blocks").map_err(anyhow::Error::msg)?;
    let dir = tmp.path();
    let opts = CompileOptions {
        cc: args.cc.clone(),
        cflags: args.cflags.clone(),
    };
    let is_source = args
        .kernels
        .extension()
        .is_some_and(|e| e == "c" || e == "cc" || e == "cpp");
    let (lib_path, compiler) = if is_source {
        let (lib, line) = compile(&args.kernels, dir, &opts)?;
        eprintln!("compiled: {line}");
        let version = compiler_version(&args.cc).unwrap_or_else(|| args.cc.clone());
        (lib, version)
    } else {
        (args.kernels.clone(), "prebuilt library".to_owned())
    };
    let mut libraries = Vec::new();
    for i in 0..copies {
        let copy = dir.join(format!("copy{i}.so"));
        std::fs::copy(&lib_path, &copy)
            .with_context(|| format!("cannot copy {} to {}", lib_path.display(), copy.display()))?;
        libraries.push(KernelLibrary::load(&copy)?);
    }

    // 3. Time the chosen tuples of every kernel that has a native version.
    let timing = TimingOptions {
        target_rse: args.rse,
        budget: Duration::from_secs_f64(args.budget),
        min_time: Duration::from_secs_f64(args.min_time),
        ..TimingOptions::default()
    };
    let dt = timer_overhead();
    eprintln!(
        "timer overhead {:.1} ns; target rse {:.2}%, {} to {} s per tuple",
        dt * 1e9,
        args.rse * 100.0,
        args.min_time,
        args.budget
    );
    let mut kernels = Vec::new();
    let mut summary = String::new();
    for (prof, &level) in profile
        .iter()
        .flat_map(|p| levels.iter().map(move |l| (p, l)))
    {
        let all: Vec<_> = libraries
            .iter()
            .filter_map(|l| l.kernel(&prof.kernel))
            .collect();
        if all.len() != libraries.len() {
            if level != levels[0] {
                continue;
            }
            let k = program.kernels.iter().find(|k| k.name == prof.kernel);
            let note = if k.is_some_and(|k| k.cost.is_some()) {
                "keeps its cost formula"
            } else {
                "has no cost formula either: `run --blocks` will fail on it"
            };
            eprintln!(
                "warning: kernel `{}` has no native implementation (parsim_kernel_{}) in {}: it {note}",
                prof.kernel,
                prof.kernel,
                args.kernels.display()
            );
            continue;
        }
        let fns = &all[..level as usize];
        eprintln!(
            "kernel {}: {} cop{} at once",
            prof.kernel,
            level,
            if level == 1 { "y" } else { "ies" }
        );
        let chosen = select_points(&prof.calls, args.max_points);
        let mut points = Vec::new();
        for &i in &chosen {
            let call = &prof.calls[i];
            let ints = integer_args(&prof.kernel, &prof.params, &call.args)?;
            // In sequence: after the call that precedes it in the program
            // (when that is another call with a native version).
            let pre = match &call.predecessor {
                Some((k, a)) if !(args.isolated || (*k == prof.kernel && *a == call.args)) => {
                    let fns: Vec<_> = libraries.iter().filter_map(|l| l.kernel(k)).collect();
                    let params = program
                        .kernels
                        .iter()
                        .find(|d| d.name == *k)
                        .map_or(Vec::new(), |d| d.params.clone());
                    match integer_args(k, &params, a) {
                        Ok(ints) if fns.len() == libraries.len() => Some((k.clone(), fns, ints)),
                        _ => None,
                    }
                }
                _ => None,
            };
            let before = pre.as_ref().map(|(_, f, a)| Before {
                kernels: &f[..level as usize],
                args: a,
            });
            let m = time_kernel(fns, &ints, before, &timing, dt);
            let after = pre.as_ref().map_or(String::new(), |(k, _, a)| {
                format!(
                    "{k}({})",
                    a.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
                )
            });
            let shown = ints
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(", ");
            eprintln!(
                "  {}({shown}){}: {} ± {:.2}% ({} samples of {} call{}, {} trimmed; first call {})",
                prof.kernel,
                if after.is_empty() {
                    String::new()
                } else {
                    format!(" after {after}")
                },
                seconds(m.seconds),
                m.rse * 100.0,
                m.samples,
                m.batch,
                if m.batch == 1 { "" } else { "s" },
                m.trimmed,
                seconds(m.first_call)
            );
            points.push(PointEntry {
                args: ints,
                seconds: m.seconds,
                median: m.median,
                ci95: [m.ci95.0, m.ci95.1],
                rse: m.rse,
                samples: m.samples as u64,
                trimmed: m.trimmed as u64,
                batch: m.batch,
                first_call: m.first_call,
                warmup: m.warmup,
                calls: call.count,
                copies: m
                    .per_copy
                    .iter()
                    .map(|c| CopyEntry {
                        seconds: c.seconds,
                        quantiles: c.quantiles.clone(),
                    })
                    .collect(),
                quantiles: m.quantiles,
                after,
            });
        }
        let data: Vec<(Vec<f64>, f64)> = points
            .iter()
            .map(|p| (p.args.iter().map(|&a| a as f64).collect(), p.seconds))
            .collect();
        let model = fit::fit(&prof.params, &data);
        let formula = model
            .as_ref()
            .map_or_else(String::new, |m| m.formula(&prof.params));
        let _ = writeln!(
            summary,
            "{:<12} x{:<3} {:>3} of {:>4} tuples timed  t = {}{}",
            prof.kernel,
            level,
            points.len(),
            prof.calls.len(),
            formula,
            model.as_ref().map_or(String::new(), |m| format!(
                "  (fit error max {:.1}%{})",
                m.max_rel_error * 100.0,
                if m.loo_rel_error.is_finite() {
                    format!(", leave-one-out {:.1}%", m.loo_rel_error * 100.0)
                } else {
                    String::new()
                }
            ))
        );
        kernels.push(KernelEntry {
            name: prof.kernel.clone(),
            params: prof.params.clone(),
            concurrent: level,
            formula,
            model,
            points,
        });
    }
    if kernels.is_empty() {
        bail!(
            "no kernel of {} has a native implementation in {}",
            args.file.display(),
            args.kernels.display()
        );
    }
    let file = BlocksFile {
        calibration: CalibrationInfo {
            program: args.file.display().to_string(),
            ranks: args.ranks.clone(),
            params: args
                .params
                .iter()
                .cloned()
                .chain(args.sets.iter().map(|s| format!("set {s}")))
                .collect(),
            library: args.kernels.display().to_string(),
            host: host_name(),
            cpu: cpu_model(),
            compiler,
            cflags: if is_source {
                args.cflags.clone()
            } else {
                String::new()
            },
            date: utc_timestamp(),
            concurrent: levels.clone(),
            timer_overhead: dt,
            target_rse: args.rse,
            budget: args.budget,
            min_time: args.min_time,
        },
        kernels,
    };
    let text = file.to_toml()?;
    crate::write_atomically(&args.output, &text)?;
    crate::out(&summary);
    eprintln!("wrote {}", args.output.display());
    Ok(())
}

/// The kernel calls of every (parameter set, rank count) profile run,
/// merged: counts of equal tuples added.
fn profile(args: &BlocksArgs) -> anyhow::Result<Vec<KernelProfile>> {
    let sets = app::scenario::param_sets(&args.sets);
    let mut merged: Vec<KernelProfile> = Vec::new();
    for set in &sets {
        let params: Vec<String> = args.params.iter().chain(set).cloned().collect();
        let program = crate::load_program(&args.file, &params)?;
        for &ranks in &args.ranks {
            let machine =
                crate::load_machine(args.machine.as_deref(), None).map_err(anyhow::Error::msg)?;
            let cfg = SimConfig {
                ranks,
                kernel_profile: true,
                ..SimConfig::default()
            };
            let mut sink = |_: PrintLine| {};
            let report = sim_core::simulate(&program, &mut machine.start(ranks), cfg, &mut sink)
                .map_err(|e| {
                    anyhow::anyhow!(
                        "the profile run at {ranks} ranks ({}) failed: {e}",
                        params.join(" ")
                    )
                })?;
            for kp in report.kernel_profile {
                match merged.iter_mut().find(|m| m.kernel == kp.kernel) {
                    None => merged.push(kp),
                    Some(m) => {
                        for call in kp.calls {
                            match m.calls.iter_mut().find(|c| c.args == call.args) {
                                Some(c) => c.count += call.count,
                                None => m.calls.push(call),
                            }
                        }
                    }
                }
            }
        }
    }
    for m in &mut merged {
        m.calls
            .sort_by(|a, b| sim_core::kernels::cmp_args(&a.args, &b.args));
    }
    Ok(merged)
}

fn seconds(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.3} s")
    } else if s >= 1e-3 {
        format!("{:.3} ms", s * 1e3)
    } else if s >= 1e-6 {
        format!("{:.3} us", s * 1e6)
    } else {
        format!("{:.1} ns", s * 1e9)
    }
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map_or_else(|| "unknown".to_owned(), |h| h.trim().to_owned())
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_owned())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_owned())
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
