//! Studies: many independent simulations of one program, run in parallel
//! on one rayon pool. A scaling study ([`run_study`]: rank counts x
//! machines x what-if settings, with speedup, efficiency and the
//! scalability limit, and its chart [`svg`]) and noise draws
//! ([`noise_draws`]: one run per seed, [`spread_of`] their spread).

use std::fmt::Write as _;
use std::path::PathBuf;

use calibrate::blocks::file::{BlocksFile, Extrapolation};
use models::AnyMachine;
use rayon::prelude::*;
use sim_core::engine::{PrintLine, SimConfig, SimError};
use sim_core::ir::Program;

use crate::Error;
use crate::chart::{escape, tick_labels};
use crate::scenario::{Blocks, Limits};

/// The built-in machine as a file, for settings on the default machine
/// (the models crate tests that the two agree).
const DEFAULT_MACHINE: &str = include_str!("../../examples/machines/default-infiniband.toml");

/// One curve: a machine (with what-if settings applied).
pub struct Curve {
    pub label: String,
    /// The machine the curve starts from (a file's stem, or "default").
    pub base: String,
    /// The `--set` values applied, in the order of the flags.
    pub settings: Vec<(String, String)>,
    /// The machine file's text, settings applied.
    pub toml: String,
    /// Where the file's relative paths (a plugin library) start.
    pub base_dir: PathBuf,
}

/// Sets `key` (a dotted path, `network.bandwidth`) to `value` in a machine
/// file's table, creating sections on the way ([`models::config::set_key`]).
fn set_key(table: &mut toml::Table, key: &str, value: &str) -> Result<(), Error> {
    models::config::set_key(table, key, value).map_err(|e| Error::Setting(format!("{key}: {e}")))
}

/// The curves of a study: one per machine file (the built-in machine
/// without any) and combination of settings (`KEY=V1,V2` each).
pub fn curves(machines: &[PathBuf], sets: &[String]) -> Result<Vec<Curve>, Error> {
    let mut bases: Vec<(String, String, PathBuf)> = Vec::new();
    if machines.is_empty() {
        bases.push((
            "default".to_owned(),
            DEFAULT_MACHINE.to_owned(),
            PathBuf::from("."),
        ));
    }
    for m in machines {
        let text = std::fs::read_to_string(m).map_err(|e| Error::read(m, e))?;
        let label = m
            .file_stem()
            .map_or("machine".into(), |s| s.to_string_lossy().into_owned());
        let dir = m
            .parent()
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("."));
        bases.push((label, text, dir));
    }
    // All combinations of the --set values.
    let mut settings: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for s in sets {
        let (key, values) = s
            .split_once('=')
            .ok_or_else(|| Error::Setting(format!("expects KEY=V1,V2, got `{s}`")))?;
        let mut next = Vec::new();
        for combo in &settings {
            for v in values.split(',').map(str::trim).filter(|v| !v.is_empty()) {
                let mut c = combo.clone();
                c.push((key.trim().to_owned(), v.to_owned()));
                next.push(c);
            }
        }
        settings = next;
    }
    let mut out = Vec::new();
    for (label, text, dir) in &bases {
        for combo in &settings {
            let mut toml_text = text.clone();
            let mut name = label.clone();
            if !combo.is_empty() {
                let mut table: toml::Table = toml_text
                    .parse()
                    .map_err(|e| Error::Input(format!("{label}: not a TOML machine file: {e}")))?;
                for (k, v) in combo {
                    set_key(&mut table, k, v)?;
                    let _ = write!(name, " {k}={v}");
                }
                toml_text = toml::to_string(&table)
                    .map_err(|e| Error::Input(format!("cannot write the modified machine: {e}")))?;
            }
            out.push(Curve {
                label: name,
                base: label.clone(),
                settings: combo.clone(),
                toml: toml_text,
                base_dir: dir.clone(),
            });
        }
    }
    Ok(out)
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Point {
    pub ranks: u32,
    /// The predicted time; with --samples the median of the draws.
    pub seconds: f64,
    pub speedup: f64,
    pub efficiency: f64,
    /// With --samples: the 5th and 95th percentiles of the draws' times.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spread: Option<[f64; 2]>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Series {
    pub label: String,
    pub points: Vec<Point>,
    /// The rank count after which time stops falling or efficiency drops
    /// below the threshold (`None`: it scales over the whole range).
    pub limit: Option<u32>,
    pub limit_reason: Option<String>,
}

/// A scaling study: a program (params applied) over rank counts and curves.
pub struct Study<'a> {
    pub program: &'a Program,
    /// The program's file name, for the chart's title and messages.
    pub file: &'a str,
    pub ranks: &'a [u32],
    pub curves: &'a [Curve],
    /// Ranks per node (overrides the machine files').
    pub ppn: Option<u32>,
    pub options: Options,
    pub limits: Limits,
    /// Told `(done, total)` after each simulation (from the pool's
    /// threads, in no set order).
    pub progress: Option<&'a (dyn Fn(usize, usize) + Sync)>,
}

/// How a study derives and runs its points.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Weak scaling: the problem grows with the ranks, so efficiency is
    /// T(first) / T(p) and speedup the scaled speedup (Gustafson).
    pub weak: bool,
    /// Parallel efficiency below which a curve has stopped scaling.
    pub efficiency: f64,
    /// Simulations run at once (default: the number of cores).
    pub jobs: Option<usize>,
    /// Calibrated kernel times; each run uses the level measured with as
    /// many copies at once as it places ranks on a node.
    pub blocks: Option<PathBuf>,
    /// Draw kernel times from their measured distributions, seeded.
    pub noise: Option<u64>,
    /// Draws per point (seeds `noise`, `noise + 1`, ...): the point is
    /// their median, with the 5th-95th percentile range.
    pub samples: Option<u32>,
    /// Each simulation skips a steady outer loop (`SimConfig::fast_forward`).
    pub fast_forward: bool,
    /// Before any simulation, refuse a study whose simulations at once
    /// need more memory than the machine has available (`memory_need`,
    /// [`MemoryNeed::refusal`]).
    pub memory_check: bool,
}

/// What a study found.
pub struct Outcome {
    pub series: Vec<Series>,
    /// What-ifs that changed nothing ([`no_effect_notes`]).
    pub notes: Vec<String>,
    /// The farthest extrapolation of each calibrated kernel over all runs
    /// (beyond 2x the measured range of work).
    pub extrapolated: Vec<Extrapolation>,
}

/// Why a study stopped.
#[derive(Debug, thiserror::Error)]
pub enum StudyError {
    #[error("{0}")]
    Input(#[from] Error),
    /// A simulation failed: the curve, the rank count and the error.
    #[error("{label} on {ranks} ranks: {error}")]
    Simulation {
        label: String,
        ranks: u32,
        error: SimError,
    },
}

/// A pool of `jobs` threads (default: one per core) for independent
/// simulations: the sweep's points and the noise draws.
pub fn pool(jobs: Option<usize>) -> Result<rayon::ThreadPool, Error> {
    let mut b = rayon::ThreadPoolBuilder::new();
    if let Some(n) = jobs {
        b = b.num_threads(n.max(1));
    }
    b.build()
        .map_err(|e| Error::Input(format!("cannot start the simulation threads: {e}")))
}

/// One simulation of a study: curve `curve` at `ranks`, noise draw `draw`
/// (seed `noise + draw`). A study's tasks are numbered curve by curve, rank
/// count by rank count, draw by draw ([`tasks`]); a job array runs one per
/// array task ([`run_task`]) and [`assemble`] joins their results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Task {
    pub curve: usize,
    pub ranks: u32,
    pub draw: usize,
}

/// What one task found: the predicted time and the farthest extrapolation
/// of each calibrated kernel beyond 2x its measured range.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct TaskResult {
    pub seconds: f64,
    pub extrapolated: Vec<Extrapolation>,
}

/// The tasks of a study, in their order (see [`Task`]).
pub fn tasks(study: &Study) -> Result<Vec<Task>, StudyError> {
    if study.ranks.is_empty() {
        return Err(Error::Input("a scaling study needs at least one rank count".into()).into());
    }
    let draws = study.options.samples.map_or(1, |n| n as usize);
    Ok((0..study.curves.len())
        .flat_map(|c| study.ranks.iter().map(move |&r| (c, r)))
        .flat_map(|(curve, ranks)| (0..draws).map(move |draw| Task { curve, ranks, draw }))
        .collect())
}

/// What every task of a study needs: the machines (checked before any
/// task runs; one description per curve, shared by its tasks) and the
/// calibrated kernel times.
struct Prepared {
    machines: Vec<AnyMachine>,
    blocks: Option<BlocksFile>,
}

fn prepare(study: &Study) -> Result<Prepared, StudyError> {
    let blocks = (study.options.blocks.as_deref())
        .map(|p| BlocksFile::read(p).map_err(|e| Error::Input(e.to_string())))
        .transpose()?;
    let mut machines = Vec::with_capacity(study.curves.len());
    for c in study.curves {
        machines.push(machine_of(c, study.ppn)?);
    }
    Ok(Prepared { machines, blocks })
}

/// Task `t`'s run configuration and the calibrated kernel times it uses.
fn task_config(study: &Study, p: &Prepared, t: Task) -> (SimConfig, Blocks) {
    let m = &p.machines[t.curve];
    let calibrated = (p.blocks.as_ref())
        .map(|f| Blocks::of_file(f, t.ranks.min(m.ranks_per_node())))
        .unwrap_or_default();
    let cfg = SimConfig {
        kernel_times: calibrated.times.clone(),
        noise_seed: (study.options.noise).map(|seed| seed.wrapping_add(t.draw as u64)),
        fast_forward: study.options.fast_forward,
        ..study.limits.config(t.ranks)
    };
    (cfg, calibrated)
}

/// What a study's simulations need in memory at once (`memory_need`).
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryNeed {
    /// The largest needs of as many tasks as run at once, summed, bytes.
    pub bytes: f64,
    /// Simulations at once: the pool's threads, at most the tasks.
    pub concurrent: usize,
    /// The largest task: its curve's label, its ranks and its bytes.
    pub largest: (String, u32, f64),
    /// How the largest task was probed ([`crate::memory::Estimate::probes`]).
    pub probes: String,
}

impl MemoryNeed {
    /// Why a study needing this cannot run with `available` bytes free
    /// (more than 90% of them), with what to do instead; `None` when it
    /// fits.
    pub fn refusal(&self, available: f64) -> Option<String> {
        if self.bytes <= 0.9 * available {
            return None;
        }
        let (label, ranks, most) = &self.largest;
        let advice = if self.concurrent > 1 && *most <= 0.9 * available {
            format!(
                "run them one at a time (--jobs 1: the largest alone needs {}), or fewer ranks",
                crate::memory::human(*most)
            )
        } else {
            "run fewer ranks or on a machine with more memory".to_owned()
        };
        Some(format!(
            "the sweep's simulations need about {} at once ({} at a time; the largest, {label} \
             on {ranks} ranks, {}; measured on {} of this program), more than the {} this \
             machine has available: {advice} (--no-memory-check runs anyway)",
            crate::memory::human(self.bytes),
            self.concurrent,
            crate::memory::human(*most),
            self.probes,
            crate::memory::human(available)
        ))
    }
}

/// The memory a study's simulations need at once, measured on probes
/// ([`crate::memory`]): each curve whose largest rank count is probed (at
/// least [`crate::memory::PROBE_FROM`]) is probed for that count with that
/// task's settings; its extrapolated bytes per rank at a task's ranks
/// times those ranks is the task's need (tasks of curves too small to
/// probe count as 0), and the process's resident memory before the probes
/// plus the largest needs of as many tasks as the pool runs at once is the
/// study's. `None` when no curve is probed.
fn memory_need(
    study: &Study,
    p: &Prepared,
    all: &[Task],
) -> Result<Option<MemoryNeed>, StudyError> {
    let mut per_curve: Vec<Option<crate::memory::Estimate>> = vec![None; study.curves.len()];
    for (curve, slot) in per_curve.iter_mut().enumerate() {
        let Some(ranks) = (all.iter())
            .filter(|t| t.curve == curve)
            .map(|t| t.ranks)
            .max()
        else {
            continue;
        };
        let (cfg, _) = task_config(
            study,
            p,
            Task {
                curve,
                ranks,
                draw: 0,
            },
        );
        *slot = crate::memory::estimate(study.program, &p.machines[curve], &cfg, ranks);
    }
    // The process's own memory, once: the last probe's reading.
    let Some(base) = per_curve.iter().flatten().map(|e| e.base).reduce(f64::max) else {
        return Ok(None);
    };
    let mut needs: Vec<(usize, u32, f64)> = (all.iter())
        .map(|t| {
            let bytes =
                per_curve[t.curve].map_or(0.0, |e| e.per_rank_at(t.ranks) * f64::from(t.ranks));
            (t.curve, t.ranks, bytes)
        })
        .collect();
    needs.sort_by(|a, b| b.2.total_cmp(&a.2));
    let threads = (study.options.jobs)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let concurrent = threads.min(needs.len());
    let bytes = base + needs[..concurrent].iter().map(|n| n.2).sum::<f64>();
    // Invariant: `tasks` refuses a study without rank counts, and every
    // study has a curve, so there is a task.
    let Some(&(curve, ranks, most)) = needs.first() else {
        return Ok(None);
    };
    let probes = per_curve[curve]
        .or_else(|| per_curve.iter().flatten().next().copied())
        .map(|e| e.probes())
        .unwrap_or_default();
    Ok(Some(MemoryNeed {
        bytes,
        concurrent,
        largest: (study.curves[curve].label.clone(), ranks, base + most),
        probes,
    }))
}

fn run_prepared(study: &Study, p: &Prepared, t: Task) -> Result<TaskResult, StudyError> {
    let m = &p.machines[t.curve];
    let (cfg, calibrated) = task_config(study, p, t);
    let mut sink = |_: PrintLine| {};
    let seconds = sim_core::simulate(study.program, &mut m.start(t.ranks), cfg, &mut sink)
        .map(|rep| rep.predicted_seconds)
        .map_err(|error| StudyError::Simulation {
            label: study.curves[t.curve].label.clone(),
            ranks: t.ranks,
            error,
        })?;
    Ok(TaskResult {
        seconds,
        extrapolated: calibrated.extrapolations(2.0),
    })
}

/// Runs task `index` of the study alone (an array task of
/// `sweep --emit-job`): the same simulation [`run_study`] runs for it.
pub fn run_task(study: &Study, index: usize) -> Result<(Task, TaskResult), StudyError> {
    let all = tasks(study)?;
    let Some(&t) = all.get(index) else {
        return Err(Error::Input(format!(
            "task {index} does not exist: the study has {} tasks (0 to {})",
            all.len(),
            all.len().saturating_sub(1)
        ))
        .into());
    };
    let p = prepare(study)?;
    Ok((t, run_prepared(study, &p, t)?))
}

/// Runs a study's simulations on a pool of threads and derives speedup,
/// efficiency and the scalability limit of each curve. Each simulation is
/// deterministic and lands in its own slot, so the result does not depend
/// on the number of threads.
pub fn run_study(study: &Study) -> Result<Outcome, StudyError> {
    let all = tasks(study)?;
    let p = prepare(study)?;
    if study.options.memory_check
        && let Some(need) = memory_need(study, &p, &all)?
        && let Some(available) = crate::memory::available()
        && let Some(why) = need.refusal(available as f64)
    {
        return Err(Error::Input(why).into());
    }
    let done = std::sync::atomic::AtomicUsize::new(0);
    let total = all.len();
    let run_one = |&t: &Task| {
        let r = run_prepared(study, &p, t);
        if let Some(report) = study.progress {
            report(
                done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1,
                total,
            );
        }
        r
    };
    let results: Vec<_> =
        pool(study.options.jobs)?.install(|| all.par_iter().map(run_one).collect());
    // The first failure in task order ends the study.
    let results = results.into_iter().collect::<Result<Vec<_>, _>>()?;
    assemble_with(study, &p.machines, &results)
}

/// Speedup, efficiency and the scalability limit of each curve from the
/// results of all tasks, in task order (from [`run_study`], or gathered
/// from a job array's tasks).
pub fn assemble(study: &Study, results: &[TaskResult]) -> Result<Outcome, StudyError> {
    let mut machines = Vec::with_capacity(study.curves.len());
    for c in study.curves {
        machines.push(machine_of(c, study.ppn)?);
    }
    assemble_with(study, &machines, results)
}

/// [`assemble`] with the curves' machines already built.
fn assemble_with(
    study: &Study,
    machines: &[AnyMachine],
    results: &[TaskResult],
) -> Result<Outcome, StudyError> {
    let Study {
        ranks,
        curves,
        options:
            Options {
                weak,
                efficiency,
                samples,
                ..
            },
        ..
    } = *study;
    let all = tasks(study)?;
    if results.len() != all.len() {
        return Err(Error::Input(format!(
            "the study has {} tasks, {} results were given",
            all.len(),
            results.len()
        ))
        .into());
    }
    let draws = samples.map_or(1, |n| n as usize);
    // The farthest extrapolation of each kernel over all runs.
    let mut extrapolated: Vec<Extrapolation> = Vec::new();
    for e in results.iter().flat_map(|r| r.extrapolated.iter()) {
        match extrapolated.iter_mut().find(|o| o.kernel == e.kernel) {
            Some(o) if o.factor < e.factor => *o = e.clone(),
            Some(_) => {}
            None => extrapolated.push(e.clone()),
        }
    }
    let largest = ranks.iter().copied().max().unwrap_or(1);
    let one_node: Vec<Option<u32>> = machines
        .iter()
        .map(|m| Some(m.ranks_per_node()).filter(|&p| largest <= p))
        .collect();
    let mut series = Vec::new();
    for (c, curve) in curves.iter().enumerate() {
        let mut points = Vec::new();
        for (k, &r) in ranks.iter().enumerate() {
            let mut times = Vec::with_capacity(draws);
            for d in 0..draws {
                let i = (c * ranks.len() + k) * draws + d;
                times.push(results[i].seconds);
            }
            let [median, p5, p95, _, _] = spread_of(times);
            points.push((r, median, samples.map(|_| [p5, p95])));
        }
        series.push(derive(&curve.label, &points, weak, efficiency));
    }
    let notes = no_effect_notes(curves, &series, &one_node);
    Ok(Outcome {
        series,
        notes,
        extrapolated,
    })
}

/// A `--set KEY=V1,V2` whose curves come out the same at every rank count
/// changed nothing the program used (issue 14: `network.bandwidth` on 64
/// ranks of one node drew two identical curves, and the user concluded
/// that bandwidth does not matter). One note per such key and machine; for
/// a `network.*` key on a machine that holds every rank count on one node
/// (`one_node[c]`: its ranks per node), the reason and what to do.
pub fn no_effect_notes(
    curves: &[Curve],
    series: &[Series],
    one_node: &[Option<u32>],
) -> Vec<String> {
    let mut notes = Vec::new();
    let keys: Vec<&str> = curves
        .first()
        .map(|c| c.settings.iter().map(|(k, _)| k.as_str()).collect())
        .unwrap_or_default();
    for (ki, key) in keys.iter().enumerate() {
        // Curves that differ only in this key's value.
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for (c, curve) in curves.iter().enumerate() {
            let others = |x: &Curve| {
                (
                    x.base.clone(),
                    x.settings
                        .iter()
                        .enumerate()
                        .filter(|&(i, _)| i != ki)
                        .map(|(_, s)| s.clone())
                        .collect::<Vec<_>>(),
                )
            };
            match groups
                .iter_mut()
                .find(|g| others(&curves[g[0]]) == others(curve))
            {
                Some(g) => g.push(c),
                None => groups.push(vec![c]),
            }
        }
        let mut reported: Vec<&str> = Vec::new();
        for g in groups.iter().filter(|g| g.len() > 1) {
            let same = g.iter().all(|&c| {
                series[c]
                    .points
                    .iter()
                    .zip(&series[g[0]].points)
                    .all(|(a, b)| a.seconds == b.seconds)
            });
            let base = curves[g[0]].base.as_str();
            if !same || reported.contains(&base) {
                continue;
            }
            reported.push(base);
            let values: Vec<&str> = g
                .iter()
                .map(|&c| curves[c].settings[ki].1.as_str())
                .collect();
            let mut note = format!(
                "--set {key}={} changes nothing on {base}: its curves are the same at every rank count, so the program never used what {key} sets",
                values.join(",")
            );
            if let (Some("network"), Some(per_node)) = (key.split('.').next(), one_node[g[0]]) {
                let _ = write!(
                    note,
                    ". {base} holds {per_node} ranks per node, so every rank count here runs on one node and no message crosses the network: give --ppn (e.g. --ppn 1) to spread the ranks over nodes"
                );
            }
            notes.push(note);
        }
    }
    notes
}

/// The machine of a curve, with its ranks-per-node override.
fn machine_of(c: &Curve, ppn: Option<u32>) -> Result<AnyMachine, Error> {
    let m = AnyMachine::from_toml_str(&c.toml, &c.label, &c.base_dir)
        .map_err(|e| Error::Input(e.to_string()))?;
    match ppn {
        Some(p) => m.with_ranks_per_node(p).map_err(Error::Input),
        None => Ok(m),
    }
}

/// Speedup, efficiency and the scalability limit of one curve's
/// `(ranks, seconds, spread)` points.
fn derive(
    label: &str,
    points: &[(u32, f64, Option<[f64; 2]>)],
    weak: bool,
    efficiency: f64,
) -> Series {
    let (r0, t0, _) = points[0];
    let pts: Vec<Point> = points
        .iter()
        .map(|&(r, t, spread)| {
            let ratio = if t > 0.0 { t0 / t } else { f64::NAN };
            let scale = f64::from(r) / f64::from(r0);
            if weak {
                // Gustafson: the work grows with p, so the scaled
                // speedup is p/p0 * T(p0)/T(p) and efficiency T(p0)/T(p).
                Point {
                    ranks: r,
                    seconds: t,
                    speedup: scale * ratio,
                    efficiency: ratio,
                    spread,
                }
            } else {
                Point {
                    ranks: r,
                    seconds: t,
                    speedup: ratio,
                    efficiency: ratio / scale,
                    spread,
                }
            }
        })
        .collect();
    let mut limit = None;
    let mut reason = None;
    for w in pts.windows(2) {
        if !weak && w[1].seconds >= w[0].seconds {
            limit = Some(w[0].ranks);
            let ranks = w[0].ranks;
            let plural = if ranks == 1 { "" } else { "s" };
            reason = Some(format!("time stops falling after {ranks} rank{plural}"));
            break;
        }
        if w[1].efficiency < efficiency {
            limit = Some(w[0].ranks);
            reason = Some(format!(
                "parallel efficiency falls below {:.0}% after {} ranks",
                efficiency * 100.0,
                w[0].ranks
            ));
            break;
        }
    }
    Series {
        label: label.to_owned(),
        points: pts,
        limit,
        limit_reason: reason,
    }
}

/// A list of rank counts that cannot be read ([`parse_ranks`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RanksError {
    /// A `...` without two numbers before it, or (`after`) without one
    /// after it.
    #[error("`...` needs two numbers before it{}", if *after { " and one after" } else { "" })]
    Ellipsis { after: bool },
    #[error("`{text}` is not a rank count")]
    NotACount {
        text: String,
        #[source]
        err: std::num::ParseIntError,
    },
    #[error("0 is not a rank count")]
    Zero,
    #[error("no rank counts")]
    Empty,
}

/// Reads rank counts, `1,2,4,...,64`: a `...` continues the geometric
/// progression of the two numbers before it (when the second is a
/// multiple of at least twice the first) or else the arithmetic one, below
/// the number after it, which ends the list; a falling pair continues
/// down the same way (`64,32,...,1`). The counts come back in ascending
/// order, each once.
pub fn parse_ranks(spec: &str) -> Result<Vec<u32>, RanksError> {
    let mut out: Vec<u32> = Vec::new();
    let tokens: Vec<&str> = spec
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect();
    let count = |t: &str| {
        t.parse::<u32>().map_err(|err| RanksError::NotACount {
            text: t.to_owned(),
            err,
        })
    };
    let mut i = 0;
    while i < tokens.len() {
        let t = tokens[i];
        if t == "..." {
            let (Some(&b), Some(end)) = (out.last(), tokens.get(i + 1)) else {
                return Err(RanksError::Ellipsis { after: true });
            };
            let Some(&a) = out.len().checked_sub(2).and_then(|k| out.get(k)) else {
                return Err(RanksError::Ellipsis { after: false });
            };
            let end = count(end)?;
            if b >= a {
                let geometric = a > 0 && b % a == 0 && b / a >= 2;
                let mut x = b;
                loop {
                    let next = if geometric {
                        x.checked_mul(b / a)
                    } else {
                        x.checked_add((b - a).max(1))
                    };
                    match next {
                        Some(n) if n < end => {
                            out.push(n);
                            x = n;
                        }
                        _ => break,
                    }
                }
            } else if b < a {
                // A falling progression (`64,32,...,1`): halving (when the
                // first is a multiple of at least twice the second) or
                // stepping down, above the number after it.
                let geometric = b > 0 && a % b == 0 && a / b >= 2;
                let mut x = b;
                loop {
                    let next = if geometric {
                        Some(x / (a / b)).filter(|&n| n * (a / b) == x)
                    } else {
                        x.checked_sub(a - b)
                    };
                    match next {
                        Some(n) if n > end && n > 0 => {
                            out.push(n);
                            x = n;
                        }
                        _ => break,
                    }
                }
            }
            i += 1;
            continue;
        }
        let n = count(t)?;
        if n == 0 {
            return Err(RanksError::Zero);
        }
        out.push(n);
        i += 1;
    }
    if out.is_empty() {
        return Err(RanksError::Empty);
    }
    // A scaling table reads from the fewest ranks up, whatever order the
    // list was written in (`4,2,1` ran 4 first and showed 1 rank at 400%
    // efficiency against it).
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// The spread of noise draws' predicted times, as `run --samples` and
/// `sweep --samples` report it: median, 5th and 95th percentiles (type 7),
/// min and max.
pub fn spread_of(mut times: Vec<f64>) -> [f64; 5] {
    times.sort_by(f64::total_cmp);
    let q = |p| calibrate::blocks::timing::quantile_sorted(&times, p);
    [q(0.5), q(0.05), q(0.95), q(0.0), q(1.0)]
}

/// Noise draws 2..=n of a run (seeds `seed + 1 ..`), simulated in parallel,
/// each a run of the one `machine` description: `(seed, predicted seconds)`
/// in seed order. The error of the lowest seed that failed ends it.
pub fn noise_draws(
    program: &Program,
    machine: &AnyMachine,
    base: &SimConfig,
    seed: u64,
    n: u32,
) -> Result<Vec<(u64, f64)>, SimError> {
    let seeds: Vec<u64> = (1..n).map(|k| seed.wrapping_add(u64::from(k))).collect();
    let run = |&draw_seed: &u64| {
        let cfg = SimConfig {
            ranks: base.ranks,
            kernel_times: base.kernel_times.clone(),
            noise_seed: Some(draw_seed),
            max_events: base.max_events,
            max_sim_time: base.max_sim_time,
            max_zero_time_blocks: base.max_zero_time_blocks,
            ..SimConfig::default()
        };
        let mut sink = |_: PrintLine| {};
        sim_core::simulate(program, &mut machine.start(cfg.ranks), cfg, &mut sink)
            .map(|rep| (draw_seed, rep.predicted_seconds))
    };
    let all: Vec<Result<(u64, f64), SimError>> = match pool(None) {
        Ok(p) => p.install(|| seeds.par_iter().map(run).collect()),
        Err(_) => seeds.iter().map(run).collect(),
    };
    all.into_iter().collect()
}

/// The study for people: per curve a table of time, speedup and
/// efficiency (with the 5%..95% range of noise draws when there is one)
/// and the scalability limit, or that the curve stays above `efficiency`.
pub fn text(series: &[Series], file: &str, efficiency: f64) -> String {
    let mut out = String::new();
    for s in series {
        let _ = writeln!(out, "{}: {file}", s.label);
        let spread = s.points.iter().any(|p| p.spread.is_some());
        let _ = write!(
            out,
            "{:>8} {:>16} {:>10} {:>11}",
            "ranks", "time (s)", "speedup", "efficiency"
        );
        let _ = writeln!(out, "{}", if spread { "   draws 5%..95% (s)" } else { "" });
        for p in &s.points {
            let _ = write!(
                out,
                "{:>8} {:>16.6} {:>10.2} {:>10.1}%",
                p.ranks,
                p.seconds,
                p.speedup,
                p.efficiency * 100.0
            );
            match p.spread {
                Some([lo, hi]) => {
                    let _ = writeln!(out, "   {lo:.6} .. {hi:.6}");
                }
                None => {
                    let _ = writeln!(out);
                }
            }
        }
        match &s.limit_reason {
            Some(r) => {
                let _ = writeln!(out, "scalability limit: {r}\n");
            }
            None => {
                let _ = writeln!(
                    out,
                    "scales over the whole range (efficiency stays above {:.0}%)\n",
                    efficiency * 100.0
                );
            }
        }
    }
    out
}

/// A chart panel: its title, the value it plots, and whether the axis is logarithmic.
type Panel = (&'static str, fn(&Point) -> f64, bool);

/// Three panels (time on log axes, speedup, efficiency) against ranks on a
/// log2 axis, one coloured curve per series.
pub fn svg(series: &[Series], title: &str) -> String {
    const W: f64 = 360.0;
    const H: f64 = 260.0;
    const M: f64 = 55.0;
    let colours = [
        "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
    ];
    let all: Vec<&Point> = series.iter().flat_map(|s| s.points.iter()).collect();
    let rmin = all.iter().map(|p| p.ranks).min().unwrap_or(1).max(1) as f64;
    let rmax = all.iter().map(|p| p.ranks).max().unwrap_or(2).max(2) as f64;
    let lx = |r: f64| {
        M + (r.log2() - rmin.log2()) / (rmax.log2() - rmin.log2()).max(1e-9) * (W - M - 15.0)
    };
    let mut out = String::new();
    let total_w = 3.0 * W + 20.0;
    let legend_h = 22.0 * series.len() as f64;
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{total_w}" height="{h}" viewBox="0 0 {total_w} {h}" font-family="sans-serif" font-size="12">"#,
        h = H + 60.0 + legend_h
    );
    let _ = writeln!(out, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        out,
        r#"<text x="10" y="18" font-size="14" font-weight="bold">{}</text>"#,
        escape(title)
    );
    let panels: [Panel; 3] = [
        ("predicted time (s)", |p| p.seconds, true),
        ("speedup", |p| p.speedup, true),
        ("parallel efficiency (%)", |p| p.efficiency * 100.0, false),
    ];
    for (k, (name, get, log)) in panels.iter().enumerate() {
        let ox = 10.0 + k as f64 * W;
        let oy = 30.0;
        // The time panel also spans the draws' 5-95% bars.
        let bars = |p: &Point| if k == 0 { p.spread } else { None };
        let vals: Vec<f64> = all
            .iter()
            .flat_map(|p| std::iter::once(get(p)).chain(bars(p).into_iter().flatten()))
            .filter(|v| v.is_finite() && (!log || *v > 0.0))
            .collect();
        let (lo, hi) = axis_range(&vals, *log);
        let fy = |v: f64| -> f64 {
            let t = if *log {
                (v.log10() - lo.log10()) / (hi.log10() - lo.log10()).max(1e-9)
            } else {
                (v - lo) / (hi - lo)
            };
            oy + H - 25.0 - t * (H - 45.0)
        };
        // Axes and labels.
        let _ = writeln!(
            out,
            r#"<g transform="translate({ox},0)"><line x1="{M}" y1="{}" x2="{}" y2="{}" stroke="black"/><line x1="{M}" y1="{}" x2="{M}" y2="{}" stroke="black"/>"#,
            oy + H - 25.0,
            W - 15.0,
            oy + H - 25.0,
            oy + 20.0,
            oy + H - 25.0
        );
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
            (M + W - 15.0) / 2.0,
            oy + 12.0,
            escape(name)
        );
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}" text-anchor="middle">ranks (log2)</text>"#,
            (M + W - 15.0) / 2.0,
            oy + H + 5.0
        );
        let mut r = rmin;
        while r <= rmax * 1.0001 {
            let x = lx(r);
            let _ = writeln!(
                out,
                r#"<line x1="{x}" y1="{}" x2="{x}" y2="{}" stroke="black"/><text x="{x}" y="{}" text-anchor="middle" font-size="10">{}</text>"#,
                oy + H - 25.0,
                oy + H - 21.0,
                oy + H - 10.0,
                r as u64
            );
            r *= 2.0;
        }
        let ticks: Vec<f64> = (0..=4)
            .map(|j| {
                if *log {
                    10f64.powf(lo.log10() + (hi.log10() - lo.log10()) * f64::from(j) / 4.0)
                } else {
                    lo + (hi - lo) * f64::from(j) / 4.0
                }
            })
            .collect();
        for (v, label) in ticks.iter().zip(tick_labels(&ticks)) {
            let y = fy(*v);
            let _ = writeln!(
                out,
                r#"<line x1="{}" y1="{y}" x2="{M}" y2="{y}" stroke="black"/><text x="{}" y="{}" text-anchor="end" font-size="10">{label}</text>"#,
                M - 4.0,
                M - 6.0,
                y + 3.0,
            );
        }
        for (si, s) in series.iter().enumerate() {
            let c = colours[si % colours.len()];
            let pts: Vec<String> = s
                .points
                .iter()
                .filter(|p| get(p).is_finite() && (!log || get(p) > 0.0))
                .map(|p| format!("{:.1},{:.1}", lx(f64::from(p.ranks)), fy(get(p))))
                .collect();
            let _ = writeln!(
                out,
                r#"<polyline fill="none" stroke="{c}" stroke-width="2" points="{}"/>"#,
                pts.join(" ")
            );
            for p in &pts {
                if let Some((x, y)) = p.split_once(',') {
                    let _ = writeln!(out, r#"<circle cx="{x}" cy="{y}" r="3" fill="{c}"/>"#);
                }
            }
            for p in &s.points {
                if let Some([lo_t, hi_t]) = bars(p).filter(|b| b[0] > 0.0 && b[1] > 0.0) {
                    let x = lx(f64::from(p.ranks));
                    let _ = writeln!(
                        out,
                        r#"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="{c}" stroke-width="1.5"/>"#,
                        fy(lo_t),
                        fy(hi_t)
                    );
                }
            }
        }
        let _ = writeln!(out, "</g>");
    }
    legend(&mut out, series, &colours, H + 50.0);
    out.push_str("</svg>\n");
    out
}

/// The value axis of a chart panel: from the smallest to the largest value
/// (from 0 on a linear axis), never empty.
fn axis_range(vals: &[f64], log: bool) -> (f64, f64) {
    let (mut lo, mut hi) = vals
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
    if !lo.is_finite() {
        lo = 0.0;
        hi = 1.0;
    }
    if !log {
        lo = lo.min(0.0);
    }
    if hi <= lo {
        hi = lo + 1.0;
    }
    (lo, hi)
}

/// One legend row per series from `top`: its colour, label and limit.
fn legend(out: &mut String, series: &[Series], colours: &[&str], top: f64) {
    for (si, s) in series.iter().enumerate() {
        let y = top + 22.0 * si as f64;
        let c = colours[si % colours.len()];
        let limit = s
            .limit_reason
            .clone()
            .unwrap_or_else(|| "scales over the range".to_owned());
        let _ = writeln!(
            out,
            r#"<rect x="20" y="{}" width="14" height="14" fill="{c}"/><text x="40" y="{}">{} ({})</text>"#,
            y - 11.0,
            y,
            escape(&s.label),
            escape(&limit)
        );
    }
}

#[cfg(test)]
mod tests {
    use approx::assert_relative_eq;

    use super::{Options, Study, derive, noise_draws, run_study, spread_of};
    use crate::scenario::Limits;

    /// A sweep is refused when the simulations that run at once need more
    /// than 90% of the memory available; when the largest alone would fit,
    /// the advice is --jobs 1.
    #[test]
    fn memory_refusals_say_what_would_fit() {
        const GIB: f64 = (1u64 << 30) as f64;
        let need = super::MemoryNeed {
            bytes: 12.0 * GIB,
            concurrent: 2,
            largest: ("default".into(), 8_000_000, 7.0 * GIB),
            probes: "probes of 16384 and 65536 ranks".into(),
        };
        assert_eq!(need.refusal(20.0 * GIB), None);
        let why = need.refusal(10.0 * GIB).expect("refused");
        assert!(
            why.starts_with("the sweep's simulations need about 12.0 GiB at once (2 at a time; the largest, default on 8000000 ranks, 7.0 GiB; measured on probes of 16384 and 65536 ranks of this program)")
                && why.contains("more than the 10.0 GiB this machine has available: run them one at a time (--jobs 1: the largest alone needs 7.0 GiB)"),
            "{why}"
        );
        let alone = super::MemoryNeed {
            concurrent: 1,
            bytes: 7.0 * GIB,
            ..need.clone()
        };
        let why = alone.refusal(6.0 * GIB).expect("refused");
        assert!(
            why.contains("run fewer ranks or on a machine with more memory"),
            "{why}"
        );
    }

    #[test]
    fn rank_lists() {
        use super::{RanksError, parse_ranks};
        let ok = |spec| parse_ranks(spec).expect("a rank list");
        assert_eq!(ok("1,2,4,...,64"), vec![1, 2, 4, 8, 16, 32, 64]);
        assert_eq!(ok("2, 4, ..., 20"), vec![2, 4, 8, 16, 20]);
        assert_eq!(ok("10,20,...,50"), vec![10, 20, 40, 50]);
        assert_eq!(ok("3,5,...,11"), vec![3, 5, 7, 9, 11]);
        assert_eq!(ok("16"), vec![16]);
        // Any order comes back ascending, each count once; falling
        // progressions go down (issue 14: `4,2,...,1` ran 4 ranks first).
        assert_eq!(ok("4,2,...,1"), vec![1, 2, 4]);
        assert_eq!(ok("64,32,...,1"), vec![1, 2, 4, 8, 16, 32, 64]);
        assert_eq!(ok("10,8,...,1"), vec![1, 2, 4, 6, 8, 10]);
        assert_eq!(ok("8,2,4,2"), vec![2, 4, 8]);
        assert_eq!(
            parse_ranks("...,4"),
            Err(RanksError::Ellipsis { after: true })
        );
        assert_eq!(
            parse_ranks("2,...,8"),
            Err(RanksError::Ellipsis { after: false })
        );
        assert_eq!(parse_ranks("0,1"), Err(RanksError::Zero));
        assert_eq!(parse_ranks(" , "), Err(RanksError::Empty));
        let e = parse_ranks("a").expect_err("not a number");
        assert_eq!(e.to_string(), "`a` is not a rank count");
    }

    #[test]
    fn a_study_as_text() {
        let point = |ranks, spread| super::Point {
            ranks,
            seconds: 1.0 / f64::from(ranks),
            speedup: f64::from(ranks),
            efficiency: 1.0,
            spread,
        };
        let series = |label: &str, spread, limit_reason| super::Series {
            label: label.to_owned(),
            points: vec![point(1, spread), point(2, None)],
            limit: None,
            limit_reason,
        };
        let t = super::text(
            &[
                series("a", None, None),
                series("b", Some([0.5, 1.5]), Some("time stops falling".into())),
            ],
            "x.mpl",
            0.5,
        );
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], "a: x.mpl");
        assert_eq!(
            lines[1].trim_end(),
            "   ranks         time (s)    speedup  efficiency"
        );
        assert_eq!(lines[2], "       1         1.000000       1.00      100.0%");
        assert_eq!(
            lines[4],
            "scales over the whole range (efficiency stays above 50%)"
        );
        assert!(lines[7].ends_with("efficiency   draws 5%..95% (s)"), "{t}");
        assert!(lines[8].ends_with("100.0%   0.500000 .. 1.500000"), "{t}");
        assert_eq!(lines[10], "scalability limit: time stops falling");
    }

    #[test]
    fn spread_is_type_7_quantiles() {
        let [median, p5, p95, min, max] = spread_of(vec![5.0, 1.0, 4.0, 2.0, 3.0]);
        assert_relative_eq!(median, 3.0);
        // h = (n - 1) p = 0.2: 1 + 0.2 * (2 - 1).
        assert_relative_eq!(p5, 1.2);
        assert_relative_eq!(p95, 4.8);
        assert_relative_eq!(min, 1.0);
        assert_relative_eq!(max, 5.0);
    }

    #[test]
    fn strong_scaling_limit() {
        let s = derive(
            "m",
            &[(1, 10.0, None), (2, 5.0, None), (4, 4.0, None)],
            false,
            0.7,
        );
        let speedups: Vec<f64> = s.points.iter().map(|p| p.speedup).collect();
        let effs: Vec<f64> = s.points.iter().map(|p| p.efficiency).collect();
        assert_eq!(speedups, vec![1.0, 2.0, 2.5]);
        assert_eq!(effs, vec![1.0, 1.0, 0.625]);
        assert_eq!(s.limit, Some(2));
        assert_eq!(
            s.limit_reason.as_deref(),
            Some("parallel efficiency falls below 70% after 2 ranks")
        );
    }

    #[test]
    fn weak_scaling_is_gustafson() {
        let s = derive("m", &[(2, 4.0, None), (8, 5.0, None)], true, 0.5);
        // Scaled speedup p/p0 * T(p0)/T(p) = 4 * 0.8; efficiency T(p0)/T(p).
        assert_relative_eq!(s.points[1].speedup, 3.2);
        assert_relative_eq!(s.points[1].efficiency, 0.8);
        assert_eq!(s.limit, None);
    }

    /// A program whose work is split evenly: time 1/p on the reference CPU.
    fn split_work() -> sim_core::ir::Program {
        frontend::compile("split.mpl", "kernel w(s) cost s\ncompute w(1.0 / size)\n")
            .expect("compiles")
    }

    #[test]
    fn study_is_the_same_on_one_thread_and_two() {
        let program = split_work();
        let curves = super::curves(&[], &["network.bandwidth=1GB/s,10GB/s".into()])
            .expect("the default machine takes the setting");
        assert_eq!(
            curves.iter().map(|c| c.label.as_str()).collect::<Vec<_>>(),
            [
                "default network.bandwidth=1GB/s",
                "default network.bandwidth=10GB/s"
            ]
        );
        let run = |jobs| {
            run_study(&Study {
                program: &program,
                file: "split.mpl",
                ranks: &[1, 2, 4, 8],
                curves: &curves,
                ppn: None,
                options: Options {
                    efficiency: 0.5,
                    jobs: Some(jobs),
                    ..Options::default()
                },
                limits: Limits::default(),
                progress: None,
            })
            .expect("runs")
            .series
        };
        let (one, two) = (run(1), run(2));
        for (a, b) in one.iter().zip(&two) {
            for (p, q) in a.points.iter().zip(&b.points) {
                assert_eq!(p.seconds.to_bits(), q.seconds.to_bits());
            }
            // No communication: perfect strong scaling.
            for p in &a.points {
                assert_relative_eq!(p.efficiency, 1.0, max_relative = 1e-12);
            }
            assert_eq!(a.limit, None);
        }
    }

    #[test]
    fn a_bad_setting_names_the_section() {
        let err = super::curves(&[], &["network.bandwidth.x=1".into()])
            .err()
            .expect("bandwidth is not a section");
        assert_eq!(
            err.to_string(),
            "network.bandwidth.x: `bandwidth` is not a section"
        );
    }

    #[test]
    fn noise_draws_need_calibrated_kernels_to_differ() {
        // Without calibrated kernels every draw is the cost formula's time.
        let program = split_work();
        let base = Limits::default().config(4);
        let machine = models::AnyMachine::builtin_default();
        let draws = noise_draws(&program, &machine, &base, 7, 4).expect("runs");
        assert_eq!(draws.iter().map(|d| d.0).collect::<Vec<_>>(), [8, 9, 10]);
        let t = draws[0].1;
        assert!(draws.iter().all(|d| d.1.to_bits() == t.to_bits()));
    }
}
