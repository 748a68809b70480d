//! Analyses of a finished run: the critical path through the timeline and
//! the cycle of waits behind a deadlock.

use sim_core::SimReport;
use sim_core::engine::BlockedRank;

/// One step of the critical path, latest first.
#[derive(Debug, Clone, PartialEq)]
pub struct PathStep {
    pub rank: u32,
    pub what: String,
    pub line: u32,
    pub start: f64,
    pub end: f64,
}

/// The critical path: from the rank that finishes last, walk back through
/// its intervals; where a communication interval ended because a message
/// arrived that was sent after the interval began, continue on the sender
/// at the moment it sent. Needs the timeline (`SimConfig::trace_limit`).
/// The timeline is indexed per rank first, so a step costs a binary search.
pub fn critical_path(rep: &SimReport) -> Vec<PathStep> {
    use sim_core::engine::TraceEvent;
    let Some((mut rank, _)) = rep
        .ranks
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.finish.total_cmp(&b.1.finish))
        .map(|(r, s)| (r as u32, s))
    else {
        return Vec::new();
    };
    let n = rep.ranks.len();
    // Per rank: intervals (start, end, what, comm, line, seq) by end, then
    // start; messages received (received, sent, source, seq) by arrival.
    // `seq` is the event's place in the timeline, which the engine writes
    // in the order things happen: an interval when its operation returns,
    // a message when a receive matches it. A message matched at the very
    // moment an operation ends, by the next operation, comes after that
    // interval, so it cannot be taken for what released it. Stable sorts
    // keep the timeline's order among equals.
    type Iv<'a> = (f64, f64, &'a String, bool, u32, usize);
    let mut intervals: Vec<Vec<Iv>> = vec![Vec::new(); n];
    let mut incoming: Vec<Vec<(f64, f64, u32, usize)>> = vec![Vec::new(); n];
    for (seq, e) in rep.trace.iter().enumerate() {
        match e {
            TraceEvent::Interval {
                rank,
                start,
                end,
                what,
                comm,
                line,
                ..
            } => {
                if let Some(v) = intervals.get_mut(*rank as usize) {
                    v.push((*start, *end, what, *comm, *line, seq));
                }
            }
            TraceEvent::Message {
                src,
                dst,
                sent,
                received,
                ..
            } => {
                if let Some(v) = incoming.get_mut(*dst as usize) {
                    v.push((*received, *sent, *src, seq));
                }
            }
        }
    }
    for v in &mut intervals {
        v.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.total_cmp(&b.0)));
    }
    for v in &mut incoming {
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let mut t = rep.ranks[rank as usize].finish;
    let mut path = Vec::new();
    let eps = 1e-15;
    // A bound on the walk (each step moves back in time or to a sender).
    for _ in 0..1_000_000 {
        if t <= eps {
            break;
        }
        // The interval of this rank that holds t (the walk came to a
        // sender in the middle of its operation, e.g. a collective whose
        // algorithm sends after waiting for other messages), else the last
        // one that ends by t and takes time before it (one of no length at
        // t would hold the walk in place).
        let list = &intervals[rank as usize];
        let ended = list.partition_point(|iv| iv.1 <= t + eps);
        let (start, end, what, comm, line, seq, inside) =
            match list.get(ended).filter(|iv| iv.0 < t - eps) {
                Some(&(start, _, what, comm, line, seq)) => (start, t, what, comm, line, seq, true),
                None => {
                    let Some(&(start, end, what, comm, line, seq)) =
                        list[..ended].iter().rev().find(|iv| iv.0 < t - eps)
                    else {
                        break;
                    };
                    if end < t - eps {
                        path.push(PathStep {
                            rank,
                            what: "(local work between operations)".into(),
                            line: 0,
                            start: end,
                            end: t,
                        });
                    }
                    (start, end, what, comm, line, seq, false)
                }
            };
        if comm {
            // The message that released it: received by `end` within the
            // interval, sent after it began, the latest such. Inside a
            // collective these are the messages of its algorithm, so the
            // walk goes on to the rank whose late arrival held it.
            // In the middle of an operation (the walk came here to a send),
            // a message matched at that very moment was matched by the same
            // step that sends, so it did not release the send: only earlier
            // ones count.
            let msgs = &incoming[rank as usize];
            let arrived = if inside {
                msgs.partition_point(|m| m.0 < end - eps)
            } else {
                msgs.partition_point(|m| m.0 <= end + eps)
            };
            let release = msgs[..arrived]
                .iter()
                .rev()
                .take_while(|m| m.0 >= start - eps)
                .find(|m| m.1 > start + eps && m.1 < end - eps && m.3 < seq);
            if let Some(&(_, sent, src, _)) = release {
                path.push(PathStep {
                    rank,
                    what: format!("{what}: waits for rank {src}'s message"),
                    line,
                    start: sent,
                    end,
                });
                rank = src;
                t = sent;
                continue;
            }
        }
        path.push(PathStep {
            rank,
            what: what.clone(),
            line,
            start,
            end,
        });
        t = start;
    }
    path
}

/// The critical path earliest first, with consecutive steps of one rank
/// and operation merged.
pub fn merge_path(path: &[PathStep]) -> Vec<PathStep> {
    let mut merged: Vec<PathStep> = Vec::new();
    for s in path.iter().rev() {
        match merged.last_mut() {
            Some(m) if m.rank == s.rank && m.what == s.what && m.line == s.line => m.end = s.end,
            _ => merged.push(s.clone()),
        }
    }
    merged
}

/// Steps of the critical path that [`path_text`] lists.
const MAX_PATH_LINES: usize = 200;

/// The critical path as text, earliest first, with consecutive steps of one
/// rank and operation merged ([`merge_path`]); `file` names the program in
/// the source positions.
pub fn path_text(path: &[PathStep], file: &str) -> String {
    use std::fmt::Write as _;
    let merged = merge_path(path);
    let mut out =
        String::from("critical path (what determines the predicted time), earliest first:\n");
    for s in merged.iter().take(MAX_PATH_LINES) {
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
    if merged.len() > MAX_PATH_LINES {
        let _ = writeln!(out, "  ... {} more steps", merged.len() - MAX_PATH_LINES);
    }
    let by_op = path_by_operation(path);
    let total: f64 = by_op.iter().map(|(_, s)| s).sum();
    if total > 0.0 {
        let _ = writeln!(out, "time on the critical path by operation:");
        for (what, s) in &by_op {
            let _ = writeln!(out, "  {:>14.9} s {:>6.1}%  {what}", s, 100.0 * s / total);
        }
    }
    out
}

/// The critical path's time per operation (a step's `what` up to its
/// `: waits for ...`: a collective's waits for its algorithm's messages
/// count as the collective's), the most first; ties by name.
pub fn path_by_operation(path: &[PathStep]) -> Vec<(String, f64)> {
    let mut sums: Vec<(String, f64)> = Vec::new();
    for s in path {
        let op = s.what.split(": waits for").next().unwrap_or(&s.what);
        let d = (s.end - s.start).max(0.0);
        match sums.iter_mut().find(|(w, _)| w == op) {
            Some((_, v)) => *v += d,
            None => sums.push((op.to_owned(), d)),
        }
    }
    sums.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    sums
}

/// A cycle in the wait-for graph (rank -> the specific ranks it waits on),
/// if there is one among the blocked ranks.
pub fn find_cycle(blocked: &[BlockedRank]) -> Option<Vec<u32>> {
    use std::collections::HashMap;
    let index: HashMap<u32, usize> = blocked
        .iter()
        .enumerate()
        .map(|(i, b)| (b.rank, i))
        .collect();
    let succ = |i: usize| -> Vec<usize> {
        blocked[i]
            .waits
            .iter()
            .filter_map(|w| w.peer.and_then(|p| index.get(&p).copied()))
            .collect()
    };
    // Iterative DFS with colours: 0 new, 1 on the stack, 2 done.
    let mut colour = vec![0u8; blocked.len()];
    for start in 0..blocked.len() {
        if colour[start] != 0 {
            continue;
        }
        let mut stack: Vec<(usize, Vec<usize>)> = vec![(start, succ(start))];
        colour[start] = 1;
        while let Some((node, next)) = stack.last_mut() {
            let node = *node;
            match next.pop() {
                Some(n) if colour[n] == 1 => {
                    let pos = stack.iter().position(|(x, _)| *x == n).unwrap_or(0);
                    return Some(stack[pos..].iter().map(|(x, _)| blocked[*x].rank).collect());
                }
                Some(n) if colour[n] == 0 => {
                    colour[n] = 1;
                    let s = succ(n);
                    stack.push((n, s));
                }
                Some(_) => {}
                None => {
                    colour[node] = 2;
                    stack.pop();
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::{PathStep, path_text};

    fn step(rank: u32, what: &str, line: u32, start: f64, end: f64) -> PathStep {
        PathStep {
            rank,
            what: what.to_owned(),
            line,
            start,
            end,
        }
    }

    #[test]
    fn the_path_as_text_merges_steps_and_names_lines() {
        // Latest first, as `critical_path` gives it.
        let path = [
            step(1, "recv", 0, 2.0, 3.0),
            step(0, "compute", 4, 1.0, 2.0),
            step(0, "compute", 4, 0.0, 1.0),
        ];
        let t = path_text(&path, "a.mpl");
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 6, "{t}");
        // The time per operation, the most first.
        assert_eq!(lines[3], "time on the critical path by operation:");
        assert_eq!(lines[4], "     2.000000000 s   66.7%  compute");
        assert_eq!(lines[5], "     1.000000000 s   33.3%  recv");
        assert!(lines[1].ends_with("compute at a.mpl:4"), "{t}");
        assert!(
            lines[1].contains("0.000000000 s ..    2.000000000 s"),
            "{t}"
        );
        assert!(lines[2].ends_with("s  recv"), "{t}");
    }
}
