//! Writing a machine file: the format of `examples/machines/README.md`,
//! with comments, piecewise segments and units written out:
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
//!
//! Times are written in µs to the picosecond, bandwidths in MB/s (10^6
//! B/s) with 7 significant digits, sizes with [`format_size`]. What is
//! written is not validated here: read it back (`LogGpMachine::from_toml_str`)
//! to check it.

use std::fmt::Write as _;

use crate::params::{CommModel, Duplex, DuplexScope, LogGpParams, NodeParams};
use crate::units::format_size;

/// A LogGP machine file to write.
#[derive(Debug, Clone, PartialEq)]
pub struct MachineFile {
    /// Comment lines at the top, without the leading `#` (an empty line
    /// writes a bare `#`).
    pub header: Vec<String>,
    /// `name`.
    pub name: String,
    /// `description`.
    pub description: String,
    /// `model`.
    pub model: CommModel,
    /// `[node]`: `cpu_rate`, `memcpy`, `ranks_per_node`, `placement`,
    /// `sockets` and `socket_placement` when there is more than one socket,
    /// and, when given, `reduce_op`.
    pub node: NodeParams,
    /// `[network]`; `None` leaves the required section out (a file that
    /// does not load, for a caller that has nothing to write).
    pub network: Option<ChannelFile>,
    /// `[shm]`.
    pub shm: Option<ChannelFile>,
    /// `[socket]`: messages between two sockets of a node.
    pub socket: Option<ChannelFile>,
    /// `[collectives]` entries (`library = "mpich"`, `alltoall =
    /// "pairwise"`), written as given; empty for no section.
    pub collectives: Vec<(String, String)>,
}

/// One channel section (`[network]`, `[shm]` or `[socket]`).
#[derive(Debug, Clone, PartialEq)]
pub struct ChannelFile {
    /// A comment line after the section's header, without the `#`.
    pub comment: Option<String>,
    /// The base parameters (sizes below the first segment's `from`).
    pub base: LogGpParams,
    /// `mtu`; `None` writes `"unlimited"`.
    pub mtu: Option<u64>,
    /// `duplex` (`"full"`, `"half"` or the overlap share); `None` leaves
    /// it out (full duplex).
    pub duplex: Option<Duplex>,
    /// `duplex_scope` (`[shm]`, `[socket]`): written when given.
    pub duplex_scope: Option<DuplexScope>,
    /// `eager_limit`.
    pub eager_limit: u64,
    /// `control_bytes`.
    pub control_bytes: u64,
    /// `[[section.segments]]`, by increasing `from`.
    pub segments: Vec<SegmentFile>,
    /// `node_gap` (`[network]`), written when above 0.
    pub node_gap: f64,
    /// `send_overhead_per_byte` (LogGOPS's O), written when above 0.
    pub send_overhead_per_byte: f64,
    /// `node_bandwidth` (`[shm]`), written when given.
    pub node_bandwidth: Option<f64>,
    /// `measured_to`: the largest message of the table the channel was
    /// fitted to, written when given.
    pub measured_to: Option<u64>,
    /// `[section.written]`: the channel for data its sender has just
    /// written, when fitted.
    pub written: Option<WrittenFile>,
}

/// A channel's `[section.written]` table: the base parameters of a written
/// ping-pong's fit (all written) and its `[[section.written.segments]]`.
#[derive(Debug, Clone, PartialEq)]
pub struct WrittenFile {
    /// A comment line after the table's header, without the `#`.
    pub comment: Option<String>,
    /// The base parameters.
    pub base: LogGpParams,
    /// `[[section.written.segments]]`, by increasing `from`; no duplex.
    pub segments: Vec<SegmentFile>,
}

/// One `[[section.segments]]` table. Its `latency` and speed are always
/// written; the overheads and the gap only where they differ from the
/// channel's base.
#[derive(Debug, Clone, PartialEq)]
pub struct SegmentFile {
    /// A comment line after the table's header, without the `#`.
    pub comment: Option<String>,
    /// `from`: messages of at least this many bytes.
    pub from: u64,
    /// The segment's parameters.
    pub params: LogGpParams,
    /// The segment's own duplex (`[[network.segments]]` only); `None`
    /// leaves it out (the channel's).
    pub duplex: Option<Duplex>,
}

/// A time in µs, to the picosecond, trailing zeros dropped: `"5.21 us"`.
pub fn time_us(seconds: f64) -> String {
    format!("{} us", trim(format!("{:.6}", seconds * 1e6)))
}

/// A bandwidth of `1 / seconds_per_byte` in MB/s (10^6 B/s) with 7
/// significant digits: `"85.54 MB/s"`.
pub fn bandwidth_mb(seconds_per_byte: f64) -> String {
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
pub fn quoted(text: &str) -> String {
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

/// `# line` for each line, `#` for an empty one.
fn comments(out: &mut String, lines: &[String]) {
    for line in lines {
        if line.is_empty() {
            out.push_str("#\n");
        } else {
            let _ = writeln!(out, "# {line}");
        }
    }
}

/// `latency` and `bandwidth` (or `gap_per_byte = "0 ns"` for G = 0).
fn speed_keys(out: &mut String, params: &LogGpParams) {
    let _ = writeln!(out, "latency = \"{}\"", time_us(params.latency));
    if params.gap_per_byte > 0.0 {
        let _ = writeln!(out, "bandwidth = \"{}\"", bandwidth_mb(params.gap_per_byte));
    } else {
        let _ = writeln!(out, "gap_per_byte = \"0 ns\"");
    }
}

/// A section's header, its comment and its base parameters; `latency_per_byte`
/// also when 0 if `all` (a `[section.written]` table, which would inherit
/// its channel's otherwise).
fn base_keys(
    out: &mut String,
    section: &str,
    comment: Option<&str>,
    base: &LogGpParams,
    all: bool,
) {
    let _ = writeln!(out, "\n[{section}]");
    if let Some(comment) = comment {
        let _ = writeln!(out, "# {comment}");
    }
    speed_keys(out, base);
    let _ = writeln!(out, "send_overhead = \"{}\"", time_us(base.send_overhead));
    let _ = writeln!(out, "recv_overhead = \"{}\"", time_us(base.recv_overhead));
    let _ = writeln!(out, "gap = \"{}\"", time_us(base.gap));
    if all || base.latency_per_byte > 0.0 {
        let _ = writeln!(
            out,
            "latency_per_byte = \"{}\"",
            time_ns(base.latency_per_byte)
        );
    }
}

fn channel(out: &mut String, section: &str, channel: &ChannelFile) {
    let base = &channel.base;
    base_keys(out, section, channel.comment.as_deref(), base, false);
    if channel.send_overhead_per_byte > 0.0 {
        let _ = writeln!(
            out,
            "send_overhead_per_byte = \"{}\"",
            time_ns(channel.send_overhead_per_byte)
        );
    }
    let mtu = channel
        .mtu
        .map_or_else(|| "unlimited".to_owned(), format_size);
    let _ = writeln!(out, "mtu = \"{mtu}\"");
    if let Some(duplex) = channel.duplex {
        duplex_key(out, duplex);
    }
    if let Some(scope) = channel.duplex_scope {
        let _ = writeln!(out, "duplex_scope = {}", quoted(scope.as_str()));
    }
    let _ = writeln!(
        out,
        "eager_limit = \"{}\"",
        format_size(channel.eager_limit)
    );
    let _ = writeln!(
        out,
        "control_bytes = \"{}\"",
        format_size(channel.control_bytes)
    );
    if channel.node_gap > 0.0 {
        let _ = writeln!(out, "node_gap = \"{}\"", time_us(channel.node_gap));
    }
    if let Some(rate) = channel.node_bandwidth {
        let _ = writeln!(out, "node_bandwidth = \"{}\"", bandwidth_mb(1.0 / rate));
    }
    if let Some(bytes) = channel.measured_to {
        let _ = writeln!(out, "measured_to = \"{}\"", format_size(bytes));
    }
    segments(out, section, base, &channel.segments);
    if let Some(written) = &channel.written {
        let section = format!("{section}.written");
        let base = &written.base;
        base_keys(out, &section, written.comment.as_deref(), base, true);
        segments(out, &section, base, &written.segments);
    }
}

/// `[[section.segments]]` tables: `latency` and speed always, the other
/// parameters where they differ from `base`.
fn segments(out: &mut String, section: &str, base: &LogGpParams, segments: &[SegmentFile]) {
    for segment in segments {
        let params = &segment.params;
        let _ = writeln!(out, "\n[[{section}.segments]]");
        if let Some(comment) = &segment.comment {
            let _ = writeln!(out, "# {comment}");
        }
        let _ = writeln!(out, "from = \"{}\"", format_size(segment.from));
        speed_keys(out, params);
        if params.send_overhead != base.send_overhead {
            let _ = writeln!(out, "send_overhead = \"{}\"", time_us(params.send_overhead));
        }
        if params.recv_overhead != base.recv_overhead {
            let _ = writeln!(out, "recv_overhead = \"{}\"", time_us(params.recv_overhead));
        }
        if params.gap != base.gap {
            let _ = writeln!(out, "gap = \"{}\"", time_us(params.gap));
        }
        if params.latency_per_byte != base.latency_per_byte {
            let _ = writeln!(
                out,
                "latency_per_byte = \"{}\"",
                time_ns(params.latency_per_byte)
            );
        }
        if let Some(duplex) = segment.duplex {
            duplex_key(out, duplex);
        }
    }
}

/// `duplex = "full"`, `"half"` or the overlap share.
fn duplex_key(out: &mut String, duplex: Duplex) {
    match duplex.keyword() {
        Some(word) => {
            let _ = writeln!(out, "duplex = {}", quoted(word));
        }
        None => {
            let _ = writeln!(out, "duplex = {}", duplex.as_str());
        }
    }
}

/// Seconds per byte as nanoseconds with 6 decimals: `"0.041667 ns"`.
fn time_ns(seconds: f64) -> String {
    format!("{} ns", trim(format!("{:.6}", seconds * 1e9)))
}

/// The text of a machine file.
pub fn machine_file(file: &MachineFile) -> String {
    let mut out = String::new();
    comments(&mut out, &file.header);
    out.push('\n');
    let _ = writeln!(out, "name = {}", quoted(&file.name));
    let _ = writeln!(out, "description = {}", quoted(&file.description));
    let _ = writeln!(out, "model = \"{}\"", file.model.as_str());
    let node = &file.node;
    out.push_str("\n[node]\n");
    let _ = writeln!(out, "cpu_rate = {}", trim(format!("{:.6}", node.cpu_rate)));
    let _ = writeln!(
        out,
        "memcpy = \"{}\"",
        bandwidth_mb(1.0 / node.memcpy_bandwidth)
    );
    let _ = writeln!(out, "ranks_per_node = {}", node.ranks_per_node);
    let _ = writeln!(out, "placement = \"{}\"", node.placement.as_str());
    // Only for a node of several sockets: files of one socket stay as
    // they were.
    if node.sockets != 1 {
        let _ = writeln!(out, "sockets = {}", node.sockets);
        let _ = writeln!(
            out,
            "socket_placement = \"{}\"",
            node.socket_placement.as_str()
        );
    }
    if let Some(rate) = node.reduce_bandwidth {
        let _ = writeln!(out, "reduce_op = \"{}\"", bandwidth_mb(1.0 / rate));
    }
    if node.reduce_overhead > 0.0 {
        let _ = writeln!(
            out,
            "reduce_overhead = \"{}\"",
            time_us(node.reduce_overhead)
        );
    }
    if node.timer > 0.0 {
        let _ = writeln!(out, "timer = \"{}\"", time_us(node.timer));
    }
    if let Some(t) = node.flag_latency {
        let _ = writeln!(out, "flag_latency = \"{}\"", time_us(t));
    }
    let d = &node.datatype;
    for (key, value) in [
        ("type_create", d.create),
        ("type_create_per_block", d.create_per_block),
        ("type_pack", d.pack),
        ("type_pack_per_block", d.pack_per_block),
    ] {
        if let Some(t) = value {
            let _ = writeln!(out, "{key} = \"{}\"", time_us(t));
        }
    }
    if let Some(t) = node.heap.page_fault {
        let _ = writeln!(out, "page_fault = \"{}\"", time_us(t));
    }
    if node.heap.page_size != crate::params::HeapParams::default().page_size {
        let _ = writeln!(out, "page_size = \"{} B\"", node.heap.page_size);
    }
    if node.heap.allocator != crate::heap::Allocator::Glibc {
        let _ = writeln!(out, "allocator = \"{}\"", node.heap.allocator.name());
    }
    if node.rendezvous_send_received {
        let _ = writeln!(out, "rendezvous_send = \"received\"");
    }
    if node.progress_in_calls != crate::params::DEFAULT_PROGRESS_IN_CALLS {
        let _ = writeln!(
            out,
            "progress = \"{}\"",
            if node.progress_in_calls {
                "calls"
            } else {
                "async"
            }
        );
    }
    for (key, segments) in [
        ("memcpy_segments", &node.memcpy_segments),
        ("reduce_segments", &node.reduce_segments),
    ] {
        for segment in segments {
            let _ = writeln!(out, "\n[[node.{key}]]");
            let _ = writeln!(out, "from = \"{} B\"", segment.from);
            if segment.overhead > 0.0 {
                let _ = writeln!(out, "overhead = \"{}\"", time_us(segment.overhead));
            }
            if segment.per_byte > 0.0 {
                let _ = writeln!(out, "bandwidth = \"{}\"", bandwidth_mb(segment.per_byte));
            } else {
                let _ = writeln!(out, "bandwidth = \"unlimited\"");
            }
        }
    }
    if let Some(network) = &file.network {
        channel(&mut out, "network", network);
    }
    if let Some(shm) = &file.shm {
        channel(&mut out, "shm", shm);
    }
    if let Some(socket) = &file.socket {
        channel(&mut out, "socket", socket);
    }
    if !file.collectives.is_empty() {
        let _ = writeln!(out, "\n[collectives]");
        for (key, value) in &file.collectives {
            // `shared_memory = true` is a TOML boolean; every other entry
            // a string but an inline table.
            // `call_overhead = { default = "...", allreduce = "..." }`, an
            // inline table, is written as given.
            if matches!(value.as_str(), "true" | "false") || value.starts_with('{') {
                let _ = writeln!(out, "{key} = {value}");
            } else {
                let _ = writeln!(out, "{key} = {}", quoted(value));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Placement;

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

    #[test]
    fn a_written_file_reads_back_to_the_same_machine() {
        let params = |latency: f64, gap_per_byte: f64| LogGpParams {
            latency,
            send_overhead: 1e-6,
            recv_overhead: 2e-6,
            gap: 0.0,
            gap_per_byte,
            latency_per_byte: 0.0,
        };
        let file = MachineFile {
            header: vec!["written by a test".into(), String::new()],
            name: "written".into(),
            description: "a \"quoted\" word".into(),
            model: CommModel::Hardware,
            node: NodeParams {
                cpu_rate: 1.5,
                memcpy_bandwidth: 2e9,
                ranks_per_node: 1,
                placement: Placement::Block,
                sockets: 1,
                socket_placement: Placement::Block,
                reduce_bandwidth: Some(5e8),
                reduce_overhead: 0.12e-6,
                memcpy_segments: Vec::new(),
                reduce_segments: Vec::new(),
                timer: 0.03e-6,
                progress_in_calls: !crate::params::DEFAULT_PROGRESS_IN_CALLS,
                rendezvous_send_received: true,
                flag_latency: Some(0.07e-6),
                datatype: crate::params::DatatypeCosts {
                    create: Some(0.5e-6),
                    pack_per_block: Some(2e-9),
                    ..Default::default()
                },
                heap: crate::params::HeapParams {
                    page_fault: Some(1.9e-6),
                    page_size: 65536,
                    allocator: crate::heap::Allocator::Retain,
                },
            },
            network: Some(ChannelFile {
                comment: Some("the base".into()),
                base: params(5e-6, 1e-8),
                mtu: Some(1500),
                duplex: Some(crate::params::Duplex::HALF),
                duplex_scope: None,
                eager_limit: 65_536,
                control_bytes: 64,
                segments: vec![SegmentFile {
                    comment: None,
                    from: 1024,
                    params: LogGpParams {
                        send_overhead: 3e-6,
                        latency_per_byte: 2.5e-10,
                        ..params(7.5e-6, 0.0)
                    },
                    duplex: crate::params::Duplex::partial(0.25),
                }],
                node_gap: 6e-9,
                node_bandwidth: None,
                measured_to: Some(128 << 20),
                send_overhead_per_byte: 1.7e-10,
                written: Some(WrittenFile {
                    comment: Some("data just written".into()),
                    base: params(5e-6, 1e-8),
                    segments: vec![SegmentFile {
                        comment: None,
                        from: 16384,
                        params: params(9e-6, 2e-8),
                        duplex: None,
                    }],
                }),
            }),
            shm: None,
            socket: None,
            collectives: vec![("library".into(), "openmpi".into())],
        };
        let text = machine_file(&file);
        assert!(
            text.starts_with("# written by a test\n#\n\nname = \"written\"\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "\n[network]\n# the base\nlatency = \"5 us\"\nbandwidth = \"100 MB/s\"\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("\n[[network.segments]]\nfrom = \"1 KiB\"\nlatency = \"7.5 us\"\ngap_per_byte = \"0 ns\"\nsend_overhead = \"3 us\"\nlatency_per_byte = \"0.25 ns\"\nduplex = 0.25\n\n"),
            "{text}"
        );
        let spec = match crate::config::parse(&text, "written.toml") {
            Ok(spec) => spec,
            Err(err) => panic!("{err}\n{text}"),
        };
        assert_eq!(spec.name, "written");
        assert_eq!(spec.description, "a \"quoted\" word");
        assert_eq!(spec.node.cpu_rate, 1.5);
        assert_eq!(spec.node.memcpy_bandwidth, 2e9);
        assert_eq!(spec.node.reduce_bandwidth, Some(5e8));
        assert_eq!(spec.node.reduce_overhead, 0.12e-6);
        assert_eq!(spec.node.timer, 0.03e-6);
        assert!(spec.node.rendezvous_send_received);
        assert_eq!(spec.node.flag_latency, Some(0.07e-6));
        assert_eq!(spec.node.datatype.create, Some(0.5e-6));
        assert_eq!(spec.node.datatype.pack_per_block, Some(2e-9));
        assert_eq!(spec.node.datatype.pack, None);
        assert_eq!(
            spec.node.progress_in_calls,
            !crate::params::DEFAULT_PROGRESS_IN_CALLS
        );
        let net = &spec.network;
        assert_eq!(net.mtu, Some(1500));
        assert_eq!(net.duplex, crate::params::Duplex::HALF);
        assert!((net.node_gap - 6e-9).abs() < 1e-18, "{}", net.node_gap);
        assert!(
            (net.send_overhead_per_byte - 1.7e-10).abs() < 1e-19,
            "{}",
            net.send_overhead_per_byte
        );
        assert_eq!((net.eager_limit, net.control_bytes), (65_536, 64));
        assert_eq!(net.measured_to, Some(128 << 20));
        assert!((net.latency - 5e-6).abs() < 1e-18);
        assert!((net.gap_per_byte - 1e-8).abs() < 1e-20);
        assert_eq!(net.segments.len(), 1);
        let segment = &net.segments[0];
        assert_eq!(segment.from, 1024);
        assert!((segment.params.send_overhead - 3e-6).abs() < 1e-18);
        // Not written, so inherited from the base.
        assert!((segment.params.recv_overhead - 2e-6).abs() < 1e-18);
        assert_eq!(segment.params.gap_per_byte, 0.0);
        assert!((segment.params.latency_per_byte - 2.5e-10).abs() < 1e-22);
        assert_eq!(segment.duplex, crate::params::Duplex::partial(0.25));
        assert_eq!(net.duplex_for(512), crate::params::Duplex::HALF);
        assert_eq!(net.duplex_for(1024), segment.duplex.unwrap_or_default());
        assert_eq!(net.latency_per_byte, 0.0);
        assert_eq!(spec.collectives.library, sim_core::coll::Library::OpenMpi5);
        // One socket: the node section is as before.
        assert!(!text.contains("sockets"), "{text}");
        // The written channel: its own segments, the channel's the rest.
        assert!(
            text.contains("\n[network.written]\n# data just written\nlatency = \"5 us\"\n"),
            "{text}"
        );
        assert!(
            text.contains("\n[[network.written.segments]]\nfrom = \"16 KiB\"\nlatency = \"9 us\"\nbandwidth = \"50 MB/s\"\n"),
            "{text}"
        );
        let written = net.written.as_deref().expect("a written channel");
        assert_eq!(written.segments.len(), 1);
        assert_eq!(written.segments[0].from, 16384);
        assert!((written.params_for(16384).latency - 9e-6).abs() < 1e-18);
        assert!((written.params_for(100).latency - 5e-6).abs() < 1e-18);
        assert_eq!(written.segments[0].duplex, None);
        assert_eq!((written.mtu, written.eager_limit), (Some(1500), 65_536));
        assert_eq!(written.duplex, crate::params::Duplex::HALF);
        assert!(written.written.is_none());
        assert!(std::ptr::eq(net.for_data(false), net));
        assert!(std::ptr::eq(net.for_data(true), written));
    }

    #[test]
    fn sockets_and_the_socket_channel_read_back() {
        let channel = |latency: f64, eager_limit: u64| ChannelFile {
            comment: None,
            base: LogGpParams {
                latency,
                send_overhead: 0.25e-6,
                recv_overhead: 0.5e-6,
                gap: 0.0,
                gap_per_byte: 1e-10,
                latency_per_byte: 0.0,
            },
            mtu: None,
            duplex: None,
            duplex_scope: None,
            eager_limit,
            control_bytes: 32,
            segments: Vec::new(),
            node_gap: 0.0,
            node_bandwidth: None,
            measured_to: None,
            send_overhead_per_byte: 0.0,
            written: None,
        };
        let mut socket = channel(0.75e-6, 8192);
        socket.duplex = Some(crate::params::Duplex::HALF);
        socket.segments.push(SegmentFile {
            comment: None,
            from: 4096,
            params: LogGpParams {
                latency: 1.5e-6,
                ..socket.base
            },
            duplex: None,
        });
        let mut shm = channel(0.5e-6, 16_384);
        shm.duplex = crate::params::Duplex::partial(0.6);
        shm.duplex_scope = Some(DuplexScope::Rank);
        let file = MachineFile {
            header: Vec::new(),
            name: "sockets".into(),
            description: String::new(),
            model: CommModel::Smp,
            node: NodeParams {
                cpu_rate: 1.0,
                memcpy_bandwidth: 1e9,
                ranks_per_node: 8,
                placement: Placement::Cyclic,
                sockets: 2,
                socket_placement: Placement::Cyclic,
                reduce_bandwidth: None,
                reduce_overhead: 0.0,
                memcpy_segments: Vec::new(),
                reduce_segments: Vec::new(),
                timer: 0.0,
                progress_in_calls: crate::params::DEFAULT_PROGRESS_IN_CALLS,
                rendezvous_send_received: false,
                flag_latency: None,
                datatype: crate::params::DatatypeCosts::default(),
                heap: crate::params::HeapParams::default(),
            },
            network: Some(channel(5e-6, 65_536)),
            shm: Some(shm),
            socket: Some(socket),
            collectives: Vec::new(),
        };
        let text = machine_file(&file);
        assert!(
            text.contains("placement = \"cyclic\"\nsockets = 2\nsocket_placement = \"cyclic\"\n"),
            "{text}"
        );
        assert!(text.contains("\n[socket]\n"), "{text}");
        assert!(text.contains("\n[[socket.segments]]\n"), "{text}");
        let spec = match crate::config::parse(&text, "sockets.toml") {
            Ok(spec) => spec,
            Err(err) => panic!("{err}\n{text}"),
        };
        assert_eq!(spec.node.sockets, 2);
        assert_eq!(spec.node.socket_placement, Placement::Cyclic);
        let Some(socket) = &spec.socket else {
            panic!("no [socket] read back\n{text}")
        };
        assert!((socket.latency - 0.75e-6).abs() < 1e-18);
        assert_eq!((socket.eager_limit, socket.control_bytes), (8192, 32));
        assert_eq!(socket.duplex, crate::params::Duplex::HALF);
        assert_eq!(socket.segments.len(), 1);
        assert!((socket.segments[0].params.latency - 1.5e-6).abs() < 1e-18);
        let Some(shm) = &spec.shm else {
            panic!("no [shm] read back\n{text}")
        };
        assert_eq!(shm.eager_limit, 16_384);
        assert_eq!(
            shm.duplex,
            crate::params::Duplex::partial(0.6).unwrap_or_default()
        );
        assert_eq!(shm.duplex_scope, DuplexScope::Rank);
        assert_eq!(socket.duplex_scope, DuplexScope::Node);
        assert!(
            text.contains("\nduplex = 0.6\nduplex_scope = \"rank\"\n"),
            "{text}"
        );
    }
}
