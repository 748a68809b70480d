//! The optional recording of a run, behind one interface.
//!
//! The engine calls one hook per thing that happens (a compute interval, a
//! message sent, an envelope in flight or arrived, a wildcard receive
//! matched, a kernel call, every [`PROGRESS_EVERY`] events); each hook
//! records only what [`SimConfig`] asked for. Every hook is `#[inline]` and
//! begins with one test of a field, so a run that records nothing pays a
//! predictable branch per hook and builds no record: trace events are
//! passed as closures that run only when a timeline is kept.
//!
//! What is recorded: the timeline (`trace_limit`), the traffic per
//! (source, destination) pair (`comm_matrix`), matched ANY_SOURCE receives
//! with the envelopes in flight to each rank (`record_wildcards`), the
//! kernel-call profile (`kernel_profile`), the communication calls
//! counted (`call_profile`) and progress reports
//! (`simulate_with_progress`). In ParJava's terms these are the engine's
//! observers; `check` in the binary is the monitor that reads them.

use super::*;

/// Events between two progress reports.
pub(super) const PROGRESS_EVERY: u64 = 1 << 18;

/// The optional recorders of one run.
pub(super) struct Observers<'a> {
    /// `SimConfig::trace_limit` (0: no timeline).
    trace_limit: usize,
    trace: Vec<TraceEvent>,
    trace_truncated: bool,
    /// `SimConfig::comm_matrix`: traffic per (source, destination).
    pairs: Option<HashMap<(u32, u32), PairTraffic>>,
    /// `SimConfig::record_wildcards`.
    wildcards: Option<Wildcards>,
    /// `SimConfig::kernel_profile`: the calls so far.
    profile: Option<ProfileRecorder>,
    /// `SimConfig::call_profile`: communication calls counted per key.
    calls: Option<HashMap<CallKey, u64>>,
    /// Called every [`PROGRESS_EVERY`] events (`simulate_with_progress`).
    progress: Option<&'a mut dyn FnMut(&Progress)>,
}

/// (rank, line, operation, peer, bytes, communicator size) of a counted call.
type CallKey = (u32, u32, &'static str, Option<u32>, u64, u32);

/// Matched ANY_SOURCE receives, and the envelopes in flight to each rank
/// (the candidates another timing could have matched).
#[derive(Default)]
struct Wildcards {
    matches: Vec<WildcardMatch>,
    inflight_to: HashMap<u32, Vec<u32>>,
    /// Happens-before, for the sends a wildcard receive could have matched
    /// although they were posted after it matched (`None` above
    /// [`CAUSAL_MAX_RANKS`] ranks).
    causal: Option<Causal>,
}

/// Above this many ranks the vector clocks (4 bytes per pair of ranks) are
/// not kept, and a wildcard receive's alternatives are only the senders
/// whose envelopes had arrived or were in flight when it matched.
pub(super) const CAUSAL_MAX_RANKS: u32 = 4096;

/// Vector clocks over the run's messages (Mattern 1989; DAMPI, Vo et al.,
/// SC 2010, uses them to find a wildcard receive's alternatives). Every send
/// (user or collective message) is an event of its rank and carries the
/// rank's clock; every match is an event of the receiving rank, which
/// takes the elementwise maximum with the message's clock. A send S to
/// rank r happened after a receive R of r exactly when S's sender knew of
/// R: `clock(S)[r] >= clock(R)[r]`. Any other send to r that matches R's
/// envelope and that r had not received before R is one MPI allows R to
/// match (MPI 3.1 section 3.5: a wildcard receive may match any such
/// send; which one is a matter of timing).
struct Causal {
    /// Each rank's clock, `ranks` entries.
    clocks: Vec<Vec<u32>>,
    /// A message in flight: its clock at the send, and its index in
    /// `sends` (user messages only).
    in_flight: HashMap<u32, (Vec<u32>, Option<usize>)>,
    /// Every user message.
    sends: Vec<SendRecord>,
    /// Per rank, the user messages it has matched so far.
    matched: Vec<u32>,
    /// Per entry of `Wildcards::matches`, what decides its alternatives.
    receives: Vec<WildRecord>,
}

struct SendRecord {
    src: u32,
    dst: u32,
    ctx: u32,
    tag: i32,
    /// The sender's knowledge of the destination's clock at the send.
    knows_dst: u32,
    /// Which of the destination's matches took it (`u32::MAX`: none).
    match_no: u32,
}

struct WildRecord {
    owner: u32,
    /// The owner's own clock entry at the receive's match.
    clock: u32,
    /// The number of the owner's first match after it: sends matched
    /// before are not alternatives.
    after: u32,
    ctx: u32,
    /// `ANY_TAG` or the tag it accepts.
    tag: i32,
    chosen: u32,
}

impl Causal {
    fn new(ranks: u32) -> Causal {
        Causal {
            clocks: vec![vec![0; ranks as usize]; ranks as usize],
            in_flight: HashMap::new(),
            sends: Vec::new(),
            matched: vec![0; ranks as usize],
            receives: Vec::new(),
        }
    }

    fn sent(&mut self, m: u32, src: u32, dst: u32, ctx: u32, tag: i32) {
        let c = &mut self.clocks[src as usize];
        c[src as usize] += 1;
        let index = ctx.is_multiple_of(2).then(|| {
            self.sends.push(SendRecord {
                src,
                dst,
                ctx,
                tag,
                knows_dst: c[dst as usize],
                match_no: u32::MAX,
            });
            self.sends.len() - 1
        });
        self.in_flight.insert(m, (c.clone(), index));
    }

    /// Message `m` is matched at `dst`: a user message gets the number of
    /// the match among `dst`'s user matches.
    fn matched(&mut self, m: u32, dst: u32) {
        let Some((clock, index)) = self.in_flight.remove(&m) else {
            return;
        };
        let mine = &mut self.clocks[dst as usize];
        for (a, b) in mine.iter_mut().zip(clock) {
            *a = (*a).max(b);
        }
        mine[dst as usize] += 1;
        if let Some(i) = index {
            self.sends[i].match_no = self.matched[dst as usize];
            self.matched[dst as usize] += 1;
        }
    }

    /// The senders each wildcard receive could have matched, by
    /// happens-before, added to `matches`' alternatives.
    fn complete(&self, matches: &mut [WildcardMatch]) {
        let mut to: HashMap<u32, Vec<&SendRecord>> = HashMap::new();
        for s in &self.sends {
            to.entry(s.dst).or_default().push(s);
        }
        for (w, m) in self.receives.iter().zip(matches.iter_mut()) {
            for s in to.get(&w.owner).map(Vec::as_slice).unwrap_or(&[]) {
                let candidate = s.src != w.chosen
                    && s.ctx == w.ctx
                    && (w.tag == ANY_TAG || w.tag == s.tag)
                    // not received by the owner before this receive
                    && (s.match_no == u32::MAX || s.match_no >= w.after)
                    // not causally after it
                    && s.knows_dst < w.clock;
                if candidate && !m.alternatives.contains(&s.src) {
                    m.alternatives.push(s.src);
                }
            }
            m.alternatives.sort_unstable();
        }
    }
}

/// What the observers recorded, for the report.
pub(super) struct Recorded {
    pub(super) trace: Vec<TraceEvent>,
    pub(super) trace_truncated: bool,
    /// Sorted by (source, destination).
    pub(super) comm_matrix: Vec<(u32, u32, PairTraffic)>,
    pub(super) wildcards: Vec<WildcardMatch>,
    pub(super) kernel_profile: Vec<KernelProfile>,
    pub(super) call_profile: Vec<CallCount>,
}

impl<'a> Observers<'a> {
    /// The recorders `cfg` asks for, for a program with `kernels` kernels.
    pub(super) fn new(cfg: &SimConfig, kernels: usize, ranks: u32) -> Observers<'a> {
        Observers {
            trace_limit: cfg.trace_limit,
            trace: Vec::new(),
            trace_truncated: false,
            pairs: cfg.comm_matrix.then(HashMap::new),
            wildcards: cfg.record_wildcards.then(|| Wildcards {
                causal: (ranks <= CAUSAL_MAX_RANKS).then(|| Causal::new(ranks)),
                ..Wildcards::default()
            }),
            profile: cfg.kernel_profile.then(|| ProfileRecorder::new(kernels)),
            calls: cfg.call_profile.then(HashMap::new),
            progress: None,
        }
    }

    /// Reports progress to `f` from now on.
    pub(super) fn report_progress(&mut self, f: &'a mut dyn FnMut(&Progress)) {
        self.progress = Some(f);
    }

    /// Once per event: every [`PROGRESS_EVERY`]th event, a progress report.
    #[inline]
    pub(super) fn event(&mut self, events: u64, time: f64, finished: u32, lps: &[Lp]) {
        if events.is_multiple_of(PROGRESS_EVERY)
            && let Some(p) = self.progress.as_mut()
        {
            p(&Progress {
                events,
                sim_time: time,
                finished,
                ranks: lps.len() as u32,
                lps,
            });
        }
    }

    /// Whether a timeline is kept (callers skip work that only feeds it).
    #[inline]
    pub(super) fn tracing(&self) -> bool {
        self.trace_limit > 0
    }

    /// A timeline event, built by `ev` only when a timeline is kept, up to
    /// the limit.
    #[inline]
    pub(super) fn trace(&mut self, ev: impl FnOnce() -> TraceEvent) {
        if self.trace_limit > 0 {
            self.trace_push(ev());
        }
    }

    fn trace_push(&mut self, ev: TraceEvent) {
        if self.trace.len() < self.trace_limit {
            self.trace.push(ev);
        } else {
            self.trace_truncated = true;
        }
    }

    /// A message from `src` to `dst` of `bytes` bytes whose envelope takes
    /// `seconds` to arrive.
    #[inline]
    pub(super) fn message_sent(&mut self, src: u32, dst: u32, bytes: u64, seconds: f64) {
        if let Some(pairs) = &mut self.pairs {
            let p = pairs.entry((src, dst)).or_default();
            p.messages += 1;
            p.bytes += bytes;
            p.seconds += seconds;
        }
    }

    /// Whether matched wildcard receives are recorded.
    #[inline]
    pub(super) fn recording_wildcards(&self) -> bool {
        self.wildcards.is_some()
    }

    /// Envelope `m` to `dst` is in flight (its arrival event is queued).
    #[inline]
    pub(super) fn in_flight(&mut self, dst: u32, m: u32) {
        if let Some(w) = &mut self.wildcards {
            w.inflight_to.entry(dst).or_default().push(m);
        }
    }

    /// Message `m` (matching context `ctx`, tag `tag`) is sent from `src`
    /// to `dst`: an event of `src` for the vector clocks.
    #[inline]
    pub(super) fn causal_send(&mut self, m: u32, src: u32, dst: u32, ctx: u32, tag: i32) {
        if let Some(c) = self.wildcards.as_mut().and_then(|w| w.causal.as_mut()) {
            c.sent(m, src, dst, ctx, tag);
        }
    }

    /// Message `m` is matched by a receive of `dst`: an event of `dst`.
    #[inline]
    pub(super) fn causal_match(&mut self, m: u32, dst: u32) {
        if let Some(c) = self.wildcards.as_mut().and_then(|w| w.causal.as_mut()) {
            c.matched(m, dst);
        }
    }

    /// Envelope `m` to `dst` has arrived.
    #[inline]
    pub(super) fn arrived(&mut self, dst: u32, m: u32) {
        if let Some(w) = &mut self.wildcards
            && let Some(v) = w.inflight_to.get_mut(&dst)
            && let Some(pos) = v.iter().position(|&x| x == m)
        {
            v.swap_remove(pos);
        }
    }

    /// The envelopes in flight to `dst` (empty unless wildcards are recorded).
    pub(super) fn in_flight_to(&self, dst: u32) -> &[u32] {
        self.wildcards
            .as_ref()
            .and_then(|w| w.inflight_to.get(&dst))
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// A matched ANY_SOURCE receive (after `causal_match` of its message),
    /// or an ANY_SOURCE probe that found an envelope (which stays
    /// unmatched; `m.probe`), accepting matching context `ctx` and tag `tag`
    /// (or `ANY_TAG`). A send is an alternative when it is not causally
    /// after it and was matched by the owner after it (or never).
    pub(super) fn wildcard_matched(&mut self, m: WildcardMatch, ctx: u32, tag: i32) {
        if let Some(w) = &mut self.wildcards {
            if let Some(c) = w.causal.as_mut() {
                let owner = m.rank as usize;
                // A receive's match is an event of the owner, counted by
                // `causal_match` just before; a probe is none, but the
                // owner's events after it raise its entry above the
                // current one, as the receive's own event does.
                let clock = c.clocks[owner][owner] + u32::from(m.probe);
                c.receives.push(WildRecord {
                    owner: m.rank,
                    clock,
                    after: c.matched[owner],
                    ctx,
                    tag,
                    chosen: m.chosen,
                });
            }
            w.matches.push(m);
        }
    }

    /// Whether kernel calls are profiled (kernels without a cost then cost 0).
    #[inline]
    pub(super) fn profiling(&self) -> bool {
        self.profile.is_some()
    }

    /// Rank `id` calls kernel `kernel` with `args`.
    #[inline]
    pub(super) fn kernel_call(&mut self, id: u32, kernel: usize, args: &[Value]) {
        if let Some(p) = &mut self.profile {
            p.record(id, kernel, args);
        }
    }

    /// Rank `rank` makes a communication call (`SimConfig::call_profile`).
    #[inline]
    pub(super) fn comm_call(
        &mut self,
        rank: u32,
        line: u32,
        operation: &'static str,
        peer: Option<u32>,
        bytes: u64,
        comm_size: u32,
    ) {
        if let Some(c) = &mut self.calls {
            *c.entry((rank, line, operation, peer, bytes, comm_size))
                .or_default() += 1;
        }
    }

    /// Whether communication calls are counted.
    #[inline]
    pub(super) fn counting_calls(&self) -> bool {
        self.calls.is_some()
    }

    /// Everything recorded.
    pub(super) fn finish(self, program: &Program) -> Recorded {
        let mut comm_matrix: Vec<(u32, u32, PairTraffic)> = self
            .pairs
            .unwrap_or_default()
            .into_iter()
            .map(|((s, d), t)| (s, d, t))
            .collect();
        comm_matrix.sort_by_key(|&(s, d, _)| (s, d));
        let mut call_profile: Vec<CallCount> = self
            .calls
            .unwrap_or_default()
            .into_iter()
            .map(
                |((rank, line, operation, peer, bytes, comm_size), calls)| CallCount {
                    rank,
                    line,
                    operation,
                    peer,
                    bytes,
                    comm_size,
                    calls,
                },
            )
            .collect();
        call_profile.sort_by(|a, b| {
            (a.rank, a.line, a.operation, a.peer, a.bytes, a.comm_size).cmp(&(
                b.rank,
                b.line,
                b.operation,
                b.peer,
                b.bytes,
                b.comm_size,
            ))
        });
        Recorded {
            trace: self.trace,
            trace_truncated: self.trace_truncated,
            comm_matrix,
            wildcards: self
                .wildcards
                .map(|mut w| {
                    if let Some(c) = &w.causal {
                        c.complete(&mut w.matches);
                    }
                    w.matches
                })
                .unwrap_or_default(),
            kernel_profile: self.profile.map(|p| p.finish(program)).unwrap_or_default(),
            call_profile,
        }
    }
}
