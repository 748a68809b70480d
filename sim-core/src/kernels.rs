//! Calibrated kernel times and kernel-call profiles.
//!
//! A skeleton's `kernel k(...) cost e` gives a time formula; a calibration
//! (`parsim calibrate blocks`) measures the kernel's native implementation
//! on the target machine instead. The engine asks a [`KernelTime`] for such
//! a kernel (`SimConfig::kernel_times`); sim-core does not know where the
//! times come from.
//!
//! A profile run (`SimConfig::kernel_profile`) records which kernels are
//! called with which arguments, and how often: what a calibration must time.

use std::collections::HashMap;
use std::fmt;

use crate::value::Value;

/// The calibrated time of one kernel as a function of its arguments.
pub trait KernelTime: Send + Sync + fmt::Debug {
    /// Seconds of one call with `args` (the `compute` statement's argument
    /// values, in the kernel's parameter order), on the reference CPU of the
    /// machine model (whose `compute_seconds` still applies). An `Err` is a
    /// run-time error of the program at the `compute` statement.
    fn seconds(&self, args: &[Value], call: KernelCall) -> Result<f64, String>;
}

/// What the engine knows about one kernel call besides its arguments.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KernelCall {
    /// The calling rank (world), for times measured per core.
    pub rank: u32,
    /// The rank's first call of the kernel (first touch of its memory, cold
    /// caches), for kernels declared among the program's first 64.
    pub first: bool,
    /// With `SimConfig::noise_seed`: a uniform variate in [0, 1) from the
    /// rank's own stream, to draw this call's time from its measured
    /// distribution. `None`: the mean time.
    pub uniform: Option<f64>,
}

/// A deterministic stream of uniform variates per rank (SplitMix64, Steele,
/// Lea and Flood, "Fast splittable pseudorandom number generators", OOPSLA
/// 2014): the same seed gives the same run, bit for bit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NoiseStream(u64);

impl NoiseStream {
    pub(crate) fn new(seed: u64, rank: u32) -> NoiseStream {
        // Decorrelate the ranks' streams by mixing the rank into the seed.
        let mut s = NoiseStream(seed ^ u64::from(rank).wrapping_mul(0xD1B5_4A32_D192_ED03));
        s.next_u64();
        s
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1), 53 random bits.
    pub(crate) fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / 9_007_199_254_740_992.0)
    }
}

/// One argument of a profiled kernel call: integers as they are, anything
/// else as a float (booleans 0/1; values that are not numbers are NaN).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ProfileArg {
    Int(i64),
    Float(f64),
}

impl ProfileArg {
    pub fn from_value(v: &Value) -> ProfileArg {
        match *v {
            Value::Int(i) => ProfileArg::Int(i),
            Value::Float(f) => ProfileArg::Float(f),
            Value::Bool(b) => ProfileArg::Int(i64::from(b)),
            _ => ProfileArg::Float(f64::NAN),
        }
    }

    pub fn as_f64(self) -> f64 {
        match self {
            ProfileArg::Int(i) => i as f64,
            ProfileArg::Float(f) => f,
        }
    }

    /// Hashable identity (floats by their bits).
    fn key(self) -> (bool, u64) {
        match self {
            ProfileArg::Int(i) => (false, i as u64),
            ProfileArg::Float(f) => (true, f.to_bits()),
        }
    }
}

impl fmt::Display for ProfileArg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProfileArg::Int(i) => write!(f, "{i}"),
            ProfileArg::Float(x) => write!(f, "{x}"),
        }
    }
}

/// A total order of argument tuples (by value, floats by `total_cmp`, then
/// by length), so that a profile is the same on every run whatever the
/// order its calls were collected in.
pub fn cmp_args(a: &[ProfileArg], b: &[ProfileArg]) -> std::cmp::Ordering {
    a.iter()
        .zip(b)
        .map(|(x, y)| x.as_f64().total_cmp(&y.as_f64()))
        .find(|o| o.is_ne())
        .unwrap_or_else(|| a.len().cmp(&b.len()))
}

/// The calls of one kernel with one argument tuple.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfiledCall {
    pub args: Vec<ProfileArg>,
    /// Calls, summed over all ranks.
    pub count: u64,
    /// The kernel call that most often came just before these on the same
    /// rank (its kernel's name and arguments): the state of the caches a
    /// call meets. `None` when it came first on every rank.
    pub predecessor: Option<(String, Vec<ProfileArg>)>,
}

/// The profile of one kernel, calls sorted by argument tuple.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelProfile {
    pub kernel: String,
    pub params: Vec<String>,
    pub calls: Vec<ProfiledCall>,
}

type ArgKey = Vec<(bool, u64)>;

/// One tuple's calls while recording: the tuple, its count, and the counts
/// of its predecessors (kernel, argument key) with their arguments.
#[derive(Debug)]
struct Entry {
    args: Vec<ProfileArg>,
    count: u64,
    before: HashMap<(usize, ArgKey), (Vec<ProfileArg>, u64)>,
}

/// Collects calls during a run (engine side).
#[derive(Debug, Default)]
pub(crate) struct ProfileRecorder {
    /// Per kernel: argument tuple -> its calls.
    by_kernel: Vec<HashMap<ArgKey, Entry>>,
    /// Per rank: its last kernel call (kernel, key, arguments).
    last: HashMap<u32, (usize, ArgKey, Vec<ProfileArg>)>,
}

impl ProfileRecorder {
    pub(crate) fn new(kernels: usize) -> ProfileRecorder {
        ProfileRecorder {
            by_kernel: (0..kernels).map(|_| HashMap::new()).collect(),
            last: HashMap::new(),
        }
    }

    pub(crate) fn record(&mut self, rank: u32, kernel: usize, args: &[Value]) {
        let args: Vec<ProfileArg> = args.iter().map(ProfileArg::from_value).collect();
        let key: ArgKey = args.iter().map(|a| a.key()).collect();
        let e = self.by_kernel[kernel]
            .entry(key.clone())
            .or_insert_with(|| Entry {
                args: args.clone(),
                count: 0,
                before: HashMap::new(),
            });
        e.count += 1;
        if let Some((k, pkey, pargs)) = self.last.get(&rank) {
            e.before
                .entry((*k, pkey.clone()))
                .or_insert_with(|| (pargs.clone(), 0))
                .1 += 1;
        }
        self.last.insert(rank, (kernel, key, args));
    }

    pub(crate) fn finish(self, program: &crate::ir::Program) -> Vec<KernelProfile> {
        let mut out = Vec::new();
        for (k, map) in self.by_kernel.into_iter().enumerate() {
            if map.is_empty() {
                continue;
            }
            let kernel = &program.kernels[k];
            let mut calls: Vec<ProfiledCall> = map
                .into_values()
                .map(|e| {
                    // the most frequent predecessor; ties by kernel index
                    // and arguments, so the profile is deterministic
                    let predecessor = e
                        .before
                        .into_iter()
                        .max_by(|a, b| a.1.1.cmp(&b.1.1).then_with(|| b.0.cmp(&a.0)))
                        .map(|((k, _), (args, _))| (program.kernels[k].name.clone(), args));
                    ProfiledCall {
                        args: e.args,
                        count: e.count,
                        predecessor,
                    }
                })
                .collect();
            calls.sort_by(|a, b| cmp_args(&a.args, &b.args));
            out.push(KernelProfile {
                kernel: kernel.name.clone(),
                params: kernel.params.clone(),
                calls,
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noise_streams_are_reproducible_uniform_and_distinct_per_rank() {
        let mut a = NoiseStream::new(7, 0);
        let mut b = NoiseStream::new(7, 0);
        let mut c = NoiseStream::new(7, 1);
        let xs: Vec<f64> = (0..10_000).map(|_| a.uniform()).collect();
        let ys: Vec<f64> = (0..10_000).map(|_| b.uniform()).collect();
        assert_eq!(xs, ys);
        assert_ne!(xs[0], c.uniform());
        assert!(xs.iter().all(|x| (0.0..1.0).contains(x)));
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        assert!((mean - 0.5).abs() < 0.01, "{mean}");
    }
}
