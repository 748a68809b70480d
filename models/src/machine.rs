//! `LogGpMachine`: the ParJava Hardware and SMP models on LogGP.

use std::collections::HashMap;
use std::path::Path;

use sim_core::model::{Machine, MessageKind, Transfer};

use crate::config::{self, MachineSpec};
use crate::error::MachineError;
use crate::params::{ChannelParams, CommModel, Duplex, LogGpParams, NodeParams, Placement};
use crate::units::{format_bandwidth, format_size, format_time};

/// A sending channel whose "busy until" time serialises its messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Channel {
    /// The NIC of a node, shared by all its ranks.
    Nic(u32),
    /// The shared-memory channel of one sending rank.
    Shm(u32),
}

/// A machine in the LogGP model with ParJava's MTU fragmentation, in either
/// of ParJava's communication models: Hardware (every rank its own node) or
/// SMP (ranks placed on nodes of `ranks_per_node`; pairs on one node use the
/// shared-memory parameters, the others the network).
///
/// Static parameters come from a [`MachineSpec`]; the dynamic state is one
/// "busy until" time per node NIC and, in the SMP model, per rank's
/// shared-memory channel: `O(nodes + ranks)` `f64`s.
#[derive(Debug, Clone)]
pub struct LogGpMachine {
    spec: MachineSpec,
    /// Rank count of the current run (`reset`).
    ranks: u32,
    /// `ceil(ranks / ranks_per_node)`, at least 1.
    nodes: u32,
    /// Per node: the time its NIC can start the next message.
    nic_busy: Vec<f64>,
    /// Per rank (SMP model with `[shm]` only): the time its shared-memory
    /// channel can start the next message.
    shm_busy: Vec<f64>,
    /// Channels outside the ranges `reset` sized for (an engine that sends
    /// from a rank it did not announce); kept apart so that a stray large
    /// rank number never allocates a huge vector.
    overflow_busy: HashMap<Channel, f64>,
}

/// The file name errors carry for a spec built in code ([`LogGpMachine::new`]).
pub const IN_MEMORY_FILE: &str = "<in-memory machine spec>";

const US: f64 = 1e-6;
const NS: f64 = 1e-9;
const GB: f64 = 1e9;
const KIB: u64 = 1024;

impl LogGpMachine {
    /// A machine from a spec built in code; validated as a file would be
    /// (errors carry the file name [`IN_MEMORY_FILE`]).
    pub fn new(spec: MachineSpec) -> Result<Self, MachineError> {
        config::validate(&spec, IN_MEMORY_FILE)?;
        Ok(Self::from_valid_spec(spec))
    }

    /// Parses a machine file's text; `file_name` is used in error messages.
    pub fn from_toml_str(text: &str, file_name: &str) -> Result<Self, MachineError> {
        config::parse(text, file_name).map(Self::from_valid_spec)
    }

    /// Reads and parses a machine file.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, MachineError> {
        let path = path.as_ref();
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| MachineError::Io {
            file: file.clone(),
            source,
        })?;
        Self::from_toml_str(&text, &file)
    }

    fn from_valid_spec(spec: MachineSpec) -> Self {
        let mut machine = Self {
            spec,
            ranks: 0,
            nodes: 1,
            nic_busy: Vec::new(),
            shm_busy: Vec::new(),
            overflow_busy: HashMap::new(),
        };
        machine.reset(0);
        machine
    }

    /// The built-in default: a present-day InfiniBand HDR cluster, used when
    /// no machine file is given. Shipped as
    /// `examples/machines/default-infiniband.toml` (a test checks they agree).
    ///
    /// Numbers and where they come from:
    /// - **Network latency** ≈ 1 µs end to end (half a ping-pong
    ///   round trip), the typical `osu_latency` small-message result on HDR
    ///   ConnectX-6 (NVIDIA quotes "sub-600 ns" switch-to-switch; MPI adds
    ///   software on both sides). Split as `o_s = 0.2 µs`, `L = 0.6 µs`,
    ///   `o_r = 0.2 µs`, so `o_s + L + o_r = 1 µs`.
    /// - **Bandwidth** 24 GB/s: HDR is 4 lanes × 50 Gbit/s = 200 Gbit/s =
    ///   25 GB/s of signalling with 64b/66b encoding; `osu_bw` peaks at
    ///   about 24 GB/s, so `G = 1 / (24 GB/s) ≈ 41.7 ps/B`.
    /// - **Gap** `g = 5 ns`: ConnectX-6 is specified for up to 215 million
    ///   messages per second per adapter, ≈ 4.7 ns per message; the NIC is
    ///   shared by the 64 ranks of a node, so this is what limits a node's
    ///   message rate.
    /// - **MTU unlimited.** The InfiniBand link MTU is 4 KiB, but the HCA
    ///   segments a message in hardware and pipelines the packets; latency is
    ///   paid once per message, not once per packet. ParJava's stop-and-wait
    ///   fragmentation (`floor(n/MTU)·Time(Post(MTU)) + ...`) would charge
    ///   `o_s + L = 0.8 µs` per 4 KiB packet, i.e. 205 µs extra for 1 MiB,
    ///   against ≈ 44 µs for the whole transfer on real hardware.
    /// - **Eager limit** 64 KiB (issue #2); MPI libraries on InfiniBand
    ///   switch to rendezvous somewhere between 8 and 64 KiB by default.
    /// - **Control messages** 64 B: an RTS/CTS carries the envelope (source,
    ///   tag, communicator, size) and a remote key and address, a few tens of
    ///   bytes.
    /// - **Node**: 64 ranks per node (two 32-core sockets, e.g. AMD EPYC 7543
    ///   or Intel Xeon 8358), block placement (what `srun`/`mpirun` do by
    ///   default), `cpu_rate = 1` (kernel costs are taken as measured on this
    ///   node), `memcpy` 10 GB/s for one core (single-thread copy bandwidth of
    ///   a DDR4-3200 server core is 10–15 GB/s).
    /// - **Shared memory**: ≈ 0.3 µs latency (intra-node `osu_latency` with
    ///   MPICH/Open MPI shared-memory transports is 0.2–0.4 µs), split
    ///   `o_s = 0.1 µs`, `L = 0.1 µs`, `o_r = 0.1 µs`; 10 GB/s (one
    ///   single-copy transfer through CMA/XPMEM runs at about a core's copy
    ///   bandwidth); `g = 0`, MTU unlimited, eager limit 64 KiB, control
    ///   messages 64 B.
    pub fn builtin_default() -> Self {
        Self::from_valid_spec(Self::builtin_spec())
    }

    /// The spec of [`LogGpMachine::builtin_default`].
    pub fn builtin_spec() -> MachineSpec {
        MachineSpec {
            name: "default-infiniband".into(),
            description: "present-day InfiniBand HDR cluster: 2 x 32-core nodes, 200 Gbit/s HDR, \
                          64 KiB eager limit (parsim's built-in default)"
                .into(),
            model: CommModel::Smp,
            node: NodeParams {
                cpu_rate: 1.0,
                memcpy_bandwidth: 10.0 * GB,
                ranks_per_node: 64,
                placement: Placement::Block,
            },
            network: ChannelParams {
                latency: 0.6 * US,
                send_overhead: 0.2 * US,
                recv_overhead: 0.2 * US,
                gap: 5.0 * NS,
                gap_per_byte: 1.0 / (24.0 * GB),
                mtu: None,
                eager_limit: 64 * KIB,
                control_bytes: 64,
                segments: Vec::new(),
                duplex: Duplex::Full,
            },
            shm: Some(ChannelParams {
                latency: 0.1 * US,
                send_overhead: 0.1 * US,
                recv_overhead: 0.1 * US,
                gap: 0.0,
                gap_per_byte: 1.0 / (10.0 * GB),
                mtu: None,
                eager_limit: 64 * KIB,
                control_bytes: 64,
                segments: Vec::new(),
                duplex: Duplex::Full,
            }),
        }
    }

    /// The machine's name.
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// The machine's free-text description (may be empty).
    pub fn description(&self) -> &str {
        &self.spec.description
    }

    /// The static description.
    pub fn spec(&self) -> &MachineSpec {
        &self.spec
    }

    /// Hardware or SMP.
    pub fn model(&self) -> CommModel {
        self.spec.model
    }

    /// The node model and placement.
    pub fn node(&self) -> &NodeParams {
        &self.spec.node
    }

    /// The network parameters.
    pub fn network(&self) -> &ChannelParams {
        &self.spec.network
    }

    /// The shared-memory parameters, if the machine has them.
    pub fn shm(&self) -> Option<&ChannelParams> {
        self.spec.shm.as_ref()
    }

    /// Ranks per node (1 in the Hardware model).
    pub fn ranks_per_node(&self) -> u32 {
        self.spec.node.ranks_per_node.max(1)
    }

    /// Rank count of the current run (the last `reset`).
    pub fn ranks(&self) -> u32 {
        self.ranks
    }

    /// Number of nodes of the current run: `ceil(ranks / ranks_per_node)`,
    /// at least 1.
    pub fn nodes(&self) -> u32 {
        self.nodes
    }

    /// The node `rank` runs on: `rank / p` for block placement, `rank %
    /// nodes` for cyclic placement (with `nodes` from the last `reset`).
    pub fn node_of(&self, rank: u32) -> u32 {
        match self.spec.node.placement {
            Placement::Block => rank / self.ranks_per_node(),
            Placement::Cyclic => rank % self.nodes.max(1),
        }
    }

    /// Whether messages from `src` to `dst` go through shared memory: SMP
    /// model, shared-memory parameters present, same node (ParJava section 3,
    /// class `SMP`).
    pub fn uses_shm(&self, src: u32, dst: u32) -> bool {
        self.spec.model == CommModel::Smp
            && self.spec.shm.is_some()
            && self.node_of(src) == self.node_of(dst)
    }

    /// The channel set a message from `src` to `dst` uses.
    pub fn channel_params(&self, src: u32, dst: u32) -> &ChannelParams {
        match &self.spec.shm {
            Some(shm) if self.uses_shm(src, dst) => shm,
            _ => &self.spec.network,
        }
    }

    /// Bytes of a rendezvous control message between `src` and `dst` (the
    /// pair's channel set).
    pub fn control_bytes_between(&self, src: u32, dst: u32) -> u64 {
        self.channel_params(src, dst).control_bytes
    }

    /// A one-paragraph summary for the CLI.
    pub fn describe(&self) -> String {
        let spec = &self.spec;
        let node = &spec.node;
        let mut text = format!("{}: ", spec.name);
        if !spec.description.is_empty() {
            text.push_str(spec.description.trim_end_matches('.'));
            text.push_str(". ");
        }
        match spec.model {
            CommModel::Hardware => text.push_str("Hardware model, every rank on its own node"),
            CommModel::Smp => text.push_str(&format!(
                "SMP model, {} ranks per node, {} placement",
                node.ranks_per_node,
                node.placement.as_str()
            )),
        }
        text.push_str(&format!(
            "; node: cpu_rate {}, memcpy {}; network: {}",
            node.cpu_rate,
            format_bandwidth(node.memcpy_bandwidth),
            describe_channel(&spec.network)
        ));
        if let (CommModel::Smp, Some(shm)) = (spec.model, &spec.shm) {
            text.push_str(&format!("; shared memory: {}", describe_channel(shm)));
        }
        text.push('.');
        text
    }

    fn busy_slot(&mut self, channel: Channel) -> &mut f64 {
        let (slots, index) = match channel {
            Channel::Nic(node) => (&mut self.nic_busy, node),
            Channel::Shm(rank) => (&mut self.shm_busy, rank),
        };
        match slots.get_mut(index as usize) {
            Some(slot) => slot,
            None => self
                .overflow_busy
                .entry(channel)
                .or_insert(f64::NEG_INFINITY),
        }
    }
}

fn describe_channel(channel: &ChannelParams) -> String {
    let mtu = channel
        .mtu
        .map_or_else(|| "unlimited".to_owned(), format_size);
    let mut text = format!(
        "{}, MTU {mtu}, eager limit {}, control messages {}, {} duplex",
        describe_loggp(&channel.base()),
        format_size(channel.eager_limit),
        format_size(channel.control_bytes),
        channel.duplex.as_str(),
    );
    if let Some(first) = channel.segments.first() {
        text.push_str(&format!(
            " (these below {}); segments by message size:",
            format_size(first.from)
        ));
        for (index, segment) in channel.segments.iter().enumerate() {
            let separator = if index == 0 { " " } else { "; " };
            text.push_str(&format!(
                "{separator}from {}: {}",
                format_size(segment.from),
                describe_loggp(&segment.params)
            ));
        }
    }
    text
}

fn describe_loggp(params: &LogGpParams) -> String {
    format!(
        "L {}, o_s {}, o_r {}, g {}, {} (G {}/B)",
        format_time(params.latency),
        format_time(params.send_overhead),
        format_time(params.recv_overhead),
        format_time(params.gap),
        format_bandwidth(params.bandwidth()),
        format_time(params.gap_per_byte),
    )
}

impl Machine for LogGpMachine {
    /// `nominal / cpu_rate` (ParJava section 3: `//CPURate`, the ratio of the
    /// modelled processor's performance to the reference one).
    fn compute_seconds(&self, _rank: u32, nominal: f64) -> f64 {
        nominal / self.spec.node.cpu_rate
    }

    /// `bytes / memcpy_bandwidth` (ParJava table 1: `//memcpy`, the time to
    /// copy one byte in a node's memory).
    fn copy_seconds(&self, _rank: u32, bytes: u64) -> f64 {
        bytes as f64 / self.spec.node.memcpy_bandwidth
    }

    fn eager_limit(&self, src: u32, dst: u32) -> u64 {
        self.channel_params(src, dst).eager_limit
    }

    /// The pair's channel set's control-message size.
    fn control_bytes(&self, src: u32, dst: u32) -> u64 {
        self.control_bytes_between(src, dst)
    }

    /// `o_s` of the pair's channel set (LogGP), from the segment of the
    /// message's size.
    fn send_overhead(&self, src: u32, dst: u32, bytes: u64) -> f64 {
        self.channel_params(src, dst)
            .params_for(bytes)
            .send_overhead
    }

    /// `o_r` of the pair's channel set (LogGP), from the segment of the
    /// message's size.
    fn recv_overhead(&self, src: u32, dst: u32, bytes: u64) -> f64 {
        self.channel_params(src, dst)
            .params_for(bytes)
            .recv_overhead
    }

    /// With `P = post_time(n)` of the pair's channel set (see
    /// [`ChannelParams::post_time`]) and the sending channel (the NIC of
    /// `src`'s node for the network, `src`'s own channel for shared memory):
    ///
    /// - `start = max(ready, busy[channel])`
    /// - `arrival = start + P`
    /// - `busy[channel] = start + max(g, P − L)`: the next message of the
    ///   channel starts no sooner than g after this one (LogGP's gap), nor
    ///   before this one's last byte has left (LogGP's G serialising one NIC).
    /// - `cpu_free`, for eager messages and rendezvous RTS/CTS:
    ///   `start + (P − T(last packet)) + o_s`: the CPU is free once it has
    ///   handed over the last packet (ParJava's Post: "the buffer is passed to
    ///   an abstract channel, after which MPI no longer controls the sending");
    ///   for rendezvous data: `arrival − L`, the user buffer is busy until its
    ///   last byte has left.
    ///
    /// Per pair, arrivals never decrease (the trait's non-overtaking
    /// contract): a pair always uses the same channel, the next message
    /// starts at `start' >= start + P − L`, and `P' >= L`, so
    /// `start' + P' >= start + P`.
    fn transfer(
        &mut self,
        src: u32,
        dst: u32,
        bytes: u64,
        kind: MessageKind,
        ready: f64,
    ) -> Transfer {
        let shm = self.uses_shm(src, dst);
        let params = self.channel_params(src, dst);
        let segment = params.params_for(bytes);
        let (latency, gap, send_overhead) = (segment.latency, segment.gap, segment.send_overhead);
        let (before_last, last) = params.post_split(bytes);
        let post = before_last + last;
        let channel = if shm {
            Channel::Shm(src)
        } else {
            Channel::Nic(self.node_of(src))
        };

        let busy = self.busy_slot(channel);
        let start = ready.max(*busy);
        let arrival = start + post;
        *busy = start + gap.max(post - latency);
        let cpu_free = match kind {
            MessageKind::Eager | MessageKind::RendezvousRts | MessageKind::RendezvousCts => {
                start + before_last + send_overhead
            }
            // `post >= L`, so this is `>= start` up to rounding; the max
            // keeps the trait's "never before the time passed in" exact.
            MessageKind::RendezvousData => (arrival - latency).max(start),
        };
        Transfer { cpu_free, arrival }
    }

    /// Clears every busy time and sizes the state for `ranks` ranks:
    /// `ceil(ranks / p)` NICs and, in the SMP model with shared memory, one
    /// channel per rank.
    fn reset(&mut self, ranks: u32) {
        self.ranks = ranks;
        self.nodes = ranks.div_ceil(self.ranks_per_node()).max(1);
        let shm_channels = if self.spec.model == CommModel::Smp && self.spec.shm.is_some() {
            ranks as usize
        } else {
            0
        };
        self.nic_busy.clear();
        self.nic_busy.resize(self.nodes as usize, f64::NEG_INFINITY);
        self.shm_busy.clear();
        self.shm_busy.resize(shm_channels, f64::NEG_INFINITY);
        self.overflow_busy.clear();
    }
}

impl Default for LogGpMachine {
    fn default() -> Self {
        Self::builtin_default()
    }
}
