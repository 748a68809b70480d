//! Simulation errors explained for people: run-time errors and runaway
//! programs with the rank and the source line (file:line:col, the line and
//! a caret), deadlocks with every blocked rank grouped, what each waits
//! for, and the cycle of waits; a plugin model's invalid times.

use std::collections::BTreeMap;
use std::fmt::Write;

use sim_core::engine::{BlockedRank, PendingKind, Runaway, SimError};
use sim_core::ir::Span;

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

/// A plugin model that returned invalid times in `run` makes the
/// prediction untrustworthy: the message to stop with.
pub fn plugin_violation(run: &models::AnyRun<'_>) -> Option<String> {
    let v = run.violation()?;
    Some(format!(
        "the plugin model {} returned invalid times {} time(s); the prediction is not trustworthy\n  first: {} {} (used {} instead)",
        v.library,
        run.violations(),
        v.call,
        v.problem,
        v.replacement
    ))
}

/// Compresses sorted ranks (or other counts: task numbers) into
/// `0-3, 7, 9-12`.
pub fn rank_ranges<T>(ranks: &[T]) -> String
where
    T: Copy + PartialEq + std::fmt::Display + std::ops::Add<Output = T> + From<u8>,
{
    let mut parts = Vec::new();
    let mut i = 0;
    while i < ranks.len() {
        let mut j = i;
        while j + 1 < ranks.len() && ranks[j + 1] == ranks[j] + T::from(1) {
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
        }
        | SimError::CollectiveMismatch {
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
            let _ = writeln!(out, "error: runaway program: {}", runaway_text(reason));
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
                // Why the send is not complete: a synchronous send always
                // waits; a standard one waits when it is not buffered (at
                // or above the eager limit in use, which is 0 in a check
                // without buffering).
                PendingKind::Send if first.op == "ssend" => format!(
                    "waits for {peers} to receive its {} byte message ({tag}): a synchronous send completes only once the matching receive has started",
                    w.bytes
                ),
                PendingKind::Send => format!(
                    "waits for {peers} to receive its {} byte message ({tag}): a send that is not buffered (synchronous, or at or above the eager limit in use, which is 0 when checking without buffering) completes only once the matching receive has started (rendezvous)",
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
    if let Some(cycle) = crate::analysis::find_cycle(blocked) {
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

/// Why a program was stopped, naming the `parsim` option behind the limit
/// it reached.
fn runaway_text(reason: &Runaway) -> String {
    match reason {
        Runaway::Events {
            events,
            calls,
            limit,
        } => format!(
            "stopped after {events} events and {calls} communication calls (--max-events {limit} counts both)"
        ),
        Runaway::SimTime { limit } => format!("model time passed {limit} s (--max-sim-time)"),
        Runaway::ZeroTime { rank, blocks } => format!(
            "rank {rank} ran {blocks} basic blocks without its model time advancing and without communicating (--max-zero-time-blocks): a loop that never ends?"
        ),
        Runaway::Loop { .. } => reason.to_string(),
    }
}
