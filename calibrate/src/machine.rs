//! Writing a fitted machine as a parsim machine file (TOML), in the format
//! of `examples/machines/README.md` with piecewise segments:
//!
//! ```toml
//! [network]                # base parameters, for sizes below the first segment's `from`
//! latency = "5 us"
//! bandwidth = "80 MB/s"
//! ...
//! [[network.segments]]     # messages of at least `from` bytes, up to the next segment's `from`
//! from = "8 B"
//! latency = "7.7 us"
//! bandwidth = "60 MB/s"
//! ```

use std::fmt::Write as _;

use models::units::format_size;
use thiserror::Error;

use crate::channel::{ChannelFit, ChannelSegment, EagerOrigin};
use crate::input::Measure;

/// Everything a machine file says, with the fitted channels.
#[derive(Debug, Clone)]
pub struct MachineDescription<'a> {
    /// `name`.
    pub name: String,
    /// `description`.
    pub description: String,
    /// `node.ranks_per_node`: 1 writes `model = "hardware"`, more
    /// `model = "smp"` (which needs `shm`).
    pub ranks_per_node: u32,
    /// `node.cpu_rate`.
    pub cpu_rate: f64,
    /// `node.memcpy` in bytes per second.
    pub memcpy: f64,
    /// The `[network]` channel.
    pub network: &'a ChannelFit,
    /// The `[shm]` channel.
    pub shm: Option<&'a ChannelFit>,
    /// Comment lines for the header (provenance: command, inputs, date),
    /// without the leading `#`.
    pub header: Vec<String>,
    /// `network.duplex` ("full" or "half"); `None` leaves the default.
    pub network_duplex: Option<String>,
    /// `[collectives]` entries (`library = "mpich"`, `alltoall = "pairwise"`),
    /// written as given; empty for none.
    pub collectives: Vec<(String, String)>,
}

/// Why a machine file cannot be written.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum WriteError {
    /// `ranks_per_node` of 0.
    #[error("ranks per node must be at least 1")]
    NoRanks,
    /// An SMP machine without a shared-memory channel.
    #[error(
        "{0} ranks per node need a shared-memory channel: give an intra-node table (--shm), or 1 rank per node"
    )]
    SmpWithoutShm(u32),
    /// A shared-memory channel for a machine of one rank per node.
    #[error("a shared-memory channel needs more than 1 rank per node (--ranks-per-node)")]
    ShmWithoutSmp,
    /// A name, rate or bandwidth that cannot be written.
    #[error("{0}")]
    BadValue(String),
}

/// A time in µs, to the picosecond, trailing zeros dropped.
fn time_us(seconds: f64) -> String {
    format!("{} us", trim(format!("{:.6}", seconds * 1e6)))
}

/// A bandwidth in MB/s (10^6 B/s) with 7 significant digits.
fn bandwidth_mb(seconds_per_byte: f64) -> String {
    let mb_per_s = 1.0 / seconds_per_byte / 1e6;
    let digits = if mb_per_s >= 1.0 {
        mb_per_s.log10().floor() as i32 + 1
    } else {
        1
    };
    let decimals = (7 - digits).clamp(0, 12) as usize;
    format!("{} MB/s", trim(format!("{mb_per_s:.decimals$}")))
}

fn trim(text: String) -> String {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text
    }
}

/// A TOML basic string.
fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for ch in text.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `latency` and `bandwidth` (or `gap_per_byte = "0 ns"` for G = 0).
fn speed_keys(out: &mut String, segment: &ChannelSegment) {
    let _ = writeln!(out, "latency = \"{}\"", time_us(segment.latency));
    if segment.gap_per_byte > 0.0 {
        let _ = writeln!(
            out,
            "bandwidth = \"{}\"",
            bandwidth_mb(segment.gap_per_byte)
        );
    } else {
        let _ = writeln!(out, "gap_per_byte = \"0 ns\"");
    }
}

fn channel(out: &mut String, section: &str, fit: &ChannelFit, duplex: Option<&str>) {
    let Some(base) = fit.segments.first() else {
        return;
    };
    let _ = writeln!(out, "\n[{section}]");
    let last = &fit.points[base.last];
    let first = &fit.points[base.first];
    let _ = writeln!(
        out,
        "# sizes below {}: points {} .. {}",
        fit.segments
            .get(1)
            .map_or("any size".to_owned(), |s| format_size(s.from)),
        format_size(first.bytes),
        format_size(last.bytes)
    );
    speed_keys(out, base);
    let _ = writeln!(out, "send_overhead = \"{}\"", time_us(base.send_overhead));
    let _ = writeln!(out, "recv_overhead = \"{}\"", time_us(base.recv_overhead));
    let _ = writeln!(out, "gap = \"{}\"", time_us(base.gap));
    let _ = writeln!(out, "mtu = \"unlimited\"");
    if let Some(d) = duplex {
        let _ = writeln!(out, "duplex = {}", quoted(d));
    }
    let _ = writeln!(out, "eager_limit = \"{}\"", format_size(fit.eager_limit));
    let _ = writeln!(
        out,
        "control_bytes = \"{}\"",
        format_size(fit.control_bytes)
    );
    for segment in &fit.segments[1..] {
        let _ = writeln!(out, "\n[[{section}.segments]]");
        let _ = writeln!(
            out,
            "# points {} .. {}{}",
            format_size(fit.points[segment.first].bytes),
            format_size(fit.points[segment.last].bytes),
            if segment.rendezvous {
                ", rendezvous"
            } else {
                ""
            }
        );
        let _ = writeln!(out, "from = \"{}\"", format_size(segment.from));
        speed_keys(out, segment);
        if segment.send_overhead != base.send_overhead {
            let _ = writeln!(
                out,
                "send_overhead = \"{}\"",
                time_us(segment.send_overhead)
            );
        }
        if segment.recv_overhead != base.recv_overhead {
            let _ = writeln!(
                out,
                "recv_overhead = \"{}\"",
                time_us(segment.recv_overhead)
            );
        }
        if segment.gap != base.gap {
            let _ = writeln!(out, "gap = \"{}\"", time_us(segment.gap));
        }
    }
}

/// Comment lines describing a fitted channel: its segments and fit quality.
pub fn describe_channel(label: &str, fit: &ChannelFit) -> Vec<String> {
    let summary = fit.summary();
    let mut lines = vec![format!(
        "{label}: {} segment(s); model vs measured over {} points: median |error| {:.2}%, max {:.2}%{}",
        fit.segments.len(),
        summary.points,
        summary.median * 100.0,
        summary.max * 100.0,
        if fit.within_tolerance {
            String::new()
        } else {
            format!(" (tolerance {:.1}% not reached)", fit.tolerance * 100.0)
        }
    )];
    lines.push(format!("  overheads: {}", fit.overhead_origin));
    lines.push(format!(
        "  eager limit {}: {}",
        format_size(fit.eager_limit),
        match fit.eager_origin {
            EagerOrigin::Given => "given".to_owned(),
            EagerOrigin::Detected {
                step,
                relative,
                handshake,
            } => format!(
                "detected, a step of {:.2} us ({:.1}%) over the trend, handshake 2 t(c) = {:.2} us",
                step * 1e6,
                relative * 100.0,
                handshake * 1e6
            ),
            EagerOrigin::NotFound =>
                "no protocol step found; every measured size is eager".to_owned(),
            EagerOrigin::NotIdentifiable => "not identifiable from a stream table".to_owned(),
        }
    ));
    for s in &fit.segments {
        lines.push(format!(
            "  from {:>9}: t = {:.4} us + n * {:.4} ns/B ({}), {} points, rms {:.2}%, max {:.2}%{}",
            format_size(s.from),
            s.line.a * 1e6,
            s.line.b * 1e9,
            if fit.measure == Measure::Stream {
                "stream"
            } else if s.rendezvous {
                "rendezvous"
            } else {
                "eager"
            },
            s.last + 1 - s.first,
            s.rms_rel * 100.0,
            s.max_rel * 100.0,
            if s.latency_clamped {
                "; latency clamped at 0"
            } else {
                ""
            }
        ));
    }
    lines
}

/// The machine file's text.
pub fn write_machine(machine: &MachineDescription<'_>) -> Result<String, WriteError> {
    if machine.ranks_per_node == 0 {
        return Err(WriteError::NoRanks);
    }
    if machine.ranks_per_node > 1 && machine.shm.is_none() {
        return Err(WriteError::SmpWithoutShm(machine.ranks_per_node));
    }
    if machine.ranks_per_node == 1 && machine.shm.is_some() {
        return Err(WriteError::ShmWithoutSmp);
    }
    if !(machine.cpu_rate.is_finite() && machine.cpu_rate > 0.0) {
        return Err(WriteError::BadValue(format!(
            "cpu rate must be positive, got {}",
            machine.cpu_rate
        )));
    }
    if !(machine.memcpy.is_finite() && machine.memcpy > 0.0) {
        return Err(WriteError::BadValue(format!(
            "memcpy bandwidth must be positive, got {} B/s",
            machine.memcpy
        )));
    }
    let mut out = String::new();
    for line in &machine.header {
        if line.is_empty() {
            out.push_str("#\n");
        } else {
            let _ = writeln!(out, "# {line}");
        }
    }
    let mut method = vec![
        String::new(),
        "Method (parsim calibrate): per channel, a piecewise-linear fit t(n) = a + b n of".into(),
        "the table, weighted least squares on relative error, breakpoints by dynamic".into(),
        "programming (Bellman 1961), the fewest segments whose worst point is within the".into(),
        "tolerance (SimGrid contrib/network_model/calibrate_piecewise.py's test). Each".into(),
        "segment maps to LogGP: G = b; eager a = o_s + L + o_r; rendezvous".into(),
        "a = 2 post(c) + o_s + L + o_r with post(c) = o_s + L_c + c G_c. Not identifiable".into(),
        "from a ping-pong, so assumed: the o_s/L/o_r split, g = 0, mtu unlimited.".into(),
        String::new(),
    ];
    method.extend(describe_channel("network", machine.network));
    if let Some(shm) = machine.shm {
        method.extend(describe_channel("shm", shm));
    }
    for line in method {
        if line.is_empty() {
            out.push_str("#\n");
        } else {
            let _ = writeln!(out, "# {line}");
        }
    }
    out.push('\n');
    let _ = writeln!(out, "name = {}", quoted(&machine.name));
    let _ = writeln!(out, "description = {}", quoted(&machine.description));
    let model = if machine.ranks_per_node > 1 {
        "smp"
    } else {
        "hardware"
    };
    let _ = writeln!(out, "model = \"{model}\"");
    out.push_str("\n[node]\n");
    let _ = writeln!(
        out,
        "cpu_rate = {}",
        trim(format!("{:.6}", machine.cpu_rate))
    );
    let _ = writeln!(out, "memcpy = \"{}\"", bandwidth_mb(1.0 / machine.memcpy));
    let _ = writeln!(out, "ranks_per_node = {}", machine.ranks_per_node);
    out.push_str("placement = \"block\"\n");
    channel(
        &mut out,
        "network",
        machine.network,
        machine.network_duplex.as_deref(),
    );
    if let Some(shm) = machine.shm {
        channel(&mut out, "shm", shm, None);
    }
    if !machine.collectives.is_empty() {
        let _ = writeln!(out, "\n[collectives]");
        for (k, v) in &machine.collectives {
            let _ = writeln!(out, "{k} = {}", quoted(v));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_written_with_units() {
        assert_eq!(time_us(5.21e-6), "5.21 us");
        assert_eq!(time_us(0.0), "0 us");
        assert_eq!(time_us(2e-12), "0.000002 us");
        assert_eq!(bandwidth_mb(1.0 / 85.54e6), "85.54 MB/s");
        assert_eq!(bandwidth_mb(1.0 / 1e9), "1000 MB/s");
        assert_eq!(bandwidth_mb(1.0 / 1.25e5), "0.125 MB/s");
        assert_eq!(quoted("a \"b\"\n"), "\"a \\\"b\\\"\\n\"");
    }
}
