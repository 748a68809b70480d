//! Block (kernel) calibration: `parsim calibrate blocks` and `run --blocks`.
//!
//! The ParJava method: cut the program into blocks, time each block on the
//! target machine with stand-alone measuring programs, and interpret the
//! model with those times. Here a block is a skeleton `kernel` with a native
//! implementation ([`library`]: the C ABI of `include/parsim_kernel.h`); a
//! profile run of the skeleton says which argument tuples occur
//! ([`select_points`] picks the ones to time), [`timing`] measures them,
//! [`fit`] gives a cost for tuples not measured, and [`file`](mod@file) writes and
//! reads `blocks.toml` and answers the simulator's questions
//! ([`file::CalibratedKernel`] implements `sim_core::kernels::KernelTime`).

pub mod file;
pub mod fit;
pub mod library;
pub mod reference;
pub mod timing;

use sim_core::kernels::{ProfileArg, ProfiledCall};

/// Errors of block calibration.
#[derive(Debug, thiserror::Error)]
pub enum BlocksError {
    #[error("{0}")]
    Io(String),
    #[error("compiling the kernels: {0}")]
    Compile(String),
    #[error("loading the kernel library: {0}")]
    Load(String),
    #[error("{0}")]
    Invalid(String),
}

/// The argument tuples of one kernel to time, as indices into `calls`
/// (sorted by argument tuple): all of them when there are at most
/// `max_points`, else the most called ones and a spread over the range of
/// work (the product of the arguments), evenly in log scale, always
/// including the smallest and the largest.
pub fn select_points(calls: &[ProfiledCall], max_points: usize) -> Vec<usize> {
    let max_points = max_points.max(1);
    if calls.len() <= max_points {
        return (0..calls.len()).collect();
    }
    let work = |c: &ProfiledCall| {
        let a: Vec<f64> = c.args.iter().map(|a| a.as_f64()).collect();
        fit::product(&a).max(1.0)
    };
    let mut by_work: Vec<usize> = (0..calls.len()).collect();
    by_work.sort_by(|&a, &b| work(&calls[a]).total_cmp(&work(&calls[b])));
    let mut chosen: Vec<usize> = Vec::new();
    // The most called quarter of the budget: those dominate the prediction.
    let mut by_count: Vec<usize> = (0..calls.len()).collect();
    by_count.sort_by(|&a, &b| calls[b].count.cmp(&calls[a].count).then(a.cmp(&b)));
    chosen.extend(by_count.iter().take(max_points / 4));
    let (lo, hi) = (
        work(&calls[by_work[0]]).ln(),
        work(&calls[by_work[by_work.len() - 1]]).ln(),
    );
    let spread = max_points - chosen.len();
    for i in 0..spread {
        let target = if spread == 1 {
            hi
        } else {
            lo + (hi - lo) * i as f64 / (spread - 1) as f64
        };
        // the closest not yet chosen
        let pick = by_work
            .iter()
            .copied()
            .filter(|c| !chosen.contains(c))
            .min_by(|&a, &b| {
                (work(&calls[a]).ln() - target)
                    .abs()
                    .total_cmp(&(work(&calls[b]).ln() - target).abs())
            });
        if let Some(p) = pick {
            chosen.push(p);
        }
    }
    chosen.sort_unstable();
    chosen.dedup();
    chosen
}

/// The integer arguments of a profiled call (native kernels take
/// integers), or an error naming the kernel and the argument.
pub fn integer_args(
    kernel: &str,
    params: &[String],
    args: &[ProfileArg],
) -> Result<Vec<i64>, BlocksError> {
    args.iter()
        .enumerate()
        .map(|(i, a)| match *a {
            ProfileArg::Int(v) => Ok(v),
            ProfileArg::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Ok(f as i64),
            ProfileArg::Float(f) => Err(BlocksError::Invalid(format!(
                "kernel `{kernel}` is called with {} = {f}: a native kernel takes integer arguments",
                params.get(i).map_or("an argument", String::as_str)
            ))),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(a: i64, count: u64) -> ProfiledCall {
        ProfiledCall {
            args: vec![ProfileArg::Int(a)],
            count,
            predecessor: None,
        }
    }

    #[test]
    fn few_tuples_are_all_timed() {
        let calls = vec![call(1, 1), call(2, 1), call(3, 5)];
        assert_eq!(select_points(&calls, 8), [0, 1, 2]);
    }

    #[test]
    fn many_tuples_are_sampled_with_the_ends_and_the_most_called() {
        let calls: Vec<ProfiledCall> = (1..=1000)
            .map(|a| call(a, if a == 500 { 99 } else { 1 }))
            .collect();
        let s = select_points(&calls, 8);
        assert_eq!(s.len(), 8);
        assert!(s.contains(&0) && s.contains(&999) && s.contains(&499));
    }

    #[test]
    fn fractional_arguments_are_refused_by_name() {
        let p = vec!["n".to_owned()];
        assert_eq!(
            integer_args("k", &p, &[ProfileArg::Float(4.0)]).expect("integral"),
            [4]
        );
        let e = integer_args("k", &p, &[ProfileArg::Float(2.5)]).expect_err("fractional");
        assert!(e.to_string().contains("n = 2.5"), "{e}");
    }
}
