//! Piecewise-linear fits `t(n) = a_k + b_k·n` with breakpoints found from
//! the data.
//!
//! **Method.** Over the points sorted by size, every contiguous run of
//! points is a candidate segment, fitted by weighted least squares with
//! weights `1/t²`, i.e. minimising the squared *relative* error
//! `Σ ((a + b·n − t)/t)²`, so that a 1 µs error at 0 bytes counts as much as
//! a 1 ms error at 1 MB. For each number of segments K the segmentation with
//! the least total squared relative error is found exactly by dynamic
//! programming over the split points (R. Bellman, "On the approximation of
//! curves by line segments using dynamic programming", Communications of the
//! ACM 4(6), 1961), in `O(K·N²)` with prefix sums. K is the smallest number
//! of segments whose worst point is within a tolerance of relative error:
//! the acceptance test of SimGrid's `contrib/network_model/calibrate_piecewise.py`
//! (segments of a ping-pong table accepted when the maximum relative error
//! stays below a bound), which grows segments greedily where we search
//! exactly. Protocol changes (eager/rendezvous, inline data, cache effects)
//! show up as breakpoints, as in Netgauge's LogGP assessment (Hoefler,
//! Lichei, Rehm, "Low-Overhead LogGP Parameter Assessment for Modern
//! Interconnection Networks", IPDPS 2007), which fits G per protocol range.
//!
//! **Constraints.** A line must be usable as model parameters: `b ≥ 0` (no
//! negative seconds per byte) and `a ≥ floor(n_first)`, a lower bound on the
//! intercept given by the caller (the overheads, plus the rendezvous
//! handshake above the eager limit), and no segment may contain points on
//! both sides of a forced break (the eager limit). The constrained least
//! squares problem is convex with box constraints, so its optimum is the
//! unconstrained one if feasible, else the best of the two edges (`a` at its
//! bound, or `b = 0`), each clamped. A segment of one point at `n > 0` is
//! fitted as `a = floor`, `b = (t − a)/n`; at `n = 0` as `a = t`, `b = 0`.

use thiserror::Error;

use crate::input::Point;

/// A line `t(n) = a + b·n`, seconds and seconds per byte.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Line {
    /// Intercept in seconds.
    pub a: f64,
    /// Slope in seconds per byte.
    pub b: f64,
}

impl Line {
    /// The line's time for `n` bytes.
    pub fn at(&self, n: u64) -> f64 {
        self.a + self.b * n as f64
    }
}

/// One fitted segment: a run of points and its line.
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    /// Index of its first point.
    pub first: usize,
    /// Index of its last point (inclusive).
    pub last: usize,
    /// The fitted line.
    pub line: Line,
    /// Root mean square relative error of its points.
    pub rms_rel: f64,
    /// Largest absolute relative error of its points.
    pub max_rel: f64,
}

/// The result of [`fit_piecewise`].
#[derive(Debug, Clone, PartialEq)]
pub struct PiecewiseFit {
    /// Segments in size order, covering every point once.
    pub segments: Vec<Segment>,
    /// Largest absolute relative error over all points.
    pub max_rel: f64,
    /// Whether `max_rel` is within the tolerance asked for.
    pub within_tolerance: bool,
}

impl PiecewiseFit {
    /// The fitted value at point `index` (by its segment's line).
    pub fn fitted(&self, points: &[Point], index: usize) -> Option<f64> {
        let segment = self
            .segments
            .iter()
            .find(|s| s.first <= index && index <= s.last)?;
        Some(segment.line.at(points.get(index)?.bytes))
    }
}

/// How to fit.
#[derive(Debug, Clone, PartialEq)]
pub struct FitOptions {
    /// At most this many segments (at least 1).
    pub max_segments: usize,
    /// Accept the fewest segments whose largest relative error is at most
    /// this (0.05 = 5%).
    pub tolerance: f64,
    /// Sizes no segment may straddle: a segment never holds a point below
    /// and a point at or above one of them.
    pub breaks: Vec<u64>,
}

impl Default for FitOptions {
    fn default() -> Self {
        Self {
            max_segments: 8,
            tolerance: 0.05,
            breaks: Vec::new(),
        }
    }
}

/// Why a fit is impossible.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum FitError {
    /// No points.
    #[error("no points to fit")]
    NoPoints,
    /// Points not sorted by strictly increasing size, or a non-positive or
    /// non-finite time.
    #[error("points must have strictly increasing sizes and positive finite times")]
    BadPoints,
    /// `max_segments` of 0.
    #[error("at least one segment is needed (max segments is 0)")]
    NoSegments,
    /// A tolerance that is not a finite number `>= 0`.
    #[error("the tolerance must be a finite number >= 0, got {0}")]
    BadTolerance(f64),
    /// The forced breaks split the points into more runs than segments
    /// are allowed.
    #[error("the forced breaks need more than {0} segment(s)")]
    TooManyBreaks(usize),
}

/// Weighted sums of a run of points, `w = 1/t²`, `x = n/scale`.
#[derive(Debug, Clone, Copy, Default)]
struct Sums {
    s: f64,
    sx: f64,
    sxx: f64,
    sy: f64,
    sxy: f64,
    syy: f64,
}

impl Sums {
    fn minus(&self, other: &Sums) -> Sums {
        Sums {
            s: self.s - other.s,
            sx: self.sx - other.sx,
            sxx: self.sxx - other.sxx,
            sy: self.sy - other.sy,
            sxy: self.sxy - other.sxy,
            syy: self.syy - other.syy,
        }
    }

    /// `Σ w (a + b x − y)²`, clamped at 0 against rounding.
    fn cost(&self, a: f64, b: f64) -> f64 {
        let value = a * a * self.s + b * b * self.sxx + self.syy + 2.0 * a * b * self.sx
            - 2.0 * a * self.sy
            - 2.0 * b * self.sxy;
        value.max(0.0)
    }
}

/// The best feasible line (`a >= floor`, `b >= 0`) for a run of at least two
/// points with distinct sizes, in scaled units (`x = n/scale`).
fn constrained_line(sums: &Sums, floor: f64) -> (f64, f64) {
    let det = sums.s * sums.sxx - sums.sx * sums.sx;
    if det > 1e-12 * sums.s * sums.sxx {
        let b = (sums.s * sums.sxy - sums.sx * sums.sy) / det;
        let a = (sums.sy - b * sums.sx) / sums.s;
        if b >= 0.0 && a >= floor {
            return (a, b);
        }
    }
    // Edge b = 0: the weighted mean, raised to the floor.
    let edge_b = ((sums.sy / sums.s).max(floor), 0.0);
    // Edge a = floor: the best slope for that intercept, at least 0.
    let edge_a = if sums.sxx > 0.0 {
        (floor, ((sums.sxy - floor * sums.sx) / sums.sxx).max(0.0))
    } else {
        (floor, 0.0)
    };
    if sums.cost(edge_a.0, edge_a.1) < sums.cost(edge_b.0, edge_b.1) {
        edge_a
    } else {
        edge_b
    }
}

/// The line of one point (see the module documentation).
fn single_point_line(point: &Point, floor: f64) -> Line {
    if point.bytes == 0 || point.seconds <= floor {
        Line {
            a: point.seconds.max(floor),
            b: 0.0,
        }
    } else {
        Line {
            a: floor,
            b: (point.seconds - floor) / point.bytes as f64,
        }
    }
}

/// Fits the run `points[first..=last]` with the intercept floor `floor`.
pub fn fit_segment(points: &[Point], first: usize, last: usize, floor: f64) -> Segment {
    let run = &points[first..=last];
    let line = match run {
        [only] => single_point_line(only, floor),
        _ => {
            let scale = run.last().map_or(1.0, |p| (p.bytes as f64).max(1.0));
            let mut sums = Sums::default();
            for point in run {
                add(&mut sums, point, scale);
            }
            let (a, b) = constrained_line(&sums, floor);
            Line { a, b: b / scale }
        }
    };
    let (rms_rel, max_rel) = errors(run, line);
    Segment {
        first,
        last,
        line,
        rms_rel,
        max_rel,
    }
}

fn add(sums: &mut Sums, point: &Point, scale: f64) {
    let w = 1.0 / (point.seconds * point.seconds);
    let x = point.bytes as f64 / scale;
    let y = point.seconds;
    sums.s += w;
    sums.sx += w * x;
    sums.sxx += w * x * x;
    sums.sy += w * y;
    sums.sxy += w * x * y;
    sums.syy += w * y * y;
}

fn errors(run: &[Point], line: Line) -> (f64, f64) {
    let mut sum = 0.0;
    let mut max: f64 = 0.0;
    for point in run {
        let rel = (line.at(point.bytes) - point.seconds) / point.seconds;
        sum += rel * rel;
        max = max.max(rel.abs());
    }
    ((sum / run.len().max(1) as f64).sqrt(), max)
}

/// Fits a piecewise-linear function to `points` (sorted by strictly
/// increasing size, positive times); `floor(n)` is the least intercept
/// allowed for a segment whose first point has `n` bytes.
pub fn fit_piecewise(
    points: &[Point],
    options: &FitOptions,
    floor: impl Fn(u64) -> f64,
) -> Result<PiecewiseFit, FitError> {
    if points.is_empty() {
        return Err(FitError::NoPoints);
    }
    let valid = points
        .iter()
        .all(|p| p.seconds.is_finite() && p.seconds > 0.0)
        && points.windows(2).all(|w| w[0].bytes < w[1].bytes);
    if !valid {
        return Err(FitError::BadPoints);
    }
    if options.max_segments == 0 {
        return Err(FitError::NoSegments);
    }
    if !(options.tolerance.is_finite() && options.tolerance >= 0.0) {
        return Err(FitError::BadTolerance(options.tolerance));
    }
    let n = points.len();
    let max_k = options.max_segments.min(n);
    let scale = points.last().map_or(1.0, |p| (p.bytes as f64).max(1.0));
    // prefix[i] = sums of points[..i].
    let mut prefix = vec![Sums::default(); n + 1];
    for (i, point) in points.iter().enumerate() {
        let mut next = prefix[i];
        add(&mut next, point, scale);
        prefix[i + 1] = next;
    }
    let straddles = |first: usize, last: usize| {
        options
            .breaks
            .iter()
            .any(|&b| points[first].bytes < b && b <= points[last].bytes)
    };
    // cost[i][j]: cost of one segment over points[i..j] (j exclusive); None
    // when it straddles a break.
    let segment_cost = |i: usize, j: usize| -> Option<f64> {
        if straddles(i, j - 1) {
            return None;
        }
        let f = floor(points[i].bytes);
        if j - i == 1 {
            let line = single_point_line(&points[i], f);
            let rel = (line.at(points[i].bytes) - points[i].seconds) / points[i].seconds;
            return Some(rel * rel);
        }
        let sums = prefix[j].minus(&prefix[i]);
        let (a, b) = constrained_line(&sums, f);
        Some(sums.cost(a, b))
    };
    let mut costs = vec![vec![None; n + 1]; n];
    for (i, row) in costs.iter_mut().enumerate() {
        for (j, cell) in row.iter_mut().enumerate().skip(i + 1) {
            *cell = segment_cost(i, j);
        }
    }
    // best[k][j]: least cost of points[..j] in k segments; from[k][j]: the
    // start of the last segment.
    let mut best = vec![vec![f64::INFINITY; n + 1]; max_k + 1];
    let mut from = vec![vec![0usize; n + 1]; max_k + 1];
    best[0][0] = 0.0;
    for k in 1..=max_k {
        for j in 1..=n {
            for i in (k - 1)..j {
                let prev = best[k - 1][i];
                if !prev.is_finite() {
                    continue;
                }
                if let Some(cost) = costs[i][j]
                    && prev + cost < best[k][j]
                {
                    best[k][j] = prev + cost;
                    from[k][j] = i;
                }
            }
        }
    }
    let mut chosen: Option<PiecewiseFit> = None;
    for (k, best_k) in best.iter().enumerate().skip(1) {
        if !best_k[n].is_finite() {
            continue;
        }
        let mut bounds = Vec::with_capacity(k);
        let mut j = n;
        for level in (1..=k).rev() {
            let i = from[level][j];
            bounds.push((i, j - 1));
            j = i;
        }
        bounds.reverse();
        let segments: Vec<Segment> = bounds
            .into_iter()
            .map(|(first, last)| fit_segment(points, first, last, floor(points[first].bytes)))
            .collect();
        let max_rel = segments.iter().map(|s| s.max_rel).fold(0.0, f64::max);
        let fit = PiecewiseFit {
            segments,
            max_rel,
            within_tolerance: max_rel <= options.tolerance,
        };
        if fit.within_tolerance {
            return Ok(fit);
        }
        if chosen.as_ref().is_none_or(|c| fit.max_rel < c.max_rel) {
            chosen = Some(fit);
        }
    }
    // `n` segments of one point each never straddle a break, so some K
    // works unless the breaks need more than `max_k` segments.
    chosen.ok_or(FitError::TooManyBreaks(max_k))
}

#[cfg(test)]
mod tests {
    use approx::assert_relative_eq;

    use super::*;

    fn pts(data: &[(u64, f64)]) -> Vec<Point> {
        data.iter()
            .map(|&(bytes, us)| Point {
                bytes,
                seconds: us * 1e-6,
            })
            .collect()
    }

    #[test]
    fn one_line_is_recovered_exactly() {
        let points: Vec<Point> = (0..10)
            .map(|i| {
                let n = 1u64 << (2 * i);
                Point {
                    bytes: n,
                    seconds: 5e-6 + n as f64 * 1e-8,
                }
            })
            .collect();
        let fit = fit_piecewise(&points, &FitOptions::default(), |_| 0.0).expect("fits");
        assert_eq!(fit.segments.len(), 1);
        assert_relative_eq!(fit.segments[0].line.a, 5e-6, max_relative = 1e-9);
        assert_relative_eq!(fit.segments[0].line.b, 1e-8, max_relative = 1e-9);
        assert!(fit.max_rel < 1e-9);
    }

    #[test]
    fn a_step_is_found() {
        // Eager below 64 KiB, a 20 us handshake above it.
        let points: Vec<Point> = (0..=22)
            .map(|i| {
                let n = 1u64 << i;
                let t = 5e-6 + n as f64 * 1e-8 + if n >= 65536 { 20e-6 } else { 0.0 };
                Point {
                    bytes: n,
                    seconds: t,
                }
            })
            .collect();
        let options = FitOptions {
            tolerance: 0.001,
            ..FitOptions::default()
        };
        let fit = fit_piecewise(&points, &options, |_| 0.0).expect("fits");
        assert_eq!(fit.segments.len(), 2, "{fit:?}");
        assert_eq!(points[fit.segments[1].first].bytes, 65536);
        assert_relative_eq!(fit.segments[1].line.a, 25e-6, max_relative = 1e-6);
    }

    #[test]
    fn constraints_hold() {
        // Decreasing times would need b < 0; a steep run would need a < 0.
        let points = pts(&[(1, 10.0), (2, 9.0), (4, 8.0), (1000, 100.0), (2000, 300.0)]);
        let options = FitOptions {
            max_segments: 2,
            ..FitOptions::default()
        };
        let fit = fit_piecewise(&points, &options, |_| 1e-6).expect("fits");
        for s in &fit.segments {
            assert!(s.line.b >= 0.0, "{s:?}");
            assert!(s.line.a >= 1e-6 * (1.0 - 1e-12), "{s:?}");
        }
    }

    #[test]
    fn breaks_are_respected() {
        let points = pts(&[(1, 1.0), (2, 1.0), (4, 1.0), (8, 1.0)]);
        let options = FitOptions {
            breaks: vec![3],
            ..FitOptions::default()
        };
        let fit = fit_piecewise(&points, &options, |_| 0.0).expect("fits");
        assert_eq!(fit.segments.len(), 2);
        assert_eq!(fit.segments[0].last, 1);
    }

    #[test]
    fn the_tolerance_picks_the_fewest_segments() {
        let points = pts(&[
            (0, 5.21),
            (1, 6.12),
            (2, 6.14),
            (4, 6.17),
            (8, 8.92),
            (16, 8.95),
            (32, 8.07),
        ]);
        let loose = FitOptions {
            tolerance: 0.5,
            ..FitOptions::default()
        };
        assert_eq!(
            fit_piecewise(&points, &loose, |_| 0.0)
                .expect("fits")
                .segments
                .len(),
            1
        );
        let tight = FitOptions {
            tolerance: 0.0001,
            max_segments: 3,
            ..FitOptions::default()
        };
        let fit = fit_piecewise(&points, &tight, |_| 0.0).expect("fits");
        assert!(!fit.within_tolerance);
        assert!(fit.segments.len() <= 3);
    }

    #[test]
    fn bad_input_is_an_error() {
        let options = FitOptions::default();
        assert_eq!(
            fit_piecewise(&[], &options, |_| 0.0),
            Err(FitError::NoPoints)
        );
        let unsorted = pts(&[(2, 1.0), (1, 1.0)]);
        assert_eq!(
            fit_piecewise(&unsorted, &options, |_| 0.0),
            Err(FitError::BadPoints)
        );
        let zero = pts(&[(1, 0.0), (2, 1.0)]);
        assert_eq!(
            fit_piecewise(&zero, &options, |_| 0.0),
            Err(FitError::BadPoints)
        );
        let nan = FitOptions {
            tolerance: f64::NAN,
            ..FitOptions::default()
        };
        assert!(fit_piecewise(&pts(&[(1, 1.0), (2, 2.0)]), &nan, |_| 0.0).is_err());
    }
}
