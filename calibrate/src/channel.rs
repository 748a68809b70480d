//! From a fitted table to the parameters of one channel set (network or
//! shared memory) of parsim's piecewise LogGP model, and back: the closed
//! forms that re-predict every measured point.
//!
//! **The model** (`models::ChannelParams`, `tests/e2e.rs`): a packet of m
//! bytes takes `T(m) = o_s + L + m·G`, a message (MTU unlimited) `post(n) =
//! T(n)`, and the ping-pong half round trip is
//! - eager (`n < E`): `t(n) = post(n) + o_r = o_s + L + n·G + o_r`;
//! - rendezvous (`n ≥ E`): `t(n) = 2·post(c) + post(n) + o_r` (RTS, CTS,
//!   data), where `post(c)` uses the segment of the control size c.
//!
//! Each parameter may differ per size segment (`[[network.segments]]`); the
//! segment is chosen by the message size.
//!
//! **The mapping** of a fitted line `t = a + b·n` on a segment: `G = b`;
//! eager `a = o_s + L + o_r`; rendezvous `a = 2·post(c) + o_s + L + o_r`; so
//! `L = a − o_s − o_r` (minus `2·post(c)` above the eager limit). The fit
//! keeps `a` above that floor so that `L ≥ 0`.
//!
//! **What a ping-pong cannot tell.** The split of `a` into `o_s`, `L` and
//! `o_r` (only their sum is measured): overheads are taken constant over
//! sizes, as in LogGP (Alexandrov et al., SPAA 1995), either given
//! (`Overhead::Fixed`) or a fraction of the smallest message's time
//! (`Overhead::Fraction`, default 0.4: `o_s = o_r = 0.2·t_min`, the split
//! parsim's built-in InfiniBand machine uses, `o_s = o_r = 0.2 µs` of a 1 µs
//! end-to-end latency). Measuring o_s and o_r needs benchmarks other than a
//! ping-pong (LogP assessment: Culler, Liu, Martin, Yoshikawa, "Assessing
//! Fast Network Interfaces", IEEE Micro 16(1), 1996; Netgauge: Hoefler et
//! al., IPDPS 2007); when such numbers exist, give them (`Overhead::Fixed`):
//! parsim's own benchmark measures the send call (`SendOverhead`), and the
//! application layer passes its small-message time as `Overhead::Fixed`.
//! The gap g (0; a stream table such as `osu_bw` is needed) and the MTU
//! (unlimited: a ping-pong curve shows no per-packet latency that a fit
//! could separate from G).
//!
//! **Streams** (`osu_bw`): the time per message of a window of back-to-back
//! messages is the sender's spacing, `max(g, o_s + n·G)` in parsim's model
//! (`examples/machines/README.md`). A stream cannot separate o_s from g; we
//! put the whole per-message cost in `o_s = a` (with `g = 0`) so that the
//! spacing is exactly `a + b·n`. A stream says nothing of the latency, which
//! must be given.

use models::units::format_size;
use thiserror::Error;

use crate::fit::{self, Criterion, FitError, FitOptions, Held, Line};
use crate::input::{Measure, Point, Table};

/// How the overheads are chosen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Overhead {
    /// `o_s = o_r =` this many seconds.
    Fixed(f64),
    /// `o_s + o_r =` this fraction of the smallest message's time.
    Fraction(f64),
}

/// The default share of the smallest message's time taken by the two
/// overheads together (see the module documentation).
pub const DEFAULT_OVERHEAD_FRACTION: f64 = 0.4;

/// How the eager limit is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EagerLimit {
    /// Found from a step in the data ([`detect_eager_limit`]).
    Detect,
    /// Given: messages of at least this many bytes use rendezvous.
    Fixed(u64),
}

/// Options of [`calibrate_channel`].
#[derive(Debug, Clone, PartialEq)]
pub struct ChannelOptions {
    /// The overheads.
    pub overhead: Overhead,
    /// The eager limit.
    pub eager_limit: EagerLimit,
    /// Size of a rendezvous control message (RTS/CTS) in bytes.
    pub control_bytes: u64,
    /// Segments and tolerance of the fit.
    pub fit: FitOptions,
    /// The latency L in seconds; required for stream tables (`osu_bw`),
    /// ignored for ping-pong tables.
    pub latency: Option<f64>,
}

impl Default for ChannelOptions {
    fn default() -> Self {
        Self {
            overhead: Overhead::Fraction(DEFAULT_OVERHEAD_FRACTION),
            eager_limit: EagerLimit::Detect,
            control_bytes: 64,
            fit: FitOptions::default(),
            latency: None,
        }
    }
}

/// Where the eager limit came from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum EagerOrigin {
    /// Given by the user.
    Given,
    /// Found in the data: the time at the limit is `step` seconds above the
    /// line through the two sizes below it (`relative` of the time), and
    /// a handshake `2·t(c)` is `handshake` seconds.
    Detected {
        /// Seconds above the extrapolation.
        step: f64,
        /// `step / t(E)`.
        relative: f64,
        /// `2·t(c)` estimated from the data.
        handshake: f64,
    },
    /// Found in the data as a segment boundary where the lines of the fit
    /// cross ([`detect_rendezvous_crossing`]): above it the intercept is
    /// higher by about a handshake and the time per byte lower (zero-copy
    /// rendezvous after eager copies through bounce buffers).
    Crossing {
        /// `a_above − a_below`, seconds: the intercept's rise.
        rise: f64,
        /// The time per byte below the boundary, seconds per byte.
        slope_below: f64,
        /// The time per byte above it, seconds per byte.
        slope_above: f64,
        /// `2·t(c)` estimated from the data.
        handshake: f64,
    },
    /// Probed: the benchmark output states the smallest size whose send
    /// waits for its receive ([`Table::buffered_below`]), which is what
    /// decides deadlocks. The ping-pong's own step, if it shows one
    /// ([`detect_eager_limit`]), is `step_at`: a library may change its
    /// timing at another size than its buffering (MPICH 4.0 over UCX on
    /// this project's machine: slower from 8193 B, rendezvous from 8256 B).
    Probed {
        /// The size where the ping-pong's time steps up, if it does.
        step_at: Option<u64>,
    },
    /// No switch found: every measured size is taken as eager, and the limit
    /// is the next power of two above the largest size. The fit report and
    /// the machine file's header say so in a warning
    /// ([`ChannelFit::warnings`]).
    NotFound,
    /// A stream table cannot show the protocol switch.
    NotIdentifiable,
}

/// One size segment of a fitted channel.
#[derive(Debug, Clone, PartialEq)]
pub struct ChannelSegment {
    /// Messages of at least this many bytes (and below the next segment's
    /// `from`) use this segment.
    pub from: u64,
    /// Index of the first measured point in it.
    pub first: usize,
    /// Index of the last measured point in it (inclusive).
    pub last: usize,
    /// The fitted line.
    pub line: Line,
    /// RMS relative error of the line over its points.
    pub rms_rel: f64,
    /// Largest relative error of the line over its points.
    pub max_rel: f64,
    /// L in seconds.
    pub latency: f64,
    /// o_s in seconds.
    pub send_overhead: f64,
    /// o_r in seconds.
    pub recv_overhead: f64,
    /// g in seconds.
    pub gap: f64,
    /// G in seconds per byte: the adapter's time per byte.
    pub gap_per_byte: f64,
    /// Latency per byte beyond G (0 from a ping-pong alone; a stream can
    /// show that the adapter takes bytes faster than a ping-pong's slope).
    pub latency_per_byte: f64,
    /// Whether its sizes use the rendezvous protocol.
    pub rendezvous: bool,
    /// Whether L came out negative and was raised to 0 (the model then
    /// misses the line's intercept; the point errors show by how much).
    pub latency_clamped: bool,
    /// The constraints of the fit that hold its line (see
    /// [`ChannelFit::warnings`]).
    pub held: Held,
    /// The duplex overlap of this segment's messages where a crossing
    /// table shows it differs from the channel's; `None` from a ping-pong
    /// (which cannot show it), and always for the first segment (the base,
    /// whose duplex is the channel's: not written).
    pub duplex: Option<models::Duplex>,
}

/// A fitted channel set: the model parameters and the data they came from.
#[derive(Debug, Clone, PartialEq)]
pub struct ChannelFit {
    /// What the table measured.
    pub measure: Measure,
    /// The measured points.
    pub points: Vec<Point>,
    /// Segments in size order; the first has `from = 0`.
    pub segments: Vec<ChannelSegment>,
    /// The eager limit.
    pub eager_limit: u64,
    /// Where it came from.
    pub eager_origin: EagerOrigin,
    /// Rendezvous control message size.
    pub control_bytes: u64,
    /// How the overheads were chosen, in words.
    pub overhead_origin: String,
    /// The tolerance of the fit and whether it was met.
    pub tolerance: f64,
    /// Whether every point's fit error is within the tolerance.
    pub within_tolerance: bool,
    /// The information criterion of each number of segments the fit
    /// compared ([`fit::fit_segmented`]).
    pub criterion: Vec<Criterion>,
    /// Whether no segmentation kept the time from falling by itself and the
    /// lines were refitted jointly under that constraint.
    pub joint: bool,
    /// LogGOPS's `O`, seconds per byte of an eager send's CPU time beyond
    /// `o_s`: 0 from a ping-pong (which cannot tell it from `G`), set from
    /// a `SendOverhead` table ([`crate::send::fit_send_overhead`]).
    pub send_overhead_per_byte: f64,
}

/// A measured point against the fit and the model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PointCheck {
    /// Message size.
    pub bytes: u64,
    /// Measured seconds.
    pub measured: f64,
    /// The fitted line's seconds.
    pub fitted: f64,
    /// The model's closed form with the fitted parameters, seconds.
    pub predicted: f64,
    /// `(predicted − measured) / measured`.
    pub error: f64,
}

/// Median and maximum of the absolute relative errors.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ErrorSummary {
    /// Number of points.
    pub points: usize,
    /// Median |error|.
    pub median: f64,
    /// Largest |error|.
    pub max: f64,
}

/// Why a channel cannot be calibrated.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ChannelError {
    /// The fit failed.
    #[error(transparent)]
    Fit(#[from] FitError),
    /// The overheads alone exceed the smallest measured time.
    #[error(
        "overheads o_s + o_r = {overheads_us:.4} us exceed the smallest measured time {smallest_us:.4} us (latency would be negative)"
    )]
    OverheadTooLarge {
        /// o_s + o_r in µs.
        overheads_us: f64,
        /// The smallest measured time in µs.
        smallest_us: f64,
    },
    /// An overhead or fraction that is negative or not finite.
    #[error("the overhead must be a finite time >= 0 (or a fraction in [0, 1]), got {0}")]
    BadOverhead(f64),
    /// The control message would itself use rendezvous.
    #[error(
        "control messages of {control} B are not below the eager limit of {eager} B (raise the eager limit)"
    )]
    ControlNotEager {
        /// Control bytes.
        control: u64,
        /// Eager limit.
        eager: u64,
    },
    /// A stream table without a latency.
    #[error(
        "a bandwidth table (osu_bw) measures the gap and bandwidth, not the latency: give the latency (e.g. from osu_latency)"
    )]
    StreamNeedsLatency,
    /// A negative or non-finite latency.
    #[error("the latency must be a finite time >= 0, got {0}")]
    BadLatency(f64),
}

/// Linear interpolation of the measured times at `n` (clamped to the ends).
fn interpolate(points: &[Point], n: u64) -> f64 {
    let after = points.partition_point(|p| p.bytes < n);
    match (
        after.checked_sub(1).and_then(|i| points.get(i)),
        points.get(after),
    ) {
        (_, Some(p)) if p.bytes == n => p.seconds,
        (Some(lo), Some(hi)) => {
            let frac = (n - lo.bytes) as f64 / (hi.bytes - lo.bytes) as f64;
            lo.seconds + frac * (hi.seconds - lo.seconds)
        }
        (Some(lo), None) => lo.seconds,
        (None, Some(hi)) => hi.seconds,
        (None, None) => 0.0,
    }
}

/// Looks for the eager-to-rendezvous step: at a measured power-of-two size
/// E between 4 KiB and 1 MiB, the time is above the straight line through
/// the two sizes below it by a *step* that is either large (at least 10% of
/// t(E): any protocol switch worth a segment) or of the size of a handshake
/// (between half and twice `handshake = 2·t(c)`, the RTS and CTS a
/// rendezvous adds, and at least 1% of t(E), above timing noise). Of the
/// candidates, the one with the largest relative step wins.
///
/// A protocol switch adds a constant (the handshake) and leaves the time per
/// byte as it was; a message outgrowing a cache changes the time per byte.
/// So a step is not taken when the next size shows the slope grown by more
/// than a quarter and that growth, applied from the size below E, explains
/// at least half the step: that is a bandwidth change (seen at 1 MiB on
/// this project's development machine, where MPICH's own protocol switch
/// is at 16 KiB), and the piecewise fit follows it without a rendezvous.
pub fn detect_eager_limit(points: &[Point], handshake: f64) -> Option<(u64, EagerOrigin)> {
    let mut best: Option<(u64, EagerOrigin)> = None;
    for j in 2..points.len() {
        let e = points[j].bytes;
        if !(e.is_power_of_two() && (4096..=1 << 20).contains(&e)) {
            continue;
        }
        let (p1, p2, pe) = (points[j - 2], points[j - 1], points[j]);
        let slope = (p2.seconds - p1.seconds) / (p2.bytes - p1.bytes) as f64;
        let expected = p2.seconds + slope * (e - p2.bytes) as f64;
        let step = pe.seconds - expected;
        let relative = step / pe.seconds;
        let large = relative >= 0.10;
        let handshake_like = relative >= 0.01 && step >= 0.5 * handshake && step <= 2.0 * handshake;
        let bandwidth_change = points.get(j + 1).is_some_and(|next| {
            let after = (next.seconds - pe.seconds) / (next.bytes - e) as f64;
            after > 1.25 * slope && (after - slope) * (e - p2.bytes) as f64 >= 0.5 * step
        });
        if step > 0.0 && (large || handshake_like) && !bandwidth_change {
            let better = match best {
                Some((_, EagerOrigin::Detected { relative: r, .. })) => relative > r,
                _ => true,
            };
            if better {
                best = Some((
                    e,
                    EagerOrigin::Detected {
                        step,
                        relative,
                        handshake,
                    },
                ));
            }
        }
    }
    best
}

/// The least fall of the time per byte at a rendezvous crossing: above
/// the boundary at most this share of the slope below. Eager copies each
/// byte through bounce buffers at both ends on top of the wire; zero-copy
/// rendezvous moves it by RDMA, so the slope falls by a memory copy per
/// byte or more. A quarter is the same margin as the bandwidth-change test
/// of [`detect_eager_limit`], well above the noise of a fitted slope.
pub const CROSSING_SLOPE_RATIO: f64 = 0.75;

/// Looks for the eager-to-rendezvous switch of a library that puts it
/// where the two protocols cost the same, as a boundary between two
/// segments of the piecewise fit (`segments`, fitted without an eager
/// limit) whose lines cross there: the upper line's intercept is higher by
/// about a handshake (between half and twice `handshake = 2·t(c)`: the RTS
/// and CTS a rendezvous adds) and its time per byte lower (at most
/// [`CROSSING_SLOPE_RATIO`] of the slope below: no copy through bounce
/// buffers). Both lines must be shaped by their points (no bound holds
/// them) and the upper segment must start between 4 KiB and 1 MiB, where
/// [`detect_eager_limit`] looks too. The limit is the boundary's `from`,
/// the crossing when it lies between the two segments' measured sizes;
/// of several candidates the one whose rise is nearest the handshake (by
/// ratio) wins.
///
/// Why a step over the trend misses it: at the crossing the two lines
/// meet, so the time does not jump; it bends, and the point above the
/// switch lies *below* the extrapolation of the eager slope. Libraries
/// place the switch there by design. UCX (Open MPI's pml ucx) chooses
/// `UCX_RNDV_THRESH=auto` from its own cost estimates of eager and
/// rendezvous, within `UCX_RNDV_PERF_DIFF` of each other (on InfiniBand
/// typically 8-16 KiB in UCX 1.8-1.10); Open MPI's btl openib used a
/// fixed `btl_openib_eager_limit` of 12 KiB, close to the crossing of its
/// RDMA hardware. A fixed limit far above the crossing (MPICH ch3's
/// `MPIR_CVAR_CH3_EAGER_MAX_MSG_SIZE`, 128 KiB; Intel MPI's
/// `I_MPI_EAGER_THRESHOLD`, 256 KiB in its older references; EKSS-1's SCI
/// library at 64 KiB) shows as the step [`detect_eager_limit`] finds, and
/// [`calibrate_channel`] tries that first.
pub fn detect_rendezvous_crossing(
    points: &[Point],
    segments: &[fit::Segment],
    handshake: f64,
) -> Option<(u64, EagerOrigin)> {
    let mut best: Option<(f64, u64, EagerOrigin)> = None;
    if !(handshake.is_finite() && handshake > 0.0) {
        return None;
    }
    for pair in segments.windows(2) {
        let (below, above) = (&pair[0], &pair[1]);
        let Some(first) = points.get(above.first) else {
            continue;
        };
        let shaped = |s: &fit::Segment| {
            s.last + 1 - s.first >= fit::MIN_POINTS
                && !(s.held.slope || s.held.intercept || s.held.level || s.held.inherited_slope)
        };
        if !((4096..=1 << 20).contains(&first.bytes) && shaped(below) && shaped(above)) {
            continue;
        }
        let rise = above.line.a - below.line.a;
        let ratio = rise / handshake;
        let slope_falls = above.line.b <= CROSSING_SLOPE_RATIO * below.line.b;
        if !(slope_falls && (0.5..=2.0).contains(&ratio)) {
            continue;
        }
        let distance = ratio.ln().abs();
        if best.as_ref().is_none_or(|(d, _, _)| distance < *d) {
            best = Some((
                distance,
                above.from,
                EagerOrigin::Crossing {
                    rise,
                    slope_below: below.line.b,
                    slope_above: above.line.b,
                    handshake,
                },
            ));
        }
    }
    best.map(|(_, limit, origin)| (limit, origin))
}

/// The next power of two above `n`, at most 2^62 (a size a machine file
/// can spell).
fn above(n: u64) -> u64 {
    const CAP: u64 = 1 << 62;
    n.checked_add(1)
        .and_then(u64::checked_next_power_of_two)
        .map_or(CAP, |p| p.min(CAP))
}

/// Fits a ping-pong (or stream) table and maps it to channel parameters.
pub fn calibrate_channel(
    table: &Table,
    options: &ChannelOptions,
) -> Result<ChannelFit, ChannelError> {
    match table.measure {
        Measure::PingPong => calibrate_pingpong(table, options),
        Measure::Stream => calibrate_stream(table, options),
    }
}

fn calibrate_pingpong(table: &Table, options: &ChannelOptions) -> Result<ChannelFit, ChannelError> {
    let points = &table.points;
    let Some(smallest) = points.first() else {
        return Err(FitError::NoPoints.into());
    };
    let t_min = smallest.seconds;
    let (o, overhead_origin) = match options.overhead {
        Overhead::Fixed(o) if o.is_finite() && o >= 0.0 => (o, "given".to_owned()),
        Overhead::Fraction(f) if f.is_finite() && (0.0..=1.0).contains(&f) => (
            f * t_min / 2.0,
            format!(
                "assumed: o_s + o_r = {:.0}% of the {} B time {:.4} us (not identifiable from a ping-pong)",
                f * 100.0,
                smallest.bytes,
                t_min * 1e6
            ),
        ),
        Overhead::Fixed(x) | Overhead::Fraction(x) => return Err(ChannelError::BadOverhead(x)),
    };
    if 2.0 * o > t_min {
        return Err(ChannelError::OverheadTooLarge {
            overheads_us: 2.0 * o * 1e6,
            smallest_us: t_min * 1e6,
        });
    }
    let c = options.control_bytes;
    let t_c = interpolate(points, c);
    let (eager_limit, eager_origin) = match (options.eager_limit, table.buffered_below) {
        (EagerLimit::Fixed(e), _) => (e, EagerOrigin::Given),
        (EagerLimit::Detect, Some(probed)) => (
            probed,
            EagerOrigin::Probed {
                step_at: detect_eager_limit(points, 2.0 * t_c).map(|(e, _)| e),
            },
        ),
        (EagerLimit::Detect, None) => match detect_eager_limit(points, 2.0 * t_c) {
            Some(found) => found,
            None => {
                // No step: a switch where the protocols' lines cross shows
                // as a boundary of the fit without an eager limit (every
                // segment's intercept at least o_s + o_r).
                let free = fit::fit_segmented(points, &options.fit, |_| 2.0 * o)?;
                detect_rendezvous_crossing(points, &free.segments, 2.0 * t_c).unwrap_or_else(|| {
                    (
                        above(points.last().map_or(0, |p| p.bytes)),
                        EagerOrigin::NotFound,
                    )
                })
            }
        },
    };
    if c >= eager_limit {
        return Err(ChannelError::ControlNotEager {
            control: c,
            eager: eager_limit,
        });
    }
    let mut fit_options = options.fit.clone();
    fit_options.breaks.push(eager_limit);
    // post(c) = t(c) − o_r, first from the data, then from the fitted
    // segment of c until it settles (the rendezvous floor depends on it).
    let mut post_c = (t_c - o).max(0.0);
    let mut fitted = None;
    for _ in 0..4 {
        let floor = |n: u64| {
            if n >= eager_limit {
                2.0 * post_c + 2.0 * o
            } else {
                2.0 * o
            }
        };
        let fit = fit::fit_segmented(points, &fit_options, floor)?;
        let segment = fit
            .segments
            .partition_point(|s| s.from <= c)
            .saturating_sub(1);
        let model_post_c = fit
            .segments
            .get(segment)
            .map_or(post_c, |s| (s.line.at(c) - o).max(0.0));
        let settled = (model_post_c - post_c).abs() <= 1e-9 * post_c.max(1e-12);
        post_c = model_post_c;
        fitted = Some(fit);
        if settled {
            break;
        }
    }
    let Some(fit) = fitted else {
        return Err(FitError::NoPoints.into());
    };
    let segments = fit
        .segments
        .iter()
        .map(|s| {
            let from = s.from;
            let rendezvous = from >= eager_limit;
            let handshake = if rendezvous { 2.0 * post_c } else { 0.0 };
            let latency = s.line.a - handshake - 2.0 * o;
            ChannelSegment {
                from,
                first: s.first,
                last: s.last,
                line: s.line,
                rms_rel: s.rms_rel,
                max_rel: s.max_rel,
                latency: latency.max(0.0),
                send_overhead: o,
                recv_overhead: o,
                gap: 0.0,
                gap_per_byte: s.line.b,
                latency_per_byte: 0.0,
                rendezvous,
                latency_clamped: latency < -1e-15,
                held: s.held,
                duplex: None,
            }
        })
        .collect();
    Ok(ChannelFit {
        measure: Measure::PingPong,
        points: points.clone(),
        segments,
        eager_limit,
        eager_origin,
        control_bytes: c,
        overhead_origin,
        tolerance: options.fit.tolerance,
        within_tolerance: fit.within_tolerance,
        criterion: fit.criterion,
        joint: fit.joint,
        send_overhead_per_byte: 0.0,
    })
}

fn calibrate_stream(table: &Table, options: &ChannelOptions) -> Result<ChannelFit, ChannelError> {
    let latency = options.latency.ok_or(ChannelError::StreamNeedsLatency)?;
    if !(latency.is_finite() && latency >= 0.0) {
        return Err(ChannelError::BadLatency(latency));
    }
    let (o_r, overhead_origin) = match options.overhead {
        Overhead::Fixed(o) if o.is_finite() && o >= 0.0 => (
            o,
            "o_r given; g = the stream's per-message time, o_s = 0".to_owned(),
        ),
        Overhead::Fixed(x) => return Err(ChannelError::BadOverhead(x)),
        Overhead::Fraction(_) => (
            0.0,
            "g = the stream's per-message time (o_s and g are not separable in a stream: the \
             model spaces a stream max(o_s, g + n G) apart), o_s = o_r = 0"
                .to_owned(),
        ),
    };
    let points = &table.points;
    let (eager_limit, eager_origin) = match options.eager_limit {
        EagerLimit::Fixed(e) => (e, EagerOrigin::Given),
        EagerLimit::Detect => (
            above(points.last().map_or(0, |p| p.bytes)),
            EagerOrigin::NotIdentifiable,
        ),
    };
    let fit = fit::fit_segmented(points, &options.fit, |_| 0.0)?;
    let segments = fit
        .segments
        .iter()
        .map(|s| ChannelSegment {
            from: s.from,
            first: s.first,
            last: s.last,
            line: s.line,
            rms_rel: s.rms_rel,
            max_rel: s.max_rel,
            latency,
            send_overhead: 0.0,
            recv_overhead: o_r,
            gap: s.line.a,
            gap_per_byte: s.line.b,
            latency_per_byte: 0.0,
            rendezvous: s.from >= eager_limit,
            latency_clamped: false,
            held: s.held,
            duplex: None,
        })
        .collect();
    Ok(ChannelFit {
        measure: Measure::Stream,
        points: points.clone(),
        segments,
        eager_limit,
        eager_origin,
        control_bytes: options.control_bytes,
        overhead_origin,
        tolerance: options.fit.tolerance,
        within_tolerance: fit.within_tolerance,
        criterion: fit.criterion,
        joint: fit.joint,
        send_overhead_per_byte: 0.0,
    })
}

impl ChannelFit {
    /// The segment that messages of `n` bytes use.
    pub fn segment_for(&self, n: u64) -> Option<&ChannelSegment> {
        let index = self.segments.partition_point(|s| s.from <= n);
        self.segments.get(index.checked_sub(1)?)
    }

    /// `post(n) = o_s + L + n·G` of the segment of `n` (MTU unlimited).
    pub fn post(&self, n: u64) -> f64 {
        self.segment_for(n).map_or(0.0, |s| {
            s.send_overhead + s.latency + n as f64 * s.gap_per_byte
        })
    }

    /// The model's time for `n` bytes, by the closed forms: the ping-pong
    /// half round trip (eager `post(n) + o_r`, rendezvous `2·post(c) +
    /// post(n) + o_r`), or for a stream the sender's spacing `max(o_s, g +
    /// n·G)` (the adapter takes a message every `g + n·G`, LogGP).
    pub fn predict(&self, n: u64) -> f64 {
        let Some(s) = self.segment_for(n) else {
            return 0.0;
        };
        match self.measure {
            Measure::Stream => s.send_overhead.max(s.gap + n as f64 * s.gap_per_byte),
            Measure::PingPong if n < self.eager_limit => self.post(n) + s.recv_overhead,
            Measure::PingPong => {
                2.0 * self.post(self.control_bytes) + self.post(n) + s.recv_overhead
            }
        }
    }

    /// Every measured point against the fitted line and the model.
    pub fn checks(&self) -> Vec<PointCheck> {
        let mut checks = Vec::with_capacity(self.points.len());
        for segment in &self.segments {
            for point in self.points.get(segment.first..=segment.last).unwrap_or(&[]) {
                let predicted = self.predict(point.bytes);
                checks.push(PointCheck {
                    bytes: point.bytes,
                    measured: point.seconds,
                    fitted: segment.line.at(point.bytes),
                    predicted,
                    error: (predicted - point.seconds) / point.seconds,
                });
            }
        }
        checks
    }

    /// Median and maximum |error| of the model over the measured points.
    pub fn summary(&self) -> ErrorSummary {
        summarize(self.checks().iter().map(|c| c.error))
    }
    /// What the data forced on the fit that the model does not mean, one
    /// sentence each (the fit report prints them as warnings): a segment
    /// of fewer than [`fit::MIN_POINTS`] points, a slope held at 0 (no
    /// per-byte cost: infinite bandwidth over a range of sizes), an
    /// intercept held at its floor (`L = 0`), both at once (degenerate), a
    /// line held so that the time does not fall, a latency raised to 0.
    pub fn warnings(&self) -> Vec<String> {
        let us = |t: f64| format!("{:.4} us", t * 1e6);
        let mut warnings = Vec::new();
        for s in &self.segments {
            let (Some(lo), Some(hi)) = (self.points.get(s.first), self.points.get(s.last)) else {
                continue;
            };
            let at = format!("from {}", format_size(s.from));
            let range = format!("{} .. {}", format_size(lo.bytes), format_size(hi.bytes));
            let count = s.last + 1 - s.first;
            let floor = match self.measure {
                Measure::Stream => "0".to_owned(),
                Measure::PingPong if s.rendezvous => {
                    "o_s + o_r + the handshake 2 post(c) of the eager limit".to_owned()
                }
                Measure::PingPong => "o_s + o_r".to_owned(),
            };
            // The 0 B point alone is allowed (see `fit`): one size, one point.
            if count < fit::MIN_POINTS && hi.bytes > 0 {
                warnings.push(format!(
                    "{at}: {count} point(s) only ({range}), all there is between the forced breaks (the eager limit); {}",
                    if s.held.inherited_slope {
                        "G is the segment below's, the intercept the point's"
                    } else if count == 1 {
                        "its line is not measured"
                    } else {
                        "its line passes through them, it measures nothing"
                    }
                ));
            }
            if s.held.degenerate() {
                warnings.push(format!(
                    "{at}: degenerate, L = 0 and G = 0 (no latency and infinite bandwidth over {range}): the measured times there lie below the least intercept, {floor} = {}, and do not grow with size; the model cannot follow them{}",
                    us(s.line.a),
                    if s.rendezvous {
                        " (is the eager limit right?)"
                    } else {
                        ""
                    }
                ));
                continue;
            }
            if s.held.slope {
                warnings.push(format!(
                    "{at}: the measured times do not grow with size over {range} ({} .. {}); the slope is held at 0, so G = 0 (no per-byte cost, infinite bandwidth) for these sizes",
                    us(lo.seconds),
                    us(hi.seconds)
                ));
            }
            if s.held.intercept && !s.held.inherited_slope && count > 1 {
                // The intercept its points ask for (a floor far below any
                // time leaves only b >= 0).
                let own = fit::fit_segment(&self.points, s.first, s.last, -1.0).line.a;
                let why = if own < 0.0 {
                    "below zero: the time per byte rises with size here, and a segment's \
                     a + b n with L >= 0 cannot follow a per-byte cost that grows from \
                     one size on"
                } else if self.measure == Measure::PingPong {
                    "the assumed overheads, or the handshake, are too large for them"
                } else {
                    "below zero"
                };
                warnings.push(format!(
                    "{at}: the intercept is held at its least value, {floor} = {}, so L = 0; the points of {range} alone put it at {} ({why}), and the model misses them",
                    us(s.line.a),
                    us(own)
                ));
            }
            if s.held.level {
                warnings.push(format!(
                    "{at}: the measured times fall where this segment begins; no segmentation avoided it, so the lines were fitted jointly with the time held from falling, and the points there are missed"
                ));
            }
            if s.latency_clamped {
                warnings.push(format!(
                    "{at}: L came out negative and is raised to 0 (the handshake estimate did not settle); the model is above the fitted line here by the point errors"
                ));
            }
        }
        warnings
    }
}

/// Median and maximum of the absolute values of `errors`.
pub fn summarize(errors: impl IntoIterator<Item = f64>) -> ErrorSummary {
    let mut abs: Vec<f64> = errors.into_iter().map(f64::abs).collect();
    abs.sort_by(f64::total_cmp);
    let n = abs.len();
    let median = match n {
        0 => 0.0,
        _ if n % 2 == 1 => abs[n / 2],
        _ => (abs[n / 2 - 1] + abs[n / 2]) / 2.0,
    };
    ErrorSummary {
        points: n,
        median,
        max: abs.last().copied().unwrap_or(0.0),
    }
}

/// A two-process Alltoall table turned into one-way times.
///
/// With two processes, one MPI_Alltoall call has each rank copy its own
/// block (`n` bytes, locally) and exchange one `n`-byte message with the
/// other rank in each direction, both at once. In parsim's model the two
/// messages travel on the two ranks' own shared-memory channels without
/// delaying each other, so a call takes `n/memcpy + t(n)`, with `t(n)` the
/// one-way (ping-pong) time of the same protocol: eager, each receive
/// completes `o_s + L + n·G + o_r` after the simultaneous start; rendezvous,
/// the two handshakes run side by side. Hence `t(n) = t_alltoall(n) −
/// n/memcpy`. What the measurement shows beyond this (two CPUs sharing one
/// memory bus) stays in the fitted parameters, which are therefore those of
/// a *loaded* node: an intra-node ping-pong on an idle node would be
/// faster.
pub fn alltoall2_to_oneway(table: &Table, memcpy_bandwidth: f64) -> Result<Table, AlltoallError> {
    if !(memcpy_bandwidth.is_finite() && memcpy_bandwidth > 0.0) {
        return Err(AlltoallError::BadMemcpy(memcpy_bandwidth));
    }
    let mut points = Vec::with_capacity(table.points.len());
    for p in &table.points {
        let seconds = p.seconds - p.bytes as f64 / memcpy_bandwidth;
        if seconds <= 0.0 {
            return Err(AlltoallError::CopyExceedsTime {
                bytes: p.bytes,
                measured_us: p.seconds * 1e6,
                copy_us: p.bytes as f64 / memcpy_bandwidth * 1e6,
            });
        }
        points.push(Point {
            bytes: p.bytes,
            seconds,
        });
    }
    Ok(Table {
        points,
        measure: Measure::PingPong,
        format: table.format,
        origin: format!(
            "{}, 2-process Alltoall as one-way time t - n/memcpy",
            table.origin
        ),
        skipped: table.skipped.clone(),
        buffered_below: table.buffered_below,
    })
}

/// Why an Alltoall table cannot be turned into one-way times.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum AlltoallError {
    /// A memcpy bandwidth that is not positive.
    #[error("the memcpy bandwidth must be positive, got {0} B/s")]
    BadMemcpy(f64),
    /// The local copy alone takes longer than the measured call.
    #[error(
        "{bytes} B: the local copy ({copy_us:.3} us at the memcpy bandwidth) is not shorter than the measured call ({measured_us:.3} us); the memcpy bandwidth is too low"
    )]
    CopyExceedsTime {
        /// Size.
        bytes: u64,
        /// Measured µs.
        measured_us: f64,
        /// Copy µs.
        copy_us: f64,
    },
}

#[cfg(test)]
mod tests {
    use approx::assert_relative_eq;

    use super::*;
    use crate::input::Format;

    fn table(data: &[(u64, f64)]) -> Table {
        Table {
            points: data
                .iter()
                .map(|&(bytes, us)| Point {
                    bytes,
                    seconds: us * 1e-6,
                })
                .collect(),
            measure: Measure::PingPong,
            format: Format::Csv,
            origin: "test".into(),
            skipped: Vec::new(),
            buffered_below: None,
        }
    }

    /// The LogGP parameters of [`model_table`]: o_s, L, o_r, G.
    const MODEL: (f64, f64, f64, f64) = (1e-6, 3e-6, 1e-6, 1e-8);

    /// A ping-pong made by the model itself with [`MODEL`] (eager below
    /// 64 KiB, a handshake above), sizes 0, 1, 2, ... 4 MiB, and options
    /// that fit it exactly (the overheads given, a tight tolerance).
    fn model_table() -> (Vec<(u64, f64)>, ChannelOptions) {
        let (os, l, or, g) = MODEL;
        let post = |n: u64| os + l + n as f64 * g;
        let data = std::iter::once(0)
            .chain((0..=22).map(|i| 1u64 << i))
            .map(|n| {
                let t = if n < 65536 {
                    post(n) + or
                } else {
                    2.0 * post(64) + post(n) + or
                };
                (n, t * 1e6)
            })
            .collect();
        let options = ChannelOptions {
            overhead: Overhead::Fixed(os),
            fit: FitOptions {
                tolerance: 1e-6,
                ..FitOptions::default()
            },
            ..ChannelOptions::default()
        };
        (data, options)
    }

    /// A table made by the model itself is reproduced exactly, and the
    /// parameters come back.
    #[test]
    fn recovers_a_model_table() {
        let (_, l, _, g) = MODEL;
        let (data, options) = model_table();
        let fit = calibrate_channel(&table(&data), &options).expect("fits");
        assert_eq!(fit.eager_limit, 65536);
        assert!(matches!(fit.eager_origin, EagerOrigin::Detected { .. }));
        assert_eq!(fit.segments.len(), 2, "{:?}", fit.segments);
        for s in &fit.segments {
            assert_relative_eq!(s.latency, l, max_relative = 1e-6);
            assert_relative_eq!(s.gap_per_byte, g, max_relative = 1e-6);
        }
        assert!(fit.summary().max < 1e-9, "{:?}", fit.summary());
    }

    #[test]
    fn a_probed_limit_wins_over_the_step_and_moves_only_the_boundary() {
        // The table of `recovers_a_model_table` (a step at 64 KiB), and a
        // probe saying that sends wait from 40,000 B on: the limit is the
        // probe's, the rendezvous segment starts there, and the lines are
        // the same as without the probe (no ladder size lies between).
        let (data, options) = model_table();
        let plain = calibrate_channel(&table(&data), &options).expect("fits");
        let mut probed_table = table(&data);
        probed_table.buffered_below = Some(40_000);
        let probed = calibrate_channel(&probed_table, &options).expect("fits");
        assert_eq!(probed.eager_limit, 40_000);
        assert_eq!(
            probed.eager_origin,
            EagerOrigin::Probed {
                step_at: Some(65536)
            }
        );
        assert_eq!(probed.segments.len(), plain.segments.len());
        let froms: Vec<u64> = probed.segments.iter().map(|s| s.from).collect();
        assert_eq!(froms, [0, 40_000]);
        for (a, b) in probed.segments.iter().zip(&plain.segments) {
            assert_eq!(a.rendezvous, b.rendezvous);
            assert_relative_eq!(a.latency, b.latency, max_relative = 1e-9);
            assert_relative_eq!(a.gap_per_byte, b.gap_per_byte, max_relative = 1e-9);
        }
        // A limit given on the command line wins over the probe.
        let given = ChannelOptions {
            eager_limit: EagerLimit::Fixed(65536),
            ..options
        };
        let fit = calibrate_channel(&probed_table, &given).expect("fits");
        assert_eq!(
            (fit.eager_limit, fit.eager_origin),
            (65536, EagerOrigin::Given)
        );
    }

    #[test]
    fn a_cache_step_is_not_an_eager_limit() {
        // The development machine's ping-pong (MPICH, shared memory): the
        // time per byte grows 3.4 times from 1 MiB on, with no handshake.
        let data: Vec<(u64, f64)> = vec![
            (65536, 3.97),
            (131072, 6.51),
            (262144, 10.81),
            (524288, 19.81),
            (1048576, 56.27),
            (2097152, 179.38),
            (4194304, 359.75),
        ];
        let t = table(&data);
        assert_eq!(detect_eager_limit(&t.points, 0.76e-6), None);
        // The same slope before and after plus a constant: a protocol step.
        let stepped: Vec<(u64, f64)> = data
            .iter()
            .map(|&(n, _)| {
                (
                    n,
                    1.0 + n as f64 * 3.43e-5 + if n >= 1 << 20 { 18.0 } else { 0.0 },
                )
            })
            .collect();
        let t = table(&stepped);
        assert!(matches!(
            detect_eager_limit(&t.points, 0.76e-6),
            Some((1048576, EagerOrigin::Detected { .. }))
        ));
    }

    /// The two shapes of an eager-to-rendezvous switch, on a table of
    /// powers of two from 0 B to 4 MiB with an eager line of 1.2 us +
    /// 0.35 ns/B (copies through bounce buffers) and a handshake
    /// `h = 2 t(64 B)`.
    fn switch_table(rendezvous: impl Fn(u64) -> Option<f64>) -> Table {
        let eager = |n: u64| 1.2 + n as f64 * 0.35e-3;
        let data: Vec<(u64, f64)> = std::iter::once(0)
            .chain((0..=22).map(|i| 1u64 << i))
            .map(|n| (n, rendezvous(n).unwrap_or_else(|| eager(n))))
            .collect();
        table(&data)
    }

    /// A pure step (the same time per byte, a handshake more from 32 KiB
    /// on: a library's fixed threshold) is the step over the trend.
    #[test]
    fn a_pure_step_is_detected_as_a_step() {
        let h = 2.0 * (1.2 + 64.0 * 0.35e-3);
        let t = switch_table(|n| (n >= 32768).then_some(1.2 + h + n as f64 * 0.35e-3));
        let fit = calibrate_channel(&t, &ChannelOptions::default()).expect("fits");
        assert_eq!(fit.eager_limit, 32768);
        let EagerOrigin::Detected { step, .. } = fit.eager_origin else {
            panic!("{:?}", fit.eager_origin);
        };
        assert_relative_eq!(step, h * 1e-6, max_relative = 1e-6);
        assert!(fit.summary().max < 1e-6, "{:?}", fit.summary());
    }

    /// Crossing lines (UCX's automatic threshold): from the switch on the
    /// intercept is a handshake higher and the time per byte 0.11 ns/B
    /// (zero copy); the lines cross at h / 0.24 ns/B = 10.4 KiB, between
    /// the measured 8 KiB (eager) and 16 KiB (rendezvous). The 16 KiB
    /// point lies below the eager trend, so there is no step over it; the
    /// fit's boundary is the crossing, and the limit is put there.
    #[test]
    fn crossing_lines_are_detected_at_the_crossing() {
        let h = 2.0 * (1.2 + 64.0 * 0.35e-3);
        let cross = h / (0.35e-3 - 0.11e-3);
        let rendezvous = |n: u64| (n as f64 >= cross).then_some(1.2 + h + n as f64 * 0.11e-3);
        let t = switch_table(rendezvous);
        assert_eq!(detect_eager_limit(&t.points, h * 1e-6), None);
        let fit = calibrate_channel(&t, &ChannelOptions::default()).expect("fits");
        let report = crate::machine::describe_channel("network", &fit).join("\n");
        assert!(
            fit.eager_limit > 8192 && fit.eager_limit <= 16384,
            "{report}"
        );
        assert_eq!(fit.eager_limit, cross.ceil() as u64, "{report}");
        let EagerOrigin::Crossing {
            rise,
            slope_below,
            slope_above,
            handshake,
        } = fit.eager_origin
        else {
            panic!("{report}");
        };
        assert_relative_eq!(rise, h * 1e-6, max_relative = 1e-6);
        assert_relative_eq!(handshake, h * 1e-6, max_relative = 1e-6);
        assert_relative_eq!(slope_below, 0.35e-9, max_relative = 1e-6);
        assert_relative_eq!(slope_above, 0.11e-9, max_relative = 1e-6);
        assert_eq!(fit.segments.len(), 2, "{report}");
        assert!(fit.segments[1].rendezvous, "{report}");
        assert!(fit.summary().max < 1e-6, "{report}");
        assert!(fit.warnings().is_empty(), "{report}");
        assert!(
            report.contains("where the eager and rendezvous lines cross"),
            "{report}"
        );
    }

    /// Not a rendezvous: the time per byte falls with no handshake's rise
    /// (a copy path giving way to another, e.g. bcopy to zcopy), or rises
    /// (a cache outgrown). Neither is taken; the report and the machine
    /// file's header then warn that every size is eager, and name the
    /// option that gives the limit.
    #[test]
    fn kinks_without_a_handshake_are_not_a_switch() {
        let h = 2.0 * (1.2 + 64.0 * 0.35e-3);
        // Rise of a tenth of a handshake, slope 0.35 -> 0.11 ns/B.
        let small = switch_table(|n| {
            let cross = 0.1 * h / 0.24e-3;
            (n as f64 >= cross).then_some(1.2 + 0.1 * h + n as f64 * 0.11e-3)
        });
        // The slope doubles from 64 KiB on, continuously.
        let convex = switch_table(|n| {
            (n >= 65536).then(|| 1.2 + 65536.0 * 0.35e-3 + (n - 65536) as f64 * 0.7e-3)
        });
        for t in [small, convex] {
            let fit = calibrate_channel(&t, &ChannelOptions::default()).expect("fits");
            let report = crate::machine::describe_channel("network", &fit).join("\n");
            assert_eq!(fit.eager_origin, EagerOrigin::NotFound, "{report}");
            assert_eq!(fit.eager_limit, 8 << 20, "{report}");
            assert!(
                report.contains("warning: no eager-to-rendezvous switch was found")
                    && report.contains("--eager-limit SIZE")
                    && report.contains("buffering hazard"),
                "{report}"
            );
            let shm = crate::machine::describe_channel("shm", &fit).join("\n");
            assert!(shm.contains("--shm-eager-limit SIZE"), "{shm}");
        }
    }

    #[test]
    fn overhead_fraction_and_errors() {
        let t = table(&[(0, 5.0), (1024, 15.0), (2048, 25.0)]);
        let fit = calibrate_channel(&t, &ChannelOptions::default()).expect("fits");
        assert_relative_eq!(fit.segments[0].send_overhead, 1e-6, max_relative = 1e-12);
        assert_eq!(fit.eager_origin, EagerOrigin::NotFound);
        assert_eq!(fit.eager_limit, 4096);
        let too_big = ChannelOptions {
            overhead: Overhead::Fixed(3e-6),
            ..ChannelOptions::default()
        };
        assert!(matches!(
            calibrate_channel(&t, &too_big),
            Err(ChannelError::OverheadTooLarge { .. })
        ));
        let negative = ChannelOptions {
            overhead: Overhead::Fixed(-1.0),
            ..ChannelOptions::default()
        };
        assert!(matches!(
            calibrate_channel(&t, &negative),
            Err(ChannelError::BadOverhead(_))
        ));
        let tiny_eager = ChannelOptions {
            eager_limit: EagerLimit::Fixed(16),
            ..ChannelOptions::default()
        };
        assert!(matches!(
            calibrate_channel(&t, &tiny_eager),
            Err(ChannelError::ControlNotEager { .. })
        ));
    }

    /// A stream table needs a latency; its per-message time `g + n·G` is
    /// the fitted line.
    #[test]
    fn streams_need_a_latency_and_fit_exactly() {
        // 0.3 µs per message and 10 GB/s, 1 B .. 1 MiB.
        let data: Vec<(u64, f64)> = (0..=20)
            .map(|i| (1u64 << i, 0.3 + (1u64 << i) as f64 * 1e-4))
            .collect();
        let mut t = table(&data);
        t.measure = Measure::Stream;
        assert_eq!(
            calibrate_channel(&t, &ChannelOptions::default()),
            Err(ChannelError::StreamNeedsLatency)
        );
        let options = ChannelOptions {
            latency: Some(1e-6),
            ..ChannelOptions::default()
        };
        let fit = calibrate_channel(&t, &options).expect("fits");
        assert_eq!(fit.segments.len(), 1, "{:?}", fit.segments);
        // The per-message time is the adapter's g (o_s and g are not
        // separable in a stream; the model spaces it max(o_s, g + n·G)).
        assert_eq!(fit.segments[0].send_overhead, 0.0);
        assert_relative_eq!(fit.segments[0].gap, 0.3e-6, max_relative = 1e-9);
        assert_relative_eq!(fit.segments[0].gap_per_byte, 1e-10, max_relative = 1e-9);
        assert!(fit.summary().max < 1e-9, "{:?}", fit.checks());
    }

    /// EKSS-1's ping-pong table (PMB 2.2 over SCI, 1 rank per node) from
    /// the shared data beside the workspace. Absent, the test is skipped
    /// with a note, or fails under CI=true or with PARSIM_REQUIRE_SHARED set
    /// (the convention of the root tests' `support::shared_data`).
    fn ekss1_pingpong() -> Option<Table> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared/validation/ekss1/pmb_pingpong_1ppn.csv");
        match std::fs::read_to_string(&path) {
            Ok(text) => Some(
                crate::input::parse_table(&text, &crate::input::InputOptions::default())
                    .expect("the EKSS-1 table parses"),
            ),
            Err(err) => {
                let why = if std::env::var("CI").is_ok_and(|v| v == "true") {
                    Some("CI=true")
                } else if std::env::var_os("PARSIM_REQUIRE_SHARED").is_some() {
                    Some("PARSIM_REQUIRE_SHARED is set")
                } else {
                    None
                };
                if let Some(why) = why {
                    panic!("needs {} ({err}), and {why}", path.display());
                }
                eprintln!(
                    "note: skipped: needs {} ({err}; with CI=true or PARSIM_REQUIRE_SHARED set this is a failure)",
                    path.display()
                );
                None
            }
        }
    }

    /// The EKSS-1 ping-pong fit is physical: the modelled time never falls
    /// (at every boundary, for the lines and for the model's closed forms,
    /// and on a dense grid of sizes), slopes `>= 0`, at least 3 points per
    /// segment (the 0 B point alone excepted), no degenerate segment, the
    /// 32-64 B latency step an intercept change; and it has 7 segments, the
    /// least BIC.
    #[test]
    fn ekss1_pingpong_segments_are_physical() {
        let Some(table) = ekss1_pingpong() else {
            return;
        };
        let fit = calibrate_channel(&table, &ChannelOptions::default()).expect("fits");
        let report = crate::machine::describe_channel("network", &fit).join("\n");
        for pair in fit.segments.windows(2) {
            let (lower, upper) = (&pair[0], &pair[1]);
            let from = upper.from;
            assert!(
                upper.line.at(from) >= lower.line.at(from - 1),
                "the fitted time falls at {from} B\n{report}"
            );
            assert!(
                fit.predict(from) >= fit.predict(from - 1),
                "the model's time falls at {from} B: {} -> {}\n{report}",
                fit.predict(from - 1),
                fit.predict(from)
            );
        }
        let mut n = 0u64;
        let mut previous = fit.predict(0);
        while n <= 1 << 22 {
            let now = fit.predict(n);
            assert!(now >= previous, "the model's time falls at {n} B\n{report}");
            previous = now;
            n = if n < 256 { n + 1 } else { n + n / 256 };
        }
        for s in &fit.segments {
            let count = s.last + 1 - s.first;
            assert!(
                count >= fit::MIN_POINTS || (count == 1 && fit.points[s.first].bytes == 0),
                "a segment of {count} point(s) from {} B\n{report}",
                s.from
            );
            assert!(s.gap_per_byte >= 0.0, "{report}");
            assert!(s.latency > 0.0, "{report}");
            assert!(!s.held.degenerate(), "{report}");
        }
        // The step between 32 B and 64 B is an intercept change: no steep
        // per-byte cost (the tolerance fit had 120 ns/B over 32-67 B), and
        // 64 B is cheaper than 128 B.
        for s in &fit.segments {
            assert!(s.gap_per_byte < 30e-9, "{} B: {report}", s.from);
        }
        assert!(fit.predict(64) < fit.predict(128), "{report}");
        // How many segments, and why: each K's BIC (the least wins). With 1
        // segment the eager limit cannot be kept, with 2 the lines step down
        // at 64 KiB (no admissible fit); 7 is the least.
        let criterion: Vec<(usize, f64, f64)> = fit
            .criterion
            .iter()
            .map(|c| (c.segments, c.rss, c.bic))
            .collect();
        let why = format!("(K, rss, BIC): {criterion:?}\n{report}");
        assert_eq!(fit.segments.len(), 7, "{why}");
        let bic = |k: usize| {
            fit.criterion
                .iter()
                .find(|c| c.segments == k)
                .map(|c| c.bic)
        };
        assert!(bic(1).is_none() && bic(2).is_none(), "{why}");
        for k in [3, 4, 5, 6, 8] {
            assert!(
                bic(k).is_some_and(|b| b > bic(7).unwrap_or(f64::INFINITY)),
                "K = {k}: {why}"
            );
        }
        let starts: Vec<u64> = fit
            .segments
            .iter()
            .map(|s| fit.points[s.first].bytes)
            .collect();
        assert_eq!(starts, [0, 1, 8, 64, 1024, 65536, 524288], "{why}");
        // What the data forced: the 8-32 B times fall (8.92, 8.95, 8.07 µs),
        // so that segment is flat, and says so.
        let warnings = fit.warnings();
        assert_eq!(warnings.len(), 1, "{report}");
        assert!(
            warnings[0].starts_with("from 8 B: the measured times do not grow"),
            "{report}"
        );
        // The fit error: median 0.21%, max 6.65% (the 32 B point).
        let summary = fit.summary();
        assert!(summary.median < 0.003, "{summary:?}\n{report}");
        assert!(summary.max < 0.07, "{summary:?}\n{report}");
    }

    /// A given eager limit whose rendezvous times lie below the handshake
    /// it implies forces a line at both bounds (L = 0, G = 0): written, and
    /// the report says so.
    #[test]
    fn a_forced_degenerate_segment_is_a_warning() {
        let data: Vec<(u64, f64)> = std::iter::once(0)
            .chain((0..=20).map(|i| 1u64 << i))
            .map(|n| (n, 10.0))
            .collect();
        let options = ChannelOptions {
            eager_limit: EagerLimit::Fixed(65536),
            ..ChannelOptions::default()
        };
        let fit = calibrate_channel(&table(&data), &options).expect("fits");
        let report = crate::machine::describe_channel("network", &fit).join("\n");
        let rendezvous = fit
            .segments
            .iter()
            .find(|s| s.rendezvous)
            .expect("a rendezvous segment");
        assert!(rendezvous.held.degenerate(), "{report}");
        assert!(
            report.contains("warning: from 64 KiB: degenerate, L = 0 and G = 0"),
            "{report}"
        );
    }

    /// One point above the eager limit: its segment keeps the time per
    /// byte of the segment below (a protocol switch adds a constant) and
    /// gets the rest as latency, with a warning that it is one point.
    #[test]
    fn one_point_above_the_eager_limit_keeps_the_slope_below() {
        let (os, l, or, g) = (1e-6, 3e-6, 1e-6, 1e-8);
        let post = |n: u64| os + l + n as f64 * g;
        let data: Vec<(u64, f64)> = (0..=20)
            .map(|i| {
                let n = 1u64 << i;
                let t = if n < 1 << 20 {
                    post(n) + or
                } else {
                    2.0 * post(64) + post(n) + or
                };
                (n, t * 1e6)
            })
            .collect();
        let options = ChannelOptions {
            overhead: Overhead::Fixed(1e-6),
            eager_limit: EagerLimit::Fixed(1 << 20),
            ..ChannelOptions::default()
        };
        let fit = calibrate_channel(&table(&data), &options).expect("fits");
        let last = fit.segments.last().expect("segments");
        assert!(
            last.rendezvous && last.first == last.last,
            "{:?}",
            fit.segments
        );
        assert_relative_eq!(last.gap_per_byte, g, max_relative = 1e-6);
        assert_relative_eq!(last.latency, l, max_relative = 1e-6);
        let warnings = fit.warnings();
        assert!(
            warnings
                .iter()
                .any(|w| w.starts_with("from 1 MiB: 1 point(s) only")),
            "{warnings:?}"
        );
    }

    #[test]
    fn alltoall_subtracts_the_local_copy() {
        let t = table(&[(0, 3.0), (1000, 10.0)]);
        let one_way = alltoall2_to_oneway(&t, 1e9).expect("maps");
        assert_relative_eq!(one_way.points[1].seconds, 9e-6, max_relative = 1e-12);
        assert!(alltoall2_to_oneway(&t, 1e8).is_err());
        assert!(alltoall2_to_oneway(&t, 0.0).is_err());
    }

    #[test]
    fn summary_of_errors() {
        let s = summarize([0.01, -0.03, 0.02, -0.5]);
        assert_relative_eq!(s.median, 0.025);
        assert_relative_eq!(s.max, 0.5);
        assert_eq!(summarize([]).points, 0);
    }
}
