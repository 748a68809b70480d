//! The text report of a fit: segments and parameters, then every point with
//! its measured, fitted and modelled time and the model's error.

use std::fmt::Write as _;

use models::units::format_size;

use crate::channel::ChannelFit;
use crate::machine::describe_channel;

/// The report of one fitted channel, titled `label` (`network`, `shm`).
pub fn text(label: &str, fit: &ChannelFit) -> String {
    let mut out = String::new();
    for line in describe_channel(label, fit) {
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(out, "\n  parameters per segment:");
    let _ = writeln!(
        out,
        "  {:>10}  {:>10}  {:>10}  {:>10}  {:>14}  {:>10}",
        "from", "L (us)", "o_s (us)", "o_r (us)", "1/G (MB/s)", "protocol"
    );
    for s in &fit.segments {
        let bandwidth = if s.gap_per_byte > 0.0 {
            format!("{:.3}", 1e-6 / s.gap_per_byte)
        } else {
            "inf".to_owned()
        };
        let _ = writeln!(
            out,
            "  {:>10}  {:>10.4}  {:>10.4}  {:>10.4}  {:>14}  {:>10}",
            format_size(s.from),
            s.latency * 1e6,
            s.send_overhead * 1e6,
            s.recv_overhead * 1e6,
            bandwidth,
            if s.rendezvous { "rendezvous" } else { "eager" }
        );
    }
    let _ = writeln!(out, "\n  points (us):");
    let _ = writeln!(
        out,
        "  {:>10}  {:>12}  {:>12}  {:>12}  {:>8}",
        "bytes", "measured", "fitted", "model", "error"
    );
    for check in fit.checks() {
        let _ = writeln!(
            out,
            "  {:>10}  {:>12.2}  {:>12.2}  {:>12.2}  {:>7.2}%",
            check.bytes,
            check.measured * 1e6,
            check.fitted * 1e6,
            check.predicted * 1e6,
            check.error * 100.0
        );
    }
    let summary = fit.summary();
    let _ = writeln!(
        out,
        "  points: {}, median |error| {:.2}%, max |error| {:.2}%",
        summary.points,
        summary.median * 100.0,
        summary.max * 100.0
    );
    out
}
