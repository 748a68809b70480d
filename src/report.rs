//! Rendering of predictions and simulation errors (text and JSON).

use std::collections::BTreeMap;
use std::fmt::Write;

use serde_json::json;
use sim_core::engine::{BlockedRank, PendingKind, PrintLine, RankStats, SimError};
use sim_core::ir::Span;
use sim_core::SimReport;

/// Above this many distinct groups the text report summarises the ranks.
const MAX_GROUPS: usize = 32;

pub fn json(
    rep: &SimReport,
    printed: &[PrintLine],
    wall: f64,
    file: &str,
    machine: &str,
    ranks: u32,
) -> serde_json::Value {
    let per_rank: Vec<_> = rep
        .ranks
        .iter()
        .enumerate()
        .map(|(r, s)| {
            json!({
                "rank": r,
                "finish_seconds": s.finish,
                "compute_seconds": s.compute,
                "comm_seconds": s.comm,
                "wait_seconds": s.wait(),
                "messages_sent": s.messages_sent,
                "bytes_sent": s.bytes_sent,
            })
        })
        .collect();
    let output: Vec<_> =
        printed.iter().map(|l| json!({"rank": l.rank, "time_seconds": l.time, "text": l.text})).collect();
    json!({
        "program": file,
        "machine": machine,
        "num_ranks": ranks,
        "predicted_seconds": rep.predicted_seconds,
        "ranks": per_rank,
        "messages": rep.messages,
        "bytes": rep.bytes,
        "events": rep.events,
        "wall_seconds": wall,
        "output": output,
    })
}

fn secs(x: f64) -> String {
    format!("{x:.6}")
}

pub fn text(rep: &SimReport, file: &str, machine: &str, all_ranks: bool) -> String {
    let mut out = String::new();
    let n = rep.ranks.len();
    let _ = writeln!(out, "program:   {file}");
    let _ = writeln!(out, "machine:   {machine}");
    let _ = writeln!(out, "ranks:     {n}");
    let _ = writeln!(out, "predicted run time: {} s", fmt_time(rep.predicted_seconds));
    let _ = writeln!(out, "messages:  {}   bytes: {}", rep.messages, rep.bytes);
    let _ = writeln!(out);
    // Group consecutive ranks whose printed rows are identical.
    let row = |s: &RankStats| {
        format!("{:>14} {:>14} {:>14} {:>14}", secs(s.finish), secs(s.compute), secs(s.comm), secs(s.wait()))
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
            let ranks = if a == b { format!("{a}") } else { format!("{a}-{b}") };
            let _ = writeln!(out, "{ranks:<14} {line} {:>10} {:>14}", s.messages_sent, s.bytes_sent);
        }
    } else {
        // Too many distinct ranks to list: distribution of each column.
        let _ = writeln!(out, "{} distinct rank profiles; distribution over ranks:", groups.len());
        let _ = writeln!(out, "{:<14} {:>14} {:>14} {:>14} {:>14}", "", "finish (s)", "compute (s)", "comm (s)", "wait (s)");
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
        if let Some((r, _)) = rep.ranks.iter().enumerate().max_by(|a, b| a.1.finish.total_cmp(&b.1.finish)) {
            let _ = writeln!(out, "slowest rank: {r} (use --all-ranks or --format json for every rank)");
        }
    }
    out
}

/// Seconds with a readable unit.
pub fn fmt_time(s: f64) -> String {
    if s >= 1.0 || s == 0.0 {
        format!("{s:.6}")
    } else if s >= 1e-3 {
        format!("{s:.9} ({:.3} ms)", s * 1e3)
    } else {
        format!("{s:.12} ({:.3} us)", s * 1e6)
    }
}

/// `file:line:col`, the source line and a caret under the span.
pub fn snippet(file: &str, source: &str, span: Span) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "  --> {file}:{}:{}", span.line, span.col);
    if span.line == 0 {
        return out;
    }
    let Some(text) = source.lines().nth(span.line as usize - 1) else { return out };
    let num = span.line.to_string();
    let pad = " ".repeat(num.len());
    let col = (span.col as usize).saturating_sub(1);
    let width = (span.end.saturating_sub(span.start) as usize).clamp(1, text.len().saturating_sub(col).max(1));
    let _ = writeln!(out, "{pad} |");
    let _ = writeln!(out, "{num} | {text}");
    let lead: String = text.chars().take(col).map(|c| if c == '\t' { '\t' } else { ' ' }).collect();
    let _ = writeln!(out, "{pad} | {lead}{}", "^".repeat(width));
    out
}

fn line_of(source: &str, span: Span) -> String {
    if span.line == 0 {
        return String::new();
    }
    source.lines().nth(span.line as usize - 1).map(|l| l.trim().to_owned()).unwrap_or_default()
}

/// Compresses sorted ranks into `0-3, 7, 9-12`.
pub fn rank_ranges(ranks: &[u32]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < ranks.len() {
        let mut j = i;
        while j + 1 < ranks.len() && ranks[j + 1] == ranks[j] + 1 {
            j += 1;
        }
        parts.push(if i == j { ranks[i].to_string() } else { format!("{}-{}", ranks[i], ranks[j]) });
        i = j + 1;
    }
    parts.join(", ")
}

fn describe_wait(b: &BlockedRank, w: &sim_core::engine::PendingOp, file: &str, source: &str) -> String {
    let op = match w.kind {
        PendingKind::Send => "a send to",
        PendingKind::Recv => "a receive from",
    };
    let peer = match w.peer {
        Some(p) => {
            let rel = i64::from(p) - i64::from(b.rank);
            format!("rank {p} (rank{}{})", if rel < 0 { " - " } else { " + " }, rel.abs())
        }
        None => "any rank".to_owned(),
    };
    let tag = w.tag.map_or("any".to_owned(), |t| t.to_string());
    let mut s = format!(
        "waits for {op} {peer}, tag {tag}, {} bytes, started at {file}:{}:{}: {}",
        w.bytes,
        w.span.line,
        w.span.col,
        line_of(source, w.span)
    );
    if w.peer_finished {
        s.push_str(" [that rank has already finished]");
    }
    if w.kind == PendingKind::Send {
        s.push_str(" [rendezvous: the send waits for a matching receive]");
    }
    s
}

pub fn sim_error(e: &SimError, file: &str, source: &str) -> String {
    let mut out = String::new();
    match e {
        SimError::Runtime { rank, span, message } => {
            let _ = writeln!(out, "error: rank {rank}: {message}");
            out.push_str(&snippet(file, source, *span));
        }
        SimError::KernelWithoutCost { kernel, span } => {
            let _ = writeln!(out, "error: kernel `{kernel}` has no cost and no calibrated time");
            out.push_str(&snippet(file, source, *span));
            let _ = writeln!(
                out,
                "  = help: give it a cost formula in seconds, e.g. `kernel {kernel}(n) cost 2.0e-9 * n`"
            );
        }
        SimError::Config(m) => {
            let _ = writeln!(out, "error: {m}");
        }
        SimError::Runaway { reason, events, time, positions } => {
            let _ = writeln!(out, "error: runaway program: {reason}");
            let _ = writeln!(out, "  after {events} events, at model time {} s", fmt_time(*time));
            let mut by_span: BTreeMap<(u32, u32), Vec<u32>> = BTreeMap::new();
            for (r, s) in positions {
                by_span.entry((s.line, s.col)).or_default().push(*r);
            }
            for ((line, col), ranks) in by_span {
                let span = Span { start: 0, end: 0, line, col };
                let _ = writeln!(
                    out,
                    "  rank(s) {} at {file}:{line}:{col}: {}",
                    rank_ranges(&ranks),
                    line_of(source, span)
                );
            }
        }
        SimError::Deadlock { time, blocked, finished } => {
            let _ = writeln!(
                out,
                "error: deadlock at model time {} s: {} rank(s) blocked, {} finished, no event can make progress",
                fmt_time(*time),
                blocked.len(),
                finished
            );
            // Group ranks blocked the same way (same statement, same waits
            // relative to the rank).
            let mut groups: BTreeMap<String, Vec<u32>> = BTreeMap::new();
            let mut text_of: BTreeMap<String, String> = BTreeMap::new();
            for b in blocked {
                let mut key = format!("{}:{}:{}", b.span.line, b.span.col, b.op);
                let mut body = String::new();
                for w in &b.waits {
                    let rel = w.peer.map(|p| i64::from(p) - i64::from(b.rank));
                    let _ = write!(key, "|{:?}{:?}{:?}{}{}{}", w.kind, rel, w.tag, w.bytes, w.span.line, w.peer_finished);
                    let _ = writeln!(body, "      {}", describe_wait(b, w, file, source));
                }
                groups.entry(key.clone()).or_default().push(b.rank);
                text_of.entry(key).or_insert_with(|| {
                    format!(
                        "in {} at {file}:{}:{}: {}\n{body}",
                        b.op,
                        b.span.line,
                        b.span.col,
                        line_of(source, b.span)
                    )
                });
            }
            let mut ordered: Vec<(String, Vec<u32>)> = groups.into_iter().collect();
            ordered.sort_by_key(|(_, r)| r[0]);
            for (key, ranks) in ordered {
                let what = if ranks.len() == 1 { "rank" } else { "ranks" };
                let _ = write!(out, "  {what} {} blocked {}", rank_ranges(&ranks), text_of[&key]);
            }
        }
    }
    out
}
