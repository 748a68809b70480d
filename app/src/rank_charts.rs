//! Per-rank pictures of one run for the report page: the breakdown of each
//! rank's time (stacked bars) and the timeline (a Gantt chart, one row per
//! rank), coloured as the ParJava monitor did: green computing, yellow
//! communicating (CPU overheads), red waiting.

use std::fmt::Write as _;

use sim_core::SimReport;
use sim_core::engine::TraceEvent;

use crate::chart::{escape, tick_labels};

pub const COMPUTE: &str = "#43a047";
pub const COMM: &str = "#f4c20d";
pub const WAIT: &str = "#e53935";

/// Above this many ranks the breakdown shows groups of consecutive ranks.
pub const MAX_BARS: u32 = 256;
/// Above this many ranks there is no timeline.
pub const MAX_TIMELINE_RANKS: u32 = 64;

const WIDTH: f64 = 960.0;
/// Left and right margins of the plot area.
const LEFT: f64 = 75.0;
const RIGHT: f64 = 20.0;

/// The start of a chart [`WIDTH`] wide: white background, bold title.
fn open_svg(height: f64, class: &str, title: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="12" class="{class}">"#
    );
    let _ = writeln!(out, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        out,
        r#"<text x="{LEFT}" y="18" font-size="13" font-weight="bold">{}</text>"#,
        escape(title)
    );
    out
}

/// The legend of the three states, at `y`.
fn legend(out: &mut String, y: f64, extra: &[(&str, &str)]) {
    let mut x = LEFT;
    let items = [
        (COMPUTE, "compute"),
        (COMM, "communication (CPU overheads)"),
        (WAIT, "waiting (partners, messages, NIC)"),
    ];
    for (colour, label) in items.iter().chain(extra) {
        let _ = writeln!(
            out,
            r##"<rect x="{x}" y="{}" width="12" height="12" fill="{colour}" stroke="#666" stroke-width="0.5"/><text x="{}" y="{y}">{}</text>"##,
            y - 10.0,
            x + 16.0,
            escape(label)
        );
        x += 24.0 + 6.5 * label.len() as f64;
    }
}

/// Six ticks on a time axis from 0 to `max` seconds, at `y` (labels below).
fn time_ticks(out: &mut String, x_of: impl Fn(f64) -> f64, max: f64, y: f64) {
    let ticks: Vec<f64> = (0..=5).map(|k| max * f64::from(k) / 5.0).collect();
    for (t, label) in ticks.iter().zip(tick_labels(&ticks)) {
        let x = x_of(*t);
        let _ = writeln!(
            out,
            r#"<line x1="{x:.1}" y1="{y}" x2="{x:.1}" y2="{}" stroke="black"/><text x="{x:.1}" y="{}" text-anchor="middle" font-size="10">{label}</text>"#,
            y + 4.0,
            y + 15.0,
        );
    }
}

/// One bar of the breakdown: ranks `first..=last`, their mean compute,
/// comm and wait, and the latest finish among them.
struct Bar {
    first: u32,
    last: u32,
    compute: f64,
    comm: f64,
    wait: f64,
    finish: f64,
}

/// The breakdown chart: one stacked bar per rank, or per group of
/// consecutive ranks (their mean; a black mark at the group's latest
/// finish) above [`MAX_BARS`] ranks. Returns the SVG and, when ranks were
/// grouped, a sentence that says so.
pub fn breakdown_svg(rep: &SimReport) -> (String, Option<String>) {
    let n = rep.ranks.len() as u32;
    let block = n.div_ceil(MAX_BARS).max(1);
    let bars: Vec<Bar> = rep
        .ranks
        .chunks(block as usize)
        .enumerate()
        .map(|(g, c)| {
            let k = c.len() as f64;
            Bar {
                first: g as u32 * block,
                last: g as u32 * block + c.len() as u32 - 1,
                compute: c.iter().map(|s| s.compute).sum::<f64>() / k,
                comm: c.iter().map(|s| s.comm).sum::<f64>() / k,
                wait: c.iter().map(|s| s.wait()).sum::<f64>() / k,
                finish: c.iter().map(|s| s.finish).fold(0.0, f64::max),
            }
        })
        .collect();
    let note = (block > 1).then(|| {
        format!(
            "{n} ranks are shown as {} groups of {block} consecutive ranks: each bar is its group's mean, the black mark its latest finish.",
            bars.len()
        )
    });
    let (top, plot_h) = (30.0, 260.0);
    let base = top + plot_h;
    let height = base + 70.0;
    let max = bars.iter().map(|b| b.finish).fold(0.0, f64::max);
    let max = if max > 0.0 { max } else { 1.0 };
    let y_of = |v: f64| base - v / max * plot_h;
    let slot = (WIDTH - LEFT - RIGHT) / bars.len().max(1) as f64;
    let bar_w = if slot >= 4.0 { slot * 0.8 } else { slot };
    let mut out = open_svg(height, "breakdown", "time per rank (s)");
    for (i, b) in bars.iter().enumerate() {
        let x = LEFT + i as f64 * slot + (slot - bar_w) / 2.0;
        let ranks = if b.first == b.last {
            format!("rank {}", b.first)
        } else {
            format!("ranks {}-{} (mean)", b.first, b.last)
        };
        let tip = format!(
            "{ranks}: compute {:.6} s, communication {:.6} s, waiting {:.6} s; finish {:.6} s",
            b.compute, b.comm, b.wait, b.finish
        );
        let _ = writeln!(out, "<g><title>{}</title>", escape(&tip));
        let mut y = base;
        for (v, colour) in [(b.compute, COMPUTE), (b.comm, COMM), (b.wait, WAIT)] {
            let h = v / max * plot_h;
            if h > 0.0 {
                let _ = writeln!(
                    out,
                    r#"<rect x="{x:.2}" y="{:.2}" width="{bar_w:.2}" height="{h:.2}" fill="{colour}"/>"#,
                    y - h
                );
            }
            y -= h;
        }
        if b.first != b.last {
            let fy = y_of(b.finish);
            let _ = writeln!(
                out,
                r#"<line x1="{x:.2}" y1="{fy:.2}" x2="{:.2}" y2="{fy:.2}" stroke="black" stroke-width="1.5"/>"#,
                x + bar_w
            );
        }
        let _ = writeln!(out, "</g>");
    }
    // Axes: seconds up, ranks across (about eight labels).
    let _ = writeln!(
        out,
        r#"<line x1="{LEFT}" y1="{base}" x2="{}" y2="{base}" stroke="black"/><line x1="{LEFT}" y1="{top}" x2="{LEFT}" y2="{base}" stroke="black"/>"#,
        WIDTH - RIGHT
    );
    let ticks: Vec<f64> = (0..=4).map(|k| max * f64::from(k) / 4.0).collect();
    for (v, label) in ticks.iter().zip(tick_labels(&ticks)) {
        let y = y_of(*v);
        let _ = writeln!(
            out,
            r#"<line x1="{}" y1="{y:.1}" x2="{LEFT}" y2="{y:.1}" stroke="black"/><text x="{}" y="{:.1}" text-anchor="end" font-size="10">{label}</text>"#,
            LEFT - 4.0,
            LEFT - 6.0,
            y + 3.0,
        );
    }
    let step = bars.len().div_ceil(8).max(1);
    for (i, b) in bars.iter().enumerate().step_by(step) {
        let x = LEFT + (i as f64 + 0.5) * slot;
        let _ = writeln!(
            out,
            r#"<text x="{x:.1}" y="{}" text-anchor="middle" font-size="10">{}</text>"#,
            base + 14.0,
            b.first
        );
    }
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" text-anchor="middle">rank</text>"#,
        (LEFT + WIDTH - RIGHT) / 2.0,
        base + 30.0
    );
    legend(&mut out, base + 56.0, &[]);
    out.push_str("</svg>\n");
    (out, note)
}

/// What a timeline pixel shows most of.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Idle,
    Compute,
    Comm,
    Wait,
}

/// A timeline's rows sampled into pixel columns.
struct Pixels {
    /// Per rank and pixel: seconds of compute, comm and wait.
    fill: Vec<[f64; 3]>,
    /// Per rank and pixel: the seconds and trace index of the interval
    /// that contributed most (for the tooltip).
    best: Vec<(f64, usize)>,
    /// Messages: source, destination, sent, received.
    messages: Vec<(u32, u32, f64, f64)>,
}

/// Samples the timeline of `rep` into `cols` pixel columns of `px` seconds
/// each; a communication interval's blocked part is put between the halves
/// of its CPU overheads.
fn pixels(rep: &SimReport, cols: usize, px: f64) -> Pixels {
    let n = rep.ranks.len();
    let mut fill = vec![[0.0f64; 3]; n * cols];
    let mut best = vec![(0.0f64, usize::MAX); n * cols];
    let mut add = |rank: usize, s: f64, e: f64, state: usize, ev: usize| {
        if e <= s || rank >= n {
            return;
        }
        let first = ((s / px) as usize).min(cols - 1);
        let last = ((e / px) as usize).min(cols - 1);
        for c in first..=last {
            let lo = s.max(c as f64 * px);
            let hi = e.min((c + 1) as f64 * px);
            if hi > lo {
                let i = rank * cols + c;
                fill[i][state] += hi - lo;
                if hi - lo > best[i].0 {
                    best[i] = (hi - lo, ev);
                }
            }
        }
    };
    let mut messages = Vec::new();
    for (k, ev) in rep.trace.iter().enumerate() {
        match ev {
            TraceEvent::Interval {
                rank,
                start,
                end,
                comm,
                wait,
                ..
            } => {
                let r = *rank as usize;
                if *comm {
                    let half = ((end - start - wait) / 2.0).max(0.0);
                    add(r, *start, start + half, 1, k);
                    add(r, start + half, end - half, 2, k);
                    add(r, end - half, *end, 1, k);
                } else {
                    add(r, *start, *end, 0, k);
                }
            }
            TraceEvent::Message {
                src,
                dst,
                sent,
                received,
                collective: false,
                ..
            } => messages.push((*src, *dst, *sent, *received)),
            TraceEvent::Message { .. } => {}
        }
    }
    Pixels {
        fill,
        best,
        messages,
    }
}

/// The timeline of a run with at most [`MAX_TIMELINE_RANKS`] ranks: one row
/// per rank over model time. Each pixel column of a row shows the state
/// that filled most of it, so a long run stays a small picture; within a
/// communication call the blocked part is drawn between the halves of its
/// CPU overheads. Message arrows are drawn when there are at most 400.
pub fn timeline_svg(rep: &SimReport) -> String {
    let n = rep.ranks.len();
    let row = (420.0 / n.max(1) as f64).clamp(8.0, 22.0);
    let top = 30.0;
    let base = top + row * n as f64;
    let height = base + 65.0;
    let cols = (WIDTH - LEFT - RIGHT) as usize;
    let end = rep.predicted_seconds.max(1e-300);
    let px = end / cols as f64;
    let Pixels {
        fill,
        best,
        messages,
    } = pixels(rep, cols, px);
    let x_of = |t: f64| LEFT + t / end * (WIDTH - LEFT - RIGHT);
    let mut out = open_svg(height, "timeline", "timeline (model time, s)");
    let _ = writeln!(
        out,
        r##"<defs><marker id="timeline-arrow" viewBox="0 0 6 6" refX="6" refY="3" markerWidth="5" markerHeight="5" orient="auto"><path d="M0,0 L6,3 L0,6 z" fill="#333"/></marker></defs>"##
    );
    let label_size = (row - 2.0).min(11.0);
    for r in 0..n {
        let y = top + r as f64 * row;
        let _ = writeln!(
            out,
            r##"<rect x="{LEFT}" y="{y:.2}" width="{}" height="{:.2}" fill="#eeeeee"/>"##,
            WIDTH - LEFT - RIGHT,
            row - 1.0
        );
        if n <= 32 || r % (n / 16).max(1) == 0 {
            let _ = writeln!(
                out,
                r#"<text x="{}" y="{:.2}" text-anchor="end" font-size="{label_size}">rank {r}</text>"#,
                LEFT - 6.0,
                y + row / 2.0 + label_size / 3.0
            );
        }
        // Runs of pixels of one state.
        let state_of = |c: usize| -> State {
            let [a, b, w] = fill[r * cols + c];
            let idle = px - a - b - w;
            let m = a.max(b).max(w);
            if m <= 0.0 || idle > m {
                State::Idle
            } else if m == w {
                State::Wait
            } else if m == b {
                State::Comm
            } else {
                State::Compute
            }
        };
        let mut c = 0;
        while c < cols {
            let s = state_of(c);
            let mut e = c + 1;
            while e < cols && state_of(e) == s {
                e += 1;
            }
            let colour = match s {
                State::Idle => None,
                State::Compute => Some(COMPUTE),
                State::Comm => Some(COMM),
                State::Wait => Some(WAIT),
            };
            if let Some(colour) = colour {
                let what = match rep.trace.get(best[r * cols + c].1) {
                    Some(TraceEvent::Interval { what, line, .. }) => {
                        format!("{what}, line {line}")
                    }
                    _ => String::new(),
                };
                let state = match s {
                    State::Compute => "compute",
                    State::Comm => "communication",
                    _ => "waiting",
                };
                let tip = format!(
                    "rank {r}, {:.6}-{:.6} s: {state} ({what})",
                    c as f64 * px,
                    e as f64 * px
                );
                let _ = writeln!(
                    out,
                    r#"<rect x="{:.1}" y="{y:.2}" width="{}" height="{:.2}" fill="{colour}"><title>{}</title></rect>"#,
                    LEFT + c as f64,
                    e - c,
                    row - 1.0,
                    escape(&tip)
                );
            }
            c = e;
        }
    }
    if messages.len() <= 400 {
        for (s, d, t0, t1) in &messages {
            let y0 = top + (f64::from(*s) + 0.5) * row;
            let y1 = top + (f64::from(*d) + 0.5) * row;
            let _ = writeln!(
                out,
                r##"<line x1="{:.1}" y1="{y0:.1}" x2="{:.1}" y2="{y1:.1}" stroke="#333" stroke-width="0.7" marker-end="url(#timeline-arrow)"/>"##,
                x_of(*t0),
                x_of(*t1)
            );
        }
    }
    time_ticks(&mut out, x_of, end, base);
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" text-anchor="middle">model time (s)</text>"#,
        (LEFT + WIDTH - RIGHT) / 2.0,
        base + 30.0
    );
    legend(&mut out, base + 55.0, &[("#eeeeee", "other (not traced)")]);
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim_core::engine::RankStats;

    fn report(ranks: usize) -> SimReport {
        let stats = RankStats {
            finish: 2.0,
            compute: 1.0,
            comm: 0.25,
            ..RankStats::default()
        };
        SimReport {
            predicted_seconds: 2.0,
            ranks: vec![stats; ranks],
            trace: vec![
                TraceEvent::Interval {
                    rank: 0,
                    start: 0.0,
                    end: 1.0,
                    what: "compute <k>".into(),
                    comm: false,
                    line: 3,
                    wait: 0.0,
                },
                TraceEvent::Interval {
                    rank: 0,
                    start: 1.0,
                    end: 2.0,
                    what: "recv".into(),
                    comm: true,
                    line: 4,
                    wait: 0.75,
                },
                TraceEvent::Message {
                    src: 1,
                    dst: 0,
                    sent: 1.5,
                    received: 1.75,
                    bytes: 8,
                    collective: false,
                },
            ],
            ..SimReport::default()
        }
    }

    #[test]
    fn breakdown_groups_many_ranks() {
        let (svg, note) = breakdown_svg(&report(4));
        assert!(note.is_none());
        assert_eq!(svg.matches("<title>").count(), 4);
        let (svg, note) = breakdown_svg(&report(1000));
        let note = note.expect("grouped");
        assert!(note.contains("250 groups of 4"), "{note}");
        assert_eq!(svg.matches("<title>").count(), 250);
    }

    #[test]
    fn timeline_colours_and_escapes() {
        let svg = timeline_svg(&report(2));
        for colour in [COMPUTE, COMM, WAIT] {
            assert!(
                svg.contains(&format!(r#"fill="{colour}"><title>"#)),
                "{colour}"
            );
        }
        assert!(svg.contains("compute &lt;k&gt;, line 3"));
        assert!(!svg.contains("<k>"));
        assert!(svg.contains("marker-end"));
    }
}
