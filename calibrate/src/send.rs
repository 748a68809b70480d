//! The CPU time of a send that needs no answer, per byte (LogGOPS's `O`),
//! from the sender's time in `MPI_Isend` + `MPI_Wait` of eager messages
//! while the receiver computes: parsim's network benchmark prints it as
//! the `SendOverhead` table (`netbench.c`, `send_call`).
//!
//! LogGOPS (Hoefler, Schneider, Lumsdaine, "LogGOPSim - Simulating
//! Large-Scale Applications in the LogGOPS Model", HPDC 2010) charges a
//! send `o + (s − 1)·O` of CPU time and `g + (s − 1)·G` of network time
//! from the same start: the copy of an eager message out of the user's
//! buffer keeps the sender busy while the message travels. A ping-pong
//! cannot tell `O` from `G` (both lie on its path); the send call alone
//! can, as LogP measurements take the send overhead (Culler, Liu, Martin,
//! Yoshikawa, "Assessing Fast Network Interfaces", IEEE Micro 16(1),
//! 1996).
//!
//! The model's sender time for such a send on an idle adapter is `o_s +
//! O·n` (`o_s` of the ping-pong fit's segment of `n`): the fit takes `O`
//! as the least-squares slope of the measured time over the eager sizes
//! above 0 B (the intercept is reported, not used: `o_s` stays the
//! ping-pong fit's), not below 0.
//!
//! A stream (osu_bw: one sender posting a window of messages) bounds it
//! from above: its sender spends `o_s + O·n` of CPU per message and its
//! adapter `g + G·n`, so a stream's time per eager message `t(n)` is at
//! least the larger of the two and grows with `n` at least as fast as
//! each: `O` is at most the least-squares slope of `t(n)` over the eager
//! sizes above 0 B (a slope, not a ratio at one size, which the noise of
//! the smallest sizes would decide). An isolated send costs more per byte
//! than one in a stream (the copy's destination lines sit in the
//! receiver's cache after its last receive; a stream reuses them warm):
//! the bound keeps the model's streams no slower than measured, and
//! leaves what is above it (a cache effect of isolated sends) unmodelled.

use thiserror::Error;

use crate::channel::{ChannelFit, summarize};
use crate::input::Table;
use crate::{ErrorSummary, PointCheck};

/// The fewest eager sizes above 0 B a slope is taken from.
pub const MIN_POINTS: usize = 3;

/// What the `SendOverhead` table gave.
#[derive(Debug, Clone, PartialEq)]
pub struct SendFit {
    /// `O`, seconds per byte (0 when the slope came out negative).
    pub per_byte: f64,
    /// The least-squares line's value at 0 B, seconds: what a send call of
    /// a small message costs, next to the channel's `o_s`.
    pub intercept: f64,
    /// The channel's `o_s` at the smallest size (the ping-pong fit's).
    pub send_overhead: f64,
    /// Whether the slope was negative and `O` was held at 0.
    pub held_at_zero: bool,
    /// The slope of the send calls, seconds per byte (`per_byte` unless
    /// held at 0 or bounded by a stream).
    pub slope: f64,
    /// The stream's bound where it is below the slope: the stream's own
    /// slope over its eager sizes, seconds per byte (then `per_byte` is
    /// the bound).
    pub stream_bound: Option<f64>,
    /// Every measured eager point against the model `o_s + O·n`.
    pub checks: Vec<PointCheck>,
    /// The same points against `o_s` alone (the model without `O`).
    pub checks_before: Vec<PointCheck>,
}

impl SendFit {
    /// Median and max |error| with `O`.
    pub fn summary(&self) -> ErrorSummary {
        summarize(self.checks.iter().map(|c| c.error))
    }

    /// Median and max |error| without it.
    pub fn summary_before(&self) -> ErrorSummary {
        summarize(self.checks_before.iter().map(|c| c.error))
    }
}

/// Why `O` cannot be fitted from a table.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum SendFitError {
    /// Too few eager sizes above 0 B.
    #[error(
        "the SendOverhead table has {found} size(s) above 0 B and below the eager limit ({limit} B); the per-byte send overhead needs at least {MIN_POINTS}"
    )]
    TooFewPoints {
        /// How many there were.
        found: usize,
        /// The channel's eager limit.
        limit: u64,
    },
}

/// Fits `O` from a `SendOverhead` table for the channel `channel` (whose
/// `o_s` per segment and eager limit it keeps), at most what the stream
/// table `stream` (time per message of one sender's window, osu_bw's
/// loop), when given, allows.
pub fn fit_send_overhead(
    table: &Table,
    channel: &ChannelFit,
    stream: Option<&Table>,
) -> Result<SendFit, SendFitError> {
    let o_s = |n: u64| channel.segment_for(n).map_or(0.0, |s| s.send_overhead);
    let points: Vec<_> = table
        .points
        .iter()
        .filter(|p| p.bytes > 0 && p.bytes < channel.eager_limit && p.seconds > 0.0)
        .collect();
    if points.len() < MIN_POINTS {
        return Err(SendFitError::TooFewPoints {
            found: points.len(),
            limit: channel.eager_limit,
        });
    }
    // Least squares of `t(n) − o_s(n) = a + O·n`.
    let residuals: Vec<(f64, f64)> = points
        .iter()
        .map(|p| (p.bytes as f64, p.seconds - o_s(p.bytes)))
        .collect();
    let (slope, intercept0) = least_squares(&residuals);
    // The stream's bound: its own slope over its eager sizes above 0 B
    // (with fewer than MIN_POINTS of them, none).
    let eager_stream: Vec<(f64, f64)> = stream
        .into_iter()
        .flat_map(|t| &t.points)
        .filter(|p| p.bytes > 0 && p.bytes < channel.eager_limit)
        .map(|p| (p.bytes as f64, p.seconds))
        .collect();
    let stream_bound = (eager_stream.len() >= MIN_POINTS)
        .then(|| least_squares(&eager_stream).0.max(0.0))
        .filter(|&bound| bound < slope);
    let per_byte = stream_bound.unwrap_or(slope.max(0.0));
    let intercept = intercept0 + o_s(points[0].bytes);
    let check = |per_byte: f64| -> Vec<PointCheck> {
        table
            .points
            .iter()
            .filter(|p| p.bytes < channel.eager_limit && p.seconds > 0.0)
            .map(|p| {
                let predicted = o_s(p.bytes) + per_byte * p.bytes as f64;
                PointCheck {
                    bytes: p.bytes,
                    measured: p.seconds,
                    fitted: intercept + slope * p.bytes as f64,
                    predicted,
                    error: (predicted - p.seconds) / p.seconds,
                }
            })
            .collect()
    };
    Ok(SendFit {
        per_byte,
        intercept,
        send_overhead: o_s(points[0].bytes),
        held_at_zero: slope < 0.0 && stream_bound.is_none(),
        slope,
        stream_bound,
        checks: check(per_byte),
        checks_before: check(0.0),
    })
}

/// The least-squares line through `(x, y)` points of at least two
/// distinct `x`: (slope, intercept).
pub fn least_squares(points: &[(f64, f64)]) -> (f64, f64) {
    let count = points.len() as f64;
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / count;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / count;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for &(x, y) in points {
        sxy += (x - mean_x) * (y - mean_y);
        sxx += (x - mean_x) * (x - mean_x);
    }
    // `sxx > 0`: a table's sizes are distinct, and callers pass at least
    // MIN_POINTS of them.
    let slope = sxy / sxx;
    (slope, mean_y - slope * mean_x)
}

#[cfg(test)]
mod tests {
    use approx::assert_relative_eq;

    use super::*;
    use crate::channel::{ChannelOptions, calibrate_channel};
    use crate::input::{Format, Measure, Point};

    fn table(points: &[(u64, f64)], measure: Measure) -> Table {
        Table {
            points: points
                .iter()
                .map(|&(bytes, seconds)| Point { bytes, seconds })
                .collect(),
            measure,
            format: Format::Imb,
            origin: "test".into(),
            skipped: Vec::new(),
            buffered_below: None,
        }
    }

    /// A ping-pong of `5 us + n·1 ns` below 64 KiB; the send call `o_s +
    /// 0.25 ns·n`: the fit finds O = 0.25 ns/B and predicts the send calls
    /// exactly.
    #[test]
    fn the_slope_of_the_send_call_is_o() {
        let sizes: Vec<u64> = (0..16)
            .map(|k| if k == 0 { 0 } else { 1 << (k - 1) })
            .collect();
        let pingpong: Vec<(u64, f64)> =
            sizes.iter().map(|&n| (n, 5e-6 + n as f64 * 1e-9)).collect();
        let channel = calibrate_channel(
            &table(&pingpong, Measure::PingPong),
            &ChannelOptions {
                eager_limit: crate::EagerLimit::Fixed(65_536),
                ..ChannelOptions::default()
            },
        )
        .expect("a straight line fits");
        let o_s = channel.segments[0].send_overhead;
        assert!(o_s > 0.0);
        let calls: Vec<(u64, f64)> = sizes
            .iter()
            .map(|&n| (n, o_s + n as f64 * 0.25e-9))
            .collect();
        let fit = fit_send_overhead(&table(&calls, Measure::PingPong), &channel, None)
            .expect("16 sizes are enough");
        assert_relative_eq!(fit.per_byte, 0.25e-9, max_relative = 1e-9);
        assert_relative_eq!(fit.intercept, o_s, max_relative = 1e-9);
        assert!(fit.summary().max < 1e-9, "{:?}", fit.summary());
        // Without O the 16 KiB call is predicted at o_s alone.
        assert!(fit.summary_before().max > 0.5, "{:?}", fit.summary_before());
        assert_eq!(fit.stream_bound, None);

        // A stream of `0.3 us + 0.1 ns·n` per message: its sender cannot
        // spend more than 0.1 ns/B on the copy.
        let stream: Vec<(u64, f64)> = sizes
            .iter()
            .map(|&n| (n, 0.3e-6 + n as f64 * 0.1e-9))
            .collect();
        let bounded = fit_send_overhead(
            &table(&calls, Measure::PingPong),
            &channel,
            Some(&table(&stream, Measure::Stream)),
        )
        .expect("16 sizes are enough");
        assert_relative_eq!(bounded.per_byte, 0.1e-9, max_relative = 1e-6);
        assert_relative_eq!(bounded.slope, 0.25e-9, max_relative = 1e-9);
        let bound = bounded.stream_bound.expect("the stream binds");
        assert_relative_eq!(bound, 0.1e-9, max_relative = 1e-6);
        // A stream slower than the send calls does not bind.
        let slow: Vec<(u64, f64)> = sizes
            .iter()
            .map(|&n| (n, 2.0 * o_s + n as f64 * 1e-9))
            .collect();
        let free = fit_send_overhead(
            &table(&calls, Measure::PingPong),
            &channel,
            Some(&table(&slow, Measure::Stream)),
        )
        .expect("16 sizes are enough");
        assert_eq!(free.stream_bound, None);
        assert_relative_eq!(free.per_byte, 0.25e-9, max_relative = 1e-9);
    }

    #[test]
    fn a_falling_send_call_holds_o_at_zero_and_too_few_sizes_are_refused() {
        let pingpong: Vec<(u64, f64)> = (0..8u64)
            .map(|k| (k * 100, 5e-6 + k as f64 * 1e-8))
            .collect();
        let channel = calibrate_channel(
            &table(&pingpong, Measure::PingPong),
            &ChannelOptions {
                eager_limit: crate::EagerLimit::Fixed(300),
                ..ChannelOptions::default()
            },
        )
        .expect("a straight line fits");
        let falling = [(0, 2e-6), (100, 1.9e-6), (200, 1.8e-6), (250, 1.7e-6)];
        let fit = fit_send_overhead(&table(&falling, Measure::PingPong), &channel, None)
            .expect("three sizes above 0 B");
        assert_eq!(fit.per_byte, 0.0);
        assert!(fit.held_at_zero);
        // 400 B is at or above the eager limit: left out.
        let few = [(0, 2e-6), (100, 2.1e-6), (200, 2.2e-6), (400, 2.4e-6)];
        assert_eq!(
            fit_send_overhead(&table(&few, Measure::PingPong), &channel, None),
            Err(SendFitError::TooFewPoints {
                found: 2,
                limit: 300
            })
        );
    }
}
