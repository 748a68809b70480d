//! Rendering of predictions and simulation errors (text and JSON).

use std::collections::BTreeMap;
use std::fmt::Write;

use serde_json::json;
use sim_core::SimReport;
use sim_core::engine::{BlockedRank, PendingKind, PrintLine, RankStats, SimError};
use sim_core::ir::Span;

use app::analysis::PathStep;

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
    let output: Vec<_> = printed
        .iter()
        .map(|l| json!({"rank": l.rank, "time_seconds": l.time, "text": l.text}))
        .collect();
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

/// Seconds with a readable unit.
pub fn fmt_time(s: f64) -> String {
    if s >= 1.0 || s == 0.0 {
        format!("{s:.6} s")
    } else if s >= 1e-3 {
        format!("{s:.9} s ({:.3} ms)", s * 1e3)
    } else {
        format!("{s:.12} s ({:.3} us)", s * 1e6)
    }
}

/// `file:line:col`, the source line and a caret under the span.
pub fn snippet(file: &str, source: &str, span: Span) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "  --> {file}:{}:{}", span.line, span.col);
    if span.line == 0 {
        return out;
    }
    let Some(text) = source.lines().nth(span.line as usize - 1) else {
        return out;
    };
    let num = span.line.to_string();
    let pad = " ".repeat(num.len());
    let col = (span.col as usize).saturating_sub(1);
    let width = (span.end.saturating_sub(span.start) as usize)
        .clamp(1, text.len().saturating_sub(col).max(1));
    let _ = writeln!(out, "{pad} |");
    let _ = writeln!(out, "{num} | {text}");
    let lead: String = text
        .chars()
        .take(col)
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect();
    let _ = writeln!(out, "{pad} | {lead}{}", "^".repeat(width));
    out
}

fn line_of(source: &str, span: Span) -> String {
    if span.line == 0 {
        return String::new();
    }
    source
        .lines()
        .nth(span.line as usize - 1)
        .map(|l| l.trim().to_owned())
        .unwrap_or_default()
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
        parts.push(if i == j {
            ranks[i].to_string()
        } else {
            format!("{}-{}", ranks[i], ranks[j])
        });
        i = j + 1;
    }
    parts.join(", ")
}

pub fn sim_error(e: &SimError, file: &str, source: &str) -> String {
    let mut out = String::new();
    match e {
        SimError::Runtime {
            rank,
            span,
            message,
        } => {
            let _ = writeln!(out, "error: rank {rank}: {message}");
            out.push_str(&snippet(file, source, *span));
        }
        SimError::KernelWithoutCost { kernel, span } => {
            let _ = writeln!(
                out,
                "error: kernel `{kernel}` has no cost and no calibrated time"
            );
            out.push_str(&snippet(file, source, *span));
            let _ = writeln!(
                out,
                "  = help: give it a cost formula in seconds, e.g. `kernel {kernel}(n) cost 2.0e-9 * n`,\n          or time its native implementation with `parsim calibrate blocks` and run with `--blocks blocks.toml`"
            );
        }
        SimError::Config(m) => {
            let _ = writeln!(out, "error: {m}");
        }
        SimError::Runaway {
            reason,
            events,
            time,
            positions,
        } => {
            let _ = writeln!(out, "error: runaway program: {reason}");
            let _ = writeln!(
                out,
                "  after {events} events, at model time {}",
                fmt_time(*time)
            );
            let mut by_span: BTreeMap<(u32, u32), Vec<u32>> = BTreeMap::new();
            for (r, s) in positions {
                by_span.entry((s.line, s.col)).or_default().push(*r);
            }
            for ((line, col), ranks) in by_span {
                let span = Span {
                    start: 0,
                    end: 0,
                    line,
                    col,
                };
                let _ = writeln!(
                    out,
                    "  rank(s) {} at {file}:{line}:{col}: {}",
                    rank_ranges(&ranks),
                    line_of(source, span)
                );
            }
        }
        SimError::Deadlock {
            time,
            blocked,
            finished,
        } => {
            out.push_str(&deadlock(*time, blocked, *finished, file, source));
        }
    }
    out
}

/// Peers of a group of ranks: `rank + 1`, or the explicit pairs.
fn peer_text(pairs: &[(u32, Option<u32>)], size: u64) -> String {
    if pairs.iter().any(|(_, p)| p.is_none()) {
        return "any rank".to_owned();
    }
    let rel: Vec<i64> = pairs
        .iter()
        .map(|(r, p)| i64::from(p.unwrap_or(*r)) - i64::from(*r))
        .collect();
    if pairs.len() == 1 {
        return format!("rank {}", pairs[0].1.unwrap_or(0));
    }
    if rel.iter().all(|&x| x == rel[0]) {
        let k = rel[0];
        return format!("rank {} {}", if k < 0 { "-" } else { "+" }, k.abs());
    }
    // A shift that wraps around: the same offset modulo the size.
    let size = size.max(1) as i64;
    let wrapped: Vec<i64> = rel.iter().map(|x| x.rem_euclid(size)).collect();
    if wrapped.iter().all(|&x| x == wrapped[0]) {
        let k = wrapped[0];
        return if 2 * k <= size {
            format!("rank (rank + {k}) mod size")
        } else {
            format!("rank (rank - {}) mod size", size - k)
        };
    }
    let shown: Vec<String> = pairs
        .iter()
        .take(8)
        .map(|(r, p)| format!("{r}->{}", p.unwrap_or(*r)))
        .collect();
    let more = if pairs.len() > 8 {
        format!(", ... ({} in all)", pairs.len())
    } else {
        String::new()
    };
    format!("their partners ({}{more})", shown.join(", "))
}

fn deadlock(time: f64, blocked: &[BlockedRank], finished: u32, file: &str, source: &str) -> String {
    let mut out = String::new();
    let total = blocked.len() as u64 + u64::from(finished);
    let _ = writeln!(
        out,
        "error: deadlock at model time {}: {} of {total} rank(s) blocked ({finished} finished) and no message or event can make progress",
        fmt_time(time),
        blocked.len(),
    );
    // Group ranks blocked in the same statement waiting for the same kind of
    // operations (peers may differ).
    let mut groups: BTreeMap<String, Vec<&BlockedRank>> = BTreeMap::new();
    for b in blocked {
        let mut key = format!("{:010}:{:06}:{}:{}", b.span.line, b.span.col, b.op, b.any);
        for w in &b.waits {
            let _ = write!(
                key,
                "|{:?}{}{:?}{}{}",
                w.kind,
                w.peer.is_some(),
                w.tag,
                w.bytes,
                w.span.start
            );
        }
        groups.entry(key).or_default().push(b);
    }
    let mut ordered: Vec<Vec<&BlockedRank>> = groups.into_values().collect();
    ordered.sort_by_key(|g| g[0].rank);
    for g in ordered {
        let ranks: Vec<u32> = g.iter().map(|b| b.rank).collect();
        let first = g[0];
        let what = if ranks.len() == 1 { "rank" } else { "ranks" };
        let _ = writeln!(
            out,
            "  {what} {} blocked in `{}` at {file}:{}:{}",
            rank_ranges(&ranks),
            first.op,
            first.span.line,
            first.span.col
        );
        let _ = writeln!(out, "      | {}", line_of(source, first.span));
        if first.waits.len() > 1 {
            let _ = writeln!(
                out,
                "      {}",
                if first.any {
                    "an OR wait: any one of these would release it"
                } else {
                    "an AND wait: it needs all of these"
                }
            );
        }
        for (i, w) in first.waits.iter().enumerate() {
            let pairs: Vec<(u32, Option<u32>)> =
                g.iter().map(|b| (b.rank, b.waits[i].peer)).collect();
            let peers = peer_text(&pairs, total);
            let tag = w.tag.map_or("any tag".to_owned(), |t| format!("tag {t}"));
            let mut line = match w.kind {
                PendingKind::Recv if w.peer.is_none() => format!(
                    "waits for a message from any rank (an OR wait over all senders), {tag}, up to {} bytes",
                    w.bytes
                ),
                PendingKind::Recv if w.bytes == u64::MAX => {
                    format!("waits for a message from {peers}, {tag}")
                }
                PendingKind::Recv => format!(
                    "waits for a message from {peers}, {tag}, up to {} bytes",
                    w.bytes
                ),
                PendingKind::Probe => format!("waits (probe) for a message from {peers}, {tag}"),
                PendingKind::Send => format!(
                    "waits for {peers} to receive its {} byte message ({tag}): at or above the eager limit, a send waits for the matching receive (rendezvous)",
                    w.bytes
                ),
            };
            if w.in_collective {
                line.push_str(" [a message of the collective's algorithm]");
            }
            if w.comm != 0 {
                let _ = write!(line, " [communicator #{}; ranks are world ranks]", w.comm);
            }
            if w.span != first.span {
                let _ = write!(
                    line,
                    "; started at {file}:{}:{}: {}",
                    w.span.line,
                    w.span.col,
                    line_of(source, w.span)
                );
            }
            let done: Vec<u32> = g
                .iter()
                .filter(|b| b.waits[i].peer_finished)
                .map(|b| b.rank)
                .collect();
            if !done.is_empty() {
                let _ = write!(
                    line,
                    " [the partner of rank(s) {} has already finished]",
                    rank_ranges(&done)
                );
            }
            let _ = writeln!(out, "      {line}");
        }
    }
    if let Some(cycle) = app::analysis::find_cycle(blocked) {
        let shown: Vec<String> = if cycle.len() <= 12 {
            cycle.iter().map(u32::to_string).collect()
        } else {
            let mut v: Vec<String> = cycle[..6].iter().map(u32::to_string).collect();
            v.push("...".to_owned());
            v.extend(cycle[cycle.len() - 3..].iter().map(u32::to_string));
            v
        };
        let _ = writeln!(
            out,
            "  cycle of waits: rank {} -> {} ({} rank(s); each waits for the next)",
            shown.join(" -> "),
            cycle[0],
            cycle.len()
        );
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
