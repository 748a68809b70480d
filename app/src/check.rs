//! `parsim check`: run the skeleton to find deadlocks and MPI usage errors
//! before the job is submitted.
//!
//! Two runs: on the machine as described, and with zero buffering (every
//! send waits for its matching receive, as on an MPI that does not buffer),
//! so that a program that completes only thanks to eager buffering is
//! flagged. Findings: deadlocks (with the wait-for cycle), run-time errors
//! (collective mismatches, invalid ranks or roots, truncation), messages
//! never received, receives never matched, requests never completed, and
//! buffering hazards; wildcard races, optionally explored (ISP-style: each
//! alternative match forced in a run of its own, combinations breadth
//! first within a budget).
//!
//! In ParJava's terms the engine is the set of observers and this module
//! the monitor that turns their observations into findings.

use models::AnyMachine;
use serde::Serialize;
use sim_core::engine::{
    ForcedMatch, Leftover, LeftoverKind, PrintLine, SimConfig, SimError, WildcardMatch,
};
use sim_core::ir::Program;
use sim_core::model::Machine;

/// What a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Ranks blocked forever (with the cycle of waits).
    Deadlock,
    /// Ranks waiting for partners that have already finished.
    WaitOnFinished,
    /// Collectives entered on different communicators (a deadlock), or
    /// different collectives, roots, sizes or ops on one (an error).
    CollectiveMismatch,
    /// A run-time error: invalid rank or tag, truncation, ...
    Error,
    UnreceivedMessage,
    UnmatchedReceive,
    LeakedRequest,
    /// Completes only because sends are buffered (deadlocks with zero
    /// buffering).
    BufferingHazard,
    /// An ANY_SOURCE receive another sender could have matched.
    WildcardRace,
    /// The exploration's budget ran out with matchings left to try.
    ExploreIncomplete,
}

impl Kind {
    /// What the engine found left at the end of a run (reported first).
    pub fn is_leftover(self) -> bool {
        matches!(
            self,
            Kind::UnreceivedMessage | Kind::UnmatchedReceive | Kind::LeakedRequest
        )
    }
}

/// How bad a finding is; the order is the exit code's (deadlock first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Deadlock,
    Error,
    Warning,
}

/// One finding.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub kind: Kind,
    pub severity: Severity,
    pub ranks: Vec<u32>,
    pub line: u32,
    pub col: u32,
    pub message: String,
}

fn leftover_finding(l: &Leftover, file: &str, source: &str) -> Finding {
    let peer = l
        .peer
        .map_or("any rank".to_owned(), |p| format!("rank {p}"));
    let tag = l.tag.map_or("any tag".to_owned(), |t| format!("tag {t}"));
    let comm = if l.comm == 0 {
        String::new()
    } else {
        format!(" on communicator #{}", l.comm)
    };
    let line = source
        .lines()
        .nth(l.span.line.saturating_sub(1) as usize)
        .unwrap_or("")
        .trim();
    let (kind, message) = match l.kind {
        LeftoverKind::UnreceivedMessage => (
            Kind::UnreceivedMessage,
            format!(
                "rank {} sent {} bytes with {tag} to {peer}{comm} that were never received ({file}:{}: {line})",
                l.rank, l.bytes, l.span.line
            ),
        ),
        LeftoverKind::UnmatchedReceive => (
            Kind::UnmatchedReceive,
            format!(
                "rank {} posted a receive from {peer}, {tag}{comm} that no message matched ({file}:{}: {line})",
                l.rank, l.span.line
            ),
        ),
        LeftoverKind::UnwaitedRequest => (
            Kind::LeakedRequest,
            format!(
                "rank {} never waited for or tested its request ({file}:{}: {line}); the rank finished with it pending",
                l.rank, l.span.line
            ),
        ),
    };
    Finding {
        kind,
        severity: Severity::Error,
        ranks: vec![l.rank],
        line: l.span.line,
        col: l.span.col,
        message,
    }
}

/// What the checker found.
#[derive(Debug, Clone)]
pub struct Checked {
    /// In the order found.
    pub findings: Vec<Finding>,
    /// The findings explained for people, in the order found (without the
    /// leftovers, which a report lists first: [`Kind::is_leftover`]).
    pub text: String,
    /// Alternative matchings run, and how many of them were clean.
    pub explored: u32,
    pub clean_runs: u32,
}

impl Checked {
    /// The worst severity found (`None`: clean).
    pub fn worst(&self) -> Option<Severity> {
        self.findings.iter().map(|f| f.severity).min()
    }

    /// The findings for people: the leftovers first, then the others as
    /// found; or, for a clean program `file` on `ranks` ranks, that there
    /// were none.
    pub fn report(&self, file: &str, ranks: u32) -> String {
        let mut text = String::new();
        for f in self.findings.iter().filter(|f| f.kind.is_leftover()) {
            text.push_str(&format!("error: {}\n", f.message));
        }
        text.push_str(&self.text);
        if self.findings.is_empty() {
            text.push_str(&format!(
                "no problems found in {file} on {ranks} ranks (also checked with zero buffering)\n"
            ));
        }
        text
    }
}

/// Checks `program` (its source text `source`, named `file`) on `machine`
/// with the run configuration `cfg` (ranks, limits, kernel times);
/// `explore`: the budget of runs with forced wildcard matches, `None` to
/// only report races; `advice`: how the front end names the option that
/// turns exploring on, for the findings' advice; `progress` is told the
/// number of runs done after each one (the first run, the zero-buffering
/// replay, forced matchings: at most 2 + the exploring budget).
#[expect(
    clippy::too_many_arguments,
    reason = "what is checked, how, and the progress hook"
)]
pub fn check(
    program: &Program,
    file: &str,
    source: &str,
    machine: &AnyMachine,
    cfg: SimConfig,
    explore: Option<u32>,
    advice: &Advice<'_>,
    progress: &dyn Fn(u32),
) -> Checked {
    let cx = Cx {
        program,
        file,
        source,
        machine,
        cfg: run_config(cfg),
        progress,
        runs: std::cell::Cell::new(0),
    };
    let mut out = Out::default();
    // Run 1: the machine as described.
    let first = cx.simulate(cx.cfg.clone(), machine);
    let mut races = Vec::new();
    match &first {
        Ok(rep) => {
            for l in &rep.leftovers {
                out.findings.push(leftover_finding(l, file, source));
            }
            races = rep
                .wildcards
                .iter()
                .filter(|w| !w.alternatives.is_empty())
                .cloned()
                .collect::<Vec<_>>();
        }
        Err(e) => first_run_failed(e, file, source, &mut out),
    }
    let (explored, clean_runs) = explore_races(&cx, &races, explore, advice, &mut out);
    // Run 2: zero buffering, when the first run completed.
    if let Ok(rep) = &first {
        buffering_hazard(&cx, rep, &mut out);
    }
    Checked {
        findings: out.findings,
        text: out.text,
        explored,
        clean_runs,
    }
}

/// The configuration of a check's runs: `cfg` with the wildcard matches
/// recorded (what the checker's races come from).
pub fn run_config(cfg: SimConfig) -> SimConfig {
    SimConfig {
        record_wildcards: true,
        ..cfg
    }
}

/// What every run of one check shares.
struct Cx<'a> {
    program: &'a Program,
    file: &'a str,
    source: &'a str,
    machine: &'a AnyMachine,
    /// The run configuration, wildcard matches recorded.
    cfg: SimConfig,
    /// Told the runs done after each run.
    progress: &'a dyn Fn(u32),
    runs: std::cell::Cell<u32>,
}

impl Cx<'_> {
    /// One run of the program on `machine` (this check's machine, or its
    /// zero-buffering variant).
    fn simulate(
        &self,
        cfg: SimConfig,
        machine: &AnyMachine,
    ) -> Result<sim_core::SimReport, SimError> {
        let mut sink = |_: PrintLine| {};
        let r = sim_core::simulate(self.program, &mut machine.start(cfg.ranks), cfg, &mut sink);
        self.runs.set(self.runs.get() + 1);
        (self.progress)(self.runs.get());
        r
    }
}

/// How a front end names its options in the findings' advice.
#[derive(Debug, Clone, Copy)]
pub struct Advice<'a> {
    /// The option that turns exploring on (`--explore` on the command
    /// line), followed by `=N` for a budget.
    pub explore: &'a str,
}

/// Findings and their text, in the order found.
#[derive(Default)]
struct Out {
    findings: Vec<Finding>,
    text: String,
}

/// The finding a failed run makes, by its error.
fn kind_of(e: &SimError) -> (Kind, Severity) {
    match e {
        SimError::Deadlock { .. } => (Kind::Deadlock, Severity::Deadlock),
        SimError::CollectiveMismatch { .. } => (Kind::CollectiveMismatch, Severity::Error),
        _ => (Kind::Error, Severity::Error),
    }
}

/// The findings of a first run that failed: the error itself, and for a
/// deadlock the collective mismatch and the waits on finished ranks behind
/// it.
fn first_run_failed(e: &SimError, file: &str, source: &str, out: &mut Out) {
    let Out { findings, text } = out;
    let (kind, severity) = kind_of(e);
    let (ranks, line, col) = match e {
        SimError::Deadlock { blocked, .. } => (
            blocked.iter().map(|b| b.rank).collect(),
            blocked.first().map_or(0, |b| b.span.line),
            blocked.first().map_or(0, |b| b.span.col),
        ),
        SimError::Runtime { rank, span, .. } | SimError::CollectiveMismatch { rank, span, .. } => {
            (vec![*rank], span.line, span.col)
        }
        SimError::KernelWithoutCost { span, .. } => (Vec::new(), span.line, span.col),
        _ => (Vec::new(), 0, 0),
    };
    let rendered = crate::diagnostics::sim_error(e, file, source);
    text.push_str(&rendered);
    if let SimError::Deadlock { blocked, .. } = e
        && let Some(m) = communicator_mismatch(blocked)
    {
        text.push_str(&format!("error: {}\n", m.message));
        findings.push(m);
    }
    if let SimError::Deadlock { blocked, .. } = e {
        // Ranks whose every possible partner has already finished.
        let dead: Vec<&sim_core::engine::BlockedRank> = blocked
            .iter()
            .filter(|b| !b.waits.is_empty() && b.waits.iter().all(|w| w.peer_finished))
            .collect();
        if let Some(first) = dead.first() {
            let ranks: Vec<u32> = dead.iter().map(|b| b.rank).collect();
            let message = format!(
                "rank(s) {} wait in `{}` ({file}:{}) for partners that have already finished",
                crate::diagnostics::rank_ranges(&ranks),
                first.op,
                first.span.line
            );
            text.push_str(&format!("error: {message}\n"));
            findings.push(Finding {
                kind: Kind::WaitOnFinished,
                severity: Severity::Deadlock,
                ranks,
                line: first.span.line,
                col: first.span.col,
                message,
            });
        }
    }
    findings.push(Finding {
        kind,
        severity,
        ranks,
        line,
        col,
        message: rendered
            .lines()
            .next()
            .unwrap_or("")
            .trim_start_matches("error: ")
            .to_owned(),
    });
}

/// Wildcard races: with exploring, each alternative match is forced in a
/// run of its own; a race whose every alternative was explored without a
/// problem is intended nondeterminism (a server taking any worker) and not
/// reported; the others are warnings. Returns the matchings run and how
/// many of them were clean.
fn explore_races(
    cx: &Cx<'_>,
    races: &[WildcardMatch],
    explore: Option<u32>,
    advice: &Advice<'_>,
    out: &mut Out,
) -> (u32, u32) {
    let (file, source, cfg) = (cx.file, cx.source, &cx.cfg);
    let Out { findings, text } = out;
    let mut explored = 0u32;
    // Runs whose forced matching completed cleanly, with their own races:
    // the next level of the search (combinations of forced matches).
    let mut deeper: std::collections::VecDeque<(Vec<ForcedMatch>, Vec<WildcardMatch>)> =
        std::collections::VecDeque::new();
    let mut reported_lines: Vec<u32> = Vec::new();
    let mut clean_runs = 0u32;
    let mut budget_hit = false;
    for w in races {
        let mut all_explored_clean = explore.is_some();
        if let Some(budget) = explore {
            for &alt in &w.alternatives {
                if explored >= budget {
                    budget_hit = true;
                    all_explored_clean = false;
                    break;
                }
                explored += 1;
                let forced = SimConfig {
                    record_wildcards: true,
                    forced_wildcards: vec![ForcedMatch {
                        rank: w.rank,
                        nth: w.nth,
                        source: alt,
                    }],
                    ..cfg.clone()
                };
                let forced_list = forced.forced_wildcards.clone();
                let run = cx.simulate(forced, cx.machine);
                match explored_outcome(run, &forced_list, w, file, source, findings, text) {
                    Some(races_there) => {
                        clean_runs += 1;
                        deeper.push_back((forced_list, races_there));
                    }
                    None => all_explored_clean = false,
                }
            }
        }
        if all_explored_clean || reported_lines.contains(&w.span.line) {
            continue;
        }
        reported_lines.push(w.span.line);
        let alts: Vec<String> = w.alternatives.iter().map(u32::to_string).collect();
        let line_text = source
            .lines()
            .nth(w.span.line.saturating_sub(1) as usize)
            .unwrap_or("")
            .trim();
        let message = format!(
            "wildcard race: rank {}'s {} from any rank ({file}:{}: {line_text}) matched rank {}, but rank(s) {} could also have matched under other timing{}",
            w.rank,
            if w.probe { "probe" } else { "receive" },
            w.span.line,
            w.chosen,
            alts.join(", "),
            if explore.is_none() {
                format!(" ({} tries the other matchings)", advice.explore)
            } else {
                String::new()
            }
        );
        text.push_str(&format!("warning: {message}\n"));
        findings.push(Finding {
            kind: Kind::WildcardRace,
            severity: Severity::Warning,
            ranks: vec![w.rank],
            line: w.span.line,
            col: w.span.col,
            message,
        });
    }
    // Deeper levels, breadth first, within the same budget: force a further
    // race's alternative on top of a clean forced matching (ISP-style).
    let mut visited: Vec<Vec<ForcedMatch>> = Vec::new();
    while let (Some(budget), Some((forced, races_here))) = (explore, deeper.pop_front()) {
        // Only matches made after the last forced one (in this run's match
        // order) are varied: earlier ones are replays of the parent run, and
        // changing them could ask for a message an earlier forced match
        // already consumed (an infeasible matching, a false deadlock).
        let last_forced = races_here
            .iter()
            .rposition(|w| forced.iter().any(|f| f.rank == w.rank && f.nth == w.nth))
            .map_or(0, |i| i + 1);
        for w in races_here[last_forced..]
            .iter()
            .filter(|w| !w.alternatives.is_empty())
        {
            for &alt in &w.alternatives {
                let mut next = forced.clone();
                next.push(ForcedMatch {
                    rank: w.rank,
                    nth: w.nth,
                    source: alt,
                });
                next.sort_by_key(|f| (f.rank, f.nth, f.source));
                if visited.contains(&next) {
                    continue;
                }
                if explored >= budget {
                    budget_hit = true;
                    continue;
                }
                visited.push(next.clone());
                explored += 1;
                let run_cfg = SimConfig {
                    record_wildcards: true,
                    forced_wildcards: next.clone(),
                    ..cfg.clone()
                };
                let run = cx.simulate(run_cfg, cx.machine);
                if let Some(races_there) =
                    explored_outcome(run, &next, w, file, source, findings, text)
                {
                    clean_runs += 1;
                    deeper.push_back((next, races_there));
                }
            }
        }
    }
    // Work left when the budget ran out: the clean races above were not
    // explored to the end, say so.
    if budget_hit {
        let message = format!(
            "{explore_opt} stopped after {explored} matchings with more to try; raise the budget ({explore_opt}=N) to cover them",
            explore_opt = advice.explore
        );
        text.push_str(&format!("warning: {message}\n"));
        findings.push(Finding {
            kind: Kind::ExploreIncomplete,
            severity: Severity::Warning,
            ranks: Vec::new(),
            line: 0,
            col: 0,
            message,
        });
    }
    if explore.is_some() && explored > 0 {
        text.push_str(&format!(
            "explored {explored} alternative wildcard matching(s), {clean_runs} without a problem\n"
        ));
    }
    (explored, clean_runs)
}

/// Run 2, with zero buffering (every send waits for its receive): a
/// deadlock there that the first run (`first`) did not have is a buffering
/// hazard, unless its sends are the messages run 1 found never received.
fn buffering_hazard(cx: &Cx<'_>, first: &sim_core::SimReport, out: &mut Out) {
    let Cx {
        file,
        source,
        machine,
        ..
    } = *cx;
    let run_ranks = cx.cfg.ranks;
    let Out { findings, text } = out;
    let zero = machine.zero_buffering();
    let second = cx.simulate(cx.cfg.clone(), &zero);
    if let Err(err) = &second
        && let SimError::Deadlock { blocked, .. } = err
    {
        let sends: Vec<u64> = blocked
            .iter()
            .flat_map(|b| b.waits.iter())
            .filter(|w| w.kind == sim_core::engine::PendingKind::Send)
            .map(|w| w.bytes)
            .collect();
        // Sends whose messages run 1 found never received are that
        // error, not a buffering hazard.
        let unreceived: Vec<(u32, u32)> = first
            .leftovers
            .iter()
            .filter(|l| l.kind == LeftoverKind::UnreceivedMessage)
            .map(|l| (l.span.line, l.span.col))
            .collect();
        let only_unreceived = blocked.iter().flat_map(|b| b.waits.iter()).all(|w| {
            w.kind == sim_core::engine::PendingKind::Send
                && unreceived.contains(&(w.span.line, w.span.col))
        });
        let largest = sends.iter().copied().max().unwrap_or(0);
        let smallest = sends.iter().copied().min().unwrap_or(0);
        let limit = blocked
            .first()
            .and_then(|b| {
                b.waits
                    .iter()
                    .find(|w| w.peer.is_some())
                    .map(|w| (b.rank, w.peer.unwrap_or(0)))
            })
            .map_or(0, |(a, b)| machine.start(run_ranks).eager_limit(a, b));
        let rendered = crate::diagnostics::sim_error(err, file, source);
        if !only_unreceived {
            let sizes = if smallest == largest {
                format!("{smallest} bytes")
            } else {
                format!("{smallest}..{largest} bytes")
            };
            let message = format!(
                "buffering hazard: completes with this machine's eager limit ({limit} B) only because sends of {sizes} are buffered; it deadlocks on an MPI that does not buffer, or once these messages reach the eager limit ({limit} B)"
            );
            text.push_str(&format!(
                "warning: {message}\n  with zero buffering: {rendered}"
            ));
            findings.push(Finding {
                kind: Kind::BufferingHazard,
                severity: Severity::Warning,
                ranks: blocked.iter().map(|b| b.rank).collect(),
                line: blocked.first().map_or(0, |b| b.span.line),
                col: blocked.first().map_or(0, |b| b.span.col),
                message,
            });
        }
    }
}

/// Ranks of a deadlock blocked in collectives on *different* communicators:
/// one group entered a collective on one communicator while the others
/// entered one on another (an ordering mismatch of collectives).
fn communicator_mismatch(blocked: &[sim_core::engine::BlockedRank]) -> Option<Finding> {
    use std::collections::BTreeMap;
    let mut by_comm: BTreeMap<u32, Vec<&sim_core::engine::BlockedRank>> = BTreeMap::new();
    for b in blocked {
        if let Some(w) = b.waits.iter().find(|w| w.in_collective) {
            by_comm.entry(w.comm).or_default().push(b);
        }
    }
    if by_comm.len() < 2 {
        return None;
    }
    let name = |c: u32| {
        if c == 0 {
            "the world".to_owned()
        } else {
            format!("communicator #{c}")
        }
    };
    let parts: Vec<String> = by_comm
        .iter()
        .map(|(c, bs)| {
            let ranks: Vec<u32> = bs.iter().map(|b| b.rank).collect();
            format!(
                "rank(s) {} in `{}` on {} (line {})",
                crate::diagnostics::rank_ranges(&ranks),
                bs[0].op,
                name(*c),
                bs[0].span.line
            )
        })
        .collect();
    let first = by_comm.values().next().and_then(|v| v.first())?;
    Some(Finding {
        kind: Kind::CollectiveMismatch,
        severity: Severity::Error,
        ranks: by_comm.values().flatten().map(|b| b.rank).collect(),
        line: first.span.line,
        col: first.span.col,
        message: format!(
            "collective mismatch across communicators: {}; each waits for ranks that are in a collective on another communicator",
            parts.join("; ")
        ),
    })
}

/// What a run with forced wildcard matches found: its problems become
/// findings (described by the forced matches) and `None` is returned; a
/// clean run returns its own wildcard matches, for the next level.
fn explored_outcome(
    run: Result<sim_core::SimReport, SimError>,
    forced: &[ForcedMatch],
    w: &WildcardMatch,
    file: &str,
    source: &str,
    findings: &mut Vec<Finding>,
    text: &mut String,
) -> Option<Vec<WildcardMatch>> {
    let described: Vec<String> = forced
        .iter()
        .map(|f| {
            format!(
                "rank {}'s receive #{} from any rank matches rank {}",
                f.rank,
                f.nth + 1,
                f.source
            )
        })
        .collect();
    let when = format!("when {} (explored)", described.join(" and "));
    match run {
        Ok(rep) if rep.leftovers.is_empty() => Some(rep.wildcards),
        Ok(rep) => {
            for l in &rep.leftovers {
                let mut f = leftover_finding(l, file, source);
                f.message = format!("{when}: {}", f.message);
                findings.push(f);
            }
            None
        }
        Err(e) => {
            let (kind, severity) = kind_of(&e);
            let rendered = crate::diagnostics::sim_error(&e, file, source);
            let first = rendered
                .lines()
                .next()
                .unwrap_or("")
                .trim_start_matches("error: ");
            let message = format!("{when}: {first}");
            text.push_str(&format!(
                "error: {message}\n{}",
                rendered.split_once('\n').map_or("", |x| x.1)
            ));
            findings.push(Finding {
                kind,
                severity,
                ranks: forced
                    .iter()
                    .map(|f| f.rank)
                    .chain(forced.iter().map(|f| f.source))
                    .collect(),
                line: w.span.line,
                col: w.span.col,
                message,
            });
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use models::AnyMachine;

    use super::{Advice, Kind, Severity, check};
    use crate::scenario::Limits;

    fn run(src: &str, ranks: u32, explore: Option<u32>) -> super::Checked {
        let program = frontend::compile("t.mpl", src).expect("compiles");
        let machine = AnyMachine::builtin_default();
        check(
            &program,
            "t.mpl",
            src,
            &machine,
            Limits::default().config(ranks),
            explore,
            &Advice { explore: "EXPLORE" },
            &|_| {},
        )
    }

    #[test]
    fn a_wildcard_race_names_the_front_ends_option() {
        let src = "if rank == 0 {\n    for i in 1 .. size { recv(from: any, bytes: 8) }\n} else {\n    send(to: 0, bytes: 8)\n}\n";
        let c = run(src, 4, None);
        let race = c
            .findings
            .iter()
            .find(|f| f.kind == Kind::WildcardRace)
            .expect("a race");
        assert_eq!(race.severity, Severity::Warning);
        assert!(
            race.message
                .ends_with("(EXPLORE tries the other matchings)"),
            "{}",
            race.message
        );
        // Exploring with a budget of 1 leaves matchings untried.
        let c = run(src, 4, Some(1));
        let stop = c
            .findings
            .iter()
            .find(|f| f.kind == Kind::ExploreIncomplete)
            .expect("budget ran out");
        assert!(
            stop.message
                .starts_with("EXPLORE stopped after 1 matchings")
                && stop.message.contains("(EXPLORE=N)"),
            "{}",
            stop.message
        );
    }

    #[test]
    fn buffered_head_to_head_is_a_hazard() {
        let c = run(
            "let peer = 1 - rank\nsend(to: peer, bytes: 1024)\nrecv(from: peer, bytes: 1024)\n",
            2,
            None,
        );
        let kinds: Vec<Kind> = c.findings.iter().map(|f| f.kind).collect();
        assert_eq!(kinds, [Kind::BufferingHazard]);
        assert_eq!(c.worst(), Some(Severity::Warning));
        assert_eq!(c.findings[0].ranks, [0, 1]);
        assert_eq!((c.findings[0].line, c.findings[0].col), (2, 1));
        assert!(c.text.contains("sends of 1024 bytes are buffered"));
    }

    #[test]
    fn receive_first_deadlocks() {
        let c = run(
            "let peer = 1 - rank\nrecv(from: peer, bytes: 8)\nsend(to: peer, bytes: 8)\n",
            2,
            None,
        );
        assert_eq!(c.worst(), Some(Severity::Deadlock));
        assert_eq!(c.findings[0].kind, Kind::Deadlock);
        assert!(c.text.contains("cycle of waits: rank 0 -> 1 -> 0"));
    }

    #[test]
    fn a_correct_exchange_is_clean() {
        let c = run(
            "let peer = 1 - rank\nsendrecv(to: peer, from: peer, bytes: 1000000)\n",
            2,
            Some(16),
        );
        assert!(c.findings.is_empty(), "{:?}", c.findings);
        assert_eq!(c.worst(), None);
        assert_eq!((c.explored, c.clean_runs), (0, 0));
        assert_eq!(
            c.report("t.mpl", 2),
            "no problems found in t.mpl on 2 ranks (also checked with zero buffering)\n"
        );
    }

    #[test]
    fn unreceived_messages_are_leftovers() {
        let c = run("if rank == 0 { send(to: 1, bytes: 8) }\n", 2, None);
        assert_eq!(c.findings.len(), 1);
        assert_eq!(c.findings[0].kind, Kind::UnreceivedMessage);
        assert!(c.findings[0].kind.is_leftover());
        assert_eq!(c.worst(), Some(Severity::Error));
        assert!(c.report("t.mpl", 2).starts_with("error: "));
    }
}
