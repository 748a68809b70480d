//! The prediction of one run: as data, what `parsim run --format json`
//! prints, with stable field names (documented in README.md; fields are
//! declared in alphabetical order, the order the output has always had),
//! and as text for people ([`text`], [`NoiseDraws::text`]).

use std::fmt::Write as _;

use serde::Serialize;
use sim_core::SimReport;
use sim_core::engine::{FastForward, PrintLine, RankStats};

use crate::diagnostics::fmt_time;

/// Above this many distinct groups the text report summarises the ranks.
const MAX_GROUPS: usize = 32;

/// One run's prediction.
#[derive(Debug, Serialize)]
pub struct Prediction<'a> {
    pub bytes: u64,
    pub events: u64,
    /// With --fast-forward: what was skipped, or why nothing was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fast_forward: Option<serde_json::Value>,
    pub machine: &'a str,
    pub messages: u64,
    /// With noise draws: every draw's predicted time and their spread.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub noise_draws: Option<NoiseDraws>,
    pub num_ranks: u32,
    /// The `print` output.
    pub output: Vec<OutputLine<'a>>,
    pub predicted_seconds: f64,
    pub program: &'a str,
    pub ranks: Vec<RankRow>,
    pub wall_seconds: f64,
}

/// One rank's figures.
#[derive(Debug, Serialize)]
pub struct RankRow {
    pub bytes_sent: u64,
    pub comm_seconds: f64,
    pub compute_seconds: f64,
    pub finish_seconds: f64,
    pub messages_sent: u64,
    pub rank: usize,
    pub wait_seconds: f64,
}

/// One line of `print` output: the rank, its text, the model time.
#[derive(Debug, Serialize)]
pub struct OutputLine<'a> {
    pub rank: u32,
    pub text: &'a str,
    pub time_seconds: f64,
}

/// The predicted times of noise draws (`run --samples`) and their spread.
#[derive(Debug, Serialize)]
pub struct NoiseDraws {
    pub max: f64,
    pub median: f64,
    pub min: f64,
    pub p5: f64,
    pub p95: f64,
    pub predicted_seconds: Vec<f64>,
    pub seeds: Vec<u64>,
}

impl NoiseDraws {
    /// The draws `(seed, predicted seconds)` and their median, 5th and
    /// 95th percentiles, minimum and maximum.
    pub fn of(draws: &[(u64, f64)]) -> NoiseDraws {
        let [median, p5, p95, min, max] =
            crate::study::spread_of(draws.iter().map(|d| d.1).collect());
        NoiseDraws {
            max,
            median,
            min,
            p5,
            p95,
            predicted_seconds: draws.iter().map(|d| d.1).collect(),
            seeds: draws.iter().map(|d| d.0).collect(),
        }
    }

    /// The spread as a paragraph of the text report (it starts with an
    /// empty line).
    pub fn text(&self) -> String {
        let first = self.seeds.first().copied().unwrap_or(0);
        let last = self.seeds.last().copied().unwrap_or(0);
        format!(
            "\nnoise: {} draws (seeds {first}..{last}): predicted run time median {}, \
             90% of draws in {} .. {}, min {}, max {}\n",
            self.seeds.len(),
            fmt_time(self.median),
            fmt_time(self.p5),
            fmt_time(self.p95),
            fmt_time(self.min),
            fmt_time(self.max),
        )
    }
}

/// What `--fast-forward` did, as JSON: the totals, and each jump.
fn fast_forward_json(f: &FastForward) -> serde_json::Value {
    match f {
        FastForward::Applied { loops } => {
            let jumps: Vec<serde_json::Value> = loops
                .iter()
                .map(|l| {
                    serde_json::json!({
                        "line": l.line,
                        "iterations_skipped": l.iterations,
                        "period_seconds": l.period,
                        "period_spread_seconds": l.period_spread,
                        "bound_seconds": l.bound,
                    })
                })
                .collect();
            serde_json::json!({
                "applied": true,
                "iterations_skipped": f.iterations(),
                "bound_seconds": f.bound(),
                "jumps": jumps,
            })
        }
        FastForward::NotApplied { reason } => {
            serde_json::json!({"applied": false, "reason": reason})
        }
    }
}

/// What `--fast-forward` did, as a line of text (a line per loop).
pub fn fast_forward_text(f: &FastForward, predicted: f64) -> String {
    let share = |b: f64| 100.0 * b / predicted.max(f64::MIN_POSITIVE);
    match f {
        FastForward::Applied { loops } if loops.len() == 1 => {
            let l = &loops[0];
            format!(
                "fast-forward: skipped {} iterations of the loop at line {} on every rank (a \
                 steady period of {}); the result can differ from the full run's by at most {} \
                 ({:.3}%)\n",
                l.iterations,
                l.line,
                fmt_time(l.period),
                fmt_time(l.bound),
                share(l.bound)
            )
        }
        FastForward::Applied { loops } => {
            // Per loop, in the order of their first jump.
            let mut lines: Vec<u32> = Vec::new();
            for l in loops {
                if !lines.contains(&l.line) {
                    lines.push(l.line);
                }
            }
            let mut text = String::new();
            for line in lines {
                let of: Vec<_> = loops.iter().filter(|l| l.line == line).collect();
                let iterations: u64 = of.iter().map(|l| l.iterations).sum();
                let lo = of.iter().map(|l| l.period).fold(f64::INFINITY, f64::min);
                let hi = of.iter().map(|l| l.period).fold(0.0, f64::max);
                let periods = if lo == hi {
                    format!("a steady period of {}", fmt_time(lo))
                } else {
                    format!("steady periods of {} to {}", fmt_time(lo), fmt_time(hi))
                };
                let times = match of.len() {
                    1 => "once".to_owned(),
                    n => format!("in {n} of its runs"),
                };
                text.push_str(&format!(
                    "fast-forward: skipped {iterations} iterations of the loop at line {line} on \
                     every rank, {times} ({periods})\n"
                ));
            }
            text.push_str(&format!(
                "fast-forward: the result can differ from the full run's by at most {} ({:.3}%)\n",
                fmt_time(f.bound()),
                share(f.bound())
            ));
            text
        }
        FastForward::NotApplied { reason } => {
            format!("fast-forward: not applied ({reason}); this is the full run\n")
        }
    }
}

impl<'a> Prediction<'a> {
    /// The prediction of `rep`, a run of `ranks` ranks of the program
    /// `file` on `machine` that took `wall` seconds and printed `printed`.
    pub fn new(
        rep: &SimReport,
        printed: &'a [PrintLine],
        wall: f64,
        file: &'a str,
        machine: &'a str,
        ranks: u32,
    ) -> Prediction<'a> {
        Prediction {
            bytes: rep.bytes,
            events: rep.events,
            fast_forward: rep.fast_forward.as_ref().map(fast_forward_json),
            machine,
            messages: rep.messages,
            noise_draws: None,
            num_ranks: ranks,
            output: printed
                .iter()
                .map(|l| OutputLine {
                    rank: l.rank,
                    text: &l.text,
                    time_seconds: l.time,
                })
                .collect(),
            predicted_seconds: rep.predicted_seconds,
            program: file,
            ranks: rep
                .ranks
                .iter()
                .enumerate()
                .map(|(rank, s)| RankRow {
                    bytes_sent: s.bytes_sent,
                    comm_seconds: s.comm,
                    compute_seconds: s.compute,
                    finish_seconds: s.finish,
                    messages_sent: s.messages_sent,
                    rank,
                    wait_seconds: s.wait(),
                })
                .collect(),
            wall_seconds: wall,
        }
    }
}

/// How a front end names its ways of showing every rank, for the text
/// report's hint when it summarises them.
#[derive(Debug, Clone, Copy)]
pub struct Advice<'a> {
    /// What shows every rank (on the command line: `--all-ranks or
    /// --format json`).
    pub every_rank: &'a str,
}

fn secs(x: f64) -> String {
    format!("{x:.6}")
}

/// The prediction of `rep` (a run of the program `file` on `machine`) as
/// text: the totals, then a row per group of consecutive ranks with
/// identical rows (per rank with `all_ranks`), or above `MAX_GROUPS` (32)
/// groups the distribution over ranks of each column.
pub fn text(
    rep: &SimReport,
    file: &str,
    machine: &str,
    all_ranks: bool,
    advice: &Advice<'_>,
) -> String {
    let mut out = String::new();
    let n = rep.ranks.len();
    let _ = writeln!(out, "program:   {file}");
    let _ = writeln!(out, "machine:   {machine}");
    let _ = writeln!(out, "ranks:     {n}");
    let _ = writeln!(
        out,
        "predicted run time: {}",
        fmt_time(rep.predicted_seconds)
    );
    let _ = writeln!(out, "messages:  {}   bytes: {}", rep.messages, rep.bytes);
    let _ = writeln!(out);
    // Group consecutive ranks whose printed rows are identical.
    let row = |s: &RankStats| {
        format!(
            "{:>14} {:>14} {:>14} {:>14}",
            secs(s.finish),
            secs(s.compute),
            secs(s.comm),
            secs(s.wait())
        )
    };
    let mut groups: Vec<(usize, usize, String, &RankStats)> = Vec::new();
    for (r, s) in rep.ranks.iter().enumerate() {
        let line = row(s);
        match groups.last_mut() {
            Some(g) if !all_ranks && g.2 == line && g.1 + 1 == r => g.1 = r,
            _ => groups.push((r, r, line, s)),
        }
    }
    if all_ranks || groups.len() <= MAX_GROUPS {
        let _ = writeln!(
            out,
            "{:<14} {:>14} {:>14} {:>14} {:>14} {:>10} {:>14}",
            "rank(s)",
            "finish (s)",
            "compute (s)",
            "comm (s)",
            "wait (s)",
            "msgs/rank",
            "bytes/rank"
        );
        for (a, b, line, s) in &groups {
            let ranks = if a == b {
                format!("{a}")
            } else {
                format!("{a}-{b}")
            };
            let _ = writeln!(
                out,
                "{ranks:<14} {line} {:>10} {:>14}",
                s.messages_sent, s.bytes_sent
            );
        }
    } else {
        distribution(&mut out, rep, groups.len(), advice);
    }
    out
}

/// Too many distinct ranks to list: the minimum, median and maximum over
/// ranks of each column, and the slowest rank.
fn distribution(out: &mut String, rep: &SimReport, groups: usize, advice: &Advice<'_>) {
    let _ = writeln!(
        out,
        "{groups} distinct rank profiles; distribution over ranks:"
    );
    let _ = writeln!(
        out,
        "{:<14} {:>14} {:>14} {:>14} {:>14}",
        "", "finish (s)", "compute (s)", "comm (s)", "wait (s)"
    );
    let cols: [fn(&RankStats) -> f64; 4] = [|s| s.finish, |s| s.compute, |s| s.comm, |s| s.wait()];
    for (label, q) in [("min", 0.0), ("median", 0.5), ("max", 1.0)] {
        let mut line = format!("{label:<14}");
        for c in cols {
            let mut v: Vec<f64> = rep.ranks.iter().map(c).collect();
            v.sort_by(f64::total_cmp);
            let i = ((v.len() - 1) as f64 * q).round() as usize;
            let _ = write!(line, " {:>14}", secs(v[i]));
        }
        let _ = writeln!(out, "{line}");
    }
    if let Some((r, _)) = rep
        .ranks
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.finish.total_cmp(&b.1.finish))
    {
        let _ = writeln!(
            out,
            "slowest rank: {r} (use {} for every rank)",
            advice.every_rank
        );
    }
}

#[cfg(test)]
mod tests {
    use sim_core::SimReport;
    use sim_core::engine::RankStats;

    use super::{Advice, NoiseDraws, text};

    const ADVICE: Advice<'static> = Advice {
        every_rank: "the every-rank option",
    };

    fn report(finishes: &[f64]) -> SimReport {
        SimReport {
            predicted_seconds: finishes.iter().copied().fold(0.0, f64::max),
            ranks: finishes
                .iter()
                .map(|&finish| RankStats {
                    finish,
                    ..RankStats::default()
                })
                .collect(),
            ..SimReport::default()
        }
    }

    #[test]
    fn identical_consecutive_ranks_share_a_row() {
        let t = text(&report(&[1.0, 1.0, 2.0, 1.0]), "a.mpl", "m", false, &ADVICE);
        let rows: Vec<&str> = t.lines().skip(7).map(|l| &l[..5]).collect();
        assert_eq!(rows, ["0-1  ", "2    ", "3    "], "{t}");
        let every = text(&report(&[1.0, 1.0]), "a.mpl", "m", true, &ADVICE);
        assert_eq!(every.lines().count(), 9, "{every}");
    }

    #[test]
    fn many_profiles_are_summarised_with_the_advice() {
        let finishes: Vec<f64> = (0..40).map(f64::from).collect();
        let t = text(&report(&finishes), "a.mpl", "m", false, &ADVICE);
        assert!(t.contains("40 distinct rank profiles"), "{t}");
        assert!(
            t.ends_with("slowest rank: 39 (use the every-rank option for every rank)\n"),
            "{t}"
        );
    }

    #[test]
    fn noise_draws_as_text() {
        let t = NoiseDraws::of(&[(3, 1.0), (4, 3.0), (5, 2.0)]).text();
        assert!(
            t.starts_with("\nnoise: 3 draws (seeds 3..5): predicted run time median 2.000000 s"),
            "{t}"
        );
    }
}
