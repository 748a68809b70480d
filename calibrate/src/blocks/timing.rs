//! Timing one kernel call: the measuring method of `parsim calibrate blocks`.
//!
//! Following the sources (MPITEST, `../shared/seeds/001_fa36819c530dd5be.txt`:
//! `t = t2 - t1 - DT`, the timer's own cost DT subtracted and the
//! measurement repeated; MPIPerf, `../shared/seeds/000_287504472fd11026.txt`:
//! first-call cost and cold caches are systematic errors, so they are
//! measured apart; the ParJava paper: blocks timed by stand-alone measuring
//! programs on the target machine):
//! 1. DT = the median of back-to-back timer reads ([`timer_overhead`]);
//! 2. the first call is timed alone and reported (`first_call`), then a few
//!    warm-up calls (`warmup`), neither averaged in; with a predecessor
//!    ([`Before`], the call that precedes this one in the program), every
//!    warm-up and timed call follows an untimed call of it, so the call
//!    meets the caches as the program leaves them (calls are then timed one
//!    at a time);
//! 3. calls shorter than [`TimingOptions::min_sample_time`] are timed in
//!    batches of `batch` calls, so the timer's resolution does not matter;
//! 4. samples are taken for at least `min_time` (interference comes and
//!    goes on a scale of milliseconds; a shorter window sees a lucky or an
//!    unlucky moment), then until the relative standard error of the mean
//!    is below the target (after at least `min_samples`), or the time
//!    budget is spent, or `max_samples` are taken;
//! 5. outliers (preemption, interrupts) are trimmed: samples farther than
//!    5 scaled median absolute deviations (at least 5% of the median each)
//!    from the median;
//! 6. reported: the trimmed mean (the time a long run of calls takes per
//!    call, what a prediction sums), the median, and the mean's 95%
//!    confidence interval (Student's t).
//!
//! `copies > 1` runs that many copies of the kernel at once, each in its own
//! thread with its own copy of the library's data (one library loaded per
//! copy), so that ranks sharing a node's memory bandwidth are timed as they
//! run. A copy that has enough samples goes on calling the kernel (without
//! recording) until every copy has, so the load stays the same to the end.
//!
//! With [`TimingOptions::pin`] copy `j` runs bound to CPU `pin[j]` (Linux's
//! `sched_setaffinity`), so that copy `j` is the core a rank bound to it
//! runs on (`mpirun -bind-to core` puts rank `j` of a node on its `j`-th
//! core). The cores of one machine need not run a kernel equally fast: on
//! the development VM the two vCPUs run the same L2/L3-bound stencil 6-20%
//! apart, in either direction depending on the working set, while a
//! register-bound loop runs equally fast on both (VALIDATION.md 3.0e). An
//! unbound process lands on either, so an unbound calibration and an
//! unbound run may meet different cores.

use std::sync::Barrier;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::library::KernelFn;

#[derive(Debug, Clone)]
pub struct TimingOptions {
    /// Stop once the relative standard error of the mean is below this.
    pub target_rse: f64,
    /// Stop after this much measuring per argument tuple (per copy).
    pub budget: Duration,
    /// Measure at least this long per argument tuple, even when the target
    /// is met sooner: the machine's interference (other processes, the
    /// scheduler's ticks, a virtual machine's neighbours) comes and goes on
    /// a scale of milliseconds, and a window much shorter than that sees a
    /// lucky or an unlucky moment, not the average a long run pays.
    pub min_time: Duration,
    pub min_samples: usize,
    pub max_samples: usize,
    /// Warm-up calls after the first call.
    pub warmup_calls: usize,
    /// A sample is at least this long (calls are batched to reach it).
    pub min_sample_time: Duration,
    /// Bind copy `j` to CPU `pin[j]` (as many CPUs as copies at least);
    /// empty: the copies run where the scheduler puts them.
    pub pin: Vec<usize>,
}

impl Default for TimingOptions {
    fn default() -> Self {
        TimingOptions {
            target_rse: 0.005,
            budget: Duration::from_secs(1),
            min_time: Duration::from_millis(250),
            min_samples: 10,
            max_samples: 100_000,
            warmup_calls: 3,
            min_sample_time: Duration::from_micros(50),
            pin: Vec::new(),
        }
    }
}

/// The result of timing one argument tuple.
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    /// Seconds per call: the trimmed mean.
    pub seconds: f64,
    pub median: f64,
    /// The mean's 95% confidence interval.
    pub ci95: (f64, f64),
    /// Relative standard error of the mean.
    pub rse: f64,
    /// Samples kept (over all copies), and trimmed as outliers.
    pub samples: usize,
    pub trimmed: usize,
    /// Calls per sample.
    pub batch: u64,
    /// The first call's time (the slowest copy's): first-touch of memory,
    /// cold caches, lazy binding.
    pub first_call: f64,
    /// The mean of the warm-up calls.
    pub warmup: f64,
    /// Copies run at once.
    pub copies: usize,
    /// The distribution of one sample's time, outliers included (they are
    /// real for a run too): its quantiles at [`QUANTILE_P`].
    pub quantiles: Vec<f64>,
    /// With more than one copy: each copy's own trimmed mean and quantiles.
    /// Copies running at once on different cores do not run equally fast
    /// (a core shared with other work, a different share of the memory
    /// bandwidth), and in a program whose ranks wait for each other the
    /// slower one sets the pace.
    pub per_copy: Vec<CopyStats>,
    /// Every copy ran bound to its CPU of [`TimingOptions::pin`] (false
    /// when a binding failed, or none was asked for).
    pub pinned: bool,
}

/// One copy's times (see [`Measurement::per_copy`]).
#[derive(Debug, Clone, PartialEq)]
pub struct CopyStats {
    pub seconds: f64,
    pub quantiles: Vec<f64>,
}

/// The probabilities at which a measurement's distribution is kept.
pub const QUANTILE_P: [f64; 11] = [
    0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999,
];

/// The quantile at probability `p` of sorted samples (linear between order
/// statistics, Hyndman and Fan's type 7).
pub fn quantile_sorted(s: &[f64], p: f64) -> f64 {
    match s.len() {
        0 => f64::NAN,
        1 => s[0],
        n => {
            let h = (n - 1) as f64 * p.clamp(0.0, 1.0);
            let lo = h.floor() as usize;
            let hi = (lo + 1).min(n - 1);
            s[lo] + (h - lo as f64) * (s[hi] - s[lo])
        }
    }
}

/// The cost of one timer read pair (DT), seconds: the median of many.
pub fn timer_overhead() -> f64 {
    let mut d: Vec<f64> = (0..2001)
        .map(|_| {
            let t = Instant::now();
            t.elapsed().as_secs_f64()
        })
        .collect();
    d.sort_by(f64::total_cmp);
    d[d.len() / 2]
}

/// A kernel call to make, untimed, before every timed call: the program's
/// predecessor of the timed call, so that the call meets the caches as the
/// program leaves them. One function per copy (from that copy's library).
#[derive(Debug, Clone, Copy)]
pub struct Before<'a> {
    pub kernels: &'a [KernelFn],
    pub args: &'a [i64],
}

/// Times `kernels[0]` (and the other copies at once) with `args`; with
/// `before`, every timed call follows an untimed call of that kernel (then
/// calls are timed one at a time).
///
/// Invariant: `kernels` is not empty, `before.kernels` (if any) has as many
/// entries; every pointer is a loaded kernel of the ABI (the caller keeps
/// the libraries loaded).
pub fn time_kernel(
    kernels: &[KernelFn],
    args: &[i64],
    before: Option<Before<'_>>,
    opts: &TimingOptions,
    timer: f64,
) -> Measurement {
    let copies = kernels.len().max(1);
    let start = Barrier::new(copies);
    let measure = Barrier::new(copies);
    let done = AtomicUsize::new(0);
    let nargs = i32::try_from(args.len()).unwrap_or(i32::MAX);
    let per_copy: Vec<CopyResult> = std::thread::scope(|s| {
        let handles: Vec<_> = kernels
            .iter()
            .enumerate()
            .map(|(copy, &f)| {
                let (start, measure, done) = (&start, &measure, &done);
                let pre = before.and_then(|b| Some((*b.kernels.get(copy)?, b.args)));
                let cpu = opts.pin.get(copy).copied();
                s.spawn(move || {
                    let pinned = cpu.is_some_and(pin_current_thread);
                    // SAFETY (all calls below): `f` and `p` are kernels of
                    // the ABI (invariant of this function), their argument
                    // slices outlive the calls and hold as many values as
                    // passed.
                    let call = || unsafe { f(args.as_ptr(), nargs) };
                    let precede = || {
                        if let Some((p, pargs)) = pre {
                            let n = i32::try_from(pargs.len()).unwrap_or(i32::MAX);
                            unsafe { p(pargs.as_ptr(), n) }
                        }
                    };
                    start.wait();
                    // The first call alone, as the program's first call of
                    // the kernel meets memory it has not touched yet.
                    let t = Instant::now();
                    call();
                    let first_call = (t.elapsed().as_secs_f64() - timer).max(0.0);
                    let mut warm = Vec::with_capacity(opts.warmup_calls);
                    for _ in 0..opts.warmup_calls {
                        precede();
                        let t = Instant::now();
                        call();
                        warm.push((t.elapsed().as_secs_f64() - timer).max(0.0));
                    }
                    let estimate = warm.iter().copied().fold(first_call, f64::min);
                    let batch = if pre.is_some() {
                        1
                    } else {
                        batch_size(estimate, opts.min_sample_time.as_secs_f64())
                    };
                    measure.wait();
                    let began = Instant::now();
                    let mut samples: Vec<f64> = Vec::new();
                    let mut next_check = opts.min_samples.max(1);
                    let mut finished = false;
                    loop {
                        precede();
                        let t = Instant::now();
                        for _ in 0..batch {
                            call();
                        }
                        let dt = (t.elapsed().as_secs_f64() - timer).max(0.0);
                        if !finished {
                            samples.push(dt / batch as f64);
                            let n = samples.len();
                            let elapsed = began.elapsed();
                            let over = elapsed >= opts.budget && n >= 3;
                            let enough = n >= next_check && elapsed >= opts.min_time && {
                                next_check = n + (n / 8).max(8);
                                Stats::of(&samples).rse <= opts.target_rse
                            };
                            if enough || over || n >= opts.max_samples {
                                finished = true;
                                done.fetch_add(1, Ordering::AcqRel);
                            }
                        }
                        if finished && done.load(Ordering::Acquire) >= copies {
                            break;
                        }
                    }
                    let warmup = if warm.is_empty() {
                        f64::NAN
                    } else {
                        warm.iter().sum::<f64>() / warm.len() as f64
                    };
                    CopyResult {
                        samples,
                        first_call,
                        warmup,
                        batch,
                        pinned,
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            // A kernel that panics cannot: it is C code; a panic here is a
            // bug of this function, so passing it on is right.
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    let mut m = Measurement::of_copies(
        &per_copy
            .iter()
            .map(|c| c.samples.as_slice())
            .collect::<Vec<_>>(),
        per_copy.iter().map(|c| c.first_call).fold(0.0, f64::max),
        per_copy.iter().map(|c| c.warmup).sum::<f64>() / per_copy.len().max(1) as f64,
    );
    m.batch = per_copy.iter().map(|c| c.batch).max().unwrap_or(1);
    m.pinned = per_copy.iter().all(|c| c.pinned);
    m
}

impl Measurement {
    /// The statistics of samples taken by `per_copy.len()` copies at once
    /// (each copy's seconds per call), with the first call's and the
    /// warm-up's times as given: what [`time_kernel`] reports, and what
    /// `calibrate blocks --in-program` makes of the calls timed inside the
    /// real program (one copy per rank of a node). `batch` 1, not pinned.
    pub fn of_copies(per_copy: &[&[f64]], first_call: f64, warmup: f64) -> Measurement {
        let mut all: Vec<f64> = per_copy.iter().flat_map(|c| c.iter().copied()).collect();
        let total = all.len();
        all.sort_by(f64::total_cmp);
        let stats = Stats::of(&all);
        Measurement {
            seconds: stats.mean,
            median: stats.median,
            ci95: stats.ci95,
            rse: stats.rse,
            samples: stats.kept,
            trimmed: total - stats.kept,
            batch: 1,
            first_call,
            warmup,
            copies: per_copy.len().max(1),
            quantiles: QUANTILE_P
                .iter()
                .map(|&p| quantile_sorted(&all, p))
                .collect(),
            per_copy: if per_copy.len() > 1 {
                per_copy
                    .iter()
                    .map(|c| {
                        let mut s = c.to_vec();
                        s.sort_by(f64::total_cmp);
                        CopyStats {
                            seconds: Stats::of(&s).mean,
                            quantiles: QUANTILE_P.iter().map(|&p| quantile_sorted(&s, p)).collect(),
                        }
                    })
                    .collect()
            } else {
                Vec::new()
            },
            pinned: false,
        }
    }
}

struct CopyResult {
    samples: Vec<f64>,
    first_call: f64,
    warmup: f64,
    batch: u64,
    pinned: bool,
}

/// The CPUs this process may run on (its affinity mask), in increasing
/// order; empty where that cannot be read (not Linux).
pub fn allowed_cpus() -> Vec<usize> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: `cpu_set_t` is plain data (all zeros is the empty set);
        // `sched_getaffinity` writes at most `size_of::<cpu_set_t>()` bytes
        // into it, and `CPU_ISSET` reads it within `CPU_SETSIZE`.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
                return Vec::new();
            }
            (0..libc::CPU_SETSIZE as usize)
                .filter(|&c| libc::CPU_ISSET(c, &set))
                .collect()
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        Vec::new()
    }
}

/// Binds the calling thread to `cpu`; false if that failed (a CPU outside
/// the process's mask, or not Linux).
pub fn pin_current_thread(cpu: usize) -> bool {
    #[cfg(target_os = "linux")]
    {
        if cpu >= libc::CPU_SETSIZE as usize {
            return false;
        }
        // SAFETY: as in `allowed_cpus`; `cpu` is below `CPU_SETSIZE`, and
        // pid 0 is the calling thread.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = cpu;
        false
    }
}

/// Calls per sample so that a sample lasts at least `min_time`.
fn batch_size(estimate: f64, min_time: f64) -> u64 {
    if estimate <= 0.0 || !estimate.is_finite() {
        return 1000;
    }
    // (the tiny shrink keeps an exact ratio such as 50.000000001 at 50)
    ((min_time / estimate * (1.0 - 1e-9)).ceil() as u64).clamp(1, 1_000_000)
}

/// Trimmed statistics of samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Stats {
    pub mean: f64,
    pub median: f64,
    pub ci95: (f64, f64),
    pub rse: f64,
    pub kept: usize,
}

impl Stats {
    /// Trims samples farther than 5 scaled MADs (at least 5% of the median
    /// each) from the median, then the mean, its standard error and
    /// Student's-t 95% interval.
    pub(crate) fn of(samples: &[f64]) -> Stats {
        let mut s: Vec<f64> = samples.to_vec();
        s.sort_by(f64::total_cmp);
        if s.is_empty() {
            return Stats {
                mean: f64::NAN,
                median: f64::NAN,
                ci95: (f64::NAN, f64::NAN),
                rse: f64::INFINITY,
                kept: 0,
            };
        }
        let median = quantile_sorted(&s, 0.5);
        let mut dev: Vec<f64> = s.iter().map(|x| (x - median).abs()).collect();
        dev.sort_by(f64::total_cmp);
        // 1.4826 MAD estimates the standard deviation of normal data. Its
        // floor, 5% of the median, keeps the band at least ±25% wide: the
        // times of a kernel on a shared machine often form two or three
        // tight clusters a few percent apart (frequency steps, a neighbour's
        // load), all of them real; only gross outliers (a preemption, an
        // interrupt storm) are cut.
        let mad = (1.4826 * quantile_sorted(&dev, 0.5)).max(0.05 * median.abs());
        let kept: Vec<f64> = s
            .iter()
            .copied()
            .filter(|x| (x - median).abs() <= 5.0 * mad)
            .collect();
        let n = kept.len();
        let mean = kept.iter().sum::<f64>() / n as f64;
        if n < 2 {
            return Stats {
                mean,
                median,
                ci95: (f64::NAN, f64::NAN),
                rse: f64::INFINITY,
                kept: n,
            };
        }
        let var = kept.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let se = (var / n as f64).sqrt();
        let t = student_t95(n - 1);
        Stats {
            mean,
            median,
            ci95: (mean - t * se, mean + t * se),
            rse: if mean > 0.0 { se / mean } else { 0.0 },
            kept: n,
        }
    }
}

/// Two-sided 95% quantile of Student's t with `df` degrees of freedom
/// (standard tables; 1.96 beyond 120).
fn student_t95(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => T[df - 1],
        31..=40 => 2.021,
        41..=60 => 2.000,
        61..=120 => 1.980,
        _ => 1.960,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    #[test]
    fn stats_trim_an_outlier_and_give_students_interval() {
        let mut s = vec![1.0, 1.1, 0.9, 1.0, 1.05, 0.95];
        s.push(50.0);
        let st = Stats::of(&s);
        assert_eq!(st.kept, 6);
        assert_relative_eq!(st.mean, 1.0, epsilon = 1e-12);
        assert_relative_eq!(st.median, 1.0, epsilon = 1e-12);
        // sd of the six kept = sqrt(0.025 / 5); se = sd / sqrt(6); t(5) = 2.571
        let se = (0.025f64 / 5.0).sqrt() / 6f64.sqrt();
        assert_relative_eq!(st.ci95.1 - st.mean, 2.571 * se, epsilon = 1e-12);
        assert_relative_eq!(st.rse, se, epsilon = 1e-12);
    }

    #[test]
    fn close_clusters_are_kept_and_only_gross_outliers_cut() {
        // two clusters 10% apart (both real) and one preemption
        let mut s: Vec<f64> = (0..60).map(|i| 1.0 + 1e-4 * f64::from(i % 3)).collect();
        s.extend((0..40).map(|i| 1.1 + 1e-4 * f64::from(i % 3)));
        s.push(5.0);
        let st = Stats::of(&s);
        assert_eq!(st.kept, 100);
        assert_relative_eq!(st.mean, 1.0401, epsilon = 1e-4);
    }

    #[test]
    fn quantiles_interpolate_between_order_statistics() {
        let s = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_relative_eq!(quantile_sorted(&s, 0.5), 3.0);
        assert_relative_eq!(quantile_sorted(&s, 0.1), 1.4);
        assert_relative_eq!(quantile_sorted(&s, 1.0), 5.0);
        assert!(quantile_sorted(&[], 0.5).is_nan());
    }

    #[test]
    fn batches_reach_the_minimum_sample_time() {
        assert_eq!(batch_size(1e-6, 50e-6), 50);
        assert_eq!(batch_size(1e-3, 50e-6), 1);
        assert_eq!(batch_size(0.0, 50e-6), 1000);
    }

    unsafe extern "C" fn spin(args: *const i64, n: i32) {
        assert_eq!(n, 1);
        // SAFETY: the caller passes one argument.
        let iters = unsafe { *args };
        let mut x = 0u64;
        for i in 0..iters {
            x = std::hint::black_box(x.wrapping_add(i as u64));
        }
        std::hint::black_box(x);
    }

    unsafe extern "C" fn where_am_i(_args: *const i64, _n: i32) {
        // SAFETY: `sched_getcpu` has no preconditions.
        let cpu = unsafe { libc::sched_getcpu() };
        SEEN_ALL.fetch_or(1 << cpu.clamp(0, 63), Ordering::Relaxed);
    }

    static SEEN_ALL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

    #[test]
    fn pinned_copies_run_on_their_cpus() {
        let cpus = allowed_cpus();
        assert!(!cpus.is_empty(), "the affinity mask is readable on Linux");
        // Every allowed CPU takes the calling thread, and it runs there.
        std::thread::scope(|s| {
            for &c in &cpus {
                s.spawn(move || {
                    assert!(pin_current_thread(c), "CPU {c}");
                    // SAFETY: no preconditions.
                    assert_eq!(unsafe { libc::sched_getcpu() }, c as i32);
                });
            }
        });
        // A CPU outside the mask (or beyond any mask) is refused.
        assert!(!pin_current_thread(usize::MAX));
        let outside = (0..libc::CPU_SETSIZE as usize).find(|c| !cpus.contains(c));
        if let Some(c) = outside {
            std::thread::scope(|s| {
                s.spawn(move || assert!(!pin_current_thread(c), "CPU {c} is outside the mask"));
            });
        }
        // time_kernel binds each copy to its CPU, for all its calls.
        let pin: Vec<usize> = cpus.iter().copied().take(2).collect();
        let opts = TimingOptions {
            budget: Duration::from_millis(20),
            min_time: Duration::from_millis(5),
            pin: pin.clone(),
            ..TimingOptions::default()
        };
        SEEN_ALL.store(0, Ordering::Relaxed);
        let fns: Vec<KernelFn> = pin.iter().map(|_| where_am_i as KernelFn).collect();
        let m = time_kernel(&fns, &[], None, &opts, 0.0);
        assert!(m.pinned);
        let expected = pin.iter().fold(0u64, |acc, &c| acc | 1 << c.min(63));
        assert_eq!(SEEN_ALL.load(Ordering::Relaxed), expected);
        // Asking for a CPU outside the mask is reported, not ignored.
        let bad = TimingOptions {
            pin: vec![usize::MAX],
            ..opts.clone()
        };
        assert!(!time_kernel(&[where_am_i], &[], None, &bad, 0.0).pinned);
        let unpinned = TimingOptions {
            pin: Vec::new(),
            ..opts
        };
        assert!(!time_kernel(&[where_am_i], &[], None, &unpinned, 0.0).pinned);
    }

    #[test]
    fn a_longer_kernel_measures_longer_and_copies_run_at_once() {
        let opts = TimingOptions {
            budget: Duration::from_millis(50),
            min_time: Duration::from_millis(10),
            ..TimingOptions::default()
        };
        let dt = timer_overhead();
        assert!((0.0..1e-5).contains(&dt), "timer overhead {dt}");
        let short = time_kernel(&[spin], &[10_000], None, &opts, dt);
        let long = time_kernel(&[spin, spin], &[100_000], None, &opts, dt);
        assert_eq!(long.copies, 2);
        assert!(short.samples >= 3 && long.samples >= 6);
        // ten times the work: between 5 and 20 times the time, whatever the
        // machine's load
        let r = long.seconds / short.seconds;
        assert!((5.0..20.0).contains(&r), "ratio {r}");
        assert!(long.ci95.0 <= long.seconds && long.seconds <= long.ci95.1);
        // after a longer untimed call, a call still measures its own time
        let pre = Before {
            kernels: &[spin],
            args: &[100_000],
        };
        let after = time_kernel(&[spin], &[10_000], Some(pre), &opts, dt);
        assert_eq!(after.batch, 1);
        let r = after.seconds / short.seconds;
        assert!((0.5..2.0).contains(&r), "ratio {r}");
    }
}
