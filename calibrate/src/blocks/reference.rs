//! The machine's speed now: a fixed reference workload timed next to every
//! measurement that a prediction is compared with.
//!
//! Issue 17 (point 4): on a machine whose speed drifts (a virtual machine's
//! neighbours, frequency states), kernels timed a minute before the real
//! runs can be 10-25% off what the runs meet (VALIDATION.md sections 3 and
//! 7: one vCPU 12-24% slower than the other, rounds of Net missing by 20% at
//! one rank, where nothing but the kernels counts). So `calibrate blocks`
//! times this workload before and after every kernel point it measures, and
//! `validate --run --speed-reference` before and after every real run; the
//! ratio of the two is the machine's speed then against its speed when the
//! kernel was timed, and the kernel times are scaled by it. The workload
//! does what the kernels of stencil codes do, in two equal parts: a chain of
//! dependent multiply-adds (the core's speed) and a five-point stencil sweep
//! over two 8 MiB grids (beyond the private caches: the memory's speed). It
//! is deterministic, allocates and touches its grids before the clock
//! starts, and reports the median of [`REPS`] repetitions (an interrupt in
//! one of them does not move it).
//!
//! What it assumes: the program's kernels slow down and speed up with the
//! machine as this mix does. A kernel bound by something else (a cache level
//! the sweep does not use, the other core's load) is corrected only as far
//! as that is true; `validate` shows the uncorrected prediction next to the
//! corrected one.

use std::hint::black_box;
use std::time::Instant;

/// Repetitions per measurement; the median is reported.
pub const REPS: usize = 5;
/// Side of the two stencil grids (f64): 1024 x 1024 x 8 B = 8 MiB each.
const SIDE: usize = 1024;
/// Dependent multiply-adds per repetition.
const CHAIN: u64 = 2_000_000;

/// Seconds of one repetition of the reference workload: the median of
/// [`REPS`] repetitions (each a few milliseconds on a present-day core).
pub fn reference_seconds() -> f64 {
    let mut a = vec![0.0f64; SIDE * SIDE];
    let mut b = vec![0.0f64; SIDE * SIDE];
    for (i, x) in a.iter_mut().enumerate() {
        *x = (i % 97) as f64 * 0.01;
    }
    // One untimed pass: pages touched, caches and predictors as in the
    // timed ones.
    one_pass(&mut a, &mut b);
    let mut times = [0.0f64; REPS];
    for t in &mut times {
        let start = Instant::now();
        one_pass(&mut a, &mut b);
        *t = start.elapsed().as_secs_f64();
    }
    times.sort_by(f64::total_cmp);
    times[REPS / 2]
}

/// One repetition: the chain, then a sweep from `a` into `b` and back.
fn one_pass(a: &mut [f64], b: &mut [f64]) {
    let mut x = black_box(1.0f64);
    let (m, c) = (black_box(0.999_999_9), black_box(1e-9));
    for _ in 0..CHAIN {
        x = x * m + c;
    }
    black_box(x);
    sweep(a, b);
    sweep(b, a);
    black_box(&a[SIDE + 1]);
}

/// `dst` = the five-point average of `src` on the interior.
fn sweep(src: &[f64], dst: &mut [f64]) {
    for i in 1..SIDE - 1 {
        let (up, row, down) = (
            &src[(i - 1) * SIDE..i * SIDE],
            &src[i * SIDE..(i + 1) * SIDE],
            &src[(i + 1) * SIDE..(i + 2) * SIDE],
        );
        let out = &mut dst[i * SIDE..(i + 1) * SIDE];
        for j in 1..SIDE - 1 {
            out[j] = 0.2 * (row[j] + row[j - 1] + row[j + 1] + up[j] + down[j]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_takes_milliseconds_and_repeats() {
        let mut t = [
            reference_seconds(),
            reference_seconds(),
            reference_seconds(),
        ];
        for a in t {
            assert!(a > 1e-4 && a < 1.0, "reference {a} s");
        }
        // Measurements a moment apart agree within a factor of two on any
        // machine not being swapped out (the drift it corrects is 10-25%):
        // the two closest of three, so that one disturbed by the other
        // tests running beside it (CI runs them in parallel on 2 cores:
        // 13.2 then 5.3 ms once) does not decide.
        t.sort_by(f64::total_cmp);
        let closest = (t[1] / t[0]).min(t[2] / t[1]);
        assert!(closest < 2.0, "{t:?} s");
    }
}
