//! Writing a fitted machine as a parsim machine file: the fitted channels
//! become a [`models::config::write::MachineFile`] (each segment of the fit a
//! `[[network.segments]]` table), with a header that records the command
//! and the fit; the `models` crate, which owns the format, writes it.

use models::config::write::{self, ChannelFile, MachineFile, SegmentFile, WrittenFile};
use models::units::format_size;
use models::{CommModel, Duplex, LogGpParams, NodeParams, Placement};
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
    /// The `[socket]` channel (messages between two sockets of a node;
    /// needs `shm` and `sockets` of at least 2).
    pub socket: Option<&'a ChannelFit>,
    /// `node.sockets`: sockets per node (1 leaves the key out).
    pub sockets: u32,
    /// The fits of the written ping-pong (`PingPongWritten`) of the
    /// network, shared-memory and between-sockets channels, each its
    /// channel's `[section.written]` (`None` leaves it out).
    pub written: Written<'a>,
    /// Comment lines for the header (provenance: command, inputs, date),
    /// without the leading `#`.
    pub header: Vec<String>,
    /// `network.duplex` (full, half, or the overlap share); `None` leaves
    /// the default (full).
    pub network_duplex: Option<Duplex>,
    /// The shared-memory channel's duplex (its joint fit with the other
    /// patterns measured inside a node), written with `duplex_scope =
    /// "rank"`; `None`: full, not written.
    pub shm_duplex: Option<Duplex>,
    /// `[collectives]` entries (`library = "mpich"`, `alltoall = "pairwise"`),
    /// written as given; empty for none.
    pub collectives: Vec<(String, String)>,
    /// `network.node_gap`, seconds (0 leaves it out).
    pub node_gap: f64,
    /// `shm.node_bandwidth`, bytes per second (`None` leaves it out).
    pub shm_node_bandwidth: Option<f64>,
    /// `node.reduce_op`, bytes per second (`None` leaves it out: as fast as
    /// memcpy).
    pub reduce_bandwidth: Option<f64>,
    /// `node.reduce_overhead`, seconds (0 leaves it out).
    pub reduce_overhead: f64,
    /// `[[node.memcpy_segments]]` (empty leaves them out).
    pub memcpy_segments: Vec<models::RateSegment>,
    /// `[[node.reduce_segments]]` (empty leaves them out).
    pub reduce_segments: Vec<models::RateSegment>,
    /// `node.timer`, seconds per read of the clock (0 leaves it out).
    pub timer: f64,
    /// `node.rendezvous_send = "received"` (false leaves it out).
    pub rendezvous_send_received: bool,
    /// `node.flag_latency`, seconds (`None` leaves it out: assumed).
    pub flag_latency: Option<f64>,
    /// `node.type_*` (each `None` left out: assumed).
    pub datatype: models::DatatypeCosts,
    /// `node.page_fault`, seconds per page of fresh memory written
    /// (`None` leaves it out: temporaries not modelled).
    pub page_fault: Option<f64>,
}

/// The written ping-pong's fit of each channel ([`MachineDescription::written`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct Written<'a> {
    /// `[network.written]`.
    pub network: Option<&'a ChannelFit>,
    /// `[shm.written]`.
    pub shm: Option<&'a ChannelFit>,
    /// `[socket.written]`.
    pub socket: Option<&'a ChannelFit>,
}

/// Why a machine file cannot be written.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum WriteError {
    /// `ranks_per_node` of 0.
    #[error("ranks per node must be at least 1")]
    NoRanks,
    /// An SMP machine without a shared-memory channel.
    #[error(
        "{0} ranks per node need a shared-memory channel: give an intra-node table, or 1 rank per node"
    )]
    SmpWithoutShm(u32),
    /// A shared-memory channel for a machine of one rank per node.
    #[error("a shared-memory channel needs more than 1 rank per node")]
    ShmWithoutSmp,
    /// `sockets` of 0.
    #[error("sockets per node must be at least 1")]
    NoSockets,
    /// More than one socket per node on a machine of one rank per node.
    #[error("{0} sockets per node need more than 1 rank per node")]
    SocketsWithoutSmp(u32),
    /// A channel between sockets for a node of one socket.
    #[error("a channel between sockets needs at least 2 sockets per node, got {0}")]
    SocketWithOneSocket(u32),
    /// A name, rate or bandwidth that cannot be written.
    #[error("{0}")]
    BadValue(String),
}

/// The LogGP parameters of a fitted segment.
fn params(segment: &ChannelSegment) -> LogGpParams {
    LogGpParams {
        latency: segment.latency,
        send_overhead: segment.send_overhead,
        recv_overhead: segment.recv_overhead,
        gap: segment.gap,
        gap_per_byte: segment.gap_per_byte,
        latency_per_byte: segment.latency_per_byte,
    }
}

/// The `[[section.segments]]` tables of a fit's segments after its first
/// (the base), each with the points it was fitted to; with their own
/// duplex where `duplex`.
fn segment_files(fit: &ChannelFit, duplex: bool) -> Vec<SegmentFile> {
    fit.segments[1..]
        .iter()
        .map(|segment| SegmentFile {
            comment: Some(format!(
                "points {} .. {}{}",
                format_size(fit.points[segment.first].bytes),
                format_size(fit.points[segment.last].bytes),
                if segment.rendezvous {
                    ", rendezvous"
                } else {
                    ""
                }
            )),
            from: segment.from,
            params: params(segment),
            duplex: if duplex { segment.duplex } else { None },
        })
        .collect()
}

/// A fit's first segment (the base) and the comment that says which sizes
/// and points it covers; `None` without segments.
fn base_of(fit: &ChannelFit) -> Option<(&ChannelSegment, String)> {
    let base = fit.segments.first()?;
    let comment = format!(
        "sizes below {}: points {} .. {}",
        fit.segments
            .get(1)
            .map_or("any size".to_owned(), |s| format_size(s.from)),
        format_size(fit.points[base.first].bytes),
        format_size(fit.points[base.last].bytes)
    );
    Some((base, comment))
}

/// The channel section of a fit: its first segment is the base, the
/// others are `[[section.segments]]`; `None` without segments. `written`:
/// the fit of the written ping-pong, its `[section.written]`.
fn channel_file(
    fit: &ChannelFit,
    duplex: Option<Duplex>,
    written: Option<&ChannelFit>,
) -> Option<ChannelFile> {
    let (base, comment) = base_of(fit)?;
    let written = written.and_then(|w| {
        let (base, comment) = base_of(w)?;
        Some(WrittenFile {
            comment: Some(format!(
                "data its sender just wrote (PingPongWritten), rendezvous messages of a collective's library data; {comment}"
            )),
            base: params(base),
            segments: segment_files(w, false),
        })
    });
    Some(ChannelFile {
        comment: Some(comment),
        base: params(base),
        mtu: None,
        duplex,
        duplex_scope: None,
        eager_limit: fit.eager_limit,
        control_bytes: fit.control_bytes,
        segments: segment_files(fit, true),
        node_gap: 0.0,
        node_bandwidth: None,
        send_overhead_per_byte: fit.send_overhead_per_byte,
        measured_to: fit.points.last().map(|p| p.bytes),
        written,
    })
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
            format!(" (above the {:.1}% tolerance)", fit.tolerance * 100.0)
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
            EagerOrigin::Crossing {
                rise,
                slope_below,
                slope_above,
                handshake,
            } => format!(
                "detected, where the eager and rendezvous lines cross: the intercept rises {:.2} us (handshake 2 t(c) = {:.2} us) and the time per byte falls {:.4} -> {:.4} ns/B",
                rise * 1e6,
                handshake * 1e6,
                slope_below * 1e9,
                slope_above * 1e9
            ),
            EagerOrigin::Probed { step_at } => format!(
                "probed: a send of this size waits for its receive, one byte less does not (measured by the benchmark); {}",
                match step_at {
                    Some(e) if e == fit.eager_limit => "the ping-pong's time steps there too".to_owned(),
                    Some(e) => format!(
                        "the ping-pong's time steps up at {}{}; the time model's handshake starts at the probed size",
                        format_size(e),
                        if e < fit.eager_limit {
                            " (the library changes its timing before it stops buffering)"
                        } else {
                            ""
                        }
                    ),
                    None => "the ping-pong's times show no step".to_owned(),
                }
            ),
            EagerOrigin::NotFound => format!(
                "no protocol switch found in the table; every measured size (up to {}) is taken as eager",
                format_size(fit.points.last().map_or(0, |p| p.bytes))
            ),
            EagerOrigin::NotIdentifiable => "not identifiable from a stream table".to_owned(),
        }
    ));
    if let Some(most) = fit.criterion.iter().map(|c| c.segments).max() {
        let values: Vec<String> = (1..=most)
            .map(|k| {
                fit.criterion
                    .iter()
                    .find(|c| c.segments == k)
                    .map_or(format!("{k}: -"), |c| format!("{k}: {:.1}", c.bic))
            })
            .collect();
        lines.push(format!(
            "  segments: {}, the least BIC (Schwarz 1978) on the relative residuals; by number of segments ('-': no fit keeps the rules): {}",
            fit.segments.len(),
            values.join(", ")
        ));
    }
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
    for warning in eager_warning(label, fit).into_iter().chain(fit.warnings()) {
        lines.push(format!("  warning: {warning}"));
    }
    lines
}

/// The warning of a ping-pong channel whose table showed no protocol
/// switch: what "every size eager" means for rendezvous semantics, and
/// the option that gives the limit (`label` is the channel: `network`,
/// `shm` or `socket`).
fn eager_warning(label: &str, fit: &ChannelFit) -> Option<String> {
    if fit.measure != Measure::PingPong || fit.eager_origin != EagerOrigin::NotFound {
        return None;
    }
    let option = if label == "network" {
        "--eager-limit".to_owned()
    } else {
        format!("--{label}-eager-limit")
    };
    Some(format!(
        "no eager-to-rendezvous switch was found in the table (neither a step over the trend nor crossing lines with a handshake's rise), so the eager limit is set above every measured size, {}: this machine buffers every send and never charges the rendezvous handshake, so a program that deadlocks once its large sends wait for their receives completes in its runs, and `parsim check` reports it only as a buffering hazard (from its zero-buffering run), not as a deadlock; if the MPI library has a rendezvous threshold (most do, between 4 KiB and 256 KiB), give it with {option} SIZE",
        format_size(fit.eager_limit)
    ))
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
    if machine.sockets == 0 {
        return Err(WriteError::NoSockets);
    }
    if machine.ranks_per_node == 1 && machine.sockets > 1 {
        return Err(WriteError::SocketsWithoutSmp(machine.sockets));
    }
    if machine.socket.is_some() && machine.sockets < 2 {
        return Err(WriteError::SocketWithOneSocket(machine.sockets));
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
    let mut header = machine.header.clone();
    header.extend([
        String::new(),
        "Method (parsim calibrate): per channel, a piecewise-linear fit t(n) = a + b n of".into(),
        "the table, weighted least squares on relative error, physically constrained:".into(),
        "b >= 0, a at least o_s + o_r (plus the handshake above the eager limit), at".into(),
        "least 3 points per segment (the 0 B point may stand alone), a time that never".into(),
        "falls with size (also where one segment gives way to the next), no segment".into(),
        "across the eager limit. Breakpoints by dynamic programming (Bellman 1961), the".into(),
        "number of segments by the least BIC on the relative residuals (Schwarz 1978;".into(),
        "Bai and Perron 1998): a segment is added only where it lowers the error by".into(),
        "more than the noise. Each segment maps to LogGP: G = b; eager a = o_s + L + o_r;".into(),
        "rendezvous a = 2 post(c) + o_s + L + o_r with post(c) = o_s + L_c + c G_c. Not".into(),
        "identifiable from a ping-pong, so assumed unless other patterns fitted them (see".into(),
        "above): the o_s/L/o_r split, g = 0, full duplex; mtu unlimited. Warnings below".into(),
        "name what the data forced on the fit.".into(),
        String::new(),
    ]);
    header.extend(describe_channel("network", machine.network));
    if let Some(shm) = machine.shm {
        header.extend(describe_channel("shm", shm));
    }
    if let Some(socket) = machine.socket {
        header.extend(describe_channel("socket", socket));
    }
    for (label, fit) in [
        ("network.written", machine.written.network),
        ("shm.written", machine.written.shm),
        ("socket.written", machine.written.socket),
    ] {
        if let Some(fit) = fit {
            header.extend(describe_channel(label, fit));
        }
    }
    let model = if machine.ranks_per_node > 1 {
        CommModel::Smp
    } else {
        CommModel::Hardware
    };
    Ok(write::machine_file(&MachineFile {
        header,
        name: machine.name.clone(),
        description: machine.description.clone(),
        model,
        node: NodeParams {
            cpu_rate: machine.cpu_rate,
            memcpy_bandwidth: machine.memcpy,
            ranks_per_node: machine.ranks_per_node,
            placement: Placement::Block,
            sockets: machine.sockets,
            socket_placement: Placement::Block,
            reduce_bandwidth: machine.reduce_bandwidth,
            reduce_overhead: machine.reduce_overhead,
            memcpy_segments: machine.memcpy_segments.clone(),
            reduce_segments: machine.reduce_segments.clone(),
            timer: machine.timer,
            progress_in_calls: models::DEFAULT_PROGRESS_IN_CALLS,
            rendezvous_send_received: machine.rendezvous_send_received,
            flag_latency: machine.flag_latency,
            datatype: machine.datatype,
            heap: models::HeapParams {
                page_fault: machine.page_fault,
                ..Default::default()
            },
        },
        network: channel_file(
            machine.network,
            machine.network_duplex,
            machine.written.network,
        )
        .map(|c| ChannelFile {
            node_gap: machine.node_gap,
            ..c
        }),
        shm: machine
            .shm
            .and_then(|shm| {
                Some((
                    shm,
                    channel_file(shm, machine.shm_duplex, machine.written.shm)?,
                ))
            })
            .map(|(shm, c)| ChannelFile {
                node_bandwidth: machine.shm_node_bandwidth,
                // The shared-memory duplex is fitted on two ranks of one
                // node, each with its own copies: per rank; so are the
                // segments' own (fitted with the channel's full), which a
                // node's one memory channel could not take (`[shm]` refuses
                // them without the scope).
                duplex_scope: (machine.shm_duplex.is_some()
                    || shm.segments[1..].iter().any(|s| s.duplex.is_some()))
                .then_some(models::DuplexScope::Rank),
                ..c
            }),
        socket: machine
            .socket
            .and_then(|socket| channel_file(socket, None, machine.written.socket)),
        collectives: machine.collectives.clone(),
    }))
}
