//! What two messages crossing each other cost: fitting the adapter's
//! per-message occupancy `g` and the duplex overlap `d` of a network from a
//! PingPing table (IMB PingPing, or any table of two ranks on two nodes
//! sending to each other at once), given the ping-pong fit.
//!
//! **Which pattern measures what.** A ping-pong gives `o_s + L + o_r` and
//! `G` per size range, and nothing about `g` (consecutive uses of an
//! adapter in a ping-pong are a whole one-way time apart) or about how the
//! two directions of an adapter share it (only one direction is ever busy).
//! In a PingPing both directions of both adapters are busy at once: two
//! equal messages crossing take `(1 − d)·(g + n·G − L)` longer than one in
//! the model ([`models::LogGpRun`]'s `transfer`), so small messages show
//! `g` (where `n·G` is negligible) and large ones `d` (where `n·G`
//! dominates). This is the split Netgauge's PRTT method makes between
//! patterns (Hoefler, Lichei, Rehm, "Low-Overhead LogGP Parameter
//! Assessment for Modern Interconnection Networks", IPDPS 2007: a pattern
//! per parameter, g from back-to-back messages), here with PingPing as the
//! pattern that loads both directions.
//!
//! **Method.** The two parameters are chosen to minimise the mean absolute
//! log ratio of simulated to measured PingPing times over every measured
//! size (a relative error that weighs a 1 µs miss at 0 bytes like a 1 ms
//! miss at 1 MB): a grid over `g ∈ [0, 2·t_max_small]` and `d ∈ [0, 1]`,
//! then two finer grids around the best point. Each candidate is judged by
//! simulating the benchmark's loop (isend, recv, wait; the engine's
//! protocols, rendezvous included) on the machine with those parameters, so
//! the fit and the model cannot disagree. Ties keep the smaller `g` and
//! the larger `d` (LogGP's defaults: no occupancy, full duplex). When the
//! best `d` is 1 (full duplex), crossing messages do not meet at any
//! adapter, so PingPing says nothing about `g`: it is then set to 0 and
//! reported as not identified.

use models::{Duplex, LogGpMachine};
use rayon::prelude::*;
use sim_core::engine::PrintLine;

use crate::Error;

/// PingPing as IMB times it, on ranks 0 and 1: two warm-up exchanges, then
/// `reps` of (isend, recv, wait), time per repetition in seconds.
const PINGPING: &str = "\
param bytes = 0
param reps = 40
if rank < 2 {
    for i in 0 .. 2 {
        let w = isend(to: 1 - rank, bytes: bytes)
        recv(from: 1 - rank, bytes: bytes)
        wait(w)
    }
    let t0 = wtime()
    for i in 0 .. reps {
        let r = isend(to: 1 - rank, bytes: bytes)
        recv(from: 1 - rank, bytes: bytes)
        wait(r)
    }
    print((wtime() - t0) / reps)
}
";

/// PingPong as IMB times it: rank 0 sends, rank 1 sends back; half the
/// round trip, seconds.
const PINGPONG: &str = "\
param bytes = 0
param reps = 40
fn exchange() {
    if rank == 0 {
        send(to: 1, bytes: bytes)
        recv(from: 1, bytes: bytes)
    } else {
        recv(from: 0, bytes: bytes)
        send(to: 0, bytes: bytes)
    }
}
if rank < 2 {
    for i in 0 .. 2 { exchange() }
    let t0 = wtime()
    for i in 0 .. reps { exchange() }
    print((wtime() - t0) / (2 * reps))
}
";

/// The overhead splits a joint fit tries: `o_s + o_r` from 10% to 90% of
/// the smallest ping-pong time, in steps of 5%.
pub const MIN_OVERHEAD_FRACTION: f64 = 0.1;
/// See [`MIN_OVERHEAD_FRACTION`].
pub const MAX_OVERHEAD_FRACTION: f64 = 0.9;
/// See [`MIN_OVERHEAD_FRACTION`].
pub const OVERHEAD_FRACTION_STEP: f64 = 0.05;

/// One measured PingPing point against the fitted model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CrossingPoint {
    pub bytes: u64,
    /// Measured seconds per repetition.
    pub measured: f64,
    /// Simulated with the fitted `g` and `d`.
    pub predicted: f64,
    /// Simulated with `g = 0` and the duplex the ping-pong fit assumed.
    pub before: f64,
}

/// The fitted crossing parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct CrossingFit {
    /// g, seconds: the adapter's per-message occupancy at both ends.
    pub gap: f64,
    /// Whether the table determined `g` (false: full duplex, `g = 0`
    /// assumed).
    pub gap_identified: bool,
    /// The duplex overlap share.
    pub duplex: Duplex,
    /// Whether the duplex was fitted (false: given by the user).
    pub duplex_fitted: bool,
    /// `o_s + o_r` as a fraction of the smallest ping-pong time, when it was
    /// fitted (`None`: given or the default).
    pub overhead_fraction: Option<f64>,
    /// The ping-pong simulated with the fitted parameters: median and max
    /// |relative error|.
    pub pingpong_error: (f64, f64),
    pub points: Vec<CrossingPoint>,
}

impl CrossingFit {
    /// Median and maximum |relative error| of the fitted model.
    pub fn error(&self) -> (f64, f64) {
        summary(self.points.iter().map(|p| (p.predicted, p.measured)))
    }

    /// Median and maximum |relative error| before (g = 0, assumed duplex).
    pub fn error_before(&self) -> (f64, f64) {
        summary(self.points.iter().map(|p| (p.before, p.measured)))
    }

    /// Lines for the fit report: [`CrossingFit::summary`] and a line per
    /// point.
    pub fn describe(&self) -> Vec<String> {
        let mut lines = self.summary();
        for p in &self.points {
            lines.push(format!(
                "  {:>8} B: measured {:.4} us, model {:.4} us ({:+.1}%)",
                p.bytes,
                p.measured * 1e6,
                p.predicted * 1e6,
                (p.predicted - p.measured) / p.measured * 100.0
            ));
        }
        lines
    }

    /// What was fitted, from which table, and how well (for the machine
    /// file's header).
    pub fn summary(&self) -> Vec<String> {
        let (median, max) = self.error();
        let (median0, max0) = self.error_before();
        let mut lines = vec![format!(
            "crossing (PingPing, {} points): model vs measured median |error| {:.1}%, max {:.1}% \
             (with g = 0 and the assumed duplex: {:.1}%, {:.1}%)",
            self.points.len(),
            median * 100.0,
            max * 100.0,
            median0 * 100.0,
            max0 * 100.0
        )];
        lines.push(if self.gap_identified {
            format!(
                "  g = {:.4} us per message at each adapter: fitted to PingPing (small messages)",
                self.gap * 1e6
            )
        } else {
            "  g = 0: not identified (full duplex: crossing messages never share an adapter \
             direction), assumed"
                .to_owned()
        });
        if let Some(f) = self.overhead_fraction {
            lines.push(format!(
                "  o_s + o_r = {:.0}% of the smallest ping-pong time: fitted to PingPong and \
                 PingPing together{} (the split of o_s + L + o_r moves the crossing cost; \
                 ping-pong with these parameters: median |error| {:.1}%, max {:.1}%)",
                f * 100.0,
                if f >= MAX_OVERHEAD_FRACTION - 1e-9 {
                    ", at the top of the range searched (10-90%: the wire takes some of the time)"
                } else {
                    ""
                },
                self.pingpong_error.0 * 100.0,
                self.pingpong_error.1 * 100.0
            ));
        }
        lines.push(if self.duplex_fitted {
            format!(
                "  duplex overlap d = {}: fitted to PingPing (large messages; 0 half, 1 full)",
                self.duplex.as_str()
            )
        } else {
            format!("  duplex {}: as given, not fitted", self.duplex.as_str())
        });
        lines
    }
}

fn summary(pairs: impl Iterator<Item = (f64, f64)>) -> (f64, f64) {
    let mut errors: Vec<f64> = pairs.map(|(p, m)| ((p - m) / m).abs()).collect();
    let max = errors.iter().copied().fold(0.0, f64::max);
    (crate::validate::median(&mut errors), max)
}

/// The machine with `g` in every segment of the network and `duplex`.
fn variant(machine: &LogGpMachine, gap: f64, duplex: Duplex) -> Result<LogGpMachine, Error> {
    let mut spec = machine.spec().clone();
    spec.network.gap = gap;
    for segment in &mut spec.network.segments {
        segment.params.gap = gap;
    }
    spec.network.duplex = duplex;
    LogGpMachine::new(spec).map_err(|e| Error::Input(e.to_string()))
}

/// Simulated PingPing seconds per repetition at each size, on `machine`
/// (ranks 0 and 1 on two nodes).
fn simulate(
    program: &sim_core::ir::Program,
    machine: &LogGpMachine,
    sizes: &[u64],
    ranks: &[u32],
) -> Result<Vec<f64>, Error> {
    use sim_core::model::MachineDesc as _;
    sizes
        .iter()
        .map(|&bytes| {
            let mut program = program.clone();
            frontend::apply_param_overrides(&mut program, &[("bytes".into(), bytes.to_string())])
                .map_err(|e| Error::Input(e.to_string()))?;
            let mut times: Vec<f64> = Vec::new();
            let mut sink = |line: PrintLine| {
                if ranks.contains(&line.rank)
                    && let Ok(t) = line.text.trim().parse::<f64>()
                {
                    times.push(t);
                }
            };
            let cfg = crate::scenario::Limits::default().config(2);
            sim_core::simulate(&program, &mut machine.start(2), cfg, &mut sink)
                .map_err(|e| Error::Input(format!("the PingPing simulation failed: {e}")))?;
            // t_avg over the ranks asked for, as IMB reports.
            Ok(times.iter().sum::<f64>() / times.len().max(1) as f64)
        })
        .collect()
}

/// Mean |ln(predicted / measured)|.
fn cost(predicted: &[f64], measured: &[f64]) -> f64 {
    predicted
        .iter()
        .zip(measured)
        .map(|(p, m)| (p / m).ln().abs())
        .sum::<f64>()
        / measured.len().max(1) as f64
}

/// The ping-pong fit for one overhead split: `o_s + o_r` as a fraction of
/// the smallest message's time, and the machine it makes.
pub struct Split {
    pub fraction: f64,
    pub machine: LogGpMachine,
}

/// The tables of a joint fit and what is fixed.
pub struct Tables<'a> {
    pub pingpong: &'a calibrate::Table,
    pub pingping: &'a calibrate::Table,
    /// A duplex given by the user: then it is not fitted.
    pub fixed_duplex: Option<Duplex>,
}

/// The joint fit's choice: the overhead split (index into the splits
/// given), `g` and `d`.
pub struct Joint {
    pub split: usize,
    pub fit: CrossingFit,
}

/// Fits `g`, the duplex overlap (unless fixed) and the overhead split
/// (among `splits`, each a ping-pong fit with its machine of one rank per
/// node) jointly to the PingPong and PingPing tables: the candidate whose
/// simulated PingPong and PingPing are closest to the measured ones (mean
/// |log ratio| per table, the two tables weighted alike).
pub fn fit_joint(splits: &[Split], tables: &Tables<'_>) -> Result<Joint, Error> {
    if tables.pingping.points.is_empty() || tables.pingpong.points.is_empty() {
        return Err(Error::Input(
            "the PingPing and PingPong tables need points".into(),
        ));
    }
    if splits.is_empty() {
        return Err(Error::Input("no overhead split to fit".into()));
    }
    let pingping = crate::scenario::compile("<PingPing>", PINGPING)?;
    let pingpong = crate::scenario::compile("<PingPong>", PINGPONG)?;
    let ping_sizes: Vec<u64> = tables.pingping.points.iter().map(|p| p.bytes).collect();
    let ping_measured: Vec<f64> = tables.pingping.points.iter().map(|p| p.seconds).collect();
    let pong_sizes: Vec<u64> = tables.pingpong.points.iter().map(|p| p.bytes).collect();
    let pong_measured: Vec<f64> = tables.pingpong.points.iter().map(|p| p.seconds).collect();
    // The scale of g: the crossing time of the smallest messages.
    let small = ping_measured.iter().copied().fold(f64::INFINITY, f64::min);
    let evaluate =
        |split: usize, gap: f64, overlap: f64| -> Result<(f64, Vec<f64>, Vec<f64>), Error> {
            let duplex = Duplex::partial(overlap.clamp(0.0, 1.0)).unwrap_or(Duplex::FULL);
            let m = variant(&splits[split].machine, gap.max(0.0), duplex)?;
            let ping = simulate(&pingping, &m, &ping_sizes, &[0, 1])?;
            let pong = simulate(&pingpong, &m, &pong_sizes, &[0])?;
            let c = cost(&ping, &ping_measured) + cost(&pong, &pong_measured);
            Ok((c, ping, pong))
        };
    let overlaps = |center: f64, step: f64, count: i32| -> Vec<f64> {
        match tables.fixed_duplex {
            Some(d) => vec![d.overlap()],
            None => (-count..=count)
                .map(|k| (center + f64::from(k) * step).clamp(0.0, 1.0))
                .collect(),
        }
    };
    // (cost, split, g, d); a grid, then two finer grids around the best.
    let mut best = (f64::INFINITY, 0_usize, 0.0, 1.0);
    let (mut gap_step, mut d_step) = (2.0 * small / 12.0, 0.2);
    let mut candidates: Vec<(usize, f64, f64)> = (0..splits.len())
        .flat_map(|split| {
            (0..=12).flat_map(move |k| {
                overlaps(0.5, 0.2, 3)
                    .into_iter()
                    .map(move |d| (split, f64::from(k) * gap_step, d))
            })
        })
        .collect();
    for round in 0..3 {
        candidates.sort_by(|a, b| {
            a.0.cmp(&b.0)
                .then(a.1.total_cmp(&b.1))
                .then(b.2.total_cmp(&a.2))
        });
        candidates.dedup();
        let costs: Vec<Result<f64, Error>> = candidates
            .par_iter()
            .map(|&(split, g, d)| evaluate(split, g, d).map(|(c, _, _)| c))
            .collect();
        // In order (g ascending, d descending): a later candidate must be
        // better by more than rounding to win, so ties keep small g, large d.
        for (&(split, g, d), c) in candidates.iter().zip(costs) {
            let c = c?;
            if c < best.0 * (1.0 - 1e-9) {
                best = (c, split, g, d);
            }
        }
        if round == 2 {
            break;
        }
        gap_step /= 4.0;
        d_step /= 4.0;
        let (_, s0, g0, d0) = best;
        // The neighbouring splits too.
        let lo = s0.saturating_sub(1);
        let hi = (s0 + 1).min(splits.len() - 1);
        candidates = (lo..=hi)
            .flat_map(|split| {
                (-4..=4).flat_map(move |k| {
                    overlaps(d0, d_step, 4)
                        .into_iter()
                        .map(move |d| (split, (g0 + f64::from(k) * gap_step).max(0.0), d))
                })
            })
            .collect();
    }
    let (_, split, mut gap, overlap) = best;
    let full = overlap >= 1.0;
    if full {
        gap = 0.0;
    }
    let duplex = Duplex::partial(overlap).unwrap_or(Duplex::FULL);
    let (_, predicted, pong) = evaluate(split, gap, overlap)?;
    let assumed = tables
        .fixed_duplex
        .unwrap_or(splits[split].machine.network().duplex);
    let (_, before, _) = evaluate(split, 0.0, assumed.overlap())?;
    let points = tables
        .pingping
        .points
        .iter()
        .zip(predicted.iter().zip(before))
        .map(|(p, (&predicted, before))| CrossingPoint {
            bytes: p.bytes,
            measured: p.seconds,
            predicted,
            before,
        })
        .collect();
    let pingpong_error = summary(pong.iter().copied().zip(pong_measured.iter().copied()));
    Ok(Joint {
        split,
        fit: CrossingFit {
            gap,
            gap_identified: !full,
            duplex,
            duplex_fitted: tables.fixed_duplex.is_none(),
            overhead_fraction: (splits.len() > 1).then_some(splits[split].fraction),
            pingpong_error,
            points,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MACHINE: &str = r#"
name = "crossing-test"
model = "hardware"
[node]
memcpy = "1 GB/s"
[network]
latency = "2 us"
send_overhead = "1.5 us"
recv_overhead = "1.5 us"
bandwidth = "100 MB/s"
eager_limit = "64 KiB"
control_bytes = "64 B"
"#;

    fn table(sizes: &[u64], seconds: &[f64]) -> calibrate::Table {
        calibrate::Table {
            points: sizes
                .iter()
                .zip(seconds)
                .map(|(&bytes, &seconds)| calibrate::Point { bytes, seconds })
                .collect(),
            measure: calibrate::Measure::PingPong,
            format: calibrate::Format::Csv,
            origin: "made by the model".into(),
        }
    }

    /// Tables made by the model with g = 3 us and d = 0.4 give back g and
    /// d: the fit inverts the model it simulates.
    #[test]
    fn the_fit_recovers_the_parameters_that_made_the_tables() {
        let base = LogGpMachine::from_toml_str(MACHINE, "crossing.toml").expect("test machine");
        let truth = variant(&base, 3e-6, Duplex::partial(0.4).expect("in range")).expect("valid");
        let sizes: Vec<u64> = [0, 16, 256, 4096, 32768, 262_144].to_vec();
        let ping = compile_program(PINGPING);
        let pong = compile_program(PINGPONG);
        let ping_times = simulate(&ping, &truth, &sizes, &[0, 1]).expect("simulates");
        let pong_times = simulate(&pong, &truth, &sizes, &[0]).expect("simulates");
        // Crossing costs more than one message, by (1 − d)(g + W − L).
        assert!(
            ping_times[0] > pong_times[0] * 1.2,
            "{ping_times:?} {pong_times:?}"
        );
        let joint = fit_joint(
            &[Split {
                fraction: 0.6,
                machine: base,
            }],
            &Tables {
                pingpong: &table(&sizes, &pong_times),
                pingping: &table(&sizes, &ping_times),
                fixed_duplex: None,
            },
        )
        .expect("fits");
        let fit = joint.fit;
        assert!((fit.gap - 3e-6).abs() < 0.1e-6, "g = {}", fit.gap);
        assert!(
            (fit.duplex.overlap() - 0.4).abs() < 0.02,
            "d = {:?}",
            fit.duplex
        );
        assert!(fit.gap_identified && fit.duplex_fitted);
        assert_eq!(fit.overhead_fraction, None);
        let (median, max) = fit.error();
        assert!(median < 0.005 && max < 0.01, "{median} {max}");
    }

    /// A full-duplex network without per-message occupancy: PingPing is
    /// PingPong, d comes out 1 and g is reported as not identified.
    #[test]
    fn full_duplex_leaves_g_unidentified() {
        let base = LogGpMachine::from_toml_str(MACHINE, "crossing.toml").expect("test machine");
        let sizes: Vec<u64> = [0, 1024, 65_536].to_vec();
        let pong = compile_program(PINGPONG);
        let times = simulate(&pong, &base, &sizes, &[0]).expect("simulates");
        let joint = fit_joint(
            &[Split {
                fraction: 0.6,
                machine: base,
            }],
            &Tables {
                pingpong: &table(&sizes, &times),
                pingping: &table(&sizes, &times),
                fixed_duplex: None,
            },
        )
        .expect("fits");
        assert!(joint.fit.duplex.is_full(), "{:?}", joint.fit.duplex);
        assert_eq!(joint.fit.gap, 0.0);
        assert!(!joint.fit.gap_identified);
    }

    fn compile_program(text: &str) -> sim_core::ir::Program {
        crate::scenario::compile("<test>", text).expect("compiles")
    }
}
