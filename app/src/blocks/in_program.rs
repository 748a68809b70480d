//! `calibrate blocks --in-program LAUNCHER`: the native kernels timed inside
//! the real program instead of apart from it.
//!
//! The skeleton is built as `build-mpi` builds it, with `PARSIM_TIME_KERNELS`
//! defined (emit-c's runtime.c: a clock read before and after every native
//! kernel call, the samples kept per rank, kernel and argument tuple, written
//! by every rank at the end), and run with the launcher at every rank count
//! and parameter set. Each call then meets what it meets in the program: the
//! caches as the program's other kernels, its messages and the MPI library
//! leave them, its own memory layout, the core its rank runs on, and the
//! ranks of the node working beside it. SMPI's sampling (`SMPI_SAMPLE_*`)
//! and trace-driven simulators (Dimemas's CPU bursts) take compute times
//! from the real program in the same way; the price is a real run of the
//! program at each rank count, where timing apart needs only the kernels.
//!
//! A run of P ranks gives the level (copies at once) `min(P, ranks per
//! node)`, and copy j the samples of the ranks j, j + K, j + 2K, ... (rank
//! r runs on core r mod K of its node with block placement, and the
//! simulator gives rank r copy r mod K). Each tuple's point: the trimmed
//! mean and distribution of all samples of the level's runs, each copy's,
//! the calls counted, and as first call the slowest rank's first call of
//! the kernel when it had these arguments (else the point's mean).

use std::collections::BTreeMap;
use std::path::Path;

use calibrate::blocks::file::{BlocksFile, CalibrationInfo, KernelEntry, PointEntry};
use calibrate::blocks::timing::Measurement;

use super::{Plan, compiler_line, cpu_model, host_name, kernel_entry, point_entry};
use crate::Error;
use crate::clock::utc_timestamp;

/// How to build and run the real program.
#[derive(Debug, Clone)]
pub struct InProgram {
    /// The launcher line, `{ranks}` replaced by the rank count: `mpirun
    /// -np {ranks}`.
    pub launcher: String,
    /// The MPI compiler wrapper.
    pub mpicc: String,
    /// Ranks that share a node in the runs (a level is at most this).
    pub ranks_per_node: u32,
}

/// One rank's file (`kernel-times.P.R.txt`, runtime.c's `ps_kt_write`).
#[derive(Debug, Clone, PartialEq)]
struct RankTimes {
    ranks: u32,
    rank: u32,
    timer_overhead: f64,
    skipped: u64,
    tuples: Vec<TupleTimes>,
}

#[derive(Debug, Clone, PartialEq)]
struct TupleTimes {
    kernel: String,
    args: Vec<i64>,
    calls: u64,
    /// The rank's first call of the kernel, if it had these arguments.
    first: Option<f64>,
    samples: Vec<f64>,
}

/// Reads one rank's kernel times; an error names the line.
fn parse_rank_times(text: &str, path: &Path) -> Result<RankTimes, Error> {
    let bad = |line: usize, what: &str| {
        Error::Tool(format!(
            "{}:{}: {what} (a kernel-times file of the instrumented program)",
            path.display(),
            line + 1
        ))
    };
    let mut lines = text.lines().enumerate();
    // The header's lines, `KEY NUMBER` each.
    let mut header = |key: &str| -> Result<f64, Error> {
        let (i, l) = lines
            .next()
            .ok_or_else(|| bad(0, &format!("ends before `{key}`")))?;
        let v = l
            .strip_prefix(key)
            .and_then(|v| v.strip_prefix(' '))
            .ok_or_else(|| bad(i, &format!("expected `{key} ...`, found `{l}`")))?;
        v.trim()
            .parse::<f64>()
            .map_err(|_| bad(i, &format!("`{key}` is not a number")))
    };
    if header("parsim-kernel-times")? != 1.0 {
        return Err(bad(0, "an unknown version"));
    }
    let ranks = header("ranks")? as u32;
    let rank = header("rank")? as u32;
    let timer_overhead = header("timer_overhead")?.max(0.0);
    let skipped = header("skipped")? as u64;
    let mut tuples = Vec::new();
    while let Some((i, line)) = lines.next() {
        let mut words = line.split_whitespace();
        if words.next() != Some("tuple") {
            return Err(bad(i, &format!("expected `tuple ...`, found `{line}`")));
        }
        let kernel = words
            .next()
            .ok_or_else(|| bad(i, "a tuple without a kernel name"))?
            .to_owned();
        let nargs: usize = words
            .next()
            .and_then(|w| w.parse().ok())
            .ok_or_else(|| bad(i, "a tuple without its argument count"))?;
        let args: Vec<i64> = words
            .map(|w| {
                w.parse::<i64>()
                    .map_err(|_| bad(i, "an argument is not an integer"))
            })
            .collect::<Result<_, _>>()?;
        if args.len() != nargs {
            return Err(bad(
                i,
                "a tuple with another count of arguments than it says",
            ));
        }
        let mut field = |key: &str| -> Result<(usize, f64), Error> {
            let (j, l) = lines
                .next()
                .ok_or_else(|| bad(i, &format!("a tuple without `{key}`")))?;
            let v = l
                .strip_prefix(key)
                .and_then(|v| v.trim().parse::<f64>().ok())
                .ok_or_else(|| bad(j, &format!("expected `{key} NUMBER`, found `{l}`")))?;
            Ok((j, v))
        };
        let calls = field("calls")?.1 as u64;
        let first = field("first")?.1;
        let (j, n) = field("samples")?;
        let mut samples = Vec::with_capacity(n as usize);
        for _ in 0..n as usize {
            let (k, l) = lines
                .next()
                .ok_or_else(|| bad(j, "fewer samples than announced"))?;
            let s: f64 = l
                .trim()
                .parse()
                .map_err(|_| bad(k, "a sample is not a number"))?;
            samples.push((s - timer_overhead).max(0.0));
        }
        tuples.push(TupleTimes {
            kernel,
            args,
            calls,
            first: (first >= 0.0).then(|| (first - timer_overhead).max(0.0)),
            samples,
        });
    }
    Ok(RankTimes {
        ranks,
        rank,
        timer_overhead,
        skipped,
        tuples,
    })
}

/// Samples of one tuple at one level, by copy.
#[derive(Debug, Default)]
struct Pooled {
    per_copy: Vec<Vec<f64>>,
    calls: u64,
    /// The ranks' first calls of the kernel with these arguments, by copy.
    first: Vec<Vec<f64>>,
}

/// Per kernel and level, per argument tuple: its samples.
type Pool = BTreeMap<(String, u32), BTreeMap<Vec<i64>, Pooled>>;

/// Adds one rank's tuples to `pooled` at `level` (its copy: rank mod
/// level); the calls it made.
fn pool_rank(pooled: &mut Pool, r: RankTimes, level: u32) -> u64 {
    let copy = (r.rank % level.max(1)) as usize;
    let mut calls = 0;
    for t in r.tuples {
        calls += t.calls;
        let p = pooled
            .entry((t.kernel, level))
            .or_default()
            .entry(t.args)
            .or_default();
        p.per_copy.resize_with(level as usize, Vec::new);
        p.first.resize_with(level as usize, Vec::new);
        p.per_copy[copy].extend(t.samples);
        p.first[copy].extend(t.first);
        p.calls += t.calls;
    }
    calls
}

/// The blocks file's entries of `pooled`, in the order of the `declared`
/// kernels (name, parameters), each level's after the lower ones, and
/// the summary lines.
fn entries(declared: &[(String, Vec<String>)], pooled: &Pool) -> (Vec<KernelEntry>, String) {
    let mut kernels: Vec<KernelEntry> = Vec::new();
    let mut summary = String::new();
    for (kernel, params) in declared {
        for ((name, level), tuples) in pooled.iter().filter(|((n, _), _)| n == kernel) {
            let points: Vec<PointEntry> = tuples
                .iter()
                .map(|(args, p)| {
                    // A tuple called only as its kernel's first call (a
                    // kernel called once per rank: setup) costs what
                    // those calls cost.
                    let later = p.per_copy.iter().any(|c| !c.is_empty());
                    let from = if later { &p.per_copy } else { &p.first };
                    // Each copy its own times when every copy has some; a
                    // tuple only some of the node's ranks called is one
                    // pool (a copy without samples has no time to give).
                    let all: Vec<f64>;
                    let copies: Vec<&[f64]> = if from.iter().all(|c| !c.is_empty()) {
                        from.iter().map(Vec::as_slice).collect()
                    } else {
                        all = from.iter().flatten().copied().collect();
                        vec![all.as_slice()]
                    };
                    let mut m = Measurement::of_copies(&copies, f64::NAN, f64::NAN);
                    m.first_call = p.first.iter().flatten().copied().fold(f64::NAN, f64::max);
                    let mut e = point_entry(m, args.clone(), p.calls, String::new(), f64::NAN);
                    e.reference = None;
                    e
                })
                .collect();
            let (entry, line) = kernel_entry(name, params, tuples.len(), *level, points);
            summary.push_str(&line);
            kernels.push(entry);
        }
    }
    (kernels, summary)
}

/// Runs the calibration: the blocks file and a one-line-per-kernel summary.
pub fn calibrate_in_program(
    plan: &Plan,
    program: &sim_core::ir::Program,
    how: &InProgram,
    progress: &mut dyn FnMut(&str),
) -> Result<(BlocksFile, String), Error> {
    let tmp = tempfile::Builder::new()
        .prefix("parsim-in-program-")
        .tempdir()
        .map_err(|e| Error::Tool(format!("cannot create a temporary directory: {e}")))?;
    let times = tmp.path().join("times");
    std::fs::create_dir(&times).map_err(|err| Error::Write {
        path: times.clone(),
        err,
    })?;
    let dir = times.display().to_string();
    if dir.contains(|c: char| c.is_whitespace() || c == '"' || c == '\\') {
        return Err(Error::Input(format!(
            "the temporary directory {dir} has a space, quote or backslash in its path, \
             which the compiler's command line cannot carry: set TMPDIR to another"
        )));
    }
    // 1. The real program with its kernel calls timed.
    let native =
        emit_c::native_kernels(&plan.kernels, program).map_err(|e| Error::Input(e.to_string()))?;
    if native.is_empty() {
        return Err(Error::Input(format!(
            "no kernel of {} has a native implementation in {}",
            plan.file.display(),
            plan.kernels.display()
        )));
    }
    let binary = tmp.path().join("program");
    let cflags = format!("{} -DPARSIM_TIME_KERNELS=\"{dir}\"", plan.cflags);
    let opts = emit_c::BuildOptions {
        kernels: Some(&plan.kernels),
        output: &binary,
        mpicc: &how.mpicc,
        cflags: &cflags,
    };
    let name = emit_c::program_name(&plan.file);
    emit_c::build_native(program, &name, &opts, &native, &mut |cmd| progress(cmd))
        .map_err(|e| Error::Tool(format!("building the real program: {e}")))?;

    // 2. Every parameter set at every rank count; the ranks' files read.
    let mut pooled = Pool::new();
    let mut dt = Vec::new();
    let sets = crate::scenario::param_sets(&plan.sets);
    for set in &sets {
        for &np in &plan.ranks {
            let mut line = how.launcher.replace("{ranks}", &np.to_string());
            line.push(' ');
            line.push_str(&crate::shell::word(&binary.display().to_string()));
            for p in plan.params.iter().chain(set) {
                line.push(' ');
                line.push_str(&crate::shell::word(p));
            }
            progress(&format!("running {line}"));
            let stdout = crate::shell::run(&line)?;
            if crate::validate::parse_result(&stdout).is_none() {
                return Err(Error::Tool(format!(
                    "`{line}` printed no PARSIM_RESULT line:\n{stdout}"
                )));
            }
            let level = np.min(how.ranks_per_node).max(1);
            let mut calls = 0u64;
            for rank in 0..np {
                let path = times.join(format!("kernel-times.{np}.{rank}.txt"));
                let text = std::fs::read_to_string(&path).map_err(|err| {
                    Error::Tool(format!(
                        "rank {rank} of `{line}` wrote no kernel times ({}: {err}): the \
                         launcher must run the program on this machine's file system",
                        path.display()
                    ))
                })?;
                let _ = std::fs::remove_file(&path);
                let r = parse_rank_times(&text, &path)?;
                if r.ranks != np || r.rank != rank {
                    return Err(Error::Tool(format!(
                        "{}: written by rank {} of {}, expected rank {rank} of {np}",
                        path.display(),
                        r.rank,
                        r.ranks
                    )));
                }
                if r.skipped > 0 {
                    progress(&format!(
                        "warning: rank {rank}: {} calls with more than 16 arguments were not timed",
                        r.skipped
                    ));
                }
                dt.push(r.timer_overhead);
                calls += pool_rank(&mut pooled, r, level);
            }
            progress(&format!(
                "  {calls} kernel calls timed on {np} rank{} ({level} per node)",
                if np == 1 { "" } else { "s" }
            ));
        }
    }

    // 3. A point per tuple, an entry per kernel and level.
    let declared: Vec<(String, Vec<String>)> = program
        .kernels
        .iter()
        .map(|k| (k.name.clone(), k.params.clone()))
        .collect();
    let (kernels, summary) = entries(&declared, &pooled);
    if kernels.is_empty() {
        return Err(Error::Input(format!(
            "the runs of {} made no native kernel call: nothing to calibrate",
            plan.file.display()
        )));
    }
    let mut levels: Vec<u32> = kernels.iter().map(|k| k.concurrent).collect();
    levels.sort_unstable();
    levels.dedup();
    let file = BlocksFile {
        calibration: CalibrationInfo {
            program: plan.file.display().to_string(),
            ranks: plan.ranks.clone(),
            params: plan.recorded_params(),
            library: plan.kernels.display().to_string(),
            host: host_name(),
            cpu: cpu_model(),
            compiler: compiler_line(&how.mpicc),
            cflags: plan.cflags.clone(),
            date: utc_timestamp(),
            concurrent: levels,
            timer_overhead: crate::validate::median(&mut dt),
            target_rse: 0.0,
            budget: 0.0,
            min_time: 0.0,
            pinned: Vec::new(),
            in_program: Some(how.launcher.clone()),
        },
        kernels,
    };
    Ok((file, summary))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ranks_file_reads_back_with_the_timer_cost_subtracted() {
        let text = "parsim-kernel-times 1\nranks 2\nrank 1\ntimer_overhead 2.0e-08\nskipped 0\n\
                    tuple stencil 2 256 256\ncalls 4\nfirst 5.0e-04\nsamples 3\n\
                    5.002e-05\n5.102e-05\n1.0e-08\n\
                    tuple v1 0\ncalls 2\nfirst -1.0e+00\nsamples 2\n1.0e-06\n2.0e-06\n";
        let r = parse_rank_times(text, Path::new("k.txt")).expect("reads");
        assert_eq!((r.ranks, r.rank, r.skipped), (2, 1, 0));
        assert_eq!(r.tuples.len(), 2);
        let t = &r.tuples[0];
        assert_eq!(
            (t.kernel.as_str(), t.args.as_slice(), t.calls),
            ("stencil", &[256i64, 256][..], 4)
        );
        approx::assert_relative_eq!(t.first.expect("a first call"), 5.0e-4 - 2.0e-8);
        approx::assert_relative_eq!(t.samples[0], 5.0e-5, max_relative = 1e-12);
        approx::assert_relative_eq!(t.samples[1], 5.1e-5, max_relative = 1e-12);
        // a sample below the timer's cost is 0, not negative
        assert_eq!(t.samples[2], 0.0);
        assert_eq!(r.tuples[1].first, None);
        assert!(r.tuples[1].args.is_empty());
    }

    fn rank(rank: u32, tuples: Vec<TupleTimes>) -> RankTimes {
        RankTimes {
            ranks: 2,
            rank,
            timer_overhead: 0.0,
            skipped: 0,
            tuples,
        }
    }

    fn tuple(kernel: &str, args: &[i64], first: Option<f64>, samples: &[f64]) -> TupleTimes {
        TupleTimes {
            kernel: kernel.to_owned(),
            args: args.to_vec(),
            calls: samples.len() as u64 + u64::from(first.is_some()),
            first,
            samples: samples.to_vec(),
        }
    }

    #[test]
    fn two_ranks_pool_into_copies_and_setup_calls_into_points() {
        let mut pool = Pool::new();
        let calls = pool_rank(
            &mut pool,
            rank(
                0,
                vec![
                    tuple("sweep", &[8], Some(9.0), &[1.0, 1.0, 1.0]),
                    tuple("setup", &[], Some(5.0), &[]),
                    tuple("edge", &[2], None, &[0.5, 0.5]),
                ],
            ),
            2,
        );
        assert_eq!(calls, 4 + 1 + 2);
        pool_rank(
            &mut pool,
            rank(
                1,
                vec![
                    tuple("sweep", &[8], Some(7.0), &[2.0, 2.0, 2.0]),
                    tuple("setup", &[], Some(6.0), &[]),
                ],
            ),
            2,
        );
        let declared = [
            ("setup".to_owned(), vec![]),
            ("sweep".to_owned(), vec!["n".to_owned()]),
            ("edge".to_owned(), vec!["n".to_owned()]),
        ];
        let (kernels, summary) = entries(&declared, &pool);
        assert_eq!(summary.lines().count(), 3, "{summary}");
        let names: Vec<&str> = kernels.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(names, ["setup", "sweep", "edge"]);
        // the setup: each rank's first call its one sample, per copy
        let setup = &kernels[0].points[0];
        assert_eq!((setup.calls, setup.samples), (2, 2));
        approx::assert_relative_eq!(setup.seconds, 5.5);
        approx::assert_relative_eq!(setup.first_call, 6.0);
        assert_eq!(setup.copies.len(), 2);
        // the sweep: rank r's samples are copy r, the first calls apart
        let sweep = &kernels[1].points[0];
        assert_eq!(
            (kernels[1].concurrent, sweep.calls, sweep.samples),
            (2, 8, 6)
        );
        approx::assert_relative_eq!(sweep.seconds, 1.5);
        approx::assert_relative_eq!(sweep.copies[0].seconds, 1.0);
        approx::assert_relative_eq!(sweep.copies[1].seconds, 2.0);
        approx::assert_relative_eq!(sweep.first_call, 9.0);
        assert_eq!(sweep.reference, None);
        // called by rank 0 only: one pool, no copies, no first call
        let edge = &kernels[2].points[0];
        assert!(edge.copies.is_empty());
        approx::assert_relative_eq!(edge.seconds, 0.5);
        assert!(edge.first_call.is_nan());
    }

    #[test]
    fn a_damaged_file_is_named_with_its_line() {
        let text = "parsim-kernel-times 1\nranks 2\nrank 0\ntimer_overhead 2e-8\nskipped 0\n\
                    tuple stencil 2 256 256\ncalls 4\nfirst 5e-4\nsamples 3\n5e-5\n";
        let e = parse_rank_times(text, Path::new("k.txt")).expect_err("truncated");
        assert!(
            e.to_string()
                .contains("k.txt:9: fewer samples than announced"),
            "{e}"
        );
        let e = parse_rank_times("parsim-kernel-times 2\n", Path::new("k.txt")).expect_err("v2");
        assert!(e.to_string().contains("k.txt:1: an unknown version"), "{e}");
    }
}
