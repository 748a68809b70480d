//! A cost per kernel for arguments that were not measured.
//!
//! A kernel's loops do work proportional to the product of its extents (a
//! stencil over rows x cols), plus per-call and per-row overheads. The
//! candidate models, over the measured (arguments, seconds) points:
//! - `t = b·P` (one point: the rate of the one measurement), P = Π args;
//! - `t = a + b·P` (a call overhead plus the work);
//! - `t = a + b·P + Σ c_i·x_i` (plus per-extent overheads, such as a loop
//!   over rows), with enough points.
//!
//! - `t = a_k + b_k·P` piecewise in P, with breakpoints found from the data
//!   (the network fit's dynamic programming, [`crate::fit`]): a kernel's
//!   time per element steps up where its working set leaves a cache level,
//!   so one line cannot follow it over a wide range of sizes.
//!
//! Each is fitted by least squares on relative error (weights 1/t², so
//! short and long calls count alike), and the one with the smallest
//! leave-one-out relative error is kept (with fewer than 4 points:
//! `a + b·P`), so a model earns its extra terms only by predicting points
//! it did not see. A model with a negative coefficient (every term is a
//! cost) or a negative time anywhere in the measured range is rejected;
//! `t = b·P` always remains.

use serde::{Deserialize, Serialize};

/// A fitted kernel cost: `Σ coef_k · term_k(args)`, or, with `segments`,
/// piecewise `a + b·P`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelModel {
    /// The terms, as text: "1", "P" (the product of all arguments), or a
    /// parameter name. Empty for a piecewise model.
    #[serde(default)]
    pub terms: Vec<String>,
    #[serde(default)]
    pub coefficients: Vec<f64>,
    /// A piecewise model in P: segment k is fitted to the measured points
    /// with work `from..=to`; between two segments the time is interpolated
    /// linearly from the end of one to the start of the next, below the
    /// first and above the last their lines are extended.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub segments: Vec<WorkSegment>,
    /// The largest relative error over the measured points.
    pub max_rel_error: f64,
    /// The leave-one-out relative error (NaN with too few points).
    pub loo_rel_error: f64,
}

/// One piece of a piecewise model: `t = a + b·P` over work `from..=to`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WorkSegment {
    pub from: f64,
    pub to: f64,
    pub a: f64,
    pub b: f64,
}

impl WorkSegment {
    fn at(&self, w: f64) -> f64 {
        self.a + self.b * w
    }
}

/// The time of a piecewise model (segments sorted by work) at work `w`.
fn piecewise_at(segments: &[WorkSegment], w: f64) -> f64 {
    let Some(last) = segments.last() else {
        return 0.0;
    };
    for (k, s) in segments.iter().enumerate() {
        if w <= s.to {
            return match k.checked_sub(1).map(|j| &segments[j]) {
                // in the gap after the previous segment
                Some(p) if w < s.from => {
                    let (t0, t1) = (p.at(p.to), s.at(s.from));
                    t0 + (t1 - t0) * (w - p.to) / (s.from - p.to)
                }
                _ => s.at(w),
            };
        }
    }
    last.at(w)
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Term {
    One,
    Product,
    Arg(usize),
}

impl Term {
    fn eval(self, args: &[f64]) -> f64 {
        match self {
            Term::One => 1.0,
            Term::Product => product(args),
            Term::Arg(i) => args.get(i).copied().unwrap_or(0.0),
        }
    }
    fn name(self, params: &[String]) -> String {
        match self {
            Term::One => "1".into(),
            Term::Product => "P".into(),
            Term::Arg(i) => params.get(i).cloned().unwrap_or_else(|| format!("arg{i}")),
        }
    }
    fn parse(s: &str, params: &[String]) -> Option<Term> {
        match s {
            "1" => Some(Term::One),
            "P" => Some(Term::Product),
            _ => params.iter().position(|p| p == s).map(Term::Arg),
        }
    }
}

/// The work measure: the product of the arguments (1 for none), each taken
/// as at least 0.
pub fn product(args: &[f64]) -> f64 {
    args.iter().map(|a| a.max(0.0)).product()
}

impl KernelModel {
    /// Every time the model gives, times `f` (its terms and segments are
    /// linear in their coefficients).
    pub fn scale(&mut self, f: f64) {
        self.coefficients.iter_mut().for_each(|c| *c *= f);
        for s in &mut self.segments {
            s.a *= f;
            s.b *= f;
        }
    }

    /// Seconds for `args` (never negative).
    pub fn eval(&self, params: &[String], args: &[f64]) -> Result<f64, String> {
        if !self.segments.is_empty() {
            return Ok(piecewise_at(&self.segments, product(args)).max(0.0));
        }
        let mut t = 0.0;
        for (term, c) in self.terms.iter().zip(&self.coefficients) {
            let term = Term::parse(term, params)
                .ok_or_else(|| format!("unknown term `{term}` in the kernel's model"))?;
            t += c * term.eval(args);
        }
        Ok(t.max(0.0))
    }

    /// The model as a formula, e.g. `1.2e-6 + 3.1e-9·rows·cols`.
    pub fn formula(&self, params: &[String]) -> String {
        let p = if params.is_empty() {
            "1".to_owned()
        } else {
            params.join("·")
        };
        if !self.segments.is_empty() {
            return self
                .segments
                .iter()
                .map(|s| {
                    format!(
                        "[{p} in {:.3e}..{:.3e}: {:.4e} + {:.4e}·{p}]",
                        s.from, s.to, s.a, s.b
                    )
                })
                .collect::<Vec<_>>()
                .join(" ");
        }
        self.terms
            .iter()
            .zip(&self.coefficients)
            .map(|(t, c)| match t.as_str() {
                "1" => format!("{c:.4e}"),
                "P" => format!("{c:.4e}·{p}"),
                name => format!("{c:.4e}·{name}"),
            })
            .collect::<Vec<_>>()
            .join(" + ")
    }
}

/// Fits a model to `points` (arguments, seconds). `None` without points.
pub fn fit(params: &[String], points: &[(Vec<f64>, f64)]) -> Option<KernelModel> {
    let points: Vec<&(Vec<f64>, f64)> = points
        .iter()
        .filter(|(_, t)| t.is_finite() && *t > 0.0)
        .collect();
    if points.is_empty() {
        return None;
    }
    let k = params.len();
    let mut candidates: Vec<Vec<Term>> = vec![vec![Term::Product]];
    if points.len() >= 2 {
        candidates.push(vec![Term::One, Term::Product]);
    }
    if k >= 1 && points.len() >= k + 3 {
        let mut t = vec![Term::One, Term::Product];
        t.extend((0..k).map(Term::Arg));
        candidates.push(t);
    }
    let lo: Vec<f64> = (0..k)
        .map(|i| points.iter().map(|p| p.0[i]).fold(f64::INFINITY, f64::min))
        .collect();
    let hi: Vec<f64> = (0..k)
        .map(|i| {
            points
                .iter()
                .map(|p| p.0[i])
                .fold(f64::NEG_INFINITY, f64::max)
        })
        .collect();
    let mut best: Option<(f64, KernelModel)> = None;
    for terms in candidates {
        let Some(coef) = solve(&terms, &points) else {
            continue;
        };
        // Every term is a cost that cannot be negative (a call overhead, a
        // time per element, per row): a negative coefficient is the fit
        // bending to noise or to a cache step, and extrapolates badly.
        if coef.iter().any(|c| *c < 0.0) {
            continue;
        }
        // Negative anywhere in the measured box (checked at its corners and
        // at the points) is unphysical.
        let eval = |a: &[f64]| {
            terms
                .iter()
                .zip(&coef)
                .map(|(t, c)| c * t.eval(a))
                .sum::<f64>()
        };
        let corners_ok = (0..(1usize << k.min(10))).all(|mask| {
            let a: Vec<f64> = (0..k)
                .map(|i| if mask >> i & 1 == 1 { hi[i] } else { lo[i] })
                .collect();
            eval(&a) >= 0.0
        });
        if !corners_ok || points.iter().any(|(a, _)| eval(a) < 0.0) {
            continue;
        }
        let max_rel = points
            .iter()
            .map(|(a, t)| ((eval(a) - t) / t).abs())
            .fold(0.0, f64::max);
        let loo = loo_error(&terms, &points);
        // With fewer than 4 points the cross-validation says little: prefer
        // `a + b·P`, the physical default.
        let score = if points.len() < 4 {
            match terms.len() {
                2 => 0.0,
                1 => 1.0,
                _ => 2.0,
            }
        } else {
            loo
        };
        let model = KernelModel {
            terms: terms.iter().map(|t| t.name(params)).collect(),
            coefficients: coef,
            segments: Vec::new(),
            max_rel_error: max_rel,
            loo_rel_error: loo,
        };
        if best.as_ref().is_none_or(|(s, _)| score < *s) {
            best = Some((score, model));
        }
    }
    // Piecewise in P, with 4 points or more: kept only if it predicts
    // left-out points better than every single formula.
    if points.len() >= 4
        && let Some(segments) = piecewise(&points)
    {
        let loo = loo_piecewise(&points);
        if loo.is_finite() && best.as_ref().is_none_or(|(s, _)| loo < *s) {
            let eval = |a: &[f64]| piecewise_at(&segments, product(a));
            let max_rel = points
                .iter()
                .map(|(a, t)| ((eval(a) - t) / t).abs())
                .fold(0.0, f64::max);
            best = Some((
                loo,
                KernelModel {
                    terms: Vec::new(),
                    coefficients: Vec::new(),
                    segments,
                    max_rel_error: max_rel,
                    loo_rel_error: loo,
                },
            ));
        }
    }
    best.map(|(_, m)| m)
}

/// The piecewise fit of (P, t): points of equal work merged (their mean
/// time), at most half as many segments as points (at most 4), intercepts
/// at least 0, the fewest segments within 5% (the network fit's method).
fn piecewise(points: &[&(Vec<f64>, f64)]) -> Option<Vec<WorkSegment>> {
    let mut by_work: Vec<(u64, f64, u32)> = Vec::new();
    for (a, t) in points {
        let w = product(a);
        if !(w.is_finite() && w < 1.8e19) {
            return None;
        }
        let w = w.round() as u64;
        match by_work.iter_mut().find(|e| e.0 == w) {
            Some(e) => {
                e.1 += t;
                e.2 += 1;
            }
            None => by_work.push((w, *t, 1)),
        }
    }
    by_work.sort_by_key(|e| e.0);
    let pts: Vec<crate::input::Point> = by_work
        .iter()
        .map(|&(w, t, n)| crate::input::Point {
            bytes: w,
            seconds: t / f64::from(n),
        })
        .collect();
    let options = crate::fit::FitOptions {
        max_segments: (pts.len() / 2).clamp(1, 4),
        tolerance: 0.05,
        breaks: Vec::new(),
    };
    let fit = crate::fit::fit_piecewise(&pts, &options, |_| 0.0).ok()?;
    let segments: Vec<WorkSegment> = fit
        .segments
        .iter()
        .map(|s| WorkSegment {
            from: pts[s.first].bytes as f64,
            to: pts[s.last].bytes as f64,
            a: s.line.a,
            b: s.line.b,
        })
        .collect();
    segments
        .iter()
        .all(|s| s.a >= 0.0 && s.b >= 0.0 && s.a.is_finite() && s.b.is_finite())
        .then_some(segments)
}

/// Leave-one-out relative error of the piecewise fit (RMS), NaN when a
/// fit without one point is impossible.
fn loo_piecewise(points: &[&(Vec<f64>, f64)]) -> f64 {
    leave_one_out(points, |rest, a| {
        piecewise(rest).map(|segments| piecewise_at(&segments, product(a)))
    })
}

/// Root mean square relative error of predicting each point with
/// `predict(the other points, its arguments)`; NaN when a prediction
/// without one point is impossible.
fn leave_one_out(
    points: &[&(Vec<f64>, f64)],
    predict: impl Fn(&[&(Vec<f64>, f64)], &[f64]) -> Option<f64>,
) -> f64 {
    let mut sum = 0.0;
    for skip in 0..points.len() {
        let rest: Vec<&(Vec<f64>, f64)> = points
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != skip)
            .map(|(_, p)| *p)
            .collect();
        let (a, t) = points[skip];
        let Some(p) = predict(&rest, a) else {
            return f64::NAN;
        };
        sum += ((p - t) / t).powi(2);
    }
    (sum / points.len() as f64).sqrt()
}

/// Least squares on relative error: minimise Σ ((Σ c_k x_k − t) / t)².
fn solve(terms: &[Term], points: &[&(Vec<f64>, f64)]) -> Option<Vec<f64>> {
    let m = terms.len();
    if points.len() < m {
        return None;
    }
    // Normal equations of the weighted problem (rows scaled by 1/t).
    let mut ata = vec![vec![0.0; m]; m];
    let mut atb = vec![0.0; m];
    for (a, t) in points {
        let row: Vec<f64> = terms.iter().map(|x| x.eval(a) / t).collect();
        for i in 0..m {
            atb[i] += row[i];
            for j in 0..m {
                ata[i][j] += row[i] * row[j];
            }
        }
    }
    gauss(ata, atb)
}

/// Gaussian elimination with partial pivoting; `None` if singular.
fn gauss(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
    let n = b.len();
    let scale = a
        .iter()
        .flatten()
        .fold(0.0f64, |m, x| m.max(x.abs()))
        .max(f64::MIN_POSITIVE);
    for col in 0..n {
        let piv = (col..n).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[piv][col].abs() <= 1e-12 * scale {
            return None;
        }
        a.swap(col, piv);
        b.swap(col, piv);
        let (top, rest) = a.split_at_mut(col + 1);
        let pivot = &top[col];
        for (r, row) in rest.iter_mut().enumerate() {
            let f = row[col] / pivot[col];
            for (x, p) in row[col..].iter_mut().zip(&pivot[col..]) {
                *x -= f * p;
            }
            b[col + 1 + r] -= f * b[col];
        }
    }
    let mut x = vec![0.0; n];
    for r in (0..n).rev() {
        let s: f64 = (r + 1..n).map(|c| a[r][c] * x[c]).sum();
        x[r] = (b[r] - s) / a[r][r];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

/// Root mean square relative error of predicting each point from a fit to
/// the others (NaN when a fit without one point is impossible).
fn loo_error(terms: &[Term], points: &[&(Vec<f64>, f64)]) -> f64 {
    if points.len() <= terms.len() {
        return f64::NAN;
    }
    leave_one_out(points, |rest, a| {
        solve(terms, rest).map(|c| terms.iter().zip(&c).map(|(x, c)| c * x.eval(a)).sum())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    fn params() -> Vec<String> {
        vec!["rows".into(), "cols".into()]
    }

    #[test]
    fn an_exact_affine_law_is_recovered() {
        let pts: Vec<(Vec<f64>, f64)> = [(100.0, 100.0), (200.0, 200.0), (400.0, 100.0)]
            .iter()
            .map(|&(r, c)| (vec![r, c], 2e-6 + 3e-9 * r * c))
            .collect();
        let m = fit(&params(), &pts).expect("three points fit");
        assert_eq!(m.terms, ["1", "P"]);
        assert_relative_eq!(m.coefficients[0], 2e-6, max_relative = 1e-9);
        assert_relative_eq!(m.coefficients[1], 3e-9, max_relative = 1e-9);
        assert_relative_eq!(
            m.eval(&params(), &[1000.0, 1000.0]).expect("known terms"),
            2e-6 + 3e-3,
            max_relative = 1e-9
        );
        assert!(m.formula(&params()).contains("rows·cols"));
    }

    #[test]
    fn a_per_row_overhead_is_found_by_cross_validation() {
        // t = 1e-6 + 2e-9·rows·cols + 5e-8·rows, on a grid of shapes
        let mut pts = Vec::new();
        for r in [10.0, 50.0, 200.0, 1000.0] {
            for c in [10.0, 100.0, 1000.0] {
                pts.push((vec![r, c], 1e-6 + 2e-9 * r * c + 5e-8 * r));
            }
        }
        let m = fit(&params(), &pts).expect("twelve points fit");
        assert_eq!(m.terms, ["1", "P", "rows", "cols"]);
        assert!(m.max_rel_error < 1e-9);
        assert_relative_eq!(m.coefficients[2], 5e-8, max_relative = 1e-6);
    }

    #[test]
    fn a_negative_overhead_is_not_accepted() {
        // superlinear growth (a cache step) would give a < 0 for a + b·P
        let pts: Vec<(Vec<f64>, f64)> = [(100.0, 1e-5), (200.0, 4.4e-5), (400.0, 1.9e-4)]
            .iter()
            .map(|&(n, t)| (vec![n, n], t))
            .collect();
        let m = fit(&params(), &pts).expect("fits");
        assert!(m.coefficients.iter().all(|c| *c >= 0.0), "{m:?}");
        assert_eq!(m.terms, ["P"]);
    }

    #[test]
    fn a_cache_step_is_followed_piecewise() {
        // 1 ns per element in cache, 3 ns beyond 1e6 elements
        let n = [1e4, 3e4, 1e5, 3e5, 1e6, 3e6, 1e7, 3e7];
        let pts: Vec<(Vec<f64>, f64)> = n
            .iter()
            .map(|&w: &f64| {
                let t = if w < 1e6 { 1e-9 * w } else { 3e-9 * w - 2e-3 };
                (vec![w], t)
            })
            .collect();
        let p = vec!["elems".to_owned()];
        let m = fit(&p, &pts).expect("fits");
        assert!(m.segments.len() >= 2, "{m:?}");
        assert!(m.max_rel_error < 0.05, "{m:?}");
        // between the measured points, on the right piece
        let t = m.eval(&p, &[2e6]).expect("evaluates");
        assert_relative_eq!(t, 3e-9 * 2e6 - 2e-3, max_relative = 0.1);
        let t = m.eval(&p, &[2e5]).expect("evaluates");
        assert_relative_eq!(t, 2e-4, max_relative = 0.02);
    }

    #[test]
    fn one_point_gives_a_rate() {
        let m = fit(&params(), &[(vec![10.0, 10.0], 1e-6)]).expect("one point fits");
        assert_eq!(m.terms, ["P"]);
        assert_relative_eq!(m.coefficients[0], 1e-8);
        assert!(fit(&params(), &[]).is_none());
    }
}
