//! Rendering of predictions as text (the JSON report is
//! `app::report::Prediction`) and of the critical path.

use std::fmt::Write;

use sim_core::SimReport;
use sim_core::engine::RankStats;

use app::analysis::PathStep;
pub use app::diagnostics::{fmt_time, sim_error};

/// Above this many distinct groups the text report summarises the ranks.
const MAX_GROUPS: usize = 32;

fn secs(x: f64) -> String {
    format!("{x:.6}")
}

pub fn text(rep: &SimReport, file: &str, machine: &str, all_ranks: bool) -> String {
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
    let header = format!(
        "{:<14} {:>14} {:>14} {:>14} {:>14} {:>10} {:>14}",
        "rank(s)", "finish (s)", "compute (s)", "comm (s)", "wait (s)", "msgs/rank", "bytes/rank"
    );
    if all_ranks || groups.len() <= MAX_GROUPS {
        let _ = writeln!(out, "{header}");
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
        // Too many distinct ranks to list: distribution of each column.
        let _ = writeln!(
            out,
            "{} distinct rank profiles; distribution over ranks:",
            groups.len()
        );
        let _ = writeln!(
            out,
            "{:<14} {:>14} {:>14} {:>14} {:>14}",
            "", "finish (s)", "compute (s)", "comm (s)", "wait (s)"
        );
        let cols: [fn(&RankStats) -> f64; 4] =
            [|s| s.finish, |s| s.compute, |s| s.comm, |s| s.wait()];
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
                "slowest rank: {r} (use --all-ranks or --format json for every rank)"
            );
        }
    }
    out
}

/// The critical path as text, earliest first, with consecutive steps of one
/// rank and operation merged.
pub fn critical_path_text(path: &[PathStep], file: &str) -> String {
    let merged = app::analysis::merge_path(path);
    let mut out =
        String::from("critical path (what determines the predicted time), earliest first:\n");
    for s in merged.iter().take(200) {
        let at = if s.line > 0 {
            format!(" at {file}:{}", s.line)
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "  rank {:>5} {:>14.9} s .. {:>14.9} s  {}{at}",
            s.rank, s.start, s.end, s.what
        );
    }
    if merged.len() > 200 {
        let _ = writeln!(out, "  ... {} more steps", merged.len() - 200);
    }
    out
}
