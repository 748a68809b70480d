//! Block calibration (ParJava's block timing): profile a skeleton for the
//! argument tuples of its kernels, time their native implementations on
//! this machine (alone or several copies at once), fit a cost per kernel
//! and gather it all as a blocks file. The `calibrate::blocks` module does
//! the measuring and fitting; this is the pipeline.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use calibrate::blocks::file::{BlocksFile, CalibrationInfo, CopyEntry, KernelEntry, PointEntry};
use calibrate::blocks::library::{
    CompileOptions, KernelFn, KernelLibrary, compile, compiler_version,
};
use calibrate::blocks::reference::reference_seconds;
use calibrate::blocks::timing::{Before, Measurement, TimingOptions, time_kernel, timer_overhead};
use calibrate::blocks::{fit, integer_args, select_points};
use sim_core::engine::{PrintLine, SimConfig};
use sim_core::kernels::KernelProfile;

use crate::Error;
use crate::clock::utc_timestamp;
use crate::scenario::Limits;

mod in_program;
pub use in_program::{InProgram, calibrate_in_program};

/// What to calibrate and how.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The skeleton whose kernels are timed.
    pub file: PathBuf,
    /// Profile runs at these rank counts.
    pub ranks: Vec<u32>,
    /// `param` overrides for every profile run.
    pub params: Vec<String>,
    /// Parameter sets (`NAME=VALUE,...` each), profiled together.
    pub sets: Vec<String>,
    /// The native kernels: a C source (compiled here) or a shared library.
    pub kernels: PathBuf,
    pub cc: String,
    pub cflags: String,
    /// Copies timed at once (sorted, distinct, each in 1..=1024).
    pub levels: Vec<u32>,
    /// Stop a tuple once the mean's relative standard error is below this.
    pub rse: f64,
    /// Seconds of measuring per tuple, at most and at least.
    pub budget: f64,
    pub min_time: f64,
    /// Tuples per kernel at most.
    pub max_points: usize,
    /// The machine of the profile runs.
    pub machine: Option<PathBuf>,
    /// Time every call alone instead of after its predecessor.
    pub isolated: bool,
    /// Bind copy `j` of every level to the `j`-th CPU of the process's
    /// mask (as `mpirun -bind-to core` binds the node's rank `j`).
    pub pin: bool,
    pub limits: Limits,
    /// How the front end runs a program with the blocks file (`run
    /// --blocks` on the command line), for the warning about a kernel that
    /// has neither a native implementation nor a cost formula.
    pub run_with_blocks: String,
}

impl Plan {
    /// The `--param`s and `--set`s as `[calibration] params` records them.
    fn recorded_params(&self) -> Vec<String> {
        self.params
            .iter()
            .cloned()
            .chain(self.sets.iter().map(|s| format!("set {s}")))
            .collect()
    }
}

/// A compiler's first `--version` line, or its name.
fn compiler_line(cc: &str) -> String {
    compiler_version(cc).unwrap_or_else(|| cc.to_owned())
}

/// Runs the calibration: the blocks file and a one-line-per-kernel summary.
/// `progress` hears each step (compiling, each tuple's time, warnings).
pub fn calibrate_blocks(
    plan: &Plan,
    program: &sim_core::ir::Program,
    progress: &mut dyn FnMut(&str),
) -> Result<(BlocksFile, String), Error> {
    let levels = &plan.levels;
    let copies = levels.last().copied().unwrap_or(1);
    // 1. Which kernels are called with which arguments.
    let profile = profile(plan)?;
    if profile.is_empty() {
        return Err(Error::Input(format!(
            "{} calls no kernel: nothing to time",
            plan.file.display()
        )));
    }

    // 2. The library, once per concurrent copy (each copy its own data).
    let tmp = tempfile::Builder::new()
        .prefix("parsim-blocks-")
        .tempdir()
        .map_err(|e| Error::Tool(format!("cannot create a temporary directory: {e}")))?;
    let (libraries, compiler, is_source) = load_libraries(plan, tmp.path(), copies, progress)?;

    // 3. Time the chosen tuples of every kernel that has a native version.
    let pin = if plan.pin {
        cpus_for(copies as usize)?
    } else {
        Vec::new()
    };
    if !pin.is_empty() {
        progress(&format!("copy j bound to CPU {:?}[j]", pin));
    }
    let timing = TimingOptions {
        target_rse: plan.rse,
        budget: Duration::from_secs_f64(plan.budget),
        min_time: Duration::from_secs_f64(plan.min_time),
        pin: pin.clone(),
        ..TimingOptions::default()
    };
    let dt = timer_overhead();
    progress(&format!(
        "timer overhead {:.1} ns; target rse {:.2}%, {} to {} s per tuple",
        dt * 1e9,
        plan.rse * 100.0,
        plan.min_time,
        plan.budget
    ));
    let mut kernels = Vec::new();
    let mut summary = String::new();
    // The tuples to time in all, so that each timed one says how far the
    // calibration is (issue 14: progress on every long command).
    let total: usize = profile
        .iter()
        .filter(|p| libraries.iter().all(|l| l.kernel(&p.kernel).is_some()))
        .map(|p| select_points(&p.calls, plan.max_points).len() * levels.len())
        .sum();
    let mut done = 0usize;
    let started = std::time::Instant::now();
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
                "keeps its cost formula".to_owned()
            } else {
                format!(
                    "has no cost formula either: `{}` will fail on it",
                    plan.run_with_blocks
                )
            };
            progress(&format!(
                "warning: kernel `{}` has no native implementation (parsim_kernel_{}) in {}: it {note}",
                prof.kernel,
                prof.kernel,
                plan.kernels.display()
            ));
            continue;
        }
        let fns = &all[..level as usize];
        progress(&format!(
            "kernel {}: {} cop{} at once",
            prof.kernel,
            level,
            if level == 1 { "y" } else { "ies" }
        ));
        let chosen = select_points(&prof.calls, plan.max_points);
        let mut points = Vec::new();
        for &i in &chosen {
            let call = &prof.calls[i];
            let ints = integer_args(&prof.kernel, &prof.params, &call.args)
                .map_err(|e| Error::Input(e.to_string()))?;
            let pre = predecessor(plan, program, &libraries, prof, call);
            let before = pre.as_ref().map(|(_, f, a)| Before {
                kernels: &f[..level as usize],
                args: a,
            });
            // The machine's speed around the measurement (`validate --run
            // --speed-reference` scales the time by the speed it meets).
            let ref_before = reference_seconds();
            let m = time_kernel(fns, &ints, before, &timing, dt);
            check_pinned(&timing, &m)?;
            let reference = 0.5 * (ref_before + reference_seconds());
            let after = pre.as_ref().map_or(String::new(), |(k, _, a)| {
                format!(
                    "{k}({})",
                    a.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
                )
            });
            done += 1;
            let elapsed = started.elapsed().as_secs_f64();
            progress(&format!(
                "{}   [{done} of {total} tuples, {:.0}%, {elapsed:.1} s elapsed, about {:.1} s left]",
                point_line(&prof.kernel, &ints, &after, &m),
                100.0 * done as f64 / total.max(1) as f64,
                elapsed / done as f64 * total.saturating_sub(done) as f64
            ));
            points.push(point_entry(m, ints, call.count, after, reference));
        }
        let (entry, line) =
            kernel_entry(&prof.kernel, &prof.params, prof.calls.len(), level, points);
        summary.push_str(&line);
        kernels.push(entry);
    }
    if kernels.is_empty() {
        return Err(Error::Input(format!(
            "no kernel of {} has a native implementation in {}",
            plan.file.display(),
            plan.kernels.display()
        )));
    }
    let file = BlocksFile {
        calibration: CalibrationInfo {
            program: plan.file.display().to_string(),
            ranks: plan.ranks.clone(),
            params: plan.recorded_params(),
            library: plan.kernels.display().to_string(),
            host: host_name(),
            cpu: cpu_model(),
            compiler,
            cflags: if is_source {
                plan.cflags.clone()
            } else {
                String::new()
            },
            date: utc_timestamp(),
            concurrent: levels.clone(),
            timer_overhead: dt,
            target_rse: plan.rse,
            budget: plan.budget,
            min_time: plan.min_time,
            pinned: pin,
            in_program: None,
        },
        kernels,
    };
    Ok((file, summary))
}

/// The first `copies` CPUs of the process's mask (copy j on the j-th, as
/// a launcher binding ranks to cores puts a node's rank j), or an error
/// saying why not.
fn cpus_for(copies: usize) -> Result<Vec<usize>, Error> {
    let mut cpus = calibrate::blocks::timing::allowed_cpus();
    if cpus.len() < copies.max(1) {
        return Err(Error::Input(if cpus.is_empty() {
            "--pin: this system does not let parsim read or set CPU affinity (Linux only)"
                .to_owned()
        } else {
            format!(
                "--pin: {copies} copies at once need as many CPUs, the process may use {} ({cpus:?})",
                cpus.len()
            )
        }));
    }
    cpus.truncate(copies.max(1));
    Ok(cpus)
}

/// An error if `timing` asked for bound copies and a binding failed.
fn check_pinned(timing: &TimingOptions, m: &Measurement) -> Result<(), Error> {
    if timing.pin.is_empty() || m.pinned {
        Ok(())
    } else {
        Err(Error::Tool(format!(
            "could not bind the kernel's copies to CPUs {:?} (sched_setaffinity failed)",
            timing.pin
        )))
    }
}

/// The progress line of one measured tuple.
fn point_line(kernel: &str, ints: &[i64], after: &str, m: &Measurement) -> String {
    let shown = ints
        .iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "  {}({shown}){}: {} ± {:.2}% ({} samples of {} call{}, {} trimmed; first call {})",
        kernel,
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
    )
}

/// A kernel's entry at one concurrency level: its measured tuples and the
/// cost model fitted to them, with the summary line.
pub(crate) fn kernel_entry(
    kernel: &str,
    params: &[String],
    tuples: usize,
    level: u32,
    points: Vec<PointEntry>,
) -> (KernelEntry, String) {
    let data: Vec<(Vec<f64>, f64)> = points
        .iter()
        .map(|p| (p.args.iter().map(|&a| a as f64).collect(), p.seconds))
        .collect();
    let model = fit::fit(params, &data);
    let formula = model
        .as_ref()
        .map_or_else(String::new, |m| m.formula(params));
    let mut line = String::new();
    let _ = writeln!(
        line,
        "{:<12} x{:<3} {:>3} of {:>4} tuples timed  t = {}{}",
        kernel,
        level,
        points.len(),
        tuples,
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
    let entry = KernelEntry {
        name: kernel.to_owned(),
        params: params.to_vec(),
        concurrent: level,
        formula,
        model,
        points,
    };
    (entry, line)
}

/// The kernel library (compiled from a C source, or prebuilt), loaded
/// `copies` times from copies in `dir` so that concurrent copies have
/// their own data; the compiler's version and whether it was compiled.
fn load_libraries(
    plan: &Plan,
    dir: &std::path::Path,
    copies: u32,
    progress: &mut dyn FnMut(&str),
) -> Result<(Vec<KernelLibrary>, String, bool), Error> {
    let opts = CompileOptions {
        cc: plan.cc.clone(),
        cflags: plan.cflags.clone(),
    };
    let is_source = plan
        .kernels
        .extension()
        .is_some_and(|e| e == "c" || e == "cc" || e == "cpp");
    let (lib_path, compiler) = if is_source {
        let (lib, line) =
            compile(&plan.kernels, dir, &opts).map_err(|e| Error::Tool(e.to_string()))?;
        progress(&format!("compiled: {line}"));
        let version = compiler_line(&plan.cc);
        (lib, version)
    } else {
        (plan.kernels.clone(), "prebuilt library".to_owned())
    };
    let mut libraries = Vec::new();
    for i in 0..copies {
        let copy = dir.join(format!("copy{i}.so"));
        std::fs::copy(&lib_path, &copy).map_err(|e| {
            Error::Tool(format!(
                "cannot copy {} to {}: {e}",
                lib_path.display(),
                copy.display()
            ))
        })?;
        libraries.push(KernelLibrary::load(&copy).map_err(|e| Error::Input(e.to_string()))?);
    }
    Ok((libraries, compiler, is_source))
}

/// The call that precedes `call` in the program, to run untimed before
/// each timed call (so the caches are as the program leaves them), when it
/// is another call with a native version: its kernel, functions and
/// arguments.
fn predecessor(
    plan: &Plan,
    program: &sim_core::ir::Program,
    libraries: &[KernelLibrary],
    prof: &KernelProfile,
    call: &sim_core::kernels::ProfiledCall,
) -> Option<(String, Vec<KernelFn>, Vec<i64>)> {
    match &call.predecessor {
        Some((k, a)) if !(plan.isolated || (*k == prof.kernel && *a == call.args)) => {
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
    }
}

/// A measured tuple as the blocks file keeps it.
pub(crate) fn point_entry(
    m: Measurement,
    ints: Vec<i64>,
    calls: u64,
    after: String,
    reference: f64,
) -> PointEntry {
    PointEntry {
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
        calls,
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
        reference: Some(reference),
    }
}

/// The kernel calls of every (parameter set, rank count) profile run,
/// merged: counts of equal tuples added.
fn profile(plan: &Plan) -> Result<Vec<KernelProfile>, Error> {
    let sets = crate::scenario::param_sets(&plan.sets);
    let mut merged: Vec<KernelProfile> = Vec::new();
    for set in &sets {
        let params: Vec<String> = plan.params.iter().chain(set).cloned().collect();
        let (program, _) = crate::scenario::load_program(&plan.file, &params)?;
        for &ranks in &plan.ranks {
            let machine = crate::scenario::load_machine(plan.machine.as_deref(), None)?;
            let cfg = SimConfig {
                kernel_profile: true,
                ..plan.limits.config(ranks)
            };
            let mut sink = |_: PrintLine| {};
            let report = sim_core::simulate(&program, &mut machine.start(ranks), cfg, &mut sink)
                .map_err(|e| {
                    Error::Input(format!(
                        "the profile run at {ranks} ranks ({}) failed: {e}",
                        params.join(" ")
                    ))
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

/// The kernels of a blocks file timed again, between real runs
/// (`validate --run --retime`): the native library loaded once per copy,
/// each tuple measured for a short slice with the method of the
/// calibration (after its recorded predecessor, as many copies at once as
/// its entry was timed with).
pub struct Retimer {
    libraries: Vec<KernelLibrary>,
    timing: TimingOptions,
    dt: f64,
    /// Holds the library copies for as long as they are loaded.
    _dir: tempfile::TempDir,
}

impl Retimer {
    /// Compiles (a C source, with `cc` and the file's recorded flags, or
    /// `cflags` when it records none: it was calibrated on a prebuilt
    /// library) or loads (a shared library) `kernels`, `copies` times, and
    /// measures each tuple for `slice` seconds.
    pub fn new(
        kernels: &std::path::Path,
        cflags: &str,
        file: &BlocksFile,
        copies: u32,
        slice: f64,
        progress: &mut dyn FnMut(&str),
    ) -> Result<Retimer, Error> {
        let dir = tempfile::Builder::new()
            .prefix("parsim-retime-")
            .tempdir()
            .map_err(|e| Error::Tool(format!("cannot create a temporary directory: {e}")))?;
        let plan = Plan {
            file: PathBuf::from(&file.calibration.program),
            ranks: Vec::new(),
            params: Vec::new(),
            sets: Vec::new(),
            kernels: kernels.to_path_buf(),
            cc: "cc".to_owned(),
            cflags: if file.calibration.cflags.trim().is_empty() {
                cflags.to_owned()
            } else {
                file.calibration.cflags.clone()
            },
            levels: vec![copies],
            rse: 0.01,
            budget: slice,
            min_time: slice,
            max_points: 0,
            machine: None,
            isolated: false,
            pin: false,
            limits: Limits::default(),
            run_with_blocks: String::new(),
        };
        check_retimable(file)?;
        let (libraries, _, _) = load_libraries(&plan, dir.path(), copies.max(1), progress)?;
        // Bound as the calibration was: copy j on the file's CPU j.
        let pin = file.calibration.pinned.clone();
        if !pin.is_empty() {
            let allowed = calibrate::blocks::timing::allowed_cpus();
            if let Some(c) = pin.iter().find(|c| !allowed.contains(c)) {
                return Err(Error::Input(format!(
                    "the blocks file was timed with copies bound to CPUs {pin:?}; CPU {c} is not \
                     among this process's ({allowed:?})"
                )));
            }
        }
        Ok(Retimer {
            libraries,
            timing: TimingOptions {
                target_rse: 0.01,
                budget: Duration::from_secs_f64(slice),
                min_time: Duration::from_secs_f64(slice),
                pin,
                ..TimingOptions::default()
            },
            dt: timer_overhead(),
            _dir: dir,
        })
    }

    /// `file` with the points a run of `ranks_on_node` ranks per node uses
    /// (the entries of [`BlocksFile::chosen`], the tuples of `used`: kernel
    /// name and the measured tuples the run asked for) measured now: mean, median,
    /// interval, quantiles and each copy's times replaced, the first call
    /// kept from the calibration (a run pays it once). An entry needing
    /// more copies than loaded, or a kernel the library lacks, is an
    /// error naming it.
    pub fn retime(
        &self,
        file: &BlocksFile,
        ranks_on_node: u32,
        used: &[(String, Vec<Vec<i64>>)],
    ) -> Result<BlocksFile, Error> {
        let mut out = file.clone();
        for i in file.chosen(ranks_on_node) {
            let entry = &mut out.kernels[i];
            let tuples = tuples_of(used, &entry.name);
            if tuples.is_empty() {
                continue;
            }
            let level = entry.concurrent.max(1) as usize;
            if level > self.libraries.len() {
                return Err(Error::Input(format!(
                    "kernel `{}` was timed with {level} copies at once, {} loaded",
                    entry.name,
                    self.libraries.len()
                )));
            }
            let fns = self.functions(&entry.name)?;
            for p in entry.points.iter_mut().filter(|p| tuples.contains(&p.args)) {
                let pre = match parse_call(&p.after) {
                    Some((name, args)) => Some((self.functions(&name)?, args)),
                    None => None,
                };
                let before = pre.as_ref().map(|(f, a)| Before {
                    kernels: &f[..level],
                    args: a,
                });
                let m = time_kernel(&fns[..level], &p.args, before, &self.timing, self.dt);
                check_pinned(&self.timing, &m)?;
                let after = std::mem::take(&mut p.after);
                let fresh = point_entry(m, p.args.clone(), p.calls, after, f64::NAN);
                *p = PointEntry {
                    first_call: p.first_call,
                    warmup: p.warmup,
                    reference: p.reference,
                    ..fresh
                };
            }
        }
        Ok(out)
    }

    fn functions(&self, kernel: &str) -> Result<Vec<KernelFn>, Error> {
        let fns: Vec<KernelFn> = self
            .libraries
            .iter()
            .filter_map(|l| l.kernel(kernel))
            .collect();
        if fns.len() == self.libraries.len() {
            Ok(fns)
        } else {
            Err(Error::Input(format!(
                "the kernel library has no `parsim_kernel_{kernel}` to time again"
            )))
        }
    }
}

/// An error if `file`'s times cannot be timed again apart from the
/// program: they were measured inside it (`calibrate blocks --in-program`).
pub fn check_retimable(file: &BlocksFile) -> Result<(), Error> {
    match &file.calibration.in_program {
        None => Ok(()),
        Some(launcher) => Err(Error::Input(format!(
            "--retime times kernels apart from the program, and this blocks file holds times \
             measured inside it (`calibrate blocks --in-program \"{launcher}\"`): calibrate \
             in-program again right before the runs instead"
        ))),
    }
}

/// The measured tuples of `kernel` in `used` (kernel name and tuples, as
/// `CalibratedKernel::used_tuples` gives them); empty if none.
pub fn tuples_of<'u>(used: &'u [(String, Vec<Vec<i64>>)], kernel: &str) -> &'u [Vec<i64>] {
    used.iter()
        .find(|(k, _)| k == kernel)
        .map_or(&[], |(_, t)| t.as_slice())
}

/// `name(1, 2)` as the blocks file records a predecessor: the name and the
/// arguments; `None` for an empty or unreadable record.
fn parse_call(s: &str) -> Option<(String, Vec<i64>)> {
    let (name, rest) = s.split_once('(')?;
    let inner = rest.strip_suffix(')')?;
    let args = if inner.trim().is_empty() {
        Vec::new()
    } else {
        inner
            .split(',')
            .map(|a| a.trim().parse().ok())
            .collect::<Option<Vec<i64>>>()?
    };
    Some((name.trim().to_owned(), args))
}

/// Each point's times as the median over `files` (the same blocks file
/// measured again several times, [`Retimer::retime`]), element by element;
/// `files` must be non-empty and of one shape.
pub fn median_of(files: &[BlocksFile]) -> Option<BlocksFile> {
    let mut out = files.first()?.clone();
    let med = |f: &dyn Fn(&BlocksFile) -> f64| -> f64 {
        let mut v: Vec<f64> = files.iter().map(f).collect();
        crate::validate::median(&mut v)
    };
    for (i, k) in out.kernels.iter_mut().enumerate() {
        for (j, p) in k.points.iter_mut().enumerate() {
            p.seconds = med(&|f| f.kernels[i].points[j].seconds);
            p.median = med(&|f| f.kernels[i].points[j].median);
            for q in 0..p.quantiles.len() {
                p.quantiles[q] = med(&|f| {
                    f.kernels[i].points[j]
                        .quantiles
                        .get(q)
                        .copied()
                        .unwrap_or(f64::NAN)
                });
            }
            for c in 0..p.copies.len() {
                p.copies[c].seconds = med(&|f| {
                    f.kernels[i].points[j]
                        .copies
                        .get(c)
                        .map_or(f64::NAN, |x| x.seconds)
                });
                for q in 0..p.copies[c].quantiles.len() {
                    p.copies[c].quantiles[q] = med(&|f| {
                        f.kernels[i].points[j]
                            .copies
                            .get(c)
                            .and_then(|x| x.quantiles.get(q).copied())
                            .unwrap_or(f64::NAN)
                    });
                }
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod retime_tests {
    #[test]
    fn recorded_predecessors_are_read_back() {
        assert_eq!(
            super::parse_call("v5(4080)"),
            Some(("v5".to_owned(), vec![4080]))
        );
        assert_eq!(
            super::parse_call("stencil(256, 256)"),
            Some(("stencil".to_owned(), vec![256, 256]))
        );
        assert_eq!(super::parse_call("v1()"), Some(("v1".to_owned(), vec![])));
        assert_eq!(super::parse_call(""), None);
        assert_eq!(super::parse_call("v5(x)"), None);
    }
}
