//! Calibration from several patterns (`parsim calibrate net --pingping
//! --stream --bistream`): the parameters a ping-pong cannot show, fitted
//! jointly with it from the other point-to-point patterns of the same
//! system.
//!
//! **Which pattern measures what** (the split Netgauge's PRTT method makes:
//! Hoefler, Lichei, Rehm, "Low-Overhead LogGP Parameter Assessment for
//! Modern Interconnection Networks", IPDPS 2007, a pattern per parameter).
//! A ping-pong gives `o_s + L + o_r` and `G` per size range, and nothing
//! about `g` (consecutive uses of an adapter in a ping-pong are a whole
//! one-way time apart), about how the overheads and the latency split the
//! one-way time, or about how the two directions of an adapter share it.
//! - A stream (`osu_bw`: a window of back-to-back messages, one direction)
//!   is spaced `max(o_s, o_r, g + n·G)` per message in the model
//!   ([`models::LogGpRun`]'s `transfer`): it shows the CPU overheads (small
//!   messages; so, with the ping-pong, the split) and the adapter's
//!   occupancy where it is the larger.
//! - A crossing (IMB PingPing: two ranks send to each other at once) and a
//!   bidirectional stream (`osu_bibw`) load both directions of both
//!   adapters: two equal messages crossing take `(1 − d)·(g + n·G − L)`
//!   longer than one, so small messages show `g` and large ones the duplex
//!   overlap `d`.
//!
//! **Method.** Candidates are the overhead splits (each a ping-pong fit:
//! `o_s + o_r` from 10% to 90% of the smallest time, unless given) times a
//! grid of `g` and `d`, refined twice around the best. Each candidate is
//! judged by simulating every given pattern's loop (the benchmark's own
//! calls; the engine's protocols, rendezvous included) and the ping-pong on
//! the machine it makes, so the fit and the model cannot disagree. The
//! cost is the sum over the tables of the median absolute log ratio of
//! simulated to measured times plus a tenth of its mean (a relative error
//! that weighs a 1 µs miss at 0 bytes like a 1 ms miss at 1 MB; every table
//! counts alike; robust to the sizes the model cannot follow, see `cost`). A
//! parameter keeps LogGP's default (`g = 0`, full duplex, the 40% split),
//! reported as assumed, unless it lowers the cost by more than 2% (an
//! Occam rule, in the spirit of an information criterion: a parameter
//! the tables barely feel is not taken from them); `g`, a per-message
//! cost, must also lower the cost of the small messages (each table's
//! smallest third) by more than 2%: on the Alaska cluster a g of 45 ns
//! that only helped mid-size streams capped 16 pairs' message rate at a
//! quarter of the measured one.
//!
//! A stream table also splits each ping-pong segment's slope into the
//! adapter's time per byte and latency per byte ([`apply_stream`]).

use models::{Duplex, LogGpMachine};
use rayon::prelude::*;
use sim_core::engine::PrintLine;

use crate::Error;

/// The point-to-point patterns besides the ping-pong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    /// IMB PingPing: ranks 0 and 1 isend to each other, recv, wait; time
    /// per repetition.
    PingPing,
    /// osu_bw: rank 0 sends a window of 64 messages (isend, waitall), rank
    /// 1 receives them and acknowledges with 4 bytes; the table's
    /// bandwidth read as time per message.
    Stream,
    /// osu_bibw: both ranks post 64 receives and 64 sends, waitall; the
    /// table's bandwidth (both directions' bytes) read as time per message.
    BiStream,
}

impl Pattern {
    /// The benchmark's name.
    pub fn name(self) -> &'static str {
        match self {
            Pattern::PingPing => "PingPing",
            Pattern::Stream => "osu_bw",
            Pattern::BiStream => "osu_bibw",
        }
    }

    fn program(self) -> &'static str {
        match self {
            Pattern::PingPing => PINGPING,
            Pattern::Stream => STREAM,
            Pattern::BiStream => BISTREAM,
        }
    }

    /// Whether both ranks send at once, loading both directions of each
    /// adapter (what shows the duplex).
    fn crosses(self) -> bool {
        matches!(self, Pattern::PingPing | Pattern::BiStream)
    }

    /// The ranks whose times are averaged (IMB's t_avg; OSU's rank 0).
    fn ranks(self) -> &'static [u32] {
        match self {
            Pattern::PingPing => &[0, 1],
            Pattern::Stream | Pattern::BiStream => &[0],
        }
    }
}

/// PingPing as IMB times it, on ranks 0 and 1: two warm-up exchanges, then
/// `reps` of (isend, recv, wait), time per repetition in seconds.
const PINGPING: &str = "\
param bytes = 0
param reps = 40
if rank < 2 {
    for i in 0 .. 2 {
        let w = isend(to: 1 - rank, bytes: bytes)
        recv(from: 1 - rank, bytes: bytes)
        wait(w)
    }
    let t0 = wtime()
    for i in 0 .. reps {
        let r = isend(to: 1 - rank, bytes: bytes)
        recv(from: 1 - rank, bytes: bytes)
        wait(r)
    }
    print((wtime() - t0) / reps)
}
";

/// osu_bw's loop (OMB 5.6.2 `mpi/pt2pt/osu_bw.c`: window 64, an ack of 4
/// bytes after each window), fewer iterations: seconds per message, the
/// inverse of its bandwidth in bytes per second divided by the size.
const STREAM: &str = "\
param bytes = 0
param window = 64
param loops = 4
if rank == 0 {
    let t0 = wtime()
    for i in 0 .. loops + 1 {
        if i == 1 { t0 = wtime() }
        for j in 0 .. window { let r = isend(to: 1, bytes: bytes, tag: 100) }
        waitall()
        recv(from: 1, bytes: 4, tag: 101)
    }
    print((wtime() - t0) / (loops * window))
} else if rank == 1 {
    for i in 0 .. loops + 1 {
        for j in 0 .. window { let r = irecv(from: 0, bytes: bytes, tag: 100) }
        waitall()
        send(to: 0, bytes: 4, tag: 101)
    }
}
";

/// osu_bibw's loop (OMB 5.6.2 `mpi/pt2pt/osu_bibw.c`: each rank posts a
/// window of 64 receives and 64 sends and waits for all): seconds per
/// message of both directions together, as its bandwidth counts both.
const BISTREAM: &str = "\
param bytes = 0
param window = 64
param loops = 4
if rank < 2 {
    let t0 = wtime()
    for i in 0 .. loops + 1 {
        if i == 1 { t0 = wtime() }
        for j in 0 .. window { let r = irecv(from: 1 - rank, bytes: bytes, tag: 10) }
        for j in 0 .. window { let s = isend(to: 1 - rank, bytes: bytes, tag: 10) }
        waitall()
    }
    print((wtime() - t0) / (2 * loops * window))
}
";

/// PingPong as IMB times it: rank 0 sends, rank 1 sends back; half the
/// round trip, seconds.
const PINGPONG: &str = "\
param bytes = 0
param reps = 40
fn exchange() {
    if rank == 0 {
        send(to: 1, bytes: bytes)
        recv(from: 1, bytes: bytes)
    } else {
        recv(from: 0, bytes: bytes)
        send(to: 0, bytes: bytes)
    }
}
if rank < 2 {
    for i in 0 .. 2 { exchange() }
    let t0 = wtime()
    for i in 0 .. reps { exchange() }
    print((wtime() - t0) / (2 * reps))
}
";

/// Splits each segment's ping-pong slope into the adapter's time per byte
/// `G` and latency per byte, from a stream table: a stream of `n`-byte
/// messages is spaced at least `n·G` per message (the adapter takes one
/// message's bytes at a time), so `G <= t(n) / n` for every stream point,
/// and the smallest such bound among the stream's points in the segment's
/// size range is taken ([`stream_gap_per_byte`]). Where it is below the
/// ping-pong's slope `b`, the segment gets `G` from the stream and `b − G` as latency per byte: the
/// ping-pong's one-way time is unchanged, and a stream of such messages
/// runs at the stream's rate (a ping-pong is not a stream: pipelined
/// protocols deliver one message's last byte later than the adapter's
/// throughput alone would). Returns a line per changed segment.
pub fn apply_stream(
    fit: &mut calibrate::ChannelFit,
    stream: &calibrate::Table,
    label: &str,
) -> Vec<String> {
    let froms: Vec<u64> = fit.segments.iter().map(|s| s.from).collect();
    let mut lines = Vec::new();
    for (k, segment) in fit.segments.iter_mut().enumerate() {
        let upto = froms.get(k + 1).copied().unwrap_or(u64::MAX);
        let points: Vec<&calibrate::Point> = stream
            .points
            .iter()
            .filter(|p| p.bytes > 0 && p.bytes >= segment.from && p.bytes < upto)
            .collect();
        let last = k + 1 == froms.len();
        let bound = stream_gap_per_byte(&points, last);
        let slope = segment.gap_per_byte + segment.latency_per_byte;
        if bound < segment.gap_per_byte {
            segment.gap_per_byte = bound;
            segment.latency_per_byte = slope - bound;
            lines.push(format!(
                "  from {} B: G = {:.6} ns/B from {label} (the ping-pong's slope {:.6} ns/B: \
                 the rest, {:.6} ns/B, is latency per byte)",
                segment.from,
                bound * 1e9,
                slope * 1e9,
                (slope - bound) * 1e9
            ));
        }
    }
    lines
}

/// A stream's per-byte time that rises by more than this factor from a
/// segment's fastest point to its largest one: the segment's sizes cross
/// from one regime of the stream into a slower one (the buffers leave the
/// caches), and no single `G` honours every point's bound.
pub const STREAM_RISE: f64 = 1.2;

/// The adapter's time per byte `G` that a stream's points of one segment
/// give (`INFINITY` without points). Within one regime a stream's time per
/// message is `c + n·G` (`c` the per-message costs), so `t(n)/n = G + c/n`
/// falls with `n` and its smallest value, at the largest size, is the
/// tightest bound on `G`: that is taken. Where, in the `last` segment (the
/// one that prices every size beyond the table), `t(n)/n` instead rises
/// towards the largest sizes by more than [`STREAM_RISE`], the
/// segment's sizes reach a slower regime (on the development machine the
/// stream of 2 MiB runs at 6.4 GB/s, of 8-128 MiB at 2.8-3.4 GB/s, in one
/// ping-pong segment), and a bound from the fast points would price every
/// larger message at the fast rate: then `G` is the slope of the time per
/// message against the size over the segment's points (ordinary least
/// squares, which the largest sizes, those the segment extends to,
/// dominate), LogGP's `G` as the time per byte of long messages
/// (Alexandrov et al., "LogGP", SPAA 1995).
pub fn stream_gap_per_byte(points: &[&calibrate::Point], last: bool) -> f64 {
    let per_byte = |p: &calibrate::Point| p.seconds / p.bytes as f64;
    let bound = points
        .iter()
        .map(|p| per_byte(p))
        .fold(f64::INFINITY, f64::min);
    let Some(largest) = points.iter().max_by_key(|p| p.bytes) else {
        return bound;
    };
    if !last || per_byte(largest) <= STREAM_RISE * bound {
        return bound;
    }
    // Ordinary least squares of t against n: the slope, which the largest
    // sizes dominate.
    let k = points.len() as f64;
    let mean_n = points.iter().map(|p| p.bytes as f64).sum::<f64>() / k;
    let mean_t = points.iter().map(|p| p.seconds).sum::<f64>() / k;
    let (mut snt, mut snn) = (0.0, 0.0);
    for p in points {
        let dn = p.bytes as f64 - mean_n;
        snt += dn * (p.seconds - mean_t);
        snn += dn * dn;
    }
    let g = snt / snn;
    if g.is_finite() && g > 0.0 { g } else { bound }
}

/// The overhead splits a joint fit tries: `o_s + o_r` from 10% to 90% of
/// the smallest ping-pong time, in steps of 5%.
pub const MIN_OVERHEAD_FRACTION: f64 = 0.1;
/// See [`MIN_OVERHEAD_FRACTION`].
pub const MAX_OVERHEAD_FRACTION: f64 = 0.9;
/// See [`MIN_OVERHEAD_FRACTION`].
pub const OVERHEAD_FRACTION_STEP: f64 = 0.05;

/// One measured point of a pattern against the fitted model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PatternPoint {
    pub bytes: u64,
    /// Measured seconds (per repetition, or per message of a stream).
    pub measured: f64,
    /// Simulated with the fitted parameters.
    pub predicted: f64,
    /// Simulated with the ping-pong-only machine (`g = 0`, the default
    /// split and the duplex given or full).
    pub before: f64,
}

/// One pattern's table against the fit.
#[derive(Debug, Clone, PartialEq)]
pub struct PatternFit {
    pub pattern: Pattern,
    pub points: Vec<PatternPoint>,
}

impl PatternFit {
    /// Median and maximum |relative error| of the fitted model.
    pub fn error(&self) -> (f64, f64) {
        summary(self.points.iter().map(|p| (p.predicted, p.measured)))
    }

    /// Median and maximum |relative error| before.
    pub fn error_before(&self) -> (f64, f64) {
        summary(self.points.iter().map(|p| (p.before, p.measured)))
    }
}

/// The fitted parameters and every pattern's table against them.
#[derive(Debug, Clone, PartialEq)]
pub struct JointFit {
    /// g, seconds: the adapter's per-message occupancy at both ends.
    pub gap: f64,
    /// Whether the tables determined `g` (false: 0 assumed).
    pub gap_identified: bool,
    /// The duplex overlap share.
    pub duplex: Duplex,
    /// How the duplex was decided.
    pub duplex_origin: Origin,
    /// Segments whose crossings have a duplex of their own
    /// (`fit_segment_duplex`).
    pub segment_duplex: Vec<SegmentDuplex>,
    /// `o_s + o_r` as a fraction of the smallest ping-pong time, when it was
    /// fitted (`None`: given, or the default because not determined).
    pub overhead_fraction: Option<f64>,
    /// The ping-pong simulated with the fitted parameters: median and max
    /// |relative error|.
    pub pingpong_error: (f64, f64),
    pub patterns: Vec<PatternFit>,
    /// What the stream table changed in the segments (`apply_stream`).
    pub stream_notes: Vec<String>,
}

/// Where a parameter came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Fitted,
    Given,
    /// Not determined by the tables: the default.
    Assumed,
}

impl JointFit {
    /// What was fitted, from which table, and how well (for the machine
    /// file's header and the report).
    pub fn summary(&self) -> Vec<String> {
        let names: Vec<&str> = self.patterns.iter().map(|p| p.pattern.name()).collect();
        let mut lines = Vec::new();
        for p in &self.patterns {
            let (median, max) = p.error();
            let (median0, max0) = p.error_before();
            lines.push(format!(
                "{} ({} points): model vs measured median |error| {:.1}%, max {:.1}% \
                 (with the ping-pong alone: {:.1}%, {:.1}%)",
                p.pattern.name(),
                p.points.len(),
                median * 100.0,
                max * 100.0,
                median0 * 100.0,
                max0 * 100.0
            ));
        }
        lines.push(if self.gap_identified {
            format!(
                "  g = {:.4} us per message at each adapter: fitted to PingPong and {}",
                self.gap * 1e6,
                names.join(", ")
            )
        } else {
            format!(
                "  g = 0: not determined by PingPong and {} (assumed)",
                names.join(", ")
            )
        });
        if let Some(f) = self.overhead_fraction {
            lines.push(format!(
                "  o_s + o_r = {:.0}% of the smallest ping-pong time: fitted to PingPong and {}{} \
                 (ping-pong with these parameters: median |error| {:.1}%, max {:.1}%)",
                f * 100.0,
                names.join(", "),
                if f >= MAX_OVERHEAD_FRACTION - 1e-9 {
                    ", at the top of the range searched (10-90%: the wire takes some of the time)"
                } else {
                    ""
                },
                self.pingpong_error.0 * 100.0,
                self.pingpong_error.1 * 100.0
            ));
        }
        lines.extend(self.stream_notes.iter().cloned());
        lines.push(match self.duplex_origin {
            Origin::Fitted => format!(
                "  duplex overlap d = {}: fitted to {} (0 half, 1 full)",
                self.duplex.as_str(),
                names.join(", ")
            ),
            Origin::Given => format!("  duplex {}: as given, not fitted", self.duplex.as_str()),
            Origin::Assumed => format!(
                "  duplex {}: not determined by {} (assumed)",
                self.duplex.as_str(),
                names.join(", ")
            ),
        });
        for own in &self.segment_duplex {
            lines.push(format!(
                "  duplex overlap d = {} from {}: fitted to the {} crossing points there \
                 (median |error| {:.1}% with the channel's d, {:.1}% with its own)",
                own.duplex.as_str(),
                models::units::format_size(own.from),
                own.points,
                own.error_before * 100.0,
                own.error_after * 100.0
            ));
        }
        lines
    }

    /// [`JointFit::summary`] and a line per point of every pattern.
    pub fn describe(&self) -> Vec<String> {
        let mut lines = self.summary();
        for p in &self.patterns {
            for q in &p.points {
                lines.push(format!(
                    "  {} {:>8} B: measured {:.4} us, model {:.4} us ({:+.1}%)",
                    p.pattern.name(),
                    q.bytes,
                    q.measured * 1e6,
                    q.predicted * 1e6,
                    (q.predicted - q.measured) / q.measured * 100.0
                ));
            }
        }
        lines
    }
}

pub(crate) fn summary(pairs: impl Iterator<Item = (f64, f64)>) -> (f64, f64) {
    let mut errors: Vec<f64> = pairs.map(|(p, m)| ((p - m) / m).abs()).collect();
    let max = errors.iter().copied().fold(0.0, f64::max);
    (crate::validate::median(&mut errors), max)
}

/// The level of a machine whose channel a joint fit varies: the network
/// (the patterns run on a machine of one rank per node) or the shared
/// memory (two ranks of one node, `[shm]`). Both price a crossing with a
/// timeline pair per rank whose two directions overlap by `d`: the
/// network adapter of a one-rank node, or the rank's core inside a node
/// (`[shm] duplex_scope = "rank"`, which the shared-memory fit sets: a
/// crossing of two ranks cannot identify one memory channel per node,
/// `duplex_scope = "node"`, whose sends share one timeline).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Level {
    #[default]
    Network,
    Shm,
}

impl Level {
    fn channel(self, spec: &models::MachineSpec) -> Result<&models::ChannelParams, Error> {
        match self {
            Level::Network => Ok(&spec.network),
            Level::Shm => spec
                .shm
                .as_ref()
                .ok_or_else(|| Error::Input("a shared-memory fit needs a [shm] channel".into())),
        }
    }

    fn channel_mut(
        self,
        spec: &mut models::MachineSpec,
    ) -> Result<&mut models::ChannelParams, Error> {
        match self {
            Level::Network => Ok(&mut spec.network),
            Level::Shm => spec
                .shm
                .as_mut()
                .ok_or_else(|| Error::Input("a shared-memory fit needs a [shm] channel".into())),
        }
    }
}

/// The machine with `g` in every segment of the network, `duplex`, and
/// some segments' own duplex: `own[k]` for the ping-pong fit's segment
/// `k`, the machine's segment `k − 1` (`own[0]`, the base, is the
/// channel's `duplex`).
fn variant_segments(
    machine: &LogGpMachine,
    level: Level,
    gap: f64,
    duplex: Duplex,
    own: &[Option<Duplex>],
) -> Result<LogGpMachine, Error> {
    let mut spec = machine.spec().clone();
    let channel = level.channel_mut(&mut spec)?;
    channel.gap = gap;
    channel.duplex = duplex;
    if level == Level::Shm {
        // Two ranks of one node, each crossing with its own core's copies:
        // the duplex as the machine file will have it (`duplex_scope =
        // "rank"`, written with a fitted `[shm]` duplex).
        channel.duplex_scope = models::DuplexScope::Rank;
    }
    for (k, segment) in channel.segments.iter_mut().enumerate() {
        segment.params.gap = gap;
        segment.duplex = own.get(k + 1).copied().flatten();
    }
    LogGpMachine::new(spec).map_err(|e| Error::Input(e.to_string()))
}

/// The fewest points of one crossing table a segment needs for a duplex
/// of its own (as a segment of the ping-pong fit needs 3 points).
const SEGMENT_DUPLEX_POINTS: usize = 3;

/// A segment gets a duplex of its own only where the channel's misses its
/// points by more than the scatter of repeated benchmark runs (their cost,
/// the median |log error| plus a tenth of the mean, [`cost`], above 5%)
/// and its own lowers that cost by more than 2 points.
const SEGMENT_DUPLEX_MISS: f64 = 0.05;
const SEGMENT_DUPLEX_GAIN: f64 = 0.02;
/// ... and leaves at most this share of the crossing points' cost: a
/// duplex that removes less of the miss stands in for something else.
const SEGMENT_DUPLEX_EXPLAINS: f64 = 0.5;

/// A segment of the ping-pong fit whose crossings the tables show to
/// share the adapter differently from the channel's duplex.
#[derive(Debug, Clone, PartialEq)]
pub struct SegmentDuplex {
    /// The segment's index in the ping-pong fit (0: the base).
    pub index: usize,
    /// Its smallest message size.
    pub from: u64,
    pub duplex: Duplex,
    /// The crossing tables' points in the segment.
    pub points: usize,
    /// Their median |relative error| with the channel's duplex and with
    /// the segment's own.
    pub error_before: f64,
    pub error_after: f64,
}

/// Per segment of the ping-pong fit: the duplex overlap of its messages
/// from the crossing tables' points in it (PingPing, osu_bibw), where they
/// have at least [`SEGMENT_DUPLEX_POINTS`] in one table and a duplex of
/// the channel's duplex misses them (their cost above
/// [`SEGMENT_DUPLEX_MISS`]) and the
/// segment's own lowers their cost, the ping-pong's points of the segment
/// included (an adapter still busy with a reception slows a reply's
/// sending too), by more than [`SEGMENT_DUPLEX_GAIN`], removing at least
/// half of the crossing points' cost ([`SEGMENT_DUPLEX_EXPLAINS`]). A segment is a transfer mechanism (the
/// ping-pong's steps and slope changes: programmed I/O, an eager copy, a
/// DMA or RDMA transfer), and how the two directions of an adapter's bus
/// share it depends on the mechanism: on EKSS-1 (32-bit PCI) two crossing
/// messages of 4-64 KiB cost 1.6 times one, of 512 KiB and more 2.0-2.07
/// times. The channel's duplex, fitted to every point with a robust cost,
/// follows the majority and leaves such a segment as outliers.
///
/// Each segment is fitted alone: a message's duplex is its own segment's,
/// so the points of one segment do not depend on another's. Two keep the
/// channel's duplex: the base (the channel's duplex is its own, fitted to
/// every point) and the segment of the rendezvous control messages (its
/// duplex would move every rendezvous size's handshake, not only its own
/// points).
fn fit_segment_duplex(
    machine: &LogGpMachine,
    level: Level,
    gap: f64,
    duplex: Duplex,
    pong: &Compiled,
    crossing: &[&Compiled],
) -> Result<Vec<SegmentDuplex>, Error> {
    let network = level.channel(machine.spec())?.clone();
    let segments = network.segments.len() + 1;
    let mut found = Vec::new();
    let control = network
        .segment_index(network.control_bytes)
        .map_or(0, |i| i + 1);
    for k in (1..segments).filter(|&k| k != control) {
        let in_segment = |bytes: u64| network.segment_index(bytes).map_or(0, |i| i + 1) == k;
        // Per table: its program, ranks, and the sizes and measured times
        // in the segment.
        let part = |c: &Compiled| -> (Vec<u64>, Vec<f64>) {
            c.sizes
                .iter()
                .zip(&c.measured)
                .filter(|(bytes, _)| in_segment(**bytes))
                .map(|(&b, &t)| (b, t))
                .unzip()
        };
        let parts: Vec<(&Compiled, Vec<u64>, Vec<f64>)> = crossing
            .iter()
            .map(|c| {
                let (sizes, measured) = part(c);
                (*c, sizes, measured)
            })
            .filter(|(_, sizes, _)| !sizes.is_empty())
            .collect();
        if parts
            .iter()
            .all(|(_, sizes, _)| sizes.len() < SEGMENT_DUPLEX_POINTS)
        {
            continue;
        }
        let crossing_cost = |times: &[Vec<f64>]| -> f64 {
            times
                .iter()
                .zip(&parts)
                .map(|(t, (_, _, measured))| cost(t, measured))
                .sum()
        };
        let (pong_sizes, pong_measured) = part(pong);
        let mut own = vec![None; segments];
        // (cost, predicted times per crossing table) with the segment's
        // duplex `d`.
        let mut judge = |d: Option<Duplex>| -> Result<(f64, Vec<Vec<f64>>), Error> {
            own[k] = d;
            let m = variant_segments(machine, level, gap, duplex, &own)?;
            let mut total = 0.0;
            if !pong_sizes.is_empty() {
                let t = simulate(&pong.program, &m, &pong_sizes, pong.ranks)?;
                total += cost(&t, &pong_measured);
            }
            let mut times = Vec::with_capacity(parts.len());
            for (c, sizes, measured) in &parts {
                let t = simulate(&c.program, &m, sizes, c.ranks)?;
                total += cost(&t, measured);
                times.push(t);
            }
            Ok((total, times))
        };
        let (before, before_times) = judge(None)?;
        let missed = crossing_cost(&before_times);
        if missed <= SEGMENT_DUPLEX_MISS {
            continue;
        }
        // A grid of 0.05, then of 0.01 around the best; ties keep the
        // larger overlap (the channel's side of a full duplex). The best:
        // (cost, its duplex, its times; `None` while it is the channel's).
        let mut best: (f64, Duplex, Option<Vec<Vec<f64>>>) = (before, duplex, None);
        let coarse = (0..=20).rev().map(|i| f64::from(i) / 20.0);
        for d in coarse.filter_map(Duplex::partial) {
            let (c, times) = judge(Some(d))?;
            if c < best.0 * (1.0 - 1e-9) {
                best = (c, d, Some(times));
            }
        }
        let center = best.1.overlap();
        let fine = (-5..=5).rev().map(|i| center + f64::from(i) / 100.0);
        for d in fine.filter_map(Duplex::partial) {
            let (c, times) = judge(Some(d))?;
            if c < best.0 * (1.0 - 1e-9) {
                best = (c, d, Some(times));
            }
        }
        let (best_cost, chosen, Some(after_times)) = best else {
            continue;
        };
        if before - best_cost <= SEGMENT_DUPLEX_GAIN {
            continue;
        }
        // The duplex must explain most of the miss: a segment whose
        // crossings are off for another reason (a library's protocol, a
        // cost per message) would only have it hidden by a duplex.
        if crossing_cost(&after_times) > SEGMENT_DUPLEX_EXPLAINS * missed {
            continue;
        }
        let errors =
            |times: &[Vec<f64>]| {
                summary(times.iter().zip(&parts).flat_map(|(t, (_, _, measured))| {
                    t.iter().copied().zip(measured.iter().copied())
                }))
                .0
            };
        found.push(SegmentDuplex {
            index: k,
            from: network.segments[k - 1].from,
            duplex: chosen,
            points: parts.iter().map(|(_, sizes, _)| sizes.len()).sum(),
            error_before: errors(&before_times),
            error_after: errors(&after_times),
        });
    }
    Ok(found)
}

/// Simulated seconds at each size, on `machine` (ranks 0 and 1 on two
/// nodes), averaged over the printing `ranks`.
fn simulate(
    program: &sim_core::ir::Program,
    machine: &LogGpMachine,
    sizes: &[u64],
    ranks: &[u32],
) -> Result<Vec<f64>, Error> {
    simulate_ranks(program, machine, sizes, ranks, 2)
}

/// Simulated seconds at each size of a run of `size` ranks on `machine`,
/// averaged over the printing `ranks`.
pub(crate) fn simulate_ranks(
    program: &sim_core::ir::Program,
    machine: &LogGpMachine,
    sizes: &[u64],
    ranks: &[u32],
    size: u32,
) -> Result<Vec<f64>, Error> {
    use sim_core::model::MachineDesc as _;
    sizes
        .iter()
        .map(|&bytes| {
            let mut program = program.clone();
            frontend::apply_param_overrides(&mut program, &[("bytes".into(), bytes.to_string())])
                .map_err(|e| Error::Input(e.to_string()))?;
            let mut times: Vec<f64> = Vec::new();
            let mut sink = |line: PrintLine| {
                if ranks.contains(&line.rank)
                    && let Ok(t) = line.text.trim().parse::<f64>()
                {
                    times.push(t);
                }
            };
            let cfg = crate::scenario::Limits::default().config(size);
            sim_core::simulate(&program, &mut machine.start(size), cfg, &mut sink)
                .map_err(|e| Error::Input(format!("the pattern simulation failed: {e}")))?;
            Ok(times.iter().sum::<f64>() / times.len().max(1) as f64)
        })
        .collect()
}

/// A table's cost: the median of |ln(predicted / measured)| plus a tenth
/// of its mean. The median makes the fit robust to the sizes the model
/// cannot follow (least median of squares, Rousseeuw, JASA 79(388), 1984:
/// up to half the points may be outliers without moving the fit); the
/// small mean term breaks the median's ties and keeps the other half from
/// drifting.
pub(crate) fn cost(predicted: &[f64], measured: &[f64]) -> f64 {
    let mut errors: Vec<f64> = predicted
        .iter()
        .zip(measured)
        .map(|(p, m)| (p / m).ln().abs())
        .collect();
    let mean = errors.iter().sum::<f64>() / errors.len().max(1) as f64;
    crate::validate::median(&mut errors) + 0.1 * mean
}

/// The ping-pong fit for one overhead split: `o_s + o_r` as a fraction of
/// the smallest message's time, and the machine it makes.
pub struct Split {
    pub fraction: f64,
    pub machine: LogGpMachine,
}

/// The tables of a joint fit and what is fixed.
pub struct Tables<'a> {
    pub pingpong: &'a calibrate::Table,
    /// The other patterns' tables (at least one).
    pub patterns: &'a [(Pattern, &'a calibrate::Table)],
    /// A duplex given by the user: then it is not fitted.
    pub fixed_duplex: Option<Duplex>,
    /// The split to report as the default when the tables do not determine
    /// it (an index into the splits).
    pub default_split: usize,
    /// The channel the fit varies; the splits' machines must run the
    /// patterns' two ranks over it (one rank per node for the network, two
    /// on one node for `[shm]`).
    pub level: Level,
}

/// The joint fit's choice: the overhead split (index into the splits
/// given) and the fit.
pub struct Joint {
    pub split: usize,
    pub fit: JointFit,
}

/// A candidate's cost, the ping-pong's simulated times and each pattern's.
type Evaluation = (f64, Vec<f64>, Vec<Vec<f64>>);

/// A compiled table: its program, the ranks whose times it averages, the
/// sizes and the measured seconds.
struct Compiled {
    program: sim_core::ir::Program,
    ranks: &'static [u32],
    sizes: Vec<u64>,
    measured: Vec<f64>,
}

fn compiled(
    name: &str,
    text: &str,
    ranks: &'static [u32],
    table: &calibrate::Table,
) -> Result<Compiled, Error> {
    Ok(Compiled {
        program: crate::scenario::compile(name, text)?,
        ranks,
        sizes: table.points.iter().map(|p| p.bytes).collect(),
        measured: table.points.iter().map(|p| p.seconds).collect(),
    })
}

/// Fits `g`, the duplex overlap (unless fixed) and the overhead split
/// (among `splits`, each a ping-pong fit with its machine of one rank per
/// node) jointly to the PingPong table and the other patterns' tables.
pub fn fit_joint(splits: &[Split], tables: &Tables<'_>) -> Result<Joint, Error> {
    if tables.pingpong.points.is_empty()
        || tables.patterns.is_empty()
        || tables.patterns.iter().any(|(_, t)| t.points.is_empty())
    {
        return Err(Error::Input(
            "a joint fit needs the PingPong table and at least one other, each with points".into(),
        ));
    }
    if splits.is_empty() || tables.default_split >= splits.len() {
        return Err(Error::Input("no overhead split to fit".into()));
    }
    let pong = compiled("<PingPong>", PINGPONG, &[0], tables.pingpong)?;
    let others = tables
        .patterns
        .iter()
        .map(|&(pattern, table)| {
            compiled(pattern.name(), pattern.program(), pattern.ranks(), table)
        })
        .collect::<Result<Vec<_>, Error>>()?;
    // The scale of g: the smallest per-message time of the patterns.
    let small = others
        .iter()
        .flat_map(|c| c.measured.iter().copied())
        .fold(f64::INFINITY, f64::min);
    // (cost, the ping-pong's simulated times, each pattern's).
    let evaluate_with = |split: usize,
                         gap: f64,
                         overlap: f64,
                         own: &[Option<Duplex>]|
     -> Result<Evaluation, Error> {
        let duplex = Duplex::partial(overlap.clamp(0.0, 1.0)).unwrap_or(Duplex::FULL);
        let m = variant_segments(
            &splits[split].machine,
            tables.level,
            gap.max(0.0),
            duplex,
            own,
        )?;
        let pong_times = simulate(&pong.program, &m, &pong.sizes, pong.ranks)?;
        let mut c = cost(&pong_times, &pong.measured);
        let mut times = Vec::with_capacity(others.len());
        for other in &others {
            let t = simulate(&other.program, &m, &other.sizes, other.ranks)?;
            c += cost(&t, &other.measured);
            times.push(t);
        }
        Ok((c, pong_times, times))
    };
    let evaluate = |split: usize, gap: f64, overlap: f64| evaluate_with(split, gap, overlap, &[]);
    let overlaps = |center: f64, step: f64, count: i32| -> Vec<f64> {
        match tables.fixed_duplex {
            Some(d) => vec![d.overlap()],
            None => (-count..=count)
                .map(|k| (center + f64::from(k) * step).clamp(0.0, 1.0))
                .collect(),
        }
    };
    // (cost, split, g, d); a grid (every other split), then two finer grids
    // around the best.
    let mut best = (f64::INFINITY, tables.default_split, 0.0, 1.0);
    let (mut gap_step, mut d_step) = (2.0 * small / 12.0, 0.2);
    let mut candidates: Vec<(usize, f64, f64)> = (0..splits.len())
        .filter(|split| split % 2 == 0 || splits.len() < 3)
        .flat_map(|split| {
            (0..=12).flat_map(move |k| {
                overlaps(0.5, 0.2, 3)
                    .into_iter()
                    .map(move |d| (split, f64::from(k) * gap_step, d))
            })
        })
        .collect();
    for round in 0..3 {
        candidates.sort_by(|a, b| {
            a.0.cmp(&b.0)
                .then(a.1.total_cmp(&b.1))
                .then(b.2.total_cmp(&a.2))
        });
        candidates.dedup();
        let costs: Vec<Result<f64, Error>> = candidates
            .par_iter()
            .map(|&(split, g, d)| evaluate(split, g, d).map(|(c, _, _)| c))
            .collect();
        // In order (g ascending, d descending): a later candidate must be
        // better by more than rounding to win, so ties keep small g, large d.
        for (&(split, g, d), c) in candidates.iter().zip(costs) {
            let c = c?;
            if c < best.0 * (1.0 - 1e-9) {
                best = (c, split, g, d);
            }
        }
        if round == 2 {
            break;
        }
        gap_step /= 4.0;
        d_step /= 4.0;
        let (_, s0, g0, d0) = best;
        // The neighbouring splits too.
        let lo = s0.saturating_sub(1);
        let hi = (s0 + 1).min(splits.len() - 1);
        candidates = (lo..=hi)
            .flat_map(|split| {
                (-4..=4).flat_map(move |k| {
                    overlaps(d0, d_step, 4)
                        .into_iter()
                        .map(move |d| (split, (g0 + f64::from(k) * gap_step).max(0.0), d))
                })
            })
            .collect();
    }
    // A parameter whose default raises the cost by less than 2% is not
    // determined: it keeps the default (see the module documentation).
    let (best_cost, mut split, mut gap, mut overlap) = best;
    let undetermined = |s: usize, g: f64, d: f64| -> Result<bool, Error> {
        Ok(evaluate(s, g, d)?.0 <= best_cost * 1.02)
    };
    // g is a per-message cost: the small messages (the smallest third of
    // each table's sizes, where bytes cost little) must need it. A g that
    // only helps larger messages stands in for something else (a
    // protocol's cost at mid sizes) and would wrongly cap the message rate
    // of a node whose ranks share the adapter.
    let small_cost = |s: usize, g: f64, d: f64| -> Result<f64, Error> {
        let (_, pong_times, times) = evaluate(s, g, d)?;
        let third = |n: usize| n.div_ceil(3);
        let mut c = cost(
            &pong_times[..third(pong_times.len())],
            &pong.measured[..third(pong.measured.len())],
        );
        for (t, other) in times.iter().zip(&others) {
            c += cost(
                &t[..third(t.len())],
                &other.measured[..third(other.measured.len())],
            );
        }
        Ok(c)
    };
    // Without g the split may move (the overheads then carry the
    // per-message time): g = 0 is tried with every split, the best kept.
    let mut without_gap = (f64::INFINITY, split);
    for s in 0..splits.len() {
        let c = evaluate(s, 0.0, overlap)?.0;
        if c < without_gap.0 * (1.0 - 1e-9) {
            without_gap = (c, s);
        }
    }
    let gap_identified = !(gap == 0.0
        || without_gap.0 <= best_cost * 1.02
        || small_cost(without_gap.1, 0.0, overlap)? <= small_cost(split, gap, overlap)? * 1.02);
    if !gap_identified {
        gap = 0.0;
        split = without_gap.1;
    }
    let duplex_origin = if tables.fixed_duplex.is_some() {
        Origin::Given
    } else if overlap >= 1.0 || undetermined(split, gap, 1.0)? {
        overlap = 1.0;
        Origin::Assumed
    } else {
        Origin::Fitted
    };
    let split_fitted = splits.len() > 1
        && !(split == tables.default_split || undetermined(tables.default_split, gap, overlap)?);
    if !split_fitted {
        split = tables.default_split;
    }
    let duplex = Duplex::partial(overlap).unwrap_or(Duplex::FULL);
    // Segments whose crossings the channel's duplex misses, when it was
    // fitted (a duplex given by the user is the whole channel's).
    let segment_duplex = match tables.fixed_duplex {
        Some(_) => Vec::new(),
        None => {
            let crossing: Vec<&Compiled> = others
                .iter()
                .zip(tables.patterns)
                .filter(|(_, (pattern, _))| pattern.crosses())
                .map(|(c, _)| c)
                .collect();
            fit_segment_duplex(
                &splits[split].machine,
                tables.level,
                gap,
                duplex,
                &pong,
                &crossing,
            )?
        }
    };
    let mut own = vec![
        None;
        tables
            .level
            .channel(splits[split].machine.spec())?
            .segments
            .len()
            + 1
    ];
    for found in &segment_duplex {
        own[found.index] = Some(found.duplex);
    }
    let (_, pong_times, predicted) = evaluate_with(split, gap, overlap, &own)?;
    let assumed = tables.fixed_duplex.unwrap_or(Duplex::FULL);
    let (_, _, before) = evaluate(tables.default_split, 0.0, assumed.overlap())?;
    let patterns = others
        .iter()
        .zip(tables.patterns)
        .zip(predicted.iter().zip(&before))
        .map(|((c, &(pattern, _)), (predicted, before))| PatternFit {
            pattern,
            points: c
                .sizes
                .iter()
                .zip(&c.measured)
                .zip(predicted.iter().zip(before))
                .map(
                    |((&bytes, &measured), (&predicted, &before))| PatternPoint {
                        bytes,
                        measured,
                        predicted,
                        before,
                    },
                )
                .collect(),
        })
        .collect();
    let pingpong_error = summary(
        pong_times
            .iter()
            .copied()
            .zip(pong.measured.iter().copied()),
    );
    Ok(Joint {
        split,
        fit: JointFit {
            gap,
            gap_identified,
            duplex,
            duplex_origin,
            segment_duplex,
            overhead_fraction: split_fitted.then_some(splits[split].fraction),
            pingpong_error,
            patterns,
            stream_notes: Vec::new(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MACHINE: &str = r#"
name = "crossing-test"
model = "hardware"
[node]
memcpy = "1 GB/s"
[network]
latency = "2 us"
send_overhead = "1.5 us"
recv_overhead = "1.5 us"
bandwidth = "100 MB/s"
eager_limit = "64 KiB"
control_bytes = "64 B"
"#;

    /// The joint fit of one overhead split (60%) to a PingPong and a
    /// PingPing table, nothing fixed.
    fn fit_pingping(
        machine: LogGpMachine,
        pingpong: &calibrate::Table,
        pingping: &calibrate::Table,
    ) -> Joint {
        fit_joint(
            &[Split {
                fraction: 0.6,
                machine,
            }],
            &Tables {
                pingpong,
                patterns: &[(Pattern::PingPing, pingping)],
                fixed_duplex: None,
                default_split: 0,
                level: Level::Network,
            },
        )
        .expect("fits")
    }

    fn table(sizes: &[u64], seconds: &[f64]) -> calibrate::Table {
        calibrate::Table {
            points: sizes
                .iter()
                .zip(seconds)
                .map(|(&bytes, &seconds)| calibrate::Point { bytes, seconds })
                .collect(),
            measure: calibrate::Measure::PingPong,
            format: calibrate::Format::Csv,
            origin: "made by the model".into(),
            skipped: Vec::new(),
            buffered_below: None,
        }
    }

    /// Tables made by the model with g = 3 us and d = 0.4 give back g and
    /// d: the fit inverts the model it simulates.
    #[test]
    fn the_fit_recovers_the_parameters_that_made_the_tables() {
        let base = LogGpMachine::from_toml_str(MACHINE, "crossing.toml").expect("test machine");
        let truth = variant_segments(
            &base,
            Level::Network,
            3e-6,
            Duplex::partial(0.4).expect("in range"),
            &[],
        )
        .expect("valid");
        let sizes: Vec<u64> = [0, 16, 256, 4096, 32768, 262_144].to_vec();
        let ping = compile_program(PINGPING);
        let pong = compile_program(PINGPONG);
        let ping_times = simulate(&ping, &truth, &sizes, &[0, 1]).expect("simulates");
        let pong_times = simulate(&pong, &truth, &sizes, &[0]).expect("simulates");
        // Crossing costs more than one message, by (1 − d)(g + W − L).
        assert!(
            ping_times[0] > pong_times[0] * 1.2,
            "{ping_times:?} {pong_times:?}"
        );
        let pingping = table(&sizes, &ping_times);
        let joint = fit_pingping(base, &table(&sizes, &pong_times), &pingping);
        let fit = joint.fit;
        assert!((fit.gap - 3e-6).abs() < 0.1e-6, "g = {}", fit.gap);
        assert!(
            (fit.duplex.overlap() - 0.4).abs() < 0.02,
            "d = {:?}",
            fit.duplex
        );
        assert!(fit.gap_identified);
        assert_eq!(fit.duplex_origin, Origin::Fitted);
        assert_eq!(fit.overhead_fraction, None);
        let (median, max) = fit.patterns[0].error();
        assert!(median < 0.005 && max < 0.01, "{median} {max}");
    }

    /// A network whose messages of 128 KiB and more cross one way at a time
    /// (d = 0 there, 0.6 below): the channel's d follows the majority of
    /// the PingPing points, the large segment gets its own duplex back, and
    /// a segment the channel's d already fits keeps none.
    #[test]
    fn a_segment_gets_its_own_duplex_back() {
        let text = format!(
            "{MACHINE}[[network.segments]]\nfrom = \"4 KiB\"\n\
             [[network.segments]]\nfrom = \"128 KiB\"\n"
        );
        let base = LogGpMachine::from_toml_str(&text, "segments.toml").expect("test machine");
        let d = Duplex::partial(0.6).expect("in range");
        let truth = variant_segments(
            &base,
            Level::Network,
            3e-6,
            d,
            &[None, None, Some(Duplex::HALF)],
        )
        .expect("valid");
        let sizes: Vec<u64> = [
            0,
            4,
            16,
            64,
            256,
            1024,
            2048,
            4096,
            8192,
            16384,
            32768,
            131_072,
            262_144,
            1 << 20,
        ]
        .to_vec();
        let ping = compile_program(PINGPING);
        let pong = compile_program(PINGPONG);
        let ping_times = simulate(&ping, &truth, &sizes, &[0, 1]).expect("simulates");
        let pong_times = simulate(&pong, &truth, &sizes, &[0]).expect("simulates");
        let pingping = table(&sizes, &ping_times);
        let joint = fit_pingping(base, &table(&sizes, &pong_times), &pingping);
        let fit = joint.fit;
        assert!(
            (fit.duplex.overlap() - 0.6).abs() < 0.02,
            "d = {:?}",
            fit.duplex
        );
        assert_eq!(fit.segment_duplex.len(), 1, "{:?}", fit.segment_duplex);
        let own = &fit.segment_duplex[0];
        assert_eq!((own.index, own.from, own.points), (2, 131_072, 3));
        assert!(own.duplex.overlap() <= 0.01, "{:?}", own.duplex);
        assert!(
            own.error_before > 0.05 && own.error_after < 0.005,
            "{own:?}"
        );
        let (median, max) = fit.patterns[0].error();
        assert!(median < 0.005 && max < 0.01, "{median} {max}");
        assert!(
            fit.summary()
                .iter()
                .any(|l| l.contains("d = half from 128 KiB")),
            "{:?}",
            fit.summary()
        );
    }

    /// A full-duplex network without per-message occupancy: PingPing is
    /// PingPong, d comes out 1 and g is reported as not identified.
    #[test]
    fn full_duplex_leaves_g_unidentified() {
        let base = LogGpMachine::from_toml_str(MACHINE, "crossing.toml").expect("test machine");
        let sizes: Vec<u64> = [0, 1024, 65_536].to_vec();
        let pong = compile_program(PINGPONG);
        let times = simulate(&pong, &base, &sizes, &[0]).expect("simulates");
        let same = table(&sizes, &times);
        let joint = fit_pingping(base, &table(&sizes, &times), &same);
        assert!(joint.fit.duplex.is_full(), "{:?}", joint.fit.duplex);
        assert_eq!(joint.fit.duplex_origin, Origin::Assumed);
        assert_eq!(joint.fit.gap, 0.0);
        assert!(!joint.fit.gap_identified);
    }

    /// A stream faster per byte than the ping-pong's slope splits the
    /// slope: G from the stream's tightest bound, the rest latency per
    /// byte, the ping-pong's one-way time unchanged.
    #[test]
    fn a_stream_splits_the_ping_pong_slope() {
        // Ping-pong: 2 us + 1 ns/B; stream: 0.1 us per message + 0.4 ns/B.
        let sizes: Vec<u64> = (0..=20).map(|k| 1_u64 << k).collect();
        let pong = table(
            &sizes,
            &sizes
                .iter()
                .map(|&n| 2e-6 + n as f64 * 1e-9)
                .collect::<Vec<_>>(),
        );
        let stream = table(
            &sizes,
            &sizes
                .iter()
                .map(|&n| 0.1e-6 + n as f64 * 0.4e-9)
                .collect::<Vec<_>>(),
        );
        let mut fit = calibrate::calibrate_channel(
            &pong,
            &calibrate::ChannelOptions {
                eager_limit: calibrate::EagerLimit::Fixed(1 << 30),
                ..calibrate::ChannelOptions::default()
            },
        )
        .expect("fits");
        assert_eq!(fit.segments.len(), 1, "{:?}", fit.segments);
        let notes = apply_stream(&mut fit, &stream, "osu_bw");
        assert_eq!(notes.len(), 1, "{notes:?}");
        let segment = &fit.segments[0];
        // The tightest bound t(n)/n is at the largest size: 0.1 us / 1 MiB
        // + 0.4 ns/B.
        let bound = 0.1e-6 / f64::from(1 << 20) + 0.4e-9;
        assert!((segment.gap_per_byte - bound).abs() < 1e-15, "{segment:?}");
        assert!(
            (segment.gap_per_byte + segment.latency_per_byte - 1e-9).abs() < 1e-13,
            "{segment:?}"
        );
        // A stream slower than the ping-pong changes nothing.
        let slow = table(
            &sizes,
            &sizes
                .iter()
                .map(|&n| n as f64 * 2e-9 + 1e-6)
                .collect::<Vec<_>>(),
        );
        let before = fit.clone();
        assert!(apply_stream(&mut fit, &slow, "osu_bw").is_empty());
        assert_eq!(fit, before);
    }

    /// Within one regime the tightest bound `t(n)/n` at the largest size
    /// is `G`'s; a stream that slows per byte towards the segment's largest
    /// sizes gives the slope its large sizes set instead of the fast
    /// point's bound.
    #[test]
    fn a_stream_that_slows_with_size_gives_the_slope_of_its_large_sizes() {
        let point = |bytes: u64, seconds: f64| calibrate::Point { bytes, seconds };
        let mib = |k: u64| k << 20;
        // One regime, 1 us + 0.1 ns/B: the bound at 128 MiB.
        let one: Vec<_> = [2, 8, 32, 128]
            .map(|k| point(mib(k), 1e-6 + mib(k) as f64 * 0.1e-9))
            .to_vec();
        let refs: Vec<&calibrate::Point> = one.iter().collect();
        let expect = 1e-6 / mib(128) as f64 + 0.1e-9;
        assert!((stream_gap_per_byte(&refs, true) - expect).abs() < 1e-18);
        // 2 MiB at 0.1 ns/B, 8-128 MiB at 0.3 ns/B (out of the caches):
        // the fast point's bound would be 0.1 ns/B.
        let two: Vec<_> = [
            (2, 0.1e-9),
            (8, 0.3e-9),
            (16, 0.3e-9),
            (32, 0.3e-9),
            (64, 0.3e-9),
        ]
        .map(|(k, g)| point(mib(k), mib(k) as f64 * g))
        .to_vec();
        let refs: Vec<&calibrate::Point> = two.iter().collect();
        let g = stream_gap_per_byte(&refs, true);
        assert!((0.29e-9..=0.31e-9).contains(&g), "{g}");
        // A segment with a segment above it keeps the bound: its sizes end
        // where the next segment's begin.
        assert!((stream_gap_per_byte(&refs, false) - 0.1e-9).abs() < 1e-21);
        // Empty: no bound.
        assert_eq!(stream_gap_per_byte(&[], true), f64::INFINITY);
    }

    fn compile_program(text: &str) -> sim_core::ir::Program {
        crate::scenario::compile("<test>", text).expect("compiles")
    }
}
