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
    pub(super) fn new(cfg: &SimConfig, kernels: usize) -> Observers<'a> {
        Observers {
            trace_limit: cfg.trace_limit,
            trace: Vec::new(),
            trace_truncated: false,
            pairs: cfg.comm_matrix.then(HashMap::new),
            wildcards: cfg.record_wildcards.then(Wildcards::default),
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

    /// A matched ANY_SOURCE receive.
    pub(super) fn wildcard_matched(&mut self, m: WildcardMatch) {
        if let Some(w) = &mut self.wildcards {
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
            wildcards: self.wildcards.map(|w| w.matches).unwrap_or_default(),
            kernel_profile: self.profile.map(|p| p.finish(program)).unwrap_or_default(),
            call_profile,
        }
    }
}
