//! Piecewise-linear fits `t(n) = a_k + b_k·n` of a benchmark table, with
//! breakpoints found from the data.
//!
//! Two fits share the line fitting of this module:
//! - [`fit_segmented`], the fit of `parsim calibrate net`: physically
//!   constrained segments, their number chosen by an information criterion;
//! - [`fit_piecewise`], the fewest segments whose worst point is within a
//!   tolerance, kept for the kernel cost models of `parsim calibrate
//!   blocks` (`blocks::fit`, which chooses between its models by
//!   leave-one-out error).
//!
//! **Lines.** A segment's line is fitted by weighted least squares with
//! weights `1/t²`, i.e. minimising the squared *relative* error
//! `Σ ((a + b·n − t)/t)²`, so that a 1 µs error at 0 bytes counts as much as
//! a 1 ms error at 1 MB. A line must be usable as model parameters: `b ≥ 0`
//! (no negative seconds per byte) and `a ≥ floor(n_first)`, a lower bound on
//! the intercept given by the caller (the overheads, plus the rendezvous
//! handshake above the eager limit). The problem is convex with box
//! constraints, so its optimum is the unconstrained one if feasible, else
//! the best of the two edges (`a` at its bound, or `b = 0`), each clamped;
//! which bound holds is kept ([`Held`]) for the fit report.
//!
//! **[`fit_segmented`].** A ping-pong table is a model's measurement, not a
//! curve to interpolate, so the fit is constrained by what the model means:
//! - *At least [`MIN_POINTS`] = 3 points per segment.* A line through two
//!   points fits any two points exactly: it measures nothing, and a latency
//!   step between them becomes a steep per-byte cost (EKSS-1's 32-64 B
//!   segment of 120 ns/B in the tolerance fit). Three points leave a
//!   residual to judge the line by. This is the minimum segment length of
//!   segmented regression (the trimming `h` of J. Bai and P. Perron,
//!   "Computation and analysis of multiple structural change models",
//!   Journal of Applied Econometrics 18(1), 2003). Two exceptions. The
//!   point of 0 bytes may be a segment alone: a message without payload
//!   has no per-byte cost to measure (its segment covers one size), and
//!   MPI libraries send it as a bare header, often faster than a 1-byte
//!   message (EKSS-1: 5.21 µs against 6.12 µs), a step that a 3-point
//!   segment would turn into a slope. A run of fewer than 3 points
//!   between forced breaks (or a table of fewer than 3 points) is one
//!   segment; a run of one point after a break takes the slope of the
//!   segment below and its own intercept (a protocol switch adds a
//!   constant and leaves the time per byte; Hoefler, Lichei, Rehm,
//!   "Low-Overhead LogGP Parameter Assessment for Modern Interconnection
//!   Networks", IPDPS 2007, fit G per protocol range).
//! - *The time never decreases with size.* Inside a segment `b ≥ 0`. Across
//!   a boundary, the model switches to segment k+1 at its first size
//!   `from` ([`boundary`]: the forced break if one lies between the two
//!   segments, else where the two lines cross if that is between the last
//!   measured size of k and the first of k+1, else the first measured size
//!   of k+1), and a segmentation is admissible only if there the time does
//!   not fall: `t_{k+1}(from) ≥ t_k(from − 1)`. This is a constraint of the
//!   search, not a correction of its result: a segmentation whose lines
//!   step down is not a candidate.
//! - *No line the data did not shape.* A segment whose line is held by both
//!   bounds (`a = floor` and `b = 0`: in LogGP terms `L = 0` and `G = 0`, no
//!   latency and infinite bandwidth over a range of sizes) is not a
//!   candidate either, unless no segmentation without one exists.
//! - *Forced breaks* (the eager limit): no segment holds a point below and
//!   a point at or above one.
//!
//! For each number of segments K the admissible segmentation of least total
//! squared relative error is found exactly by dynamic programming over the
//! breakpoints (R. Bellman, "On the approximation of curves by line
//! segments using dynamic programming", Communications of the ACM 4(6),
//! 1961; the grid search of P. M. Lerman, "Fitting segmented regression
//! models by grid search", Applied Statistics 29(1), 1980). Because
//! admissibility involves two neighbouring segments, the state is the last
//! segment (its first and its end point), not only its end: `O(K·N³)` for N
//! points, at most [`MAX_POINTS`].
//!
//! *How many segments.* A new segment must lower the error by more than the
//! noise does: K minimises the Bayesian information criterion (G. Schwarz,
//! "Estimating the dimension of a model", Annals of Statistics 6(2), 1978)
//! on the relative residuals `r_i = (a + b·n_i − t_i)/t_i`,
//! `BIC(K) = N·ln(σ̂²_K) + p_K·ln N`, with `σ̂²_K = Σ r_i² / N` the noise
//! variance estimated from the data by the K-segment fit and `p_K = 3K − 1`
//! (K intercepts, K slopes, K − 1 breakpoints), the criterion J. Bai and P.
//! Perron use for the number of structural breaks in a linear regression
//! ("Estimating and testing linear models with multiple structural
//! changes", Econometrica 66(1), 1998; consistent for the number of
//! change points: Y.-C. Yao, "Estimating the number of change-points via
//! Schwarz' criterion", Statistics & Probability Letters 6(3), 1988).
//! Adding a segment therefore pays only if it divides the residual
//! variance by more than `N^(3/N)` (1.49 for 24 points). `σ̂` is taken at
//! least [`NOISE_FLOOR`] (0.01%): benchmark tables print 3 to 5 significant
//! digits, so smaller residuals are rounding, and a model that reproduces a
//! table exactly gains nothing from further segments. Every K's values are
//! kept ([`PiecewiseFit::criterion`]) for the fit report. On 24 points the
//! criterion sometimes splits one line into two near-identical ones (in
//! 100 noise draws of a 3-segment table at 0.2% to 2% noise, one draw in
//! five). The residual variance with its degrees of freedom,
//! `Σ r_i² / (N − p_K)` (as in the modified criterion of J. Liu, S. Wu
//! and J. V. Zidek, "On segmented multivariate regression", Statistica
//! Sinica 7(2), 1997), does so in one draw in twenty, but on EKSS-1's
//! ping-pong it stops at 5 segments, leaving the step from 0 B to 1 B as a
//! slope of 218 ns/B and 7% errors above the eager limit: its variance is
//! inflated by the one misfit no segmentation removes (the 8-32 B times
//! fall), and real steps look like noise against it. So Schwarz's form.
//!
//! *Last resort.* When no admissible segmentation exists (the times fall at
//! a forced break, whichever segments meet there), the best segmentation
//! of each K without the monotone condition is refitted *jointly*: all its
//! lines at once, least squares under `b ≥ 0`, `a ≥ floor` and
//! `t_{k+1}(z) ≥ t_k(z)` at each boundary z, a convex quadratic program
//! solved exactly by the primal active-set method (J. Nocedal and S. J.
//! Wright, Numerical Optimization, 2nd ed., 2006, algorithm 16.3). The
//! lines held by the condition are marked ([`Held::level`]).

use thiserror::Error;

use crate::input::Point;

/// The fewest points a segment of [`fit_segmented`] holds (unless a run
/// between forced breaks, or the table, is shorter).
pub const MIN_POINTS: usize = 3;

/// The least relative noise [`fit_segmented`]'s criterion assumes
/// (0.01%): residuals below it are the rounding of the printed table.
pub const NOISE_FLOOR: f64 = 1e-4;

/// The most points [`fit_segmented`] takes (its search is `O(K·N³)`).
pub const MAX_POINTS: usize = 256;

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

/// Which constraints hold a segment's line away from the least squares
/// line of its own points.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Held {
    /// `b = 0`: its points alone ask for a negative slope (their times
    /// fall with size).
    pub slope: bool,
    /// `a = floor`: its points alone ask for a lower intercept.
    pub intercept: bool,
    /// Held so that the time does not fall where the segment begins (the
    /// joint refit, [`fit_segmented`]'s last resort).
    pub level: bool,
    /// A run of one point after a forced break: the slope is the segment
    /// below's, the intercept the point's.
    pub inherited_slope: bool,
}

impl Held {
    /// Both bounds hold (`a = floor` and `b = 0`): a line the data did not
    /// shape, in LogGP terms `L = 0` and `G = 0`.
    pub fn degenerate(&self) -> bool {
        self.slope && self.intercept
    }
}

/// One fitted segment: a run of points and its line.
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    /// Index of its first point.
    pub first: usize,
    /// Index of its last point (inclusive).
    pub last: usize,
    /// The smallest size its line is used for: 0 for the first segment,
    /// else [`boundary`] with the segment below.
    pub from: u64,
    /// The fitted line.
    pub line: Line,
    /// Root mean square relative error of its points.
    pub rms_rel: f64,
    /// Largest absolute relative error of its points.
    pub max_rel: f64,
    /// The constraints that hold its line.
    pub held: Held,
}

/// The information criterion of one number of segments
/// ([`fit_segmented`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Criterion {
    /// K, the number of segments.
    pub segments: usize,
    /// `Σ r_i²` of the best admissible K-segment fit (relative residuals).
    pub rss: f64,
    /// `N·ln(max(rss/N, NOISE_FLOOR²)) + (3K − 1)·ln N`; the least wins.
    pub bic: f64,
}

/// The result of [`fit_segmented`] or [`fit_piecewise`].
#[derive(Debug, Clone, PartialEq)]
pub struct PiecewiseFit {
    /// Segments in size order, covering every point once.
    pub segments: Vec<Segment>,
    /// Largest absolute relative error over all points.
    pub max_rel: f64,
    /// Whether `max_rel` is within the tolerance asked for.
    pub within_tolerance: bool,
    /// `Σ r_i²` over all points.
    pub rss: f64,
    /// [`fit_segmented`]: the criterion of every number of segments that
    /// has an admissible fit, by K; empty for [`fit_piecewise`].
    pub criterion: Vec<Criterion>,
    /// Whether no admissible segmentation existed and the lines were
    /// refitted jointly ([`fit_segmented`]'s last resort).
    pub joint: bool,
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
    /// [`fit_piecewise`]: accept the fewest segments whose largest relative
    /// error is at most this (0.05 = 5%). [`fit_segmented`]: only reported
    /// ([`PiecewiseFit::within_tolerance`]); the criterion chooses.
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
    /// More points than [`fit_segmented`] takes.
    #[error("{points} points are more than the {max} the segmented fit takes; thin the table")]
    TooManyPoints {
        /// Points given.
        points: usize,
        /// [`MAX_POINTS`].
        max: usize,
    },
}

/// The checks both fits make of their input.
fn check_input(points: &[Point], options: &FitOptions) -> Result<(), FitError> {
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
    Ok(())
}

/// Where the model switches from `lower` (whose last measured size is
/// `last`) to `upper` (whose first is `first`): the forced break if one
/// lies in `(last, first]`, else where the two lines cross if that is in
/// `(last, first]` (the model is then continuous), else `first`.
pub fn boundary(lower: Line, upper: Line, last: u64, first: u64, breaks: &[u64]) -> u64 {
    if let Some(&b) = breaks.iter().find(|&&b| last < b && b <= first) {
        return b;
    }
    if lower.b != upper.b {
        let cross = (upper.a - lower.a) / (lower.b - upper.b);
        if cross.is_finite() && cross > last as f64 && cross <= first as f64 {
            // `cross` lies in (last, first], so its ceiling fits in u64.
            return (cross.ceil() as u64).clamp(last + 1, first);
        }
    }
    first
}

/// Whether the time does not fall where the model switches from `lower`
/// to `upper` (see [`boundary`]): `upper(from) ≥ lower(from − 1)`, to a
/// relative 1e-12.
fn monotone_at(lower: Line, upper: Line, last: u64, first: u64, breaks: &[u64]) -> bool {
    let from = boundary(lower, upper, last, first, breaks);
    let before = lower.at(from.saturating_sub(1));
    upper.at(from) >= before - 1e-12 * before.abs()
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
/// points with distinct sizes, in scaled units (`x = n/scale`), and the
/// bounds that hold it.
fn constrained_line(sums: &Sums, floor: f64) -> (f64, f64, Held) {
    let det = sums.s * sums.sxx - sums.sx * sums.sx;
    if det > 1e-12 * sums.s * sums.sxx {
        let b = (sums.s * sums.sxy - sums.sx * sums.sy) / det;
        let a = (sums.sy - b * sums.sx) / sums.s;
        if b >= 0.0 && a >= floor {
            return (a, b, Held::default());
        }
    }
    // Edge b = 0: the weighted mean, raised to the floor.
    let mean = sums.sy / sums.s;
    let edge_b = (
        mean.max(floor),
        0.0,
        Held {
            slope: true,
            intercept: mean < floor,
            ..Held::default()
        },
    );
    // Edge a = floor: the best slope for that intercept, at least 0.
    let slope = if sums.sxx > 0.0 {
        (sums.sxy - floor * sums.sx) / sums.sxx
    } else {
        0.0
    };
    let edge_a = (
        floor,
        slope.max(0.0),
        Held {
            slope: slope <= 0.0,
            intercept: true,
            ..Held::default()
        },
    );
    if sums.cost(edge_a.0, edge_a.1) < sums.cost(edge_b.0, edge_b.1) {
        edge_a
    } else {
        edge_b
    }
}

/// The line of one point with nothing to take a slope from: at `n = 0`,
/// `a = t`, `b = 0`; else `a = floor`, `b = (t − a)/n` (both at their
/// bounds when `t ≤ floor`).
fn single_point_line(point: &Point, floor: f64) -> (Line, Held) {
    if point.bytes == 0 || point.seconds <= floor {
        let line = Line {
            a: point.seconds.max(floor),
            b: 0.0,
        };
        let held = Held {
            slope: point.bytes > 0,
            intercept: point.seconds <= floor,
            ..Held::default()
        };
        (line, held)
    } else {
        let line = Line {
            a: floor,
            b: (point.seconds - floor) / point.bytes as f64,
        };
        let held = Held {
            intercept: true,
            ..Held::default()
        };
        (line, held)
    }
}

/// The line of one point after a forced break: the slope of the segment
/// below, the intercept through the point; if that intercept is below the
/// floor, `a = floor` and the slope through the point (at least 0).
fn inherited_line(point: &Point, floor: f64, below: Line) -> (Line, Held) {
    let n = point.bytes as f64;
    let a = point.seconds - below.b * n;
    if a >= floor {
        let held = Held {
            inherited_slope: true,
            ..Held::default()
        };
        return (Line { a, b: below.b }, held);
    }
    if point.bytes == 0 || point.seconds <= floor {
        return single_point_line(point, floor);
    }
    let line = Line {
        a: floor,
        b: (point.seconds - floor) / n,
    };
    let held = Held {
        intercept: true,
        ..Held::default()
    };
    (line, held)
}

/// The constrained line of `points[first..=last]` with the intercept floor
/// `floor` (one point: [`single_point_line`]), in the run's own scale.
fn segment_line(points: &[Point], first: usize, last: usize, floor: f64) -> (Line, Held) {
    let run = &points[first..=last];
    match run {
        [only] => single_point_line(only, floor),
        _ => {
            let scale = run.last().map_or(1.0, |p| (p.bytes as f64).max(1.0));
            let mut sums = Sums::default();
            for point in run {
                add(&mut sums, point, scale);
            }
            let (a, b, held) = constrained_line(&sums, floor);
            (Line { a, b: b / scale }, held)
        }
    }
}

/// Fits the run `points[first..=last]` alone with the intercept floor
/// `floor`; `from` is its first size.
pub fn fit_segment(points: &[Point], first: usize, last: usize, floor: f64) -> Segment {
    let (line, held) = segment_line(points, first, last, floor);
    segment(points, first, last, points[first].bytes, line, held)
}

/// A segment with its errors.
fn segment(
    points: &[Point],
    first: usize,
    last: usize,
    from: u64,
    line: Line,
    held: Held,
) -> Segment {
    let (rms_rel, max_rel) = errors(&points[first..=last], line);
    Segment {
        first,
        last,
        from,
        line,
        rms_rel,
        max_rel,
        held,
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

/// `Σ r²` of `line` over `run`, `r` the relative residual.
fn sum_sq(run: &[Point], line: Line) -> f64 {
    run.iter()
        .map(|p| {
            let rel = (line.at(p.bytes) - p.seconds) / p.seconds;
            rel * rel
        })
        .sum()
}

fn errors(run: &[Point], line: Line) -> (f64, f64) {
    let mut max: f64 = 0.0;
    for point in run {
        let rel = (line.at(point.bytes) - point.seconds) / point.seconds;
        max = max.max(rel.abs());
    }
    ((sum_sq(run, line) / run.len().max(1) as f64).sqrt(), max)
}

/// The runs of points between forced breaks.
struct Runs {
    /// The run of each point.
    of: Vec<usize>,
    /// The first point of each run.
    start: Vec<usize>,
    /// One past the last point of each run.
    end: Vec<usize>,
}

impl Runs {
    fn new(points: &[Point], breaks: &[u64]) -> Runs {
        let mut of = Vec::with_capacity(points.len());
        let mut start = vec![0];
        let mut end = Vec::new();
        for (i, point) in points.iter().enumerate() {
            if i > 0 {
                let below = points[i - 1].bytes;
                if breaks.iter().any(|&b| below < b && b <= point.bytes) {
                    end.push(i);
                    start.push(i);
                }
            }
            of.push(start.len() - 1);
        }
        end.push(points.len());
        Runs { of, start, end }
    }

    fn count(&self) -> usize {
        self.start.len()
    }

    /// Whether `points[i..j]` may be one segment: inside one run, and at
    /// least [`MIN_POINTS`] points, or the whole of a shorter run, or the
    /// zero-byte point alone (`zero`: the table starts at 0 bytes).
    fn allows(&self, i: usize, j: usize, zero: bool) -> bool {
        if zero && i == 0 && j == 1 {
            return true;
        }
        let run = self.of[i];
        if self.of[j - 1] != run {
            return false;
        }
        let (start, end) = (self.start[run], self.end[run]);
        if end - start < MIN_POINTS {
            i == start && j == end
        } else {
            j - i >= MIN_POINTS
        }
    }
}

/// A segmentation: per segment its first and last point (inclusive), its
/// line and what holds it.
type Segmentation = Vec<(usize, usize, Line, Held)>;

/// A state of the search: the least cost of the points up to the end of
/// its last segment, and that segment's line.
#[derive(Debug, Clone, Copy)]
struct State {
    cost: f64,
    line: Line,
}

/// What [`fit_segmented`] searches over.
struct Problem<'a> {
    points: &'a [Point],
    breaks: &'a [u64],
    runs: Runs,
    /// The intercept floor of a segment starting at each point.
    floors: Vec<f64>,
    /// Whether the first point is of 0 bytes (it may be a segment alone).
    zero: bool,
    /// The line, holds and cost of every allowed segment `points[i..j]` of
    /// at least two points, at `i·(N + 1) + j`.
    own: Vec<Option<(Line, Held, f64)>>,
}

impl<'a> Problem<'a> {
    fn new(points: &'a [Point], breaks: &'a [u64], floor: impl Fn(u64) -> f64) -> Self {
        let n = points.len();
        let runs = Runs::new(points, breaks);
        let floors: Vec<f64> = points.iter().map(|p| floor(p.bytes)).collect();
        let zero = points.first().is_some_and(|p| p.bytes == 0);
        let mut own = vec![None; (n + 1) * (n + 1)];
        for i in 0..n {
            for j in (i + 2)..=n {
                if runs.allows(i, j, zero) {
                    let (line, held) = segment_line(points, i, j - 1, floors[i]);
                    own[i * (n + 1) + j] = Some((line, held, sum_sq(&points[i..j], line)));
                }
            }
        }
        Problem {
            points,
            breaks,
            runs,
            floors,
            zero,
            own,
        }
    }

    /// The line of `points[i..j]` after a segment with line `below`.
    fn line_after(&self, i: usize, j: usize, below: Option<Line>) -> Option<(Line, Held, f64)> {
        if j - i > 1 {
            return self.own[i * (self.points.len() + 1) + j];
        }
        let point = &self.points[i];
        let (line, held) = match below {
            Some(below) => inherited_line(point, self.floors[i], below),
            None => single_point_line(point, self.floors[i]),
        };
        Some((line, held, sum_sq(std::slice::from_ref(point), line)))
    }

    /// For K = 1 ..= `max_k`, the segmentation of least cost whose segments
    /// are allowed ([`Runs::allows`]), not degenerate unless
    /// `allow_degenerate`, and, when `monotone`, whose time does not fall at
    /// any boundary; `None` for a K that has none.
    fn search(
        &self,
        max_k: usize,
        monotone: bool,
        allow_degenerate: bool,
    ) -> Vec<Option<Segmentation>> {
        let n = self.points.len();
        let at = |i: usize, j: usize| i * (n + 1) + j;
        let usable = |held: Held| allow_degenerate || !held.degenerate();
        // layer[at(i, j)]: the best state whose last segment is points[i..j];
        // back[k][at(i, j)]: the first point of the segment before it.
        let mut layer: Vec<Option<State>> = vec![None; (n + 1) * (n + 1)];
        for j in 1..=n {
            if self.runs.allows(0, j, self.zero)
                && let Some((line, held, cost)) = self.line_after(0, j, None)
                && usable(held)
            {
                layer[at(0, j)] = Some(State { cost, line });
            }
        }
        let best_end = |layer: &[Option<State>]| {
            (0..n)
                .filter_map(|i| layer[at(i, n)].map(|s| (i, s.cost)))
                .min_by(|x, y| x.1.total_cmp(&y.1))
                .map(|(i, _)| i)
        };
        let mut back: Vec<Vec<usize>> = vec![Vec::new()];
        let mut ends = vec![best_end(&layer)];
        for _ in 2..=max_k {
            let mut next: Vec<Option<State>> = vec![None; (n + 1) * (n + 1)];
            let mut from = vec![usize::MAX; (n + 1) * (n + 1)];
            for i in 1..n {
                let (last, first) = (self.points[i - 1].bytes, self.points[i].bytes);
                for j in (i + 1)..=n {
                    if !self.runs.allows(i, j, self.zero) {
                        continue;
                    }
                    for h in 0..i {
                        let Some(below) = layer[at(h, i)] else {
                            continue;
                        };
                        let Some((line, held, cost)) = self.line_after(i, j, Some(below.line))
                        else {
                            continue;
                        };
                        if !usable(held)
                            || (monotone
                                && !monotone_at(below.line, line, last, first, self.breaks))
                        {
                            continue;
                        }
                        let total = below.cost + cost;
                        if next[at(i, j)].is_none_or(|s| total < s.cost) {
                            next[at(i, j)] = Some(State { cost: total, line });
                            from[at(i, j)] = h;
                        }
                    }
                }
            }
            ends.push(best_end(&next));
            layer = next;
            back.push(from);
        }
        ends.iter()
            .enumerate()
            .map(|(k, end)| {
                let (mut i, mut j) = ((*end)?, n);
                let mut bounds = vec![(i, j)];
                for level in (1..=k).rev() {
                    let h = back[level][at(i, j)];
                    (i, j) = (h, i);
                    bounds.push((i, j));
                }
                bounds.reverse();
                let mut below = None;
                let mut parts = Vec::with_capacity(bounds.len());
                for (i, j) in bounds {
                    let (line, held, _) = self.line_after(i, j, below)?;
                    below = Some(line);
                    parts.push((i, j - 1, line, held));
                }
                Some(parts)
            })
            .collect()
    }

    /// The segmentation's lines refitted all at once under `b ≥ 0`,
    /// `a ≥ floor` and a time that does not fall at each boundary z (the
    /// forced break between two segments, else the first size of the upper
    /// one), an exact convex quadratic program ([`active_set`]).
    ///
    /// Each line is written in its segment's frame, `t(n) = s·(α + β·u)`
    /// with `u = (n − n_first)/span` in [0, 1] and `s` the time of its
    /// first point, so that the problem is well scaled; the relative
    /// residual of point i is `v_i·(α, β) − 1` with `v_i = (s/t_i)·(1, u_i)`.
    fn joint(&self, parts: &Segmentation) -> Segmentation {
        struct Frame {
            first: f64,
            span: f64,
            s: f64,
        }
        let k = parts.len();
        let frames: Vec<Frame> = parts
            .iter()
            .map(|&(first, last, _, _)| Frame {
                first: self.points[first].bytes as f64,
                span: ((self.points[last].bytes - self.points[first].bytes) as f64).max(1.0),
                s: self.points[first].seconds,
            })
            .collect();
        // f(θ) = Σ_i (v_i·θ − 1)² = ½ θᵀHθ − cᵀθ + N, block by block:
        // H = 2 Σ v vᵀ, c = 2 Σ v.
        let dim = 2 * k;
        let mut hessian = vec![vec![0.0; dim]; dim];
        let mut linear = vec![0.0; dim];
        for (index, (&(first, last, _, _), frame)) in parts.iter().zip(&frames).enumerate() {
            let (x, y) = (2 * index, 2 * index + 1);
            for p in &self.points[first..=last] {
                let u = (p.bytes as f64 - frame.first) / frame.span;
                let v = [frame.s / p.seconds, frame.s / p.seconds * u];
                for (r, vr) in [(x, v[0]), (y, v[1])] {
                    linear[r] += 2.0 * vr;
                    hessian[r][x] += 2.0 * vr * v[0];
                    hessian[r][y] += 2.0 * vr * v[1];
                }
            }
            let trace = hessian[x][x] + hessian[y][y];
            let det = hessian[x][x] * hessian[y][y] - hessian[x][y] * hessian[y][x];
            if det <= 1e-12 * trace * trace {
                // One point: a small ridge makes the slope 0 unless a
                // constraint needs another.
                hessian[x][x] += 1e-9 * trace;
                hessian[y][y] += 1e-9 * trace;
            }
        }
        // The constraints, `row · θ ≤ rhs`.
        #[derive(Clone, Copy)]
        enum Kind {
            Slope(usize),
            Intercept(usize),
            Level(usize),
        }
        let mut rows: Vec<(Vec<f64>, f64)> = Vec::new();
        let mut kinds = Vec::new();
        for (index, frame) in frames.iter().enumerate() {
            let mut row = vec![0.0; dim];
            row[2 * index + 1] = -1.0;
            rows.push((row, 0.0));
            kinds.push(Kind::Slope(index));
            let mut row = vec![0.0; dim];
            row[2 * index] = -1.0;
            row[2 * index + 1] = frame.first / frame.span;
            let floor = self.floors[parts[index].0];
            rows.push((row, -floor / frame.s));
            kinds.push(Kind::Intercept(index));
        }
        for index in 1..k {
            let (lower, upper) = (&frames[index - 1], &frames[index]);
            let last = self.points[parts[index - 1].1].bytes;
            let first = self.points[parts[index].0].bytes;
            let z = self
                .breaks
                .iter()
                .copied()
                .find(|&b| last < b && b <= first)
                .unwrap_or(first) as f64;
            // (lower(z) − upper(z)) / s_upper ≤ 0.
            let ratio = lower.s / upper.s;
            let mut row = vec![0.0; dim];
            row[2 * (index - 1)] = ratio;
            row[2 * (index - 1) + 1] = ratio * (z - lower.first) / lower.span;
            row[2 * index] = -1.0;
            row[2 * index + 1] = -(z - upper.first) / upper.span;
            rows.push((row, 0.0));
            kinds.push(Kind::Level(index));
        }
        // A feasible start: every line flat at one level, at least every
        // floor.
        let top_floor = parts.iter().map(|p| self.floors[p.0]).fold(0.0, f64::max);
        let lowest = self
            .points
            .iter()
            .map(|p| p.seconds)
            .fold(f64::INFINITY, f64::min);
        let level = top_floor.max(lowest);
        let start: Vec<f64> = frames
            .iter()
            .flat_map(|frame| [level / frame.s, 0.0])
            .collect();
        let (theta, working) = active_set(&hessian, &linear, &rows, start);
        let mut held = vec![Held::default(); k];
        for (kind, &active) in kinds.iter().zip(&working) {
            if active {
                match *kind {
                    Kind::Slope(index) => held[index].slope = true,
                    Kind::Intercept(index) => held[index].intercept = true,
                    Kind::Level(index) => held[index].level = true,
                }
            }
        }
        parts
            .iter()
            .zip(&frames)
            .enumerate()
            .map(|(index, (&(first, last, _, _), frame))| {
                let (alpha, beta) = (theta[2 * index], theta[2 * index + 1]);
                // Feasible to rounding; the bounds remove the rounding.
                let line = Line {
                    a: (frame.s * (alpha - beta * frame.first / frame.span))
                        .max(self.floors[first]),
                    b: (frame.s * beta / frame.span).max(0.0),
                };
                (first, last, line, held[index])
            })
            .collect()
    }
}

fn dot(x: &[f64], y: &[f64]) -> f64 {
    x.iter().zip(y).map(|(a, b)| a * b).sum()
}

/// Minimises `½ θᵀHθ − cᵀθ` (H symmetric positive definite) subject to
/// `row_i · θ ≤ rhs_i` from the feasible point `start`, by the primal
/// active-set method for convex quadratic programs (J. Nocedal and S. J.
/// Wright, Numerical Optimization, 2nd ed., Springer 2006, algorithm
/// 16.3): every iterate is feasible, each step solves the problem with the
/// working set's constraints as equalities (its KKT system), and a
/// constraint leaves the working set when its multiplier is negative.
/// Returns the optimum and, per constraint, whether it is in the final
/// working set (it holds the optimum).
fn active_set(
    hessian: &[Vec<f64>],
    linear: &[f64],
    rows: &[(Vec<f64>, f64)],
    start: Vec<f64>,
) -> (Vec<f64>, Vec<bool>) {
    let n = start.len();
    let mut theta = start;
    let slack = |theta: &[f64], i: usize| rows[i].1 - dot(&rows[i].0, theta);
    // The working set starts with the tight constraints that are linearly
    // independent (Gram-Schmidt against those taken).
    let mut working: Vec<usize> = Vec::new();
    let mut basis: Vec<Vec<f64>> = Vec::new();
    for (i, (row, rhs)) in rows.iter().enumerate() {
        if slack(&theta, i).abs() > 1e-12 * rhs.abs().max(1.0) {
            continue;
        }
        let mut rest = row.clone();
        for q in &basis {
            let along = dot(&rest, q);
            for (r, qj) in rest.iter_mut().zip(q) {
                *r -= along * qj;
            }
        }
        let norm = dot(&rest, &rest).sqrt();
        if norm > 1e-9 * dot(row, row).sqrt() {
            basis.push(rest.iter().map(|r| r / norm).collect());
            working.push(i);
        }
    }
    for _ in 0..50 * (n + rows.len()) {
        // [H  Aᵀ] [p]   [c − Hθ]
        // [A  0 ] [λ] = [0     ]
        let size = n + working.len();
        let mut kkt = vec![vec![0.0; size + 1]; size];
        for r in 0..n {
            kkt[r][..n].copy_from_slice(&hessian[r]);
            kkt[r][size] = linear[r] - dot(&hessian[r], &theta);
        }
        for (j, &i) in working.iter().enumerate() {
            for (col, &a) in rows[i].0.iter().enumerate() {
                kkt[n + j][col] = a;
                kkt[col][n + j] = a;
            }
        }
        let Some(solution) = gauss(kkt) else {
            break;
        };
        let (step, multipliers) = solution.split_at(n);
        if dot(step, step).sqrt() <= 1e-12 * (1.0 + dot(&theta, &theta).sqrt()) {
            let most_negative = multipliers
                .iter()
                .enumerate()
                .filter(|&(_, &l)| l < -1e-12)
                .min_by(|x, y| x.1.total_cmp(y.1));
            match most_negative {
                Some((j, _)) => {
                    working.remove(j);
                    continue;
                }
                None => break,
            }
        }
        let mut alpha = 1.0;
        let mut blocking = None;
        for i in (0..rows.len()).filter(|i| !working.contains(i)) {
            let rate = dot(&rows[i].0, step);
            if rate > 0.0 {
                let room = slack(&theta, i).max(0.0) / rate;
                if room < alpha {
                    alpha = room;
                    blocking = Some(i);
                }
            }
        }
        for (t, p) in theta.iter_mut().zip(step) {
            *t += alpha * p;
        }
        working.extend(blocking);
    }
    let mut held = vec![false; rows.len()];
    for i in working {
        held[i] = true;
    }
    (theta, held)
}

/// Solves the augmented system `[A | b]` (n rows, n + 1 columns) by
/// Gaussian elimination with partial pivoting; `None` when singular.
fn gauss(mut m: Vec<Vec<f64>>) -> Option<Vec<f64>> {
    let n = m.len();
    let largest = m
        .iter()
        .flat_map(|row| row[..n].iter())
        .fold(0.0, |acc: f64, x| acc.max(x.abs()));
    for col in 0..n {
        let pivot = (col..n).max_by(|&a, &b| m[a][col].abs().total_cmp(&m[b][col].abs()))?;
        if m[pivot][col].abs() <= 1e-13 * largest {
            return None;
        }
        m.swap(col, pivot);
        let (upper, lower) = m.split_at_mut(col + 1);
        let pivot_row = &upper[col];
        for row in lower {
            let factor = row[col] / pivot_row[col];
            if factor != 0.0 {
                for (x, p) in row[col..].iter_mut().zip(&pivot_row[col..]) {
                    *x -= factor * p;
                }
            }
        }
    }
    let mut x = vec![0.0; n];
    for row in (0..n).rev() {
        let tail: f64 = ((row + 1)..n).map(|j| m[row][j] * x[j]).sum();
        x[row] = (m[row][n] - tail) / m[row][row];
    }
    Some(x)
}

/// Segments of a segmentation, each with its `from` ([`boundary`]).
fn with_froms(points: &[Point], parts: &Segmentation, breaks: &[u64]) -> Vec<Segment> {
    let mut segments: Vec<Segment> = Vec::with_capacity(parts.len());
    for &(first, last, line, held) in parts {
        let from = segments.last().map_or(0, |below| {
            boundary(
                below.line,
                line,
                points[below.last].bytes,
                points[first].bytes,
                breaks,
            )
        });
        segments.push(segment(points, first, last, from, line, held));
    }
    segments
}

/// Fits physically constrained segments to `points` (sorted by strictly
/// increasing size, positive times): at least [`MIN_POINTS`] points each,
/// a time that never decreases with size, no forced break straddled, and
/// the number of segments that minimises the Bayesian information
/// criterion (see the module documentation). `floor(n)` is the least
/// intercept allowed for a segment whose first point has `n` bytes.
pub fn fit_segmented(
    points: &[Point],
    options: &FitOptions,
    floor: impl Fn(u64) -> f64,
) -> Result<PiecewiseFit, FitError> {
    check_input(points, options)?;
    let n = points.len();
    if n > MAX_POINTS {
        return Err(FitError::TooManyPoints {
            points: n,
            max: MAX_POINTS,
        });
    }
    let problem = Problem::new(points, &options.breaks, floor);
    if problem.runs.count() > options.max_segments {
        return Err(FitError::TooManyBreaks(options.max_segments));
    }
    let max_k = options.max_segments.min(n);
    let none = |found: &[Option<Segmentation>]| found.iter().all(Option::is_none);
    let mut found = problem.search(max_k, true, false);
    if none(&found) {
        found = problem.search(max_k, true, true);
    }
    let joint = none(&found);
    if joint {
        found = problem
            .search(max_k, false, true)
            .into_iter()
            .map(|parts| parts.map(|parts| problem.joint(&parts)))
            .collect();
    }
    let count = n as f64;
    let mut criterion = Vec::new();
    let mut chosen: Option<(f64, Vec<Segment>)> = None;
    for (k, parts) in found.iter().enumerate() {
        let Some(parts) = parts else { continue };
        let segments = with_froms(points, parts, &options.breaks);
        let rss: f64 = segments
            .iter()
            .map(|s| sum_sq(&points[s.first..=s.last], s.line))
            .sum();
        let variance = (rss / count).max(NOISE_FLOOR * NOISE_FLOOR);
        let parameters = (3 * (k + 1) - 1) as f64;
        let bic = count * variance.ln() + parameters * count.ln();
        criterion.push(Criterion {
            segments: k + 1,
            rss,
            bic,
        });
        if chosen.as_ref().is_none_or(|(best, _)| bic < *best) {
            chosen = Some((bic, segments));
        }
    }
    // The runs alone are a segmentation of at most `max_segments`
    // segments, so some K has a fit.
    let (_, segments) = chosen.ok_or(FitError::TooManyBreaks(options.max_segments))?;
    let max_rel = segments.iter().map(|s| s.max_rel).fold(0.0, f64::max);
    let rss = segments
        .iter()
        .map(|s| sum_sq(&points[s.first..=s.last], s.line))
        .sum();
    Ok(PiecewiseFit {
        segments,
        max_rel,
        within_tolerance: max_rel <= options.tolerance,
        rss,
        criterion,
        joint,
    })
}

/// The tolerance fit, for the kernel cost models (`blocks::fit`): for each
/// number of segments K the segmentation of least squared relative error
/// (Bellman's dynamic programming, segments of any length, lines under
/// `b ≥ 0` and `a ≥ floor`), and K the smallest whose worst point is within
/// `options.tolerance` (the acceptance test of SimGrid's
/// `contrib/network_model/calibrate_piecewise.py`), else the K of the
/// smallest worst error. It interpolates rather than models (a segment of
/// two points fits them whatever they are, and nothing keeps the time from
/// falling between segments); `calibrate net` uses [`fit_segmented`].
pub fn fit_piecewise(
    points: &[Point],
    options: &FitOptions,
    floor: impl Fn(u64) -> f64,
) -> Result<PiecewiseFit, FitError> {
    check_input(points, options)?;
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
            let (line, _) = single_point_line(&points[i], f);
            let rel = (line.at(points[i].bytes) - points[i].seconds) / points[i].seconds;
            return Some(rel * rel);
        }
        let sums = prefix[j].minus(&prefix[i]);
        let (a, b, _) = constrained_line(&sums, f);
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
        let parts: Segmentation = bounds
            .into_iter()
            .map(|(first, last)| {
                let (line, held) = segment_line(points, first, last, floor(points[first].bytes));
                (first, last, line, held)
            })
            .collect();
        let segments = with_froms(points, &parts, &options.breaks);
        let rss = segments
            .iter()
            .map(|s| sum_sq(&points[s.first..=s.last], s.line))
            .sum();
        let max_rel = segments.iter().map(|s| s.max_rel).fold(0.0, f64::max);
        let fit = PiecewiseFit {
            segments,
            max_rel,
            within_tolerance: max_rel <= options.tolerance,
            rss,
            criterion: Vec::new(),
            joint: false,
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
pub(crate) mod tests {
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

    /// Ten sizes, 1 B to 256 KiB, on the line 5 µs + n·10 ns.
    fn one_line() -> Vec<Point> {
        (0..10)
            .map(|i| {
                let n = 1u64 << (2 * i);
                Point {
                    bytes: n,
                    seconds: 5e-6 + n as f64 * 1e-8,
                }
            })
            .collect()
    }

    #[test]
    fn one_line_is_recovered_exactly() {
        let points = one_line();
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

    // fit_segmented.

    /// Deterministic normal noise (SplitMix64, Box-Muller).
    pub(crate) struct Noise(u64);

    impl Noise {
        fn uniform(&mut self) -> f64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            ((z >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        }

        fn normal(&mut self) -> f64 {
            let (u, v) = (self.uniform(), self.uniform());
            (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
        }
    }

    /// A table at IMB's sizes (0, 1 B .. 4 MiB) of `model` (µs), each time
    /// times `1 + noise·N(0, 1)`.
    pub(crate) fn imb_table(model: impl Fn(u64) -> f64, noise: f64, seed: u64) -> Vec<Point> {
        let mut rng = Noise(seed);
        std::iter::once(0)
            .chain((0..=22).map(|i| 1u64 << i))
            .map(|n| Point {
                bytes: n,
                seconds: model(n) * 1e-6 * (1.0 + noise * rng.normal()),
            })
            .collect()
    }

    /// What every segmented fit must be: segments in order covering every
    /// point once; at least [`MIN_POINTS`] points each, except the 0 B
    /// point alone or a shorter run between breaks; slopes `>= 0`; no
    /// degenerate line; a modelled time that never falls, at the
    /// boundaries and on a dense grid of sizes.
    fn assert_physical(points: &[Point], fit: &PiecewiseFit, breaks: &[u64]) {
        let context = || format!("{:#?}", fit.segments);
        let mut next = 0;
        for s in &fit.segments {
            assert_eq!(s.first, next, "{}", context());
            next = s.last + 1;
            let count = s.last + 1 - s.first;
            let zero_alone = count == 1 && points[s.first].bytes == 0;
            let run_shorter = {
                let runs = Runs::new(points, breaks);
                let run = runs.of[s.first];
                runs.end[run] - runs.start[run] < MIN_POINTS
                    && (runs.start[run], runs.end[run]) == (s.first, s.last + 1)
            };
            assert!(
                count >= MIN_POINTS || zero_alone || run_shorter,
                "a segment of {count} point(s): {}",
                context()
            );
            assert!(s.line.b >= 0.0, "{}", context());
            assert!(
                !s.held.degenerate() || fit.segments.len() == 1,
                "{}",
                context()
            );
        }
        assert_eq!(next, points.len(), "{}", context());
        let t = |n: u64| {
            let index = fit.segments.partition_point(|s| s.from <= n) - 1;
            fit.segments[index].line.at(n)
        };
        // To rounding: the joint fit converges to 1e-13.
        for pair in fit.segments.windows(2) {
            let from = pair[1].from;
            assert!(
                t(from) >= t(from - 1) * (1.0 - 1e-9),
                "the time falls at {from} B: {} -> {}\n{}",
                t(from - 1),
                t(from),
                context()
            );
        }
        let last = points.last().map_or(0, |p| p.bytes);
        let mut n = 0u64;
        let mut previous = t(0);
        while n <= last {
            let now = t(n);
            assert!(
                now >= previous * (1.0 - 1e-9),
                "falls at {n} B\n{}",
                context()
            );
            previous = now;
            n = if n < 64 { n + 1 } else { n + n / 64 };
        }
    }

    fn segmented(points: &[Point], breaks: &[u64]) -> PiecewiseFit {
        let options = FitOptions {
            breaks: breaks.to_vec(),
            ..FitOptions::default()
        };
        let fit = fit_segmented(points, &options, |_| 0.0).expect("fits");
        assert_physical(points, &fit, breaks);
        fit
    }

    /// A piecewise model with a latency step and two changes of slope,
    /// measured with 0.5% noise, comes back: in every noise draw its
    /// breakpoints, with every segment's line within 2% of the model at
    /// its points; in most draws exactly its three segments, slopes within
    /// 3% and intercepts within 5%. On 24 points the criterion sometimes
    /// splits one of the model's lines into two near-identical ones (BIC's
    /// small-sample tendency; in 100 draws at 0.2% to 2% noise, about one
    /// in five).
    #[test]
    fn a_noisy_piecewise_table_gives_back_its_segments() {
        let model = |n: u64| {
            let n = n as f64;
            if n < 256.0 {
                4.0 + 0.05 * n
            } else if n < 16384.0 {
                20.0 + 0.02 * n
            } else {
                200.0 + 0.01 * n
            }
        };
        let mut exact = 0;
        for seed in 1..=20 {
            let points = imb_table(model, 0.005, seed);
            let fit = segmented(&points, &[]);
            let found: Vec<(u64, f64, f64)> = fit
                .segments
                .iter()
                .map(|s| (s.from, s.line.a * 1e6, s.line.b * 1e6))
                .collect();
            let message = format!("seed {seed}: {found:?}\n{:?}", fit.criterion);
            let starts: Vec<u64> = fit.segments.iter().map(|s| points[s.first].bytes).collect();
            assert!(
                starts.contains(&256) && starts.contains(&16384),
                "{message}"
            );
            for s in &fit.segments {
                for p in &points[s.first..=s.last] {
                    let truth = model(p.bytes) * 1e-6;
                    assert!(
                        ((s.line.at(p.bytes) - truth) / truth).abs() < 0.02,
                        "{} B: {message}",
                        p.bytes
                    );
                }
            }
            if fit.segments.len() == 3 {
                exact += 1;
                let truth = [(4.0, 0.05), (20.0, 0.02), (200.0, 0.01)];
                for (s, (a, b)) in fit.segments.iter().zip(truth) {
                    assert_relative_eq!(s.line.b * 1e6, b, max_relative = 0.03);
                    assert_relative_eq!(s.line.a * 1e6, a, max_relative = 0.05);
                }
            }
        }
        assert!(exact >= 15, "{exact} of 20 draws with exactly 3 segments");
    }

    /// A latency step (4 µs more from 64 B on, the same time per byte) is
    /// an intercept change at 64 B, not a steep slope across it.
    #[test]
    fn a_latency_step_is_an_intercept_change() {
        let model = |n: u64| if n < 64 { 5.0 } else { 9.0 } + 0.01 * n as f64;
        for seed in 1..=20 {
            let points = imb_table(model, 0.003, seed);
            let fit = segmented(&points, &[]);
            let message = format!("seed {seed}: {:#?}", fit.segments);
            let step = fit
                .segments
                .iter()
                .position(|s| points[s.first].bytes == 64)
                .unwrap_or_else(|| panic!("no segment starts at 64 B: {message}"));
            let (below, above) = (&fit.segments[step - 1], &fit.segments[step]);
            assert_eq!(points[below.last].bytes, 32, "{message}");
            assert_eq!(above.from, 64, "{message}");
            assert_relative_eq!(above.line.a * 1e6, 9.0, max_relative = 0.05);
            assert_relative_eq!(above.line.b * 1e6, 0.01, max_relative = 0.05);
            // A step fitted as a slope would be (9 − 5)/32 µs/B = 125 ns/B.
            for s in &fit.segments {
                assert!(s.line.b * 1e9 < 20.0, "a steep slope: {message}");
            }
            let t = |n: u64| {
                fit.segments[fit.segments.partition_point(|s| s.from <= n) - 1]
                    .line
                    .at(n)
            };
            assert!(t(63) < t(64) && t(64) < t(128), "{message}");
        }
    }

    /// Segments of at least 3 points, whatever the table: exact lines,
    /// noise, flat and falling data, sawtooths, short tables.
    #[test]
    fn segments_hold_at_least_three_points() {
        let shapes: [&dyn Fn(u64) -> f64; 5] = [
            &|n| 5.0 + 0.01 * n as f64,
            &|_| 7.0,
            &|n| 50.0 - (n as f64 + 1.0).ln(),
            &|n| 5.0 + f64::from(n.trailing_zeros() % 3) + 0.001 * n as f64,
            &|n| {
                if n.is_power_of_two() && n.trailing_zeros() % 2 == 1 {
                    9.0
                } else {
                    5.0
                }
            },
        ];
        for (shape, model) in shapes.iter().enumerate() {
            for seed in 1..=5 {
                for noise in [0.0, 0.01, 0.1] {
                    let points = imb_table(model, noise, seed);
                    for breaks in [vec![], vec![65536], vec![3, 4096]] {
                        let fit = segmented(&points, &breaks);
                        assert!(!fit.segments.is_empty(), "shape {shape}");
                    }
                }
            }
        }
        for len in 1..=5 {
            let points = pts(&[(1, 1.0), (2, 3.0), (4, 2.0), (8, 9.0), (16, 4.0)][..len]);
            let fit = segmented(&points, &[]);
            assert_eq!(fit.segments.len(), 1, "{len} points: {:?}", fit.segments);
        }
        // Six points make two segments of three at most.
        let points = pts(&[(1, 1.0), (2, 1.0), (4, 1.0), (8, 9.0), (16, 9.0), (32, 9.0)]);
        let fit = segmented(&points, &[]);
        assert_eq!(fit.segments.len(), 2, "{:?}", fit.segments);
        // A run of one point after a forced break: the slope below, its
        // own intercept.
        let points = pts(&[(1, 2.0), (2, 3.0), (4, 5.0), (8, 9.0), (16, 30.0)]);
        let fit = segmented(&points, &[16]);
        assert_eq!(fit.segments.len(), 2, "{:?}", fit.segments);
        let (below, alone) = (&fit.segments[0], &fit.segments[1]);
        assert!(alone.held.inherited_slope, "{alone:?}");
        assert_relative_eq!(alone.line.b, below.line.b);
        assert_relative_eq!(alone.line.at(16), 30e-6, max_relative = 1e-12);
    }

    /// When the times fall at a forced break whatever the segments, the
    /// lines are fitted jointly under the monotone constraint.
    #[test]
    fn a_fall_at_a_forced_break_is_fitted_jointly() {
        let points = imb_table(
            |n| {
                let t = 5.0 + 0.01 * n as f64;
                if n >= 65536 { t / 2.0 } else { t }
            },
            0.0,
            1,
        );
        let fit = segmented(&points, &[65536]);
        assert!(fit.joint, "{:#?}", fit.segments);
        let upper = fit
            .segments
            .iter()
            .find(|s| s.from == 65536)
            .expect("a segment from the break");
        assert!(upper.held.level, "{upper:?}");
    }

    /// The joint refit is the least squares optimum under its
    /// constraints: with none active it gives back each segment's own line,
    /// and with the time held from falling at a break it beats holding the
    /// upper line alone up (clipping) and every small feasible change.
    #[test]
    fn the_joint_refit_is_optimal() {
        let points = imb_table(
            |n| 5.0 + 0.01 * n as f64 + if n >= 4096 { 3.0 } else { 0.0 },
            0.01,
            3,
        );
        let problem = Problem::new(&points, &[4096], |_| 0.0);
        let parts = problem.search(2, true, false)[1].clone().expect("a fit");
        for (own, joint) in parts.iter().zip(problem.joint(&parts)) {
            assert_relative_eq!(own.2.a, joint.2.a, max_relative = 1e-9);
            assert_relative_eq!(own.2.b, joint.2.b, max_relative = 1e-9);
        }
        // Half the time from the break on: the two lines must meet there.
        let falling: Vec<Point> = points
            .iter()
            .map(|p| Point {
                bytes: p.bytes,
                seconds: if p.bytes >= 4096 {
                    p.seconds / 2.0
                } else {
                    p.seconds
                },
            })
            .collect();
        let problem = Problem::new(&falling, &[4096], |_| 0.0);
        let parts = problem.search(2, false, false)[1].clone().expect("a fit");
        let joint = problem.joint(&parts);
        assert!(joint[1].3.level, "{joint:?}");
        let cost = |lines: &[(usize, usize, Line, Held)]| -> f64 {
            lines
                .iter()
                .map(|&(first, last, line, _)| sum_sq(&falling[first..=last], line))
                .sum()
        };
        let feasible = |lines: &[(usize, usize, Line, Held)]| {
            lines.iter().all(|l| l.2.b >= 0.0 && l.2.a >= 0.0)
                && lines[1].2.at(4096) >= lines[0].2.at(4096) * (1.0 - 1e-12)
        };
        assert!(feasible(&joint), "{joint:?}");
        let best = cost(&joint);
        // Clipping: the lower line as fitted, the upper one raised to meet it.
        let mut clipped = parts.clone();
        clipped[1].2.a += (clipped[0].2.at(4096) - clipped[1].2.at(4096)).max(0.0);
        assert!(feasible(&clipped));
        assert!(best < cost(&clipped), "{best} {}", cost(&clipped));
        // Small feasible moves of each parameter do not lower the cost.
        for index in 0..2 {
            for (da, db) in [(1e-3, 0.0), (-1e-3, 0.0), (0.0, 1e-3), (0.0, -1e-3)] {
                let mut moved = joint.clone();
                let line = &mut moved[index].2;
                line.a *= 1.0 + da;
                line.b *= 1.0 + db;
                if feasible(&moved) {
                    assert!(cost(&moved) >= best * (1.0 - 1e-9), "{index} {da} {db}");
                }
            }
        }
    }

    /// A line held at both bounds (L = 0, G = 0) is not chosen while
    /// another segmentation exists, though it would fit better.
    #[test]
    fn degenerate_segments_are_avoided() {
        // Below 1 KiB 3 µs flat; from 1 KiB, whose least intercept is
        // 4.95 µs, three points at 4.9 µs, then a rise.
        let points = pts(&[
            (1, 3.0),
            (4, 3.0),
            (16, 3.0),
            (64, 3.0),
            (256, 3.0),
            (1024, 4.9),
            (2048, 4.9),
            (4096, 4.9),
            (8192, 20.0),
            (16384, 40.0),
            (32768, 80.0),
        ]);
        let floor = |n: u64| if n >= 1024 { 4.95e-6 } else { 0.0 };
        let fit = fit_segmented(&points, &FitOptions::default(), floor).expect("fits");
        assert_physical(&points, &fit, &[]);
        for s in &fit.segments {
            assert!(!s.held.degenerate(), "{:#?}", fit.segments);
        }
        // With degenerate lines allowed, a fit with one is better.
        let problem = Problem::new(&points, &[], floor);
        let better = problem
            .search(8, true, true)
            .into_iter()
            .flatten()
            .find(|parts| {
                let rss: f64 = parts
                    .iter()
                    .map(|&(first, last, line, _)| sum_sq(&points[first..=last], line))
                    .sum();
                rss < fit.rss && parts.iter().any(|p| p.3.degenerate())
            });
        assert!(better.is_some(), "{:#?}", fit.segments);
    }

    /// An exact model table needs no more segments than it has, and the
    /// criterion shows why: every K above it is penalised and no better.
    #[test]
    fn the_criterion_stops_at_the_model() {
        let points = one_line();
        let fit = segmented(&points, &[]);
        assert_eq!(fit.segments.len(), 1, "{:?}", fit.criterion);
        assert_relative_eq!(fit.segments[0].line.a, 5e-6, max_relative = 1e-9);
        assert_relative_eq!(fit.segments[0].line.b, 1e-8, max_relative = 1e-9);
        let bic: Vec<f64> = fit.criterion.iter().map(|c| c.bic).collect();
        assert!(bic.windows(2).all(|w| w[0] < w[1]), "{:?}", fit.criterion);
    }

    #[test]
    fn segmented_bad_input_is_an_error() {
        let options = FitOptions::default();
        assert_eq!(
            fit_segmented(&[], &options, |_| 0.0),
            Err(FitError::NoPoints)
        );
        let unsorted = pts(&[(2, 1.0), (1, 1.0)]);
        assert_eq!(
            fit_segmented(&unsorted, &options, |_| 0.0),
            Err(FitError::BadPoints)
        );
        let many: Vec<Point> = (1..=MAX_POINTS as u64 + 1)
            .map(|n| Point {
                bytes: n,
                seconds: 1e-6,
            })
            .collect();
        assert!(matches!(
            fit_segmented(&many, &options, |_| 0.0),
            Err(FitError::TooManyPoints { .. })
        ));
        let one = FitOptions {
            max_segments: 1,
            breaks: vec![4],
            ..FitOptions::default()
        };
        assert_eq!(
            fit_segmented(&pts(&[(1, 1.0), (8, 2.0)]), &one, |_| 0.0),
            Err(FitError::TooManyBreaks(1))
        );
    }
}

#[cfg(test)]
mod scratch {
    use super::tests::*;
    use super::*;
    #[test]
    fn scratch_criteria() {
        let model = |n: u64| {
            let n = n as f64;
            if n < 256.0 {
                4.0 + 0.05 * n
            } else if n < 16384.0 {
                20.0 + 0.02 * n
            } else {
                200.0 + 0.01 * n
            }
        };
        let step = |n: u64| if n < 64 { 5.0 } else { 9.0 } + 0.01 * n as f64;
        for (name, m) in [("three", &model as &dyn Fn(u64) -> f64), ("step", &step)] {
            for noise in [0.002, 0.005, 0.01, 0.02] {
                let mut counts = [[0usize; 9]; 3];
                for seed in 1..=100 {
                    let points = imb_table(m, noise, seed);
                    let fit = fit_segmented(&points, &FitOptions::default(), |_| 0.0).unwrap();
                    let n = points.len() as f64;
                    let pick = |f: &dyn Fn(&Criterion) -> f64| {
                        fit.criterion
                            .iter()
                            .min_by(|a, b| f(a).total_cmp(&f(b)))
                            .unwrap()
                            .segments
                    };
                    let p = |c: &Criterion| (3 * c.segments - 1) as f64;
                    let bic = pick(&|c| n * (c.rss / n).max(1e-8).ln() + p(c) * n.ln());
                    let bicdf = pick(&|c| {
                        if n - p(c) <= 0.0 {
                            f64::INFINITY
                        } else {
                            n * (c.rss / (n - p(c))).max(1e-8).ln() + p(c) * n.ln()
                        }
                    });
                    let lwz = pick(&|c| {
                        if n - p(c) <= 0.0 {
                            f64::INFINITY
                        } else {
                            n * (c.rss / (n - p(c))).max(1e-8).ln()
                                + p(c) * 0.299 * n.ln().powf(2.1)
                        }
                    });
                    counts[0][bic] += 1;
                    counts[1][bicdf] += 1;
                    counts[2][lwz] += 1;
                }
                println!(
                    "{name} noise {noise}: bic {:?} bic-df {:?} lwz {:?}",
                    &counts[0][1..],
                    &counts[1][1..],
                    &counts[2][1..]
                );
            }
        }
    }
}
