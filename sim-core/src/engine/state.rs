//! The engine's run-time records: events, messages, requests, wait sets and
//! the logical processes (LPs) themselves.

use super::*;

#[derive(Clone, Copy, Debug)]
pub(super) enum EventKind {
    Resume(u32),
    /// A message envelope (eager message or rendezvous RTS) reaches its destination.
    Arrival(u32),
    /// A rendezvous clear-to-send reaches the sender.
    Cts(u32),
    /// A rendezvous payload reaches the receiver.
    Data(u32),
}

impl EventKind {
    pub(super) fn encode(self) -> (u8, u32) {
        match self {
            EventKind::Resume(x) => (0, x),
            EventKind::Arrival(x) => (1, x),
            EventKind::Cts(x) => (2, x),
            EventKind::Data(x) => (3, x),
        }
    }

    pub(super) fn decode(tag: u8, x: u32) -> EventKind {
        match tag {
            0 => EventKind::Resume(x),
            1 => EventKind::Arrival(x),
            2 => EventKind::Cts(x),
            _ => EventKind::Data(x),
        }
    }
}

pub(super) const ANY_SOURCE: u32 = u32::MAX;
pub(super) const ANY_TAG: i32 = -1;

/// [`Msg::send_req_id`] of a message without a send request to complete.
pub(super) const NO_SEND_REQ: u32 = u32::MAX;

impl Msg {
    /// The send request a rendezvous message completes after its CTS.
    pub(super) fn send_req(&self) -> Option<u32> {
        (self.send_req_id != NO_SEND_REQ).then_some(self.send_req_id)
    }
}

#[derive(Debug, Clone)]
pub(super) struct Msg {
    pub(super) src: u32,
    pub(super) dst: u32,
    pub(super) tag: i32,
    /// Matching context (communicator, user or collective).
    pub(super) ctx: u32,
    pub(super) bytes: u64,
    /// Arrival of the envelope at the destination.
    pub(super) arrival: f64,
    /// The send request of a rendezvous message (completed after CTS), or
    /// [`NO_SEND_REQ`] (an eager message, a flag): read it with
    /// [`Msg::send_req`]. Not an `Option<u32>`: with `written` beside it
    /// the two fit the 8 bytes the option alone took.
    pub(super) send_req_id: u32,
    /// The matched receive request.
    pub(super) recv_req: u32,
    /// Where it was sent (reports of messages never received), in
    /// [`SpanTable`]: 4 bytes instead of a 16-byte `Span`.
    pub(super) span: SpanId,
    /// Whether its data is a collective's library data, written by the
    /// sender's core in the call (`coll::Op::Send`'s `written`): its
    /// rendezvous data is priced by `Machine::transfer_written`.
    pub(super) written: bool,
    /// When it was sent (timelines).
    pub(super) sent: f64,
}

/// A request: 56 bytes (it was 88, then 72, then 64). W2 keeps 8 per
/// rank live, so the request slab is half of its peak memory (512 B per
/// rank at 64 bytes each); the span became a [`SpanId`] (only error
/// reports read it), the communicator, always `ctx / 2`, is no longer
/// stored, the CPU time a completed receive charges at its wait (o_r) is
/// computed at the wait from its status (`Engine::overhead_of`), and a
/// receive's status shares the filter's source and tag fields: a matched
/// receive's filter is its status's source and tag except where the
/// filter named none (`ANY_SOURCE`, `ANY_TAG`), which two flags keep.
#[derive(Debug, Clone)]
pub(super) struct Request {
    pub(super) generation: u32,
    pub(super) owner: u32,
    /// For an ANY_SOURCE receive, which one of its rank's (`u32::MAX`: not one).
    pub(super) wild_nth: u32,
    pub(super) is_send: bool,
    pub(super) done: bool,
    /// A receive whose filter names no source (`ANY_SOURCE`) / no tag
    /// (`ANY_TAG`); false for a send.
    any_source: bool,
    any_tag: bool,
    /// A send: its destination and tag. A receive: its filter's source and
    /// tag until it is matched (`ANY_SOURCE`, `ANY_TAG` where the flags
    /// say so), from then on the matched message's (its status's): world
    /// ranks. Read them through [`Request::filter_peer`],
    /// [`Request::filter_tag`] and [`Request::status`].
    peer: u32,
    tag: i32,
    pub(super) ctx: u32,
    /// While the slot is free (its generation is then no live handle's),
    /// the next free slot of its owner instead (`Lp::free_req`).
    pub(super) span: SpanId,
    /// When the operation's data is there (recv) or the buffer is free (send).
    pub(super) ready_at: f64,
    /// A send: its size. A receive: its capacity (the filter's `bytes:`).
    pub(super) bytes: u64,
    /// A matched receive: the size of the message it received (0 before).
    received: u64,
}

/// No request: the end of the free list. Request ids are indices in the
/// request slab, which cannot reach 2^32 - 1 entries (64 B each).
pub(super) const NO_REQ: u32 = u32::MAX;
/// No rank (`Engine::in_call` outside a communication statement).
pub(super) const NO_RANK: u32 = u32::MAX;

impl Request {
    /// A receive that `owner` posts for `env` (its `bytes` the capacity),
    /// not yet matched; `wild_nth` numbers its ANY_SOURCE receives
    /// (`u32::MAX`: not one of them).
    pub(super) fn receive(owner: u32, wild_nth: u32, env: &p2p::Envelope, span: SpanId) -> Request {
        Request {
            generation: 0,
            owner,
            wild_nth,
            is_send: false,
            done: false,
            any_source: env.peer == ANY_SOURCE,
            any_tag: env.tag == ANY_TAG,
            peer: env.peer,
            tag: env.tag,
            ctx: env.ctx,
            span,
            ready_at: f64::INFINITY,
            bytes: env.bytes,
            received: 0,
        }
    }

    /// The request of a send from `owner` of `env` (to `env.peer`).
    pub(super) fn send(
        owner: u32,
        env: &p2p::Envelope,
        done: bool,
        ready_at: f64,
        span: SpanId,
    ) -> Request {
        Request {
            generation: 0,
            owner,
            wild_nth: u32::MAX,
            is_send: true,
            done,
            any_source: false,
            any_tag: false,
            peer: env.peer,
            tag: env.tag,
            ctx: env.ctx,
            span,
            ready_at,
            bytes: env.bytes,
            received: 0,
        }
    }

    /// The source a receive accepts (`ANY_SOURCE`: any), or a send's
    /// destination; a world rank.
    pub(super) fn filter_peer(&self) -> u32 {
        if self.any_source {
            ANY_SOURCE
        } else {
            self.peer
        }
    }

    /// The tag a receive accepts (`ANY_TAG`: any), or a send's tag.
    pub(super) fn filter_tag(&self) -> i32 {
        if self.any_tag { ANY_TAG } else { self.tag }
    }

    /// The source a receive names (`None` for `ANY_SOURCE`), or a send's
    /// destination: what reports print.
    pub(super) fn named_peer(&self) -> Option<u32> {
        (!self.any_source).then_some(self.peer)
    }

    /// The tag a receive names (`None` for `ANY_TAG`), or a send's tag.
    pub(super) fn named_tag(&self) -> Option<i32> {
        (!self.any_tag).then_some(self.tag)
    }

    /// A receive matched a message from `source` (world rank) with `tag`
    /// and `bytes`: its status from now on.
    pub(super) fn set_status(&mut self, source: u32, tag: i32, bytes: u64) {
        self.peer = source;
        self.tag = tag;
        self.received = bytes;
    }

    /// The status a wait returns, source in world ranks: a receive's
    /// matched message (valid once it is done); a send's own source (its
    /// owner), tag and size.
    pub(super) fn status(&self) -> MsgStatus {
        if self.is_send {
            MsgStatus {
                source: self.owner,
                tag: self.tag,
                bytes: self.bytes,
            }
        } else {
            MsgStatus {
                source: self.peer,
                tag: self.tag,
                bytes: self.received,
            }
        }
    }

    /// The communicator, to report the status's source in its ranks:
    /// contexts are `2c` (point-to-point) and `2c + 1` (collectives) of
    /// communicator `c` (`comms::p2p_context`, `comms::coll_context`).
    pub(super) fn comm(&self) -> u32 {
        self.ctx / 2
    }
}

/// An index into [`SpanTable`].
pub(super) type SpanId = u32;

/// The spans of the statements that posted requests and messages,
/// interned, so that those records carry a 4-byte id instead of a 16-byte
/// `Span` (read only by error and leftover reports). Ids are `< spans.len()`,
/// and there is one span per distinct source location of a program, far
/// fewer than `u32::MAX`.
#[derive(Debug, Default)]
pub(super) struct SpanTable {
    spans: Vec<Span>,
    /// By `Span::start` (below [`SpanTable::DIRECT`]): the id of a span
    /// starting there (`u32::MAX`: none), so that the usual lookup, one per
    /// posted send or receive, is an index and a compare, not a hash.
    by_start: Vec<SpanId>,
    /// All of them, for spans whose start is taken by another span or
    /// beyond `DIRECT`.
    ids: HashMap<Span, SpanId>,
}

impl SpanTable {
    /// Starts looked up directly: source offsets of programs up to 1 MiB
    /// (a table of at most 4 MiB, grown only as far as the starts seen).
    const DIRECT: u32 = 1 << 20;

    pub(super) fn intern(&mut self, span: Span) -> SpanId {
        if let Some(&id) = self.by_start.get(span.start as usize)
            && self.spans.get(id as usize) == Some(&span)
        {
            return id;
        }
        let id = match self.ids.get(&span) {
            Some(&id) => id,
            None => {
                let id = self.spans.len() as SpanId;
                self.spans.push(span);
                self.ids.insert(span, id);
                id
            }
        };
        if span.start < Self::DIRECT {
            let i = span.start as usize;
            if self.by_start.len() <= i {
                self.by_start.resize(i + 1, SpanId::MAX);
            }
            self.by_start[i] = id;
        }
        id
    }

    pub(super) fn get(&self, id: SpanId) -> Span {
        // Ids come from `intern` on this table only.
        self.spans.get(id as usize).copied().unwrap_or_default()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LpState {
    /// In the event queue (or running).
    Ready,
    Blocked,
    Finished,
}

/// What a blocked LP waits for, and where the result goes.
#[derive(Debug, Clone, Default)]
pub(super) struct WaitSet {
    /// The requests waited for (`waitall()`: a copy of [`Lp::pending`]),
    /// with their generations. A [`ThinVec`], recycled with the wait set.
    pub(super) reqs: ThinVec<ReqRef>,
    pub(super) result: WaitResult,
    /// Named variables (in the current frame) to set to null once done.
    pub(super) null_slots: Vec<Slot>,
    /// `waitany`: one completed request suffices.
    pub(super) any: bool,
    /// `waitany`: per entry of `reqs`, its variable and argument index.
    pub(super) any_slots: Vec<(Slot, usize)>,
    /// When the statement started (timelines), its name and line, and the
    /// rank's compute + comm time then (the rest of its span is waiting).
    pub(super) started: f64,
    pub(super) busy_before: f64,
    pub(super) what: &'static str,
    pub(super) line: u32,
    /// All but `waitany`: the first `done_prefix` entries of `reqs` are
    /// known to be done. A request of a blocked rank's wait set only goes
    /// from not done to done (only its owner, running, releases it), so
    /// the test "all done" resumes where it stopped: a wait for `n`
    /// requests costs `O(n)` over all its completions, not `O(n)` each
    /// (an alltoall's `2(p - 1)` requests made it quadratic).
    pub(super) done_prefix: u32,
}

impl WaitSet {
    pub(super) fn clear(&mut self) {
        self.done_prefix = 0;
        self.reqs.clear();
        self.result = WaitResult::Null;
        self.null_slots.clear();
        self.any = false;
        self.any_slots.clear();
        self.what = "";
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) enum WaitResult {
    #[default]
    Null,
    /// The status of `reqs[i]`.
    StatusOf(usize),
}

/// A frame's variables: inline for the usual handful, so that resuming an
/// LP touches one contiguous record (the LP array) rather than chasing
/// pointers (measured: ~20% more events/s at 65,536 ranks). Four inline
/// (64 B with 16-byte values; it was six of 24 bytes, 144 B): heat.mpl's
/// main has 1 variable and W1's 3, which stay inline; W2's 16 spill to the
/// heap anyway, so its inline space was dead weight in every rank's record.
pub(super) type Locals = SmallVec<[Value; 4]>;

#[derive(Debug, Clone)]
pub(super) struct Frame {
    pub(super) func: u32,
    pub(super) block: BlockId,
    pub(super) stmt: u32,
    pub(super) locals: Locals,
    /// Where the caller wants the return value ([`NO_SLOT`]: nowhere). A
    /// bare slot rather than `Option<Slot>`: 4 bytes, and the frame 88
    /// bytes instead of 96.
    pub(super) ret_dst: Slot,
}

/// Not a slot: a validated program's slots are `< num_locals <= u32::MAX`
/// (`Program::validate`, which the engine relies on), so none is
/// `u32::MAX`.
pub(super) const NO_SLOT: Slot = Slot::MAX;

/// A logical process: one rank.
#[derive(Debug)]
pub(super) struct Lp {
    pub(super) clock: f64,
    pub(super) state: LpState,
    pub(super) frames: SmallVec<[Frame; 1]>,
    /// Arrived, unmatched envelopes, in arrival order.
    /// (Both queues are [`Ring`]s: 16 bytes each in this record, where a
    /// `VecDeque` is 32.)
    pub(super) unexpected: Ring,
    /// Posted, unmatched receive requests, in posting order.
    pub(super) posted: Ring,
    /// Envelopes sent to this rank whose arrival event is still queued.
    pub(super) inflight: u32,
    /// ANY_SOURCE receives posted so far (user messages).
    pub(super) wildcards_posted: u32,
    /// Requests started and not yet waited for (`waitall()`), by id.
    /// Invariant: every id is a live request (each wait, test or waitany
    /// that releases a request removes it here), so no generation is kept
    /// beside it. A [`ThinVec`] (its length and capacity beside the items
    /// on the heap): 8 bytes in this record instead of a `Vec`'s 24, empty
    /// without an allocation, and 48 bytes on the heap for W2's 8 requests.
    pub(super) pending: ThinVec<u32>,
    /// Set while a blocking statement is between its post and wait phases.
    pub(super) wait: Option<Box<WaitSet>>,
    /// What few LPs need, and only for a while (a collective in progress,
    /// a blocking probe, the runaway-loop watch): one pointer for all
    /// three, so that an idle LP pays 8 bytes for them, not 24. Allocated
    /// when the first is set, freed when none is (see [`Lp::trim_aside`]).
    aside: Option<Box<Aside>>,
    /// When a blocked LP is scheduled to resume (`INFINITY`: not yet);
    /// a resume event at another time is stale and ignored.
    pub(super) wake_at: f64,
    pub(super) stats: Counters,
    /// Blocks run since the last one that communicated or read `wtime()`,
    /// modulo 2^16: it is only tested for multiples of [`SLICE_BLOCKS`]
    /// (4096, which divides 2^16), so wrapping changes nothing, and the
    /// two bytes saved keep the record at 216 bytes with `free_req`.
    pub(super) quiet_blocks: u16,
    /// The first of this rank's free request slots (`NO_REQ`: none), a
    /// list threaded through the slots (`Request::span`). A rank reuses the
    /// slots it freed, so its requests stay together in the slab from one
    /// iteration to the next instead of scattering over it (see
    /// `Engine::new_req`).
    pub(super) free_req: u32,
}

/// A rank's running totals: its [`RankStats`] less the finish time, which
/// is its clock once it has finished (8 bytes fewer per LP).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct Counters {
    pub(super) compute: f64,
    pub(super) comm: f64,
    pub(super) messages_sent: u64,
    pub(super) bytes_sent: u64,
}

impl Counters {
    /// Time computing or in communication overheads so far.
    pub(super) fn busy(&self) -> f64 {
        self.compute + self.comm
    }

    /// The rank's figures, finished at `finish`.
    pub(super) fn finished_at(self, finish: f64) -> RankStats {
        RankStats {
            finish,
            compute: self.compute,
            comm: self.comm,
            messages_sent: self.messages_sent,
            bytes_sent: self.bytes_sent,
        }
    }
}

/// The rarely used parts of an [`Lp`], behind its one `aside` pointer.
#[derive(Debug, Default)]
struct Aside {
    /// Set while a collective (or comm_split/comm_dup) is in progress.
    coll: Option<collective::CollExec>,
    /// Set while blocked in `probe`.
    probing: Option<p2p::Envelope>,
    /// Set once `quiet_blocks` reaches [`SLICE_BLOCKS`]; dropped when the
    /// LP communicates or reads `wtime()`. See [`Watch`].
    watch: Option<Watch>,
    /// Rendezvous requests (message ids, in match order) matched while the
    /// rank was outside MPI, on a machine whose library progresses only
    /// inside MPI calls: their clear-to-send waits for the rank's next
    /// call (`p2p.rs`, `answer_deferred`).
    deferred: Vec<u32>,
    /// The posted receives, while there are many (see [`PostedIndex`]);
    /// [`Lp::posted`] is then empty.
    posted: Option<PostedIndex>,
    /// The arrived envelopes, while there are many (see
    /// [`UnexpectedIndex`]); [`Lp::unexpected`] is then empty.
    unexpected: Option<UnexpectedIndex>,
}

impl Aside {
    fn unused(&self) -> bool {
        self.coll.is_none()
            && self.probing.is_none()
            && self.watch.is_none()
            && self.deferred.is_empty()
            && self.posted.is_none()
            && self.unexpected.is_none()
    }
}

/// A rank's posted receives once [`POSTED_INDEX_FROM`] of them wait at
/// once, indexed for matching. MPI matches an envelope with the first
/// receive, in posting order, that accepts it (context, source or
/// `ANY_SOURCE`, tag or `ANY_TAG`); scanning the queue for it costs the
/// queue's length per envelope, and removing from its middle as much, so
/// a rank that posts n receives and gets their envelopes in another order
/// paid O(n^2) (BENCHMARKS.md, the reversed fan-in). Here each receive
/// carries its posting number; those that name a source are kept per
/// (context, source), the `ANY_SOURCE` ones in one list, each in posting
/// order. The first match is the earlier of the first acceptable entry of
/// the envelope's (context, source) list and of the wildcard list: the
/// same receive the scan finds.
#[derive(Debug, Default)]
pub(super) struct PostedIndex {
    next: u64,
    len: usize,
    by_source: HashMap<(u32, u32), VecDeque<(u64, u32)>>,
    wild: VecDeque<(u64, u32)>,
}

/// From this many posted receives a rank's queue becomes a [`PostedIndex`]
/// (below it the scan of a few entries is cheaper than hashing).
pub(super) const POSTED_INDEX_FROM: usize = 64;

/// Where [`Lp::find_posted`] found a receive, for [`Lp::remove_posted`].
#[derive(Debug, Clone, Copy)]
pub(super) enum PostedAt {
    Queue(usize),
    Source(usize),
    Wild(usize),
}

impl PostedIndex {
    fn push(&mut self, r: u32, q: &Request) {
        let e = (self.next, r);
        self.next += 1;
        self.len += 1;
        if q.filter_peer() == ANY_SOURCE {
            self.wild.push_back(e);
        } else {
            self.by_source
                .entry((q.ctx, q.peer))
                .or_default()
                .push_back(e);
        }
    }

    fn find(&self, m: &Msg, reqs: &[Request]) -> Option<(PostedAt, u32)> {
        let tag_ok = |r: u32| {
            let t = reqs[r as usize].filter_tag();
            t == ANY_TAG || t == m.tag
        };
        let own = self.by_source.get(&(m.ctx, m.src)).and_then(|q| {
            q.iter()
                .position(|&(_, r)| tag_ok(r))
                .map(|i| (q[i].0, PostedAt::Source(i), q[i].1))
        });
        let wild = self
            .wild
            .iter()
            .position(|&(_, r)| reqs[r as usize].ctx == m.ctx && tag_ok(r))
            .map(|i| (self.wild[i].0, PostedAt::Wild(i), self.wild[i].1));
        match (own, wild) {
            (Some(a), Some(b)) => Some(if a.0 < b.0 { (a.1, a.2) } else { (b.1, b.2) }),
            (Some(a), None) | (None, Some(a)) => Some((a.1, a.2)),
            (None, None) => None,
        }
    }

    fn remove(&mut self, at: PostedAt, m: &Msg) -> Option<u32> {
        let r = match at {
            PostedAt::Source(i) => {
                let key = (m.ctx, m.src);
                let q = self.by_source.get_mut(&key)?;
                let r = q.remove(i)?.1;
                if q.is_empty() {
                    self.by_source.remove(&key);
                }
                r
            }
            PostedAt::Wild(i) => self.wild.remove(i)?.1,
            PostedAt::Queue(_) => return None,
        };
        self.len -= 1;
        Some(r)
    }

    /// The receives in posting order.
    fn ordered(&self) -> Vec<u32> {
        let mut all: Vec<(u64, u32)> = self
            .by_source
            .values()
            .flatten()
            .chain(&self.wild)
            .copied()
            .collect();
        all.sort_unstable();
        all.into_iter().map(|(_, r)| r).collect()
    }
}

/// A rank's arrived, unmatched envelopes once [`UNEXPECTED_INDEX_FROM`] of
/// them wait at once, indexed for matching: the counterpart of
/// [`PostedIndex`]. MPI matches a receive with the first envelope, in
/// arrival order, that it accepts; scanning the queue costs its length per
/// receive, so a rank that received n envelopes before posting their
/// receives in another order paid O(n^2) (BENCHMARKS.md, the late
/// reversed fan-in). Each envelope carries its arrival number and is kept
/// in its (context, source) list and in one arrival-ordered map. A receive
/// naming its source takes the first acceptable entry of its list (the
/// earliest arrival of that source it accepts: the scan's answer); an
/// `ANY_SOURCE` receive or probe walks the arrival order, as the scan did.
#[derive(Debug, Default)]
pub(super) struct UnexpectedIndex {
    next: u64,
    by_source: HashMap<(u32, u32), VecDeque<(u64, u32)>>,
    order: BTreeMap<u64, u32>,
}

/// From this many arrived envelopes a rank's queue becomes an
/// [`UnexpectedIndex`] (below it the scan is cheaper than hashing).
pub(super) const UNEXPECTED_INDEX_FROM: usize = 64;

/// Where [`Lp::find_unexpected`] found an envelope, for
/// [`Lp::remove_unexpected`].
#[derive(Debug, Clone, Copy)]
pub(super) enum UnexpectedAt {
    Queue(usize),
    /// The envelope's arrival number in the index.
    Index(u64),
}

impl UnexpectedIndex {
    fn push(&mut self, m: u32, msg: &Msg) {
        let n = self.next;
        self.next += 1;
        self.order.insert(n, m);
        self.by_source
            .entry((msg.ctx, msg.src))
            .or_default()
            .push_back((n, m));
    }

    fn find(&self, env: &p2p::Envelope, msgs: &[Msg]) -> Option<(u64, u32)> {
        if env.peer == ANY_SOURCE {
            self.order
                .iter()
                .find(|&(_, &m)| msgs[m as usize].matches(env))
                .map(|(&n, &m)| (n, m))
        } else {
            self.by_source
                .get(&(env.ctx, env.peer))?
                .iter()
                .find(|&&(_, m)| msgs[m as usize].matches(env))
                .copied()
        }
    }

    fn remove(&mut self, n: u64, msg: &Msg) -> Option<u32> {
        let m = self.order.remove(&n)?;
        let key = (msg.ctx, msg.src);
        if let Some(q) = self.by_source.get_mut(&key) {
            if let Some(i) = q.iter().position(|&(k, _)| k == n) {
                q.remove(i);
            }
            if q.is_empty() {
                self.by_source.remove(&key);
            }
        }
        Some(m)
    }
}

impl Lp {
    /// A new LP at time 0, ready, in `frame`.
    pub(super) fn new(frame: Frame) -> Lp {
        Lp {
            clock: 0.0,
            state: LpState::Ready,
            frames: smallvec::smallvec![frame],
            unexpected: Ring::default(),
            posted: Ring::default(),
            inflight: 0,
            wildcards_posted: 0,
            pending: ThinVec::new(),
            wait: None,
            aside: None,
            wake_at: f64::INFINITY,
            stats: Counters::default(),
            quiet_blocks: 0,
            free_req: NO_REQ,
        }
    }

    /// Whether the rank has posted receives not yet matched.
    pub(super) fn has_posted(&self) -> bool {
        !self.posted.is_empty() || self.aside.as_deref().is_some_and(|a| a.posted.is_some())
    }

    /// The rank's unmatched posted receives, in posting order.
    pub(super) fn posted_receives(&self) -> Vec<u32> {
        match self.aside.as_deref().and_then(|a| a.posted.as_ref()) {
            Some(ix) => ix.ordered(),
            None => self.posted.iter().copied().collect(),
        }
    }

    /// Whether envelopes arrived that no receive has matched yet.
    pub(super) fn has_unexpected(&self) -> bool {
        !self.unexpected.is_empty()
            || self
                .aside
                .as_deref()
                .is_some_and(|a| a.unexpected.is_some())
    }

    /// The rank's arrived, unmatched envelopes, in arrival order.
    pub(super) fn unexpected_envelopes(&self) -> Vec<u32> {
        match self.aside.as_deref().and_then(|a| a.unexpected.as_ref()) {
            Some(ix) => ix.order.values().copied().collect(),
            None => self.unexpected.iter().copied().collect(),
        }
    }

    /// Queues envelope `m` (a slot of `msgs`), last in arrival order.
    pub(super) fn push_unexpected(&mut self, m: u32, msgs: &[Msg]) {
        if let Some(ix) = self
            .aside
            .as_deref_mut()
            .and_then(|a| a.unexpected.as_mut())
        {
            ix.push(m, &msgs[m as usize]);
            return;
        }
        if self.unexpected.len() + 1 < UNEXPECTED_INDEX_FROM {
            self.unexpected.push_back(m);
            return;
        }
        // Many at once: the queue becomes an index, in the same order.
        let mut ix = UnexpectedIndex::default();
        for &x in &self.unexpected {
            ix.push(x, &msgs[x as usize]);
        }
        ix.push(m, &msgs[m as usize]);
        self.unexpected = Ring::default();
        self.aside_mut().unexpected = Some(ix);
    }

    /// The first envelope, in arrival order, that `env` accepts.
    pub(super) fn find_unexpected(
        &self,
        env: &p2p::Envelope,
        msgs: &[Msg],
    ) -> Option<(UnexpectedAt, u32)> {
        match self.aside.as_deref().and_then(|a| a.unexpected.as_ref()) {
            Some(ix) => ix.find(env, msgs).map(|(n, m)| (UnexpectedAt::Index(n), m)),
            None => self
                .unexpected
                .iter()
                .position(|&m| msgs[m as usize].matches(env))
                .map(|i| (UnexpectedAt::Queue(i), self.unexpected[i])),
        }
    }

    /// Removes the envelope [`Lp::find_unexpected`] found (`msg` is its
    /// record; nothing changed in between).
    pub(super) fn remove_unexpected(&mut self, at: UnexpectedAt, msg: &Msg) -> Option<u32> {
        let n = match at {
            UnexpectedAt::Queue(i) => return self.unexpected.remove(i),
            UnexpectedAt::Index(n) => n,
        };
        let a = self.aside.as_deref_mut()?;
        let ix = a.unexpected.as_mut()?;
        let m = ix.remove(n, msg);
        if ix.order.is_empty() {
            a.unexpected = None;
            self.trim_aside();
        }
        m
    }

    /// Posts receive `r` (a slot of `reqs`), last in posting order.
    pub(super) fn push_posted(&mut self, r: u32, reqs: &[Request]) {
        if let Some(ix) = self.aside.as_deref_mut().and_then(|a| a.posted.as_mut()) {
            ix.push(r, &reqs[r as usize]);
            return;
        }
        if self.posted.len() + 1 < POSTED_INDEX_FROM {
            self.posted.push_back(r);
            return;
        }
        // Many at once: the queue becomes an index, in the same order.
        let mut ix = PostedIndex::default();
        for &x in &self.posted {
            ix.push(x, &reqs[x as usize]);
        }
        ix.push(r, &reqs[r as usize]);
        self.posted = Ring::default();
        self.aside_mut().posted = Some(ix);
    }

    /// The first posted receive, in posting order, that accepts `m`.
    pub(super) fn find_posted(&self, m: &Msg, reqs: &[Request]) -> Option<(PostedAt, u32)> {
        match self.aside.as_deref().and_then(|a| a.posted.as_ref()) {
            Some(ix) => ix.find(m, reqs),
            None => self
                .posted
                .iter()
                .position(|&r| reqs[r as usize].accepts(m))
                .map(|i| (PostedAt::Queue(i), self.posted[i])),
        }
    }

    /// Removes the receive [`Lp::find_posted`] found for `m` (nothing
    /// changed in between).
    pub(super) fn remove_posted(&mut self, at: PostedAt, m: &Msg) -> Option<u32> {
        if let PostedAt::Queue(i) = at {
            return self.posted.remove(i);
        }
        let a = self.aside.as_deref_mut()?;
        let ix = a.posted.as_mut()?;
        let r = ix.remove(at, m);
        if ix.len == 0 {
            a.posted = None;
            self.trim_aside();
        }
        r
    }

    fn aside_mut(&mut self) -> &mut Aside {
        self.aside.get_or_insert_with(Box::default)
    }

    /// Frees the aside once nothing in it is in use.
    fn trim_aside(&mut self) {
        if self.aside.as_deref().is_some_and(Aside::unused) {
            self.aside = None;
        }
    }

    /// The fast-forward's exact shift (`Engine::ff_shift`): this rank's
    /// times `delta` later, with `busy` more compute and communication time
    /// before its statement under way (its wait set's and collective's
    /// start).
    pub(super) fn shift_times(&mut self, delta: f64, busy: f64) {
        self.clock += delta;
        if self.wake_at.is_finite() {
            self.wake_at += delta;
        }
        if let Some(w) = self.wait.as_deref_mut() {
            w.started += delta;
            w.busy_before += busy;
        }
        if let Some(c) = self.aside.as_deref_mut().and_then(|a| a.coll.as_mut()) {
            c.shift(delta, busy);
        }
    }

    /// Whether a collective is in progress (its state may be taken out
    /// for a moment by [`Lp::take_coll`]).
    pub(super) fn in_collective(&self) -> bool {
        self.aside.as_deref().is_some_and(|a| a.coll.is_some())
    }

    /// Takes the collective's state out to work on it; the aside stays
    /// allocated for [`Lp::put_coll`] (or [`Lp::end_coll`]).
    pub(super) fn take_coll(&mut self) -> Option<collective::CollExec> {
        self.aside.as_deref_mut().and_then(|a| a.coll.take())
    }

    /// Puts the collective's state (back).
    pub(super) fn put_coll(&mut self, exec: collective::CollExec) {
        self.aside_mut().coll = Some(exec);
    }

    /// The collective has ended (its state was taken and dropped).
    pub(super) fn end_coll(&mut self) {
        self.trim_aside();
    }

    /// The envelope a blocking `probe` waits for.
    pub(super) fn probing(&self) -> Option<&p2p::Envelope> {
        self.aside.as_deref().and_then(|a| a.probing.as_ref())
    }

    pub(super) fn set_probing(&mut self, env: Option<p2p::Envelope>) {
        match env {
            Some(env) => self.aside_mut().probing = Some(env),
            None => {
                if let Some(a) = self.aside.as_deref_mut() {
                    a.probing = None;
                }
                self.trim_aside();
            }
        }
    }

    /// The frames, and the watch if there is one (two fields borrowed
    /// apart, as the watch compares the frames with its snapshot).
    pub(super) fn frames_and_watch(&mut self) -> (&SmallVec<[Frame; 1]>, Option<&mut Watch>) {
        (
            &self.frames,
            self.aside.as_deref_mut().and_then(|a| a.watch.as_mut()),
        )
    }

    /// The frames, and the watch, made by `f` if there is none.
    pub(super) fn frames_and_watch_or_insert(
        &mut self,
        f: impl FnOnce() -> Watch,
    ) -> (&SmallVec<[Frame; 1]>, &mut Watch) {
        let aside = self.aside.get_or_insert_with(Box::default);
        (&self.frames, aside.watch.get_or_insert_with(f))
    }

    /// Defers the clear-to-send of rendezvous message `m` to this rank's
    /// next MPI call.
    pub(super) fn defer_cts(&mut self, m: u32) {
        self.aside_mut().deferred.push(m);
    }

    /// Takes the deferred rendezvous messages, in match order.
    pub(super) fn take_deferred(&mut self) -> Vec<u32> {
        let Some(a) = self.aside.as_deref_mut() else {
            return Vec::new();
        };
        let d = std::mem::take(&mut a.deferred);
        self.trim_aside();
        d
    }

    /// Drops the watch (the LP communicated or read `wtime()`).
    #[inline]
    pub(super) fn clear_watch(&mut self) {
        if let Some(a) = self.aside.as_deref_mut()
            && a.watch.is_some()
        {
            a.watch = None;
            self.trim_aside();
        }
    }
}

pub(super) enum Flow {
    Continue,
    Yield,
    Block,
}

#[cfg(test)]
mod size_tests {
    use super::*;

    /// An idle LP must stay well under 1 KiB (issue 2); this is the part of
    /// it in the LP array. Its requests and wait set live in slabs.
    #[test]
    fn lp_record_is_small() {
        let lp = std::mem::size_of::<Lp>();
        eprintln!(
            "Lp {lp} B, Frame {} B, Request {} B, Msg {} B",
            std::mem::size_of::<Frame>(),
            std::mem::size_of::<Request>(),
            std::mem::size_of::<Msg>()
        );
        assert!(lp <= 512, "Lp is {lp} bytes");
    }

    /// The sizes the layout comments above are written for.
    #[test]
    fn record_sizes() {
        assert_eq!(std::mem::size_of::<Request>(), 56);
        assert_eq!(std::mem::size_of::<Msg>(), 56);
        assert_eq!(std::mem::size_of::<Frame>(), 88);
        assert_eq!(std::mem::size_of::<Lp>(), 216);
    }

    fn receive(peer: u32, tag: i32, ctx: u32) -> Request {
        let env = p2p::Envelope {
            peer,
            tag,
            bytes: 8,
            ctx,
            comm: ctx / 2,
        };
        Request::receive(0, u32::MAX, &env, 0)
    }

    fn envelope(src: u32, tag: i32, ctx: u32) -> Msg {
        Msg {
            src,
            dst: 0,
            tag,
            ctx,
            bytes: 8,
            arrival: 0.0,
            send_req_id: NO_SEND_REQ,
            recv_req: 0,
            span: 0,
            written: false,
            sent: 0.0,
        }
    }

    /// A deterministic stream of draws in `0..n` (a 64-bit LCG), for the
    /// randomized index tests.
    fn draws(seed: u64) -> impl FnMut(u64) -> u64 {
        let mut x = seed;
        move |n| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % n
        }
    }

    /// A rank with no matching state yet.
    fn fresh_lp() -> Lp {
        Lp::new(Frame {
            func: 0,
            block: BlockId::new(0),
            stmt: 0,
            locals: smallvec::smallvec![],
            ret_dst: NO_SLOT,
        })
    }

    /// A receive's filter drawn at random: (source or ANY_SOURCE, tag or
    /// ANY_TAG, one of two contexts).
    fn random_filter(next: &mut impl FnMut(u64) -> u64) -> (u32, i32, u32) {
        let peer = if next(8) == 0 {
            ANY_SOURCE
        } else {
            next(6) as u32
        };
        let tag = if next(5) == 0 {
            ANY_TAG
        } else {
            next(3) as i32
        };
        (peer, tag, next(2) as u32)
    }

    /// How often a randomized index test ran indexed, and came back to the
    /// queue once empty.
    #[derive(Default)]
    struct Crossings {
        indexed: u32,
        back: u32,
    }

    impl Crossings {
        fn observe(&mut self, indexed: bool, empty: bool) {
            if indexed {
                self.indexed += 1;
            } else if self.indexed > 0 && empty {
                self.back += 1;
            }
        }

        /// Enough matches, many steps on the index, and a return to the queue.
        fn check(&self, matched: u32) {
            assert!(matched > 5_000, "{matched} matches");
            assert!(
                self.indexed > 1_000 && self.back > 0,
                "{} {}",
                self.indexed,
                self.back
            );
        }
    }

    /// The index finds, for every envelope, the receive the scan of the
    /// posting-order queue finds (MPI's first match), through random posts
    /// (named sources, ANY_SOURCE, ANY_TAG, two contexts) and arrivals,
    /// across the switch to the index and back.
    #[test]
    fn posted_index_matches_like_the_queue() {
        let mut next = draws(11);
        let mut lp = fresh_lp();
        let mut reqs: Vec<Request> = Vec::new();
        let mut model: Vec<u32> = Vec::new();
        let mut matched = 0;
        let mut crossings = Crossings::default();
        for step in 0..40_000 {
            // Bursts of posts (to cross POSTED_INDEX_FROM), then arrivals.
            let posting = (step / 500) % 2 == 0;
            if posting && next(4) != 0 {
                let (peer, tag, ctx) = random_filter(&mut next);
                let q = receive(peer, tag, ctx);
                let r = reqs.len() as u32;
                reqs.push(q);
                lp.push_posted(r, &reqs);
                model.push(r);
            } else {
                let m = envelope(next(6) as u32, next(3) as i32, next(2) as u32);
                let want = model.iter().position(|&r| reqs[r as usize].accepts(&m));
                let got = lp.find_posted(&m, &reqs);
                assert_eq!(got.map(|g| g.1), want.map(|i| model[i]), "step {step}");
                if let (Some((at, r)), Some(i)) = (got, want) {
                    assert_eq!(lp.remove_posted(at, &m), Some(r));
                    model.remove(i);
                    matched += 1;
                }
            }
            assert_eq!(lp.posted_receives(), model, "step {step}");
            assert_eq!(lp.has_posted(), !model.is_empty());
            let indexed = lp.aside.as_deref().is_some_and(|a| a.posted.is_some());
            crossings.observe(indexed, model.is_empty());
        }
        crossings.check(matched);
    }

    /// The envelope index finds, for every receive, the envelope the scan
    /// of the arrival-order queue finds (MPI's first match), through random
    /// arrivals and receives (named sources, ANY_SOURCE, ANY_TAG, two
    /// contexts), across the switch to the index and back.
    #[test]
    fn unexpected_index_matches_like_the_queue() {
        let mut next = draws(23);
        let mut lp = fresh_lp();
        let mut msgs: Vec<Msg> = Vec::new();
        let mut model: Vec<u32> = Vec::new();
        let mut matched = 0;
        let mut crossings = Crossings::default();
        for step in 0..40_000 {
            // Bursts of arrivals (to cross UNEXPECTED_INDEX_FROM), then receives.
            let arriving = (step / 500) % 2 == 0;
            if arriving && next(4) != 0 {
                let m = msgs.len() as u32;
                msgs.push(envelope(next(6) as u32, next(3) as i32, next(2) as u32));
                lp.push_unexpected(m, &msgs);
                model.push(m);
            } else {
                let (peer, tag, ctx) = random_filter(&mut next);
                let env = p2p::Envelope {
                    peer,
                    tag,
                    bytes: 8,
                    ctx,
                    comm: ctx / 2,
                };
                let want = model.iter().position(|&m| msgs[m as usize].matches(&env));
                let got = lp.find_unexpected(&env, &msgs);
                assert_eq!(got.map(|g| g.1), want.map(|i| model[i]), "step {step}");
                if let (Some((at, m)), Some(i)) = (got, want) {
                    assert_eq!(lp.remove_unexpected(at, &msgs[m as usize]), Some(m));
                    model.remove(i);
                    matched += 1;
                }
            }
            assert_eq!(lp.unexpected_envelopes(), model, "step {step}");
            assert_eq!(lp.has_unexpected(), !model.is_empty());
            let indexed = lp.aside.as_deref().is_some_and(|a| a.unexpected.is_some());
            crossings.observe(indexed, model.is_empty());
        }
        crossings.check(matched);
    }

    #[test]
    fn spans_intern_to_one_id_each() {
        let mut t = SpanTable::default();
        let a = Span {
            start: 3,
            end: 9,
            line: 1,
            col: 4,
        };
        let b = Span {
            start: 3,
            end: 5,
            line: 1,
            col: 4,
        };
        let far = Span {
            start: u32::MAX,
            end: u32::MAX,
            line: 9,
            col: 1,
        };
        let (ia, ib, ifar) = (t.intern(a), t.intern(b), t.intern(far));
        assert_eq!((t.intern(a), t.intern(b), t.intern(far)), (ia, ib, ifar));
        assert_eq!((t.get(ia), t.get(ib), t.get(ifar)), (a, b, far));
        assert_eq!(t.spans.len(), 3);
    }
}
