//! `blocks.toml`: measured kernel times and their fitted costs, and the
//! simulator's view of them ([`CalibratedKernel`]).
//!
//! ```toml
//! [calibration]            # where and how the times were measured
//! program = "examples/heat.mpl"
//! ranks = [2]
//! host = "node17"
//! cpu = "Intel(R) Xeon(R) ..."
//! compiler = "cc (Debian 12.2.0-14) 12.2.0"
//! cflags = "-O2"
//! date = "2026-11-22T05:00:00Z"
//! concurrent = [1, 2]      # copies timed at once (levels)
//! ...
//! [[kernel]]
//! name = "stencil"
//! params = ["rows", "cols"]
//! formula = "1.2e-6 + 3.1e-9·rows·cols"   # for people; `model` is what counts
//! model = { terms = ["1", "P"], coefficients = [1.2e-6, 3.1e-9], ... }
//! [[kernel.point]]
//! args = [1000, 1000]
//! seconds = 3.1e-3         # trimmed mean per call
//! ci95 = [3.08e-3, 3.12e-3]
//! ...
//! ```

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use sim_core::kernels::{KernelCall, KernelTime};
use sim_core::value::Value;
use smallvec::SmallVec;

use super::BlocksError;
use super::fit::{KernelModel, product};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlocksFile {
    pub calibration: CalibrationInfo,
    #[serde(rename = "kernel", default)]
    pub kernels: Vec<KernelEntry>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CalibrationInfo {
    /// The skeleton profiled, its rank count and `--param`s.
    pub program: String,
    pub ranks: Vec<u32>,
    #[serde(default)]
    pub params: Vec<String>,
    /// The kernel library timed (source or shared library).
    pub library: String,
    pub host: String,
    pub cpu: String,
    pub compiler: String,
    pub cflags: String,
    /// UTC, ISO 8601.
    pub date: String,
    /// The levels of `--concurrent`: copies of each kernel timed at once.
    pub concurrent: Vec<u32>,
    /// The timer's own cost, subtracted from every sample, seconds.
    pub timer_overhead: f64,
    pub target_rse: f64,
    /// Measuring time per argument tuple, seconds: at most `budget`, at
    /// least `min_time`.
    pub budget: f64,
    #[serde(default)]
    pub min_time: f64,
    /// `calibrate blocks --pin`: copy j of every level ran bound to CPU
    /// `pinned[j]` (so `per copy` times are per core, and rank r's are
    /// those of copy r mod K; the real runs must bind rank j of a node to
    /// its j-th core, `mpirun -bind-to core`). Empty: unbound.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pinned: Vec<usize>,
    /// `calibrate blocks --in-program LAUNCHER`: the times are of the calls
    /// the real program made, timed inside it, run with this launcher line
    /// (`{ranks}` the rank count); a level is the ranks a run had on one
    /// node, copy j the node's ranks j, j + K, ... None: timed apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_program: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelEntry {
    pub name: String,
    pub params: Vec<String>,
    /// Copies of the kernel that ran at once while these times were
    /// measured: the ranks sharing one node's memory and caches.
    #[serde(default = "one")]
    pub concurrent: u32,
    /// The fitted model as a formula (informational).
    #[serde(default)]
    pub formula: String,
    pub model: Option<KernelModel>,
    #[serde(rename = "point", default)]
    pub points: Vec<PointEntry>,
}

fn one() -> u32 {
    1
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PointEntry {
    pub args: Vec<i64>,
    /// Seconds per call (the trimmed mean).
    pub seconds: f64,
    pub median: f64,
    pub ci95: [f64; 2],
    pub rse: f64,
    pub samples: u64,
    pub trimmed: u64,
    /// Calls per sample.
    pub batch: u64,
    pub first_call: f64,
    pub warmup: f64,
    /// How often the profile run made this call (all ranks).
    pub calls: u64,
    /// The distribution of one call's time, outliers included, at the
    /// probabilities of `timing::QUANTILE_P` (for `run --noise`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub quantiles: Vec<f64>,
    /// The call made (untimed) before every timed one: the call that most
    /// often precedes this one in the program. Empty: timed repeated alone.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub after: String,
    /// With several copies at once: each copy's trimmed mean and quantiles
    /// (rank r of a run takes copy r mod K).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub copies: Vec<CopyEntry>,
    /// Seconds of the speed reference ([`super::reference`]) around this
    /// point's measurement: the mean of one just before and one just after.
    /// Absent in files written before 2026-11-29.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CopyEntry {
    pub seconds: f64,
    #[serde(default)]
    pub quantiles: Vec<f64>,
}

impl BlocksFile {
    pub fn to_toml(&self) -> Result<String, BlocksError> {
        let body = toml::to_string(self)
            .map_err(|e| BlocksError::Invalid(format!("cannot write blocks file: {e}")))?;
        Ok(format!(
            "# Kernel times measured by `parsim calibrate blocks` (see [calibration]).\n\
             # `seconds` is the trimmed mean per call; `model` is the fitted cost used\n\
             # for arguments not measured (terms: 1, P = product of the arguments, or\n\
             # a parameter). Use with `parsim run --blocks FILE`.\n\n{body}"
        ))
    }

    pub fn parse(text: &str, origin: &str) -> Result<BlocksFile, BlocksError> {
        let f: BlocksFile = toml::from_str(text)
            .map_err(|e| BlocksError::Invalid(format!("{origin}: {}", e.to_string().trim_end())))?;
        for k in &f.kernels {
            for (i, p) in k.points.iter().enumerate() {
                let at = format!("{origin}: kernel `{}`, point {}", k.name, i + 1);
                if p.args.len() != k.params.len() {
                    return Err(BlocksError::Invalid(format!(
                        "{at}: `args` has {} values but the kernel has {} parameters",
                        p.args.len(),
                        k.params.len()
                    )));
                }
                if !(p.seconds.is_finite() && p.seconds >= 0.0) {
                    return Err(BlocksError::Invalid(format!(
                        "{at}: `seconds` is {}; it must be finite and not negative",
                        p.seconds
                    )));
                }
            }
            if let Some(m) = &k.model {
                let at = format!("{origin}: kernel `{}`, `model`", k.name);
                if m.segments.iter().any(|g| {
                    !(g.from.is_finite() && g.to >= g.from && g.a.is_finite() && g.b.is_finite())
                }) || m.segments.windows(2).any(|w| w[0].to >= w[1].from)
                {
                    return Err(BlocksError::Invalid(format!(
                        "{at}: `segments` must be finite and sorted by `from`"
                    )));
                }
                if m.terms.len() != m.coefficients.len() {
                    return Err(BlocksError::Invalid(format!(
                        "{at}: {} terms but {} coefficients",
                        m.terms.len(),
                        m.coefficients.len()
                    )));
                }
                if let Some(c) = m.coefficients.iter().find(|c| !c.is_finite()) {
                    return Err(BlocksError::Invalid(format!(
                        "{at}: coefficient {c} is not finite"
                    )));
                }
                let probe = vec![1.0; k.params.len()];
                m.eval(&k.params, &probe)
                    .map_err(|e| BlocksError::Invalid(format!("{at}: {e}")))?;
            }
            if k.model.is_none() && k.points.is_empty() {
                return Err(BlocksError::Invalid(format!(
                    "{origin}: kernel `{}` has neither a `model` nor a `point`",
                    k.name
                )));
            }
        }
        Ok(f)
    }

    pub fn read(path: &Path) -> Result<BlocksFile, BlocksError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| BlocksError::Io(format!("{}: {e}", path.display())))?;
        BlocksFile::parse(&text, &path.display().to_string())
    }

    /// The file as the machine would have measured it with the speed
    /// reference at `reference` seconds ([`super::reference`]): every
    /// measured time of a point (mean, median, interval, quantiles, first
    /// call, each copy's) times `reference / point.reference`, and each
    /// kernel's fitted model times `reference` over the median of its
    /// points' references. An error names the first kernel whose points
    /// carry no reference (files written before the reference existed).
    pub fn at_speed(&self, reference: f64) -> Result<BlocksFile, BlocksError> {
        if !(reference.is_finite() && reference > 0.0) {
            return Err(BlocksError::Invalid(format!(
                "the speed reference must be a positive time, not {reference}"
            )));
        }
        let mut out = self.clone();
        for k in &mut out.kernels {
            let mut refs = Vec::with_capacity(k.points.len());
            for p in &mut k.points {
                let r = p
                    .reference
                    .filter(|r| r.is_finite() && *r > 0.0)
                    .ok_or_else(|| {
                        BlocksError::Invalid(format!(
                            "kernel `{}` ({} cop{} at once) has a point without a speed \
                             reference: calibrate blocks again (references are written \
                             since 2026-11-29)",
                            k.name,
                            k.concurrent,
                            if k.concurrent == 1 { "y" } else { "ies" }
                        ))
                    })?;
                refs.push(r);
                let f = reference / r;
                p.seconds *= f;
                p.median *= f;
                p.ci95 = [p.ci95[0] * f, p.ci95[1] * f];
                p.first_call *= f;
                p.warmup *= f;
                p.quantiles.iter_mut().for_each(|q| *q *= f);
                for c in &mut p.copies {
                    c.seconds *= f;
                    c.quantiles.iter_mut().for_each(|q| *q *= f);
                }
                p.reference = Some(reference);
            }
            if let Some(m) = &mut k.model {
                refs.sort_by(f64::total_cmp);
                // A model comes from at least one point (`fit`); without
                // points it is left as it is.
                if let Some(&mid) = refs.get(refs.len() / 2) {
                    m.scale(reference / mid);
                }
            }
        }
        Ok(out)
    }

    /// One [`CalibratedKernel`] per kernel of the file, for runs with
    /// `ranks_on_node` ranks sharing a node: the entries of [`Self::chosen`].
    pub fn kernel_times(&self, ranks_on_node: u32) -> Vec<CalibratedKernel> {
        self.chosen(ranks_on_node)
            .into_iter()
            .map(|i| CalibratedKernel::new(&self.kernels[i]))
            .collect()
    }

    /// The entries (indices into `kernels`, one per kernel name, in the
    /// order of first appearance) a run with `ranks_on_node` ranks sharing
    /// a node uses: of each kernel's entries, the one timed with the most
    /// copies at once not above `ranks_on_node` (the fewest copies if all
    /// are above).
    pub fn chosen(&self, ranks_on_node: u32) -> Vec<usize> {
        let mut chosen: Vec<usize> = Vec::new();
        for (i, k) in self.kernels.iter().enumerate() {
            match chosen.iter_mut().find(|c| self.kernels[**c].name == k.name) {
                None => chosen.push(i),
                Some(c) => {
                    let fits = |e: &KernelEntry| e.concurrent <= ranks_on_node;
                    let cur = &self.kernels[*c];
                    let better = match (fits(cur), fits(k)) {
                        (true, true) => k.concurrent > cur.concurrent,
                        (false, true) => true,
                        (true, false) => false,
                        (false, false) => k.concurrent < cur.concurrent,
                    };
                    if better {
                        *c = i;
                    }
                }
            }
        }
        chosen
    }
}

/// A kernel's calibrated time: the measured time for a measured argument
/// tuple, else the fitted model. Remembers how far it had to extrapolate.
#[derive(Debug, Clone)]
struct Measured {
    /// All copies' samples together.
    pooled: Dist,
    first_call: f64,
    /// Each copy's own, when several ran at once: rank r takes copy
    /// r mod K (ranks sharing a node run on different cores, and the
    /// slower core sets the pace of ranks that wait for each other).
    per_copy: Vec<Dist>,
    /// The point's position in its entry (`CalibratedKernel::hits`).
    index: usize,
}

impl Measured {
    fn of(p: &PointEntry, index: usize) -> Measured {
        Measured {
            index,
            pooled: Dist {
                seconds: p.seconds,
                quantiles: p.quantiles.clone(),
            },
            first_call: p.first_call,
            per_copy: p
                .copies
                .iter()
                .map(|c| Dist {
                    seconds: c.seconds,
                    quantiles: c.quantiles.clone(),
                })
                .collect(),
        }
    }

    fn dist(&self, rank: u32) -> &Dist {
        match self.per_copy.len() {
            0 => &self.pooled,
            n => &self.per_copy[rank as usize % n],
        }
    }
}

/// A mean time and the quantiles of its distribution.
#[derive(Debug, Clone)]
struct Dist {
    seconds: f64,
    quantiles: Vec<f64>,
}

impl Dist {
    /// The time at probability `u` of the measured distribution (linear
    /// between the stored quantiles, clamped at their ends); the mean
    /// without a distribution.
    fn draw(&self, u: f64) -> f64 {
        let q = &self.quantiles;
        let p = &super::timing::QUANTILE_P;
        if q.len() != p.len() || q.iter().any(|x| !x.is_finite()) {
            return self.seconds;
        }
        if u <= p[0] {
            return q[0];
        }
        for k in 1..p.len() {
            if u <= p[k] {
                return q[k - 1] + (q[k] - q[k - 1]) * (u - p[k - 1]) / (p[k] - p[k - 1]);
            }
        }
        q[q.len() - 1]
    }
}

#[derive(Debug)]
pub struct CalibratedKernel {
    pub name: String,
    params: Vec<String>,
    /// Measured tuples: their times.
    exact: HashMap<Vec<i64>, Measured>,
    /// (work, the measured tuple) sorted by work: the nearest measurement
    /// gives the relative spread of a modelled tuple's time.
    by_work: Vec<(f64, Measured)>,
    model: Option<KernelModel>,
    /// The measured range of work (product of the arguments).
    work_range: (f64, f64),
    /// The largest factor by which a call's work lay outside `work_range`
    /// (f64 bits; positive floats order like their bits), and its work.
    worst_factor: AtomicU64,
    worst_work: AtomicU64,
    /// Calls answered by the model rather than a measurement.
    modelled_calls: AtomicU64,
    /// Calls answered by each measured tuple, and the tuples (both in the
    /// entry's point order): which tuples a run used (`used_tuples`).
    hits: Vec<AtomicU64>,
    tuples: Vec<Vec<i64>>,
}

/// How far a run went beyond a kernel's measurements.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Extrapolation {
    pub kernel: String,
    /// Work (product of the arguments) of the farthest call, and the
    /// measured range.
    pub work: f64,
    pub measured: (f64, f64),
    /// `work / max` or `min / work`, > 1.
    pub factor: f64,
    pub formula: String,
}

impl CalibratedKernel {
    pub fn new(k: &KernelEntry) -> CalibratedKernel {
        let works: Vec<f64> = k
            .points
            .iter()
            .map(|p| product(&p.args.iter().map(|&a| a as f64).collect::<Vec<_>>()))
            .collect();
        CalibratedKernel {
            name: k.name.clone(),
            params: k.params.clone(),
            exact: k
                .points
                .iter()
                .enumerate()
                .map(|(i, p)| (p.args.clone(), Measured::of(p, i)))
                .collect(),
            hits: k.points.iter().map(|_| AtomicU64::new(0)).collect(),
            tuples: k.points.iter().map(|p| p.args.clone()).collect(),
            by_work: {
                let mut v: Vec<(f64, Measured)> = k
                    .points
                    .iter()
                    .zip(&works)
                    .enumerate()
                    .map(|(i, (p, &w))| (w, Measured::of(p, i)))
                    .collect();
                v.sort_by(|a, b| a.0.total_cmp(&b.0));
                v
            },
            model: k.model.clone(),
            work_range: (
                works.iter().copied().fold(f64::INFINITY, f64::min),
                works.iter().copied().fold(0.0, f64::max),
            ),
            worst_factor: AtomicU64::new(1.0f64.to_bits()),
            worst_work: AtomicU64::new(0),
            modelled_calls: AtomicU64::new(0),
        }
    }

    /// The farthest extrapolation of the run so far, if any call's work was
    /// more than `threshold` times outside the measured range.
    pub fn extrapolation(&self, threshold: f64) -> Option<Extrapolation> {
        let factor = f64::from_bits(self.worst_factor.load(Ordering::Relaxed));
        (factor > threshold).then(|| Extrapolation {
            kernel: self.name.clone(),
            work: f64::from_bits(self.worst_work.load(Ordering::Relaxed)),
            measured: self.work_range,
            factor,
            formula: self
                .model
                .as_ref()
                .map_or_else(String::new, |m| m.formula(&self.params)),
        })
    }

    /// The measured tuples the run asked for, in the file's order.
    pub fn used_tuples(&self) -> Vec<Vec<i64>> {
        self.tuples
            .iter()
            .zip(&self.hits)
            .filter(|(_, h)| h.load(Ordering::Relaxed) > 0)
            .map(|(t, _)| t.clone())
            .collect()
    }

    pub fn modelled_calls(&self) -> u64 {
        self.modelled_calls.load(Ordering::Relaxed)
    }
}

impl KernelTime for CalibratedKernel {
    /// A measured tuple costs its measured time, and its measured first-call
    /// time on a rank's first call of the kernel (allocation, first touch,
    /// cold caches: the real program pays it once per rank). Other tuples
    /// cost the fitted model's time, first call or not. With a uniform
    /// variate (`run --noise`) a measured tuple's time is drawn from its
    /// measured distribution, and a modelled one is scaled by the relative
    /// spread of the measurement nearest in work.
    fn seconds(&self, args: &[Value], call: KernelCall) -> Result<f64, String> {
        if args.len() != self.params.len() {
            return Err(format!(
                "the calibration has {} parameters ({}), the call {} arguments",
                self.params.len(),
                self.params.join(", "),
                args.len()
            ));
        }
        // Inline up to 8 arguments: no allocation per call.
        let mut ints: SmallVec<[i64; 8]> = SmallVec::new();
        let mut floats: SmallVec<[f64; 8]> = SmallVec::new();
        for a in args {
            match *a {
                Value::Int(i) => {
                    ints.push(i);
                    floats.push(i as f64);
                }
                Value::Float(f) => floats.push(f),
                ref other => {
                    return Err(format!(
                        "an argument is {}, not a number",
                        other.type_name()
                    ));
                }
            }
        }
        if ints.len() == args.len()
            && let Some(m) = self.exact.get(ints.as_slice())
        {
            self.hits[m.index].fetch_add(1, Ordering::Relaxed);
            let d = m.dist(call.rank);
            return Ok(match call {
                KernelCall { first: true, .. } if m.first_call.is_finite() => m.first_call,
                KernelCall {
                    uniform: Some(u), ..
                } => d.draw(u),
                _ => d.seconds,
            });
        }
        let model = self.model.as_ref().ok_or_else(|| {
            format!(
                "no measurement for these arguments ({}) and no fitted model: \
                 calibrate again with this run's parameters",
                floats
                    .iter()
                    .map(|f| f.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?;
        self.modelled_calls.fetch_add(1, Ordering::Relaxed);
        let w = product(&floats);
        let (lo, hi) = self.work_range;
        let factor = if w > hi && hi > 0.0 {
            w / hi
        } else if w < lo && w > 0.0 {
            lo / w
        } else {
            1.0
        };
        if factor > 1.0 {
            let prev = self
                .worst_factor
                .fetch_max(factor.to_bits(), Ordering::Relaxed);
            if factor.to_bits() > prev {
                self.worst_work.store(w.to_bits(), Ordering::Relaxed);
            }
        }
        let t = model.eval(&self.params, &floats)?;
        // The measurement nearest in work (log scale) lends its spread: this
        // rank's copy against all copies, and the draw under noise.
        let near = self.by_work.iter().min_by(|a, b| {
            let d = |x: f64| (x.max(1.0).ln() - w.max(1.0).ln()).abs();
            d(a.0).total_cmp(&d(b.0))
        });
        Ok(match near {
            Some((_, m)) if m.pooled.seconds > 0.0 => {
                let d = m.dist(call.rank);
                let own = match call.uniform {
                    Some(u) => d.draw(u),
                    None => d.seconds,
                };
                t * own / m.pooled.seconds
            }
            _ => t,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    const FILE: &str = r#"
[calibration]
program = "heat.mpl"
ranks = [2]
library = "kernels.c"
host = "h"
cpu = "c"
compiler = "cc"
cflags = "-O2"
date = "2026-11-22T00:00:00Z"
concurrent = [1, 2]
timer_overhead = 2e-8
target_rse = 0.005
budget = 1.0

[[kernel]]
name = "stencil"
params = ["rows", "cols"]
model = { terms = ["1", "P"], coefficients = [1e-6, 2e-9], max_rel_error = 0.01, loo_rel_error = 0.02 }

[[kernel.point]]
args = [100, 100]
seconds = 2.5e-5
median = 2.5e-5
ci95 = [2.4e-5, 2.6e-5]
rse = 0.01
samples = 10
trimmed = 0
batch = 1
first_call = 1e-4
warmup = 3e-5
calls = 20
"#;

    #[test]
    fn measured_tuples_win_and_others_use_the_model() {
        let f = BlocksFile::parse(FILE, "b.toml").expect("valid file");
        let k = &f.kernel_times(1)[0];
        assert!(k.used_tuples().is_empty());
        let t = k
            .seconds(
                &[Value::Int(100), Value::Int(100)],
                KernelCall {
                    rank: 0,
                    first: false,
                    uniform: None,
                },
            )
            .expect("measured");
        assert_relative_eq!(t, 2.5e-5);
        let t = k
            .seconds(
                &[Value::Int(1000), Value::Int(100)],
                KernelCall {
                    rank: 0,
                    first: false,
                    uniform: None,
                },
            )
            .expect("modelled");
        assert_relative_eq!(t, 1e-6 + 2e-9 * 1e5);
        // The measured tuple asked for, not the modelled one.
        assert_eq!(k.used_tuples(), vec![vec![100, 100]]);
        let e = k.extrapolation(2.0).expect("10x beyond the measured work");
        assert_relative_eq!(e.factor, 10.0);
        assert!(k.extrapolation(20.0).is_none());
        assert!(
            k.seconds(
                &[Value::Int(1)],
                KernelCall {
                    rank: 0,
                    first: false,
                    uniform: None
                }
            )
            .is_err()
        );
        // a rank's first call of a measured tuple costs the first-call time
        let t = k
            .seconds(
                &[Value::Int(100), Value::Int(100)],
                KernelCall {
                    rank: 0,
                    first: true,
                    uniform: None,
                },
            )
            .expect("measured");
        assert_relative_eq!(t, 1e-4);
    }

    #[test]
    fn the_concurrency_level_of_the_run_is_chosen() {
        let two = FILE.replace("seconds = 2.5e-5", "seconds = 4e-5").replace(
            "name = \"stencil\"\n",
            "name = \"stencil\"\nconcurrent = 2\n",
        );
        let both = format!(
            "{FILE}\n{}",
            &two[two.find("[[kernel]]").expect("a kernel")..]
        );
        let f = BlocksFile::parse(&both, "b.toml").expect("valid file");
        assert_eq!(f.kernels.len(), 2);
        let at = |ranks_on_node| {
            f.kernel_times(ranks_on_node)[0]
                .seconds(
                    &[Value::Int(100), Value::Int(100)],
                    KernelCall {
                        rank: 0,
                        first: false,
                        uniform: None,
                    },
                )
                .expect("measured")
        };
        assert_relative_eq!(at(1), 2.5e-5);
        assert_relative_eq!(at(2), 4e-5);
        assert_relative_eq!(at(16), 4e-5);
    }

    #[test]
    fn each_rank_takes_its_copy_of_a_concurrent_measurement() {
        let two = FILE.replace(
            "calls = 20\n",
            "calls = 20\n\n[[kernel.point.copies]]\nseconds = 2e-5\n\n[[kernel.point.copies]]\nseconds = 3e-5\n",
        );
        let f = BlocksFile::parse(&two, "b.toml").expect("valid file");
        let k = &f.kernel_times(1)[0];
        let at = |rank, args: [i64; 2]| {
            let call = KernelCall {
                rank,
                first: false,
                uniform: None,
            };
            k.seconds(&[Value::Int(args[0]), Value::Int(args[1])], call)
                .expect("a time")
        };
        assert_relative_eq!(at(0, [100, 100]), 2e-5);
        assert_relative_eq!(at(1, [100, 100]), 3e-5);
        assert_relative_eq!(at(2, [100, 100]), 2e-5);
        // a modelled tuple is scaled by the copy's share of the pooled mean
        let pooled = 1e-6 + 2e-9 * 1e5;
        assert_relative_eq!(
            at(1, [1000, 100]),
            pooled * 3e-5 / 2.5e-5,
            max_relative = 1e-12
        );
    }

    #[test]
    fn times_scale_with_the_speed_reference() {
        let f = BlocksFile::parse(FILE, "b.toml").expect("valid file");
        let e = f.at_speed(0.02).expect_err("no reference in the file");
        assert!(
            e.to_string().contains("kernel `stencil` (1 copy at once)"),
            "{e}"
        );
        let with = FILE.replace("calls = 20\n", "calls = 20\nreference = 0.010\n");
        let f = BlocksFile::parse(&with, "b.toml").expect("valid file");
        // The machine 1.2 times slower than at the calibration: measured
        // and modelled times 1.2 times longer, first calls too.
        let g = f.at_speed(0.012).expect("references present");
        let k = &g.kernel_times(1)[0];
        let call = |first| KernelCall {
            rank: 0,
            first,
            uniform: None,
        };
        let t = k.seconds(&[Value::Int(100), Value::Int(100)], call(false));
        assert_relative_eq!(t.expect("measured"), 2.5e-5 * 1.2);
        let t = k.seconds(&[Value::Int(100), Value::Int(100)], call(true));
        assert_relative_eq!(t.expect("measured"), 1e-4 * 1.2);
        let t = k.seconds(&[Value::Int(1000), Value::Int(100)], call(false));
        assert_relative_eq!(t.expect("modelled"), (1e-6 + 2e-9 * 1e5) * 1.2);
        assert_eq!(g.kernels[0].points[0].reference, Some(0.012));
        assert!(f.at_speed(0.0).is_err() && f.at_speed(f64::NAN).is_err());
    }

    #[test]
    fn a_round_trip_keeps_everything() {
        let f = BlocksFile::parse(FILE, "b.toml").expect("valid file");
        let text = f.to_toml().expect("serialisable");
        assert_eq!(BlocksFile::parse(&text, "again").expect("valid again"), f);
    }

    #[test]
    fn errors_name_the_kernel_and_key() {
        let bad = FILE.replace("args = [100, 100]", "args = [100]");
        let e = BlocksFile::parse(&bad, "b.toml").expect_err("wrong arity");
        assert!(
            e.to_string().contains("kernel `stencil`, point 1: `args`"),
            "{e}"
        );
        let bad = FILE.replace("seconds = 2.5e-5", "seconds = -1.0");
        let e = BlocksFile::parse(&bad, "b.toml").expect_err("negative");
        assert!(e.to_string().contains("`seconds` is -1"), "{e}");
        let bad = FILE.replace("terms = [\"1\", \"P\"]", "terms = [\"1\", \"depth\"]");
        let e = BlocksFile::parse(&bad, "b.toml").expect_err("unknown term");
        assert!(e.to_string().contains("unknown term `depth`"), "{e}");
        let bad = FILE.replace("cflags", "flags");
        let e = BlocksFile::parse(&bad, "b.toml").expect_err("unknown key");
        assert!(e.to_string().contains("flags"), "{e}");
    }
}
