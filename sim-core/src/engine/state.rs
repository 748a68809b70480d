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
    /// The send request, for rendezvous messages (completed after CTS).
    pub(super) send_req: Option<u32>,
    /// The matched receive request.
    pub(super) recv_req: u32,
    /// Where it was sent (reports of messages never received).
    pub(super) span: Span,
    /// When it was sent (timelines).
    pub(super) sent: f64,
}

#[derive(Debug, Clone)]
pub(super) struct Request {
    pub(super) generation: u32,
    pub(super) owner: u32,
    /// For an ANY_SOURCE receive, which one of its rank's (`u32::MAX`: not one).
    pub(super) wild_nth: u32,
    pub(super) is_send: bool,
    pub(super) done: bool,
    /// When the operation's data is there (recv) or the buffer is free (send).
    pub(super) ready_at: f64,
    /// CPU time charged when the owner waits for it (o_r for receives).
    pub(super) overhead: f64,
    pub(super) status: MsgStatus,
    /// Receive filters / send description (for matching and reports), in
    /// world ranks.
    pub(super) peer: u32,
    pub(super) tag: i32,
    pub(super) bytes: u64,
    pub(super) ctx: u32,
    /// The communicator, to report the status's source in its ranks.
    pub(super) comm: u32,
    pub(super) span: Span,
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
    pub(super) reqs: Vec<ReqRef>,
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
}

impl WaitSet {
    pub(super) fn clear(&mut self) {
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
/// pointers (measured: ~20% more events/s at 65,536 ranks).
pub(super) type Locals = SmallVec<[Value; 6]>;

#[derive(Debug, Clone)]
pub(super) struct Frame {
    pub(super) func: u32,
    pub(super) block: BlockId,
    pub(super) stmt: u32,
    pub(super) locals: Locals,
    /// Where the caller wants the return value.
    pub(super) ret_dst: Option<Slot>,
}

/// A logical process: one rank.
#[derive(Debug)]
pub(super) struct Lp {
    pub(super) clock: f64,
    pub(super) state: LpState,
    pub(super) frames: SmallVec<[Frame; 1]>,
    /// Arrived, unmatched envelopes, in arrival order.
    pub(super) unexpected: VecDeque<u32>,
    /// Posted, unmatched receive requests, in posting order.
    pub(super) posted: VecDeque<u32>,
    /// Envelopes sent to this rank whose arrival event is still queued.
    pub(super) inflight: u32,
    /// ANY_SOURCE receives posted so far (user messages).
    pub(super) wildcards_posted: u32,
    /// Requests started and not yet waited for (`waitall()`).
    pub(super) pending: Vec<ReqRef>,
    /// Set while a blocking statement is between its post and wait phases.
    pub(super) wait: Option<Box<WaitSet>>,
    /// Set while a collective (or comm_split/comm_dup) is in progress.
    pub(super) coll: Option<Box<collective::CollExec>>,
    /// Set while blocked in `probe`.
    pub(super) probing: Option<Box<p2p::Envelope>>,
    /// When a blocked LP is scheduled to resume (`INFINITY`: not yet);
    /// a resume event at another time is stale and ignored.
    pub(super) wake_at: f64,
    pub(super) stats: RankStats,
    /// Blocks run since the last one that communicated or read `wtime()`.
    pub(super) quiet_blocks: u32,
    /// Set once `quiet_blocks` reaches [`SLICE_BLOCKS`]; dropped when the
    /// LP communicates or reads `wtime()`. See [`Watch`].
    pub(super) watch: Option<Box<Watch>>,
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
}
