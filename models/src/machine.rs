//! `LogGpMachine`: the ParJava Hardware and SMP models on LogGP.

use std::collections::HashMap;
use std::path::Path;

use sim_core::model::{Machine, MachineDesc, MessageKind, Transfer};
use strength_reduce::StrengthReducedU32;

use crate::busy::Intervals;
use crate::config::{self, MachineSpec};
use crate::error::MachineError;
use crate::heap::GlibcHeap;
use crate::params::{
    ChannelParams, CommModel, Duplex, DuplexScope, LogGpParams, NodeParams, Placement, RateSegment,
};
use crate::units::{format_bandwidth, format_size, format_time};

/// A "free at" timeline: the time from which the resource can take the next
/// message. A NIC (or memory channel) has a transmit and a receive timeline;
/// in half duplex the two directions also reserve their byte intervals
/// ([`HalfDuplex`]) so that they never overlap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Timeline {
    /// The transmit side of a node's NIC (hardware model: one rank's; in
    /// the SMP model the node's ranks share it through
    /// [`Channel::NicShared`]'s calendars).
    NicTx(u32),
    /// The receive side of a node's NIC.
    NicRx(u32),
    /// The shared-memory channel of one sending rank (full duplex; also
    /// its messages to the node's other sockets when `[socket]` is full
    /// duplex).
    ShmTx(u32),
    /// The shared-memory channel of one receiving rank (full duplex).
    ShmRx(u32),
    /// The sending side of a node's memory channel, shared by all its ranks
    /// (half duplex; the `[shm]` and `[socket]` levels that are not full
    /// duplex share it).
    ShmNodeTx(u32),
    /// The receiving side of a node's memory channel (half duplex).
    ShmNodeRx(u32),
    /// One rank's own way into its node's shared network adapter (SMP
    /// model): its per-message gap `g` and its bytes, LogGP's per-processor
    /// gap.
    RankTx(u32),
    /// One rank's own way out of its node's adapter.
    RankRx(u32),
    /// A node's memory system, shared by the bytes of all shared-memory
    /// messages of its ranks (`[shm] node_bandwidth`).
    ShmMem(u32),
    /// One rank's messages to itself, in order (kept in the overflow map:
    /// few ranks send to themselves, once per call where they do).
    SelfCopy(u32),
}

/// Where two ranks sit relative to each other: the level of the machine a
/// message between them crosses. Which channel set it uses follows from it
/// ([`LogGpRun::channel_params`]): `[shm]` inside a socket, `[socket]`
/// between two sockets of a node (`[shm]` when the machine has no
/// `[socket]`), `[network]` between nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Level {
    /// Both ranks on one socket of one node (or one rank).
    SameSocket,
    /// The two ranks on different sockets of one node.
    CrossSocket,
    /// The two ranks on different nodes.
    Network,
}

/// Which half-duplex channel: a node's NIC or memory channel, or a rank's
/// own shared-memory channel (its core's copies, `duplex_scope = "rank"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Channel {
    Nic(u32),
    Shm(u32),
    ShmRank(u32),
    /// A node's shared adapter in the SMP model: the intervals its ranks'
    /// messages occupy it, per direction, for first-fit reservation.
    NicShared(u32),
}

/// The byte intervals of a machine's half-duplex channels.
#[derive(Debug, Clone, Default)]
struct Calendars {
    /// Per node, half-duplex network only: the NIC's byte intervals.
    nic: Vec<HalfDuplex>,
    /// Per node, SMP model with a half-duplex `[shm]` or `[socket]` only:
    /// the memory channel's byte intervals.
    shm: Vec<HalfDuplex>,
    /// Per rank, SMP model with a `[shm]` or `[socket]` not full duplex
    /// per rank (`duplex_scope = "rank"`) only: the byte intervals of the
    /// rank's own sends and receives inside its node.
    shm_rank: Vec<HalfDuplex>,
    /// Per node, SMP model only: the intervals the node's shared adapter
    /// is taken by its ranks' messages (`node_gap + W`), per direction.
    nic_shared: Vec<HalfDuplex>,
    /// Byte intervals outside the ranges `reset` sized for, as
    /// `LogGpRun::overflow`.
    overflow: HashMap<Channel, HalfDuplex>,
}

/// The byte intervals a half-duplex channel has reserved, per direction.
#[derive(Debug, Clone, Default)]
struct HalfDuplex {
    /// Bytes leaving the node.
    tx: Intervals,
    /// Bytes arriving at the node.
    rx: Intervals,
}

/// A machine in the LogGP model with ParJava's MTU fragmentation, in either
/// of ParJava's communication models: Hardware (every rank its own node) or
/// SMP (ranks placed on nodes of `ranks_per_node`; pairs on one node use the
/// shared-memory parameters, the others the network).
///
/// This is the machine's description, a validated [`MachineSpec`]:
/// immutable, `Send + Sync`, parsed once. [`MachineDesc::start`] hands out
/// a [`LogGpRun`] per run, which holds the dynamic state.
#[derive(Debug, Clone)]
pub struct LogGpMachine {
    /// Boxed: a run state and `AnyMachine` stay small.
    spec: Box<MachineSpec>,
}

/// One run on a [`LogGpMachine`]: the description and the run's set of
/// "free at" timelines (see [`Machine::transfer`] below): per node NIC a
/// transmit and a receive one, and in the SMP model per rank a
/// shared-memory send and receive one (full duplex) or per node two (half
/// duplex): `O(nodes + ranks)` `f64`s. A half-duplex channel also keeps the
/// byte intervals of its transfers still in flight, per direction.
#[derive(Debug, Clone)]
pub struct LogGpRun<'a> {
    machine: &'a LogGpMachine,
    /// Rank count of the current run (`reset`).
    ranks: u32,
    /// `ceil(ranks / ranks_per_node)`, at least 1.
    nodes: u32,
    /// Divisions by `ranks_per_node`, `nodes` and the ranks per socket as
    /// multiplications (Lemire, Kaser and Kurz, "Faster remainder by
    /// direct computation", 2019): `node_of` and `socket_of` run several
    /// times per message, and a hardware `div` was half of the pair's
    /// channel lookup in heat.mpl's profile. Set by `reset`.
    per_node: StrengthReducedU32,
    per_cycle: StrengthReducedU32,
    per_socket: StrengthReducedU32,
    /// Per node, hardware model only: [`Timeline::NicTx`].
    nic_tx: Vec<f64>,
    /// Per node, hardware model only: [`Timeline::NicRx`].
    nic_rx: Vec<f64>,
    /// Per rank, SMP model with a full-duplex `[shm]` or `[socket]` only: [`Timeline::ShmTx`].
    shm_tx: Vec<f64>,
    /// Per rank, SMP model with a full-duplex `[shm]` or `[socket]` only: [`Timeline::ShmRx`].
    shm_rx: Vec<f64>,
    /// Per node, SMP model with a `[shm]` or `[socket]` not full duplex only:
    /// [`Timeline::ShmNodeTx`].
    shm_node_tx: Vec<f64>,
    /// Per node, SMP model with a `[shm]` or `[socket]` not full duplex only:
    /// [`Timeline::ShmNodeRx`].
    shm_node_rx: Vec<f64>,
    /// Per rank, SMP model only: [`Timeline::RankTx`].
    rank_tx: Vec<f64>,
    /// Per rank, SMP model only: [`Timeline::RankRx`].
    rank_rx: Vec<f64>,
    /// Per node, SMP model with `[shm] node_bandwidth` only:
    /// [`Timeline::ShmMem`].
    shm_mem: Vec<f64>,
    /// Timelines outside the ranges `reset` sized for (an engine that sends
    /// from a rank it did not announce); kept apart so that a stray large
    /// rank number never allocates a huge vector.
    overflow: HashMap<Timeline, f64>,
    /// The byte intervals of half-duplex channels (boxed: most machines
    /// are full duplex).
    busy: Box<Calendars>,
    /// Per rank that has allocated a collective's temporary buffer, its
    /// process's heap (`[node] page_fault` given only): kept in a map so
    /// that runs without such buffers, and ranks that never allocate, pay
    /// nothing (boxed: the run state stays small).
    heaps: Box<Heaps>,
}

/// The heaps of a run's ranks that have allocated a collective's
/// temporary buffer (`LogGpRun::heaps`).
#[derive(Debug, Clone, Default)]
struct Heaps {
    by_rank: HashMap<u32, GlibcHeap>,
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

    /// The same machine with another number of ranks per node (a job's
    /// placement, like `mpirun -ppn`): 1 makes every rank its own node's
    /// only process; more needs the SMP model with a `[shm]` section.
    pub fn with_ranks_per_node(&self, ranks_per_node: u32) -> Result<Self, MachineError> {
        self.with_ranks_per_node_in(ranks_per_node, IN_MEMORY_FILE)
    }

    /// [`Self::with_ranks_per_node`] for the machine read from `origin` (a
    /// file's name, or "the built-in machine"), which errors name.
    pub fn with_ranks_per_node_in(
        &self,
        ranks_per_node: u32,
        origin: &str,
    ) -> Result<Self, MachineError> {
        let mut spec = (*self.spec).clone();
        spec.node.ranks_per_node = ranks_per_node;
        if ranks_per_node > 1 && spec.model == CommModel::Hardware {
            spec.model = CommModel::Smp;
        }
        config::validate(&spec, origin)?;
        Ok(Self::from_valid_spec(spec))
    }

    /// Parses a machine file's text; `file_name` is used in error messages.
    pub fn from_toml_str(text: &str, file_name: &str) -> Result<Self, MachineError> {
        config::parse(text, file_name).map(Self::from_valid_spec)
    }

    /// Reads and parses a machine file.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, MachineError> {
        let path = path.as_ref();
        let (file, text) = config::read_file(path)?;
        Self::from_toml_str(&text, &file)
    }

    /// A machine from a spec that has passed `config::validate`.
    pub(crate) fn from_spec(spec: MachineSpec) -> Self {
        Self::from_valid_spec(spec)
    }

    fn from_valid_spec(spec: MachineSpec) -> Self {
        Self {
            spec: Box::new(spec),
        }
    }

    /// The same machine with the eager limit of every channel set (network
    /// and shared memory) set to `limit`. With 0 every message uses the
    /// rendezvous protocol, i.e. every send waits for its receive: the zero
    /// buffering of `parsim check`.
    #[must_use]
    pub fn with_eager_limit(&self, limit: u64) -> Self {
        let mut spec = (*self.spec).clone();
        spec.network.eager_limit = limit;
        for channel in [&mut spec.shm, &mut spec.socket].into_iter().flatten() {
            channel.eager_limit = limit;
        }
        Self::from_valid_spec(spec)
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
                sockets: 1,
                socket_placement: Placement::Block,
                reduce_bandwidth: None,
                reduce_overhead: 0.0,
                memcpy_segments: Vec::new(),
                reduce_segments: Vec::new(),
                timer: 0.0,
                flag_latency: None,
                datatype: crate::params::DatatypeCosts::default(),
                heap: crate::params::HeapParams::default(),
                progress_in_calls: crate::params::DEFAULT_PROGRESS_IN_CALLS,
                rendezvous_send_received: false,
            },
            network: ChannelParams {
                latency: 0.6 * US,
                send_overhead: 0.2 * US,
                recv_overhead: 0.2 * US,
                gap: 5.0 * NS,
                gap_per_byte: 1.0 / (24.0 * GB),
                latency_per_byte: 0.0,
                mtu: None,
                eager_limit: 64 * KIB,
                control_bytes: 64,
                segments: Vec::new(),
                duplex: Duplex::FULL,
                ..ChannelParams::default()
            },
            shm: Some(ChannelParams {
                latency: 0.1 * US,
                send_overhead: 0.1 * US,
                recv_overhead: 0.1 * US,
                gap: 0.0,
                gap_per_byte: 1.0 / (10.0 * GB),
                latency_per_byte: 0.0,
                mtu: None,
                eager_limit: 64 * KIB,
                control_bytes: 64,
                segments: Vec::new(),
                duplex: Duplex::FULL,
                ..ChannelParams::default()
            }),
            socket: None,
            collectives: sim_core::coll::CollConfig::default(),
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

    /// The parameters of a message between two sockets of a node, if the
    /// machine has them (`[socket]`).
    pub fn socket(&self) -> Option<&ChannelParams> {
        self.spec.socket.as_ref()
    }

    /// The channel sets by the index [`Machine::channel_of`] gives them
    /// (`SimReport::largest_message`): `[network]`, `[shm]`, `[socket]`,
    /// with their section names.
    pub fn channel_sets(&self) -> [(&'static str, Option<&ChannelParams>); 3] {
        [
            ("network", Some(&self.spec.network)),
            ("shm", self.spec.shm.as_ref()),
            ("socket", self.spec.socket.as_ref()),
        ]
    }

    /// Ranks per node (1 in the Hardware model).
    pub fn ranks_per_node(&self) -> u32 {
        self.spec.node.ranks_per_node.max(1)
    }

    /// Sockets per node (1 unless `node.sockets` says more).
    pub fn sockets(&self) -> u32 {
        self.spec.node.sockets.max(1)
    }

    /// Ranks per socket under block socket placement:
    /// `ceil(ranks_per_node / sockets)`, at least 1.
    pub fn ranks_per_socket(&self) -> u32 {
        self.ranks_per_node().div_ceil(self.sockets()).max(1)
    }

    /// What the machine file means, for `parsim machine`: the name and
    /// description, then a line per part (model and placement, node, each
    /// channel with a line per message-size segment, collectives).
    pub fn describe(&self) -> String {
        let spec = &self.spec;
        let node = &spec.node;
        let mut lines = Vec::new();
        let mut head = format!("{}:", spec.name);
        if !spec.description.is_empty() {
            head.push(' ');
            head.push_str(spec.description.trim_end_matches('.'));
            head.push('.');
        }
        lines.push(head);
        lines.push(match spec.model {
            CommModel::Hardware => "model: Hardware, every rank on its own node".to_owned(),
            CommModel::Smp => {
                let mut text = format!(
                    "model: SMP, {} ranks per node, {} placement",
                    node.ranks_per_node,
                    node.placement.as_str()
                );
                if node.sockets > 1 {
                    text.push_str(&format!(
                        ", {} sockets per node ({} placement on sockets, {} ranks per socket)",
                        node.sockets,
                        node.socket_placement.as_str(),
                        self.ranks_per_socket()
                    ));
                }
                text
            }
        });
        let mut node_line = format!(
            "node: cpu_rate {}, memcpy {}",
            node.cpu_rate,
            format_bandwidth(node.memcpy_bandwidth)
        );
        if let Some(rate) = node.reduce_bandwidth {
            node_line.push_str(&format!(", reductions at {}", format_bandwidth(rate)));
        }
        if node.reduce_overhead > 0.0 {
            node_line.push_str(&format!(
                ", {} per reduction step",
                crate::config::write::time_us(node.reduce_overhead)
            ));
        }
        if node.timer > 0.0 {
            node_line.push_str(&format!(
                ", {} per clock read",
                crate::config::write::time_us(node.timer)
            ));
        }
        let coll = &spec.collectives;
        let shm_colls = coll.shared_memory_on();
        match node.flag_latency {
            Some(t) => node_line.push_str(&format!(
                ", flags seen by another core after {}",
                crate::config::write::time_us(t)
            )),
            None if shm_colls => node_line.push_str(&format!(
                ", flags seen by another core after {} (assumed)",
                crate::config::write::time_us(crate::params::DEFAULT_FLAG_LATENCY)
            )),
            None => {}
        }
        let d = &node.datatype;
        if d.create.is_some()
            || d.create_per_block.is_some()
            || d.pack.is_some()
            || d.pack_per_block.is_some()
        {
            node_line.push_str(&format!(
                ", a derived datatype of k blocks created in {} + k x {}, packed in {} + k x {}{}",
                crate::config::write::time_us(d.create_seconds(0)),
                crate::config::write::time_us(d.create_seconds(1) - d.create_seconds(0)),
                crate::config::write::time_us(d.pack_seconds(0)),
                crate::config::write::time_us(d.pack_seconds(1) - d.pack_seconds(0)),
                if d.all_given() {
                    ""
                } else {
                    " (partly assumed)"
                }
            ));
        }
        if let Some(t) = node.heap.page_fault {
            node_line.push_str(&format!(
                ", a collective's temporary buffers fault in at {} per {} page of fresh memory ({} allocator)",
                crate::config::write::time_us(t),
                format_size(node.heap.page_size),
                node.heap.allocator.name()
            ));
        }
        if node.rendezvous_send_received {
            node_line.push_str(", a rendezvous send done when its data is received");
        }
        node_line.push_str(if node.progress_in_calls {
            ", rendezvous progress only inside MPI calls"
        } else {
            ", rendezvous progress at any time (async)"
        });
        lines.push(node_line);
        for (what, segments) in [
            ("copies", &node.memcpy_segments),
            ("reductions", &node.reduce_segments),
        ] {
            if segments.is_empty() {
                continue;
            }
            let parts: Vec<String> = segments
                .iter()
                .map(|s| {
                    let rate = if s.per_byte > 0.0 {
                        format_bandwidth(1.0 / s.per_byte)
                    } else {
                        "no cost per byte".to_owned()
                    };
                    if s.overhead > 0.0 {
                        format!(
                            "from {}: {} + {rate}",
                            format_size(s.from),
                            crate::config::write::time_us(s.overhead)
                        )
                    } else {
                        format!("from {}: {rate}", format_size(s.from))
                    }
                })
                .collect();
            lines.push(format!("{what} by size: {}", parts.join("; ")));
        }
        lines.extend(describe_channel("network", &spec.network));
        if let (CommModel::Smp, Some(shm)) = (spec.model, &spec.shm) {
            lines.extend(describe_channel("shared memory", shm));
        }
        if let (CommModel::Smp, Some(socket)) = (spec.model, &spec.socket) {
            lines.extend(describe_channel("between sockets of a node", socket));
        } else if spec.model == CommModel::Smp && node.sockets > 1 {
            lines.push("between sockets of a node: as shared memory".to_owned());
        }
        let mut coll_line = format!("collectives: {} selection rules", coll.library.name());
        for (kind, alg) in &coll.forced {
            coll_line.push_str(&format!(", {} forced to {}", kind.name(), alg.name()));
        }
        if shm_colls {
            coll_line.push_str(", inside a node through shared memory (release/gather)");
        }
        if coll.call_overhead > 0.0 || !coll.call_overhead_by_kind.is_empty() {
            coll_line.push_str(&format!(
                ", {} per call beyond its messages",
                crate::config::write::time_us(coll.call_overhead)
            ));
            let mut per: Vec<_> = coll.call_overhead_by_kind.clone();
            per.sort_by_key(|(k, _)| *k as usize);
            let named: Vec<String> = per
                .iter()
                .map(|(k, t)| format!("{} {}", k.name(), crate::config::write::time_us(*t)))
                .collect();
            if !named.is_empty() {
                coll_line.push_str(&format!(" ({})", named.join(", ")));
            }
        }
        lines.push(coll_line);
        let mut text = lines.join("\n");
        text.push('.');
        text
    }
}

impl MachineDesc for LogGpMachine {
    type Run<'a> = LogGpRun<'a>;

    fn start(&self, ranks: u32) -> LogGpRun<'_> {
        let mut run = LogGpRun {
            machine: self,
            ranks: 0,
            nodes: 1,
            per_node: StrengthReducedU32::new(self.ranks_per_node()),
            per_cycle: StrengthReducedU32::new(1),
            per_socket: StrengthReducedU32::new(self.ranks_per_socket()),
            nic_tx: Vec::new(),
            nic_rx: Vec::new(),
            shm_tx: Vec::new(),
            shm_rx: Vec::new(),
            shm_node_tx: Vec::new(),
            shm_node_rx: Vec::new(),
            rank_tx: Vec::new(),
            rank_rx: Vec::new(),
            shm_mem: Vec::new(),
            overflow: HashMap::new(),
            busy: Box::default(),
            heaps: Box::default(),
        };
        run.reset(ranks);
        run
    }
}

impl<'a> LogGpRun<'a> {
    /// The machine this run is on.
    pub fn machine(&self) -> &'a LogGpMachine {
        self.machine
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
        match self.machine.spec.node.placement {
            Placement::Block => rank / self.per_node,
            Placement::Cyclic => rank % self.per_cycle,
        }
    }

    /// `rank`'s index among the ranks of its node: `rank % p` for block
    /// placement, `rank / nodes` for cyclic placement (the order in which
    /// the node's ranks were dealt to it).
    pub fn local_index(&self, rank: u32) -> u32 {
        match self.machine.spec.node.placement {
            Placement::Block => rank % self.per_node,
            Placement::Cyclic => rank / self.per_cycle,
        }
    }

    /// The socket of its node that `rank` runs on, from its index `i` among
    /// the node's ranks: `i / ceil(p / sockets)` for block socket placement
    /// (consecutive ranks fill a socket, as `mpirun --map-by core
    /// --bind-to core` binds them), `i % sockets` for cyclic (dealt
    /// round-robin over the sockets, Open MPI's `--map-by socket`). 0 on a
    /// node of one socket.
    pub fn socket_of(&self, rank: u32) -> u32 {
        let sockets = self.machine.sockets();
        if sockets == 1 {
            return 0;
        }
        let local = self.local_index(rank);
        match self.machine.spec.node.socket_placement {
            Placement::Block => local / self.per_socket,
            Placement::Cyclic => local % sockets,
        }
    }

    /// Where `src` and `dst` sit relative to each other: on one socket of
    /// one node, on two sockets of one node, or on two nodes.
    pub fn level(&self, src: u32, dst: u32) -> Level {
        if self.node_of(src) != self.node_of(dst) {
            Level::Network
        } else if self.socket_of(src) != self.socket_of(dst) {
            Level::CrossSocket
        } else {
            Level::SameSocket
        }
    }

    /// Whether messages from `src` to `dst` stay inside their node (through
    /// `[shm]`, or `[socket]` between two sockets): SMP model,
    /// shared-memory parameters present, same node (ParJava section 3,
    /// class `SMP`).
    pub fn uses_shm(&self, src: u32, dst: u32) -> bool {
        self.machine.spec.model == CommModel::Smp
            && self.machine.spec.shm.is_some()
            && self.node_of(src) == self.node_of(dst)
    }

    /// The channel set a message from `src` to `dst` uses: `[network]`
    /// between nodes, `[socket]` between two sockets of a node when the
    /// machine has it, `[shm]` otherwise inside a node.
    pub fn channel_params(&self, src: u32, dst: u32) -> &ChannelParams {
        self.channel_set(src, dst).1
    }

    /// The pair's channel set and its index in
    /// [`LogGpMachine::channel_sets`] (0 `[network]`, 1 `[shm]`, 2 `[socket]`).
    fn channel_set(&self, src: u32, dst: u32) -> (usize, &ChannelParams) {
        let spec = &self.machine.spec;
        match (&spec.shm, &spec.socket) {
            (Some(shm), socket) if self.uses_shm(src, dst) => match socket {
                Some(socket) if self.level(src, dst) == Level::CrossSocket => (2, socket),
                _ => (1, shm),
            },
            _ => (0, &spec.network),
        }
    }

    /// Bytes of a rendezvous control message between `src` and `dst` (the
    /// pair's channel set).
    pub fn control_bytes_between(&self, src: u32, dst: u32) -> u64 {
        self.channel_params(src, dst).control_bytes
    }

    /// The (transmit, receive) timelines of a message from `src` to `dst`,
    /// and for a half-duplex channel the (sending, receiving) channels whose
    /// byte intervals the message must respect. Inside a node (`shm`) the
    /// duplex of the pair's channel set (`[shm]` or `[socket]`) chooses:
    /// full duplex, the ranks' own send and receive timelines; otherwise
    /// the node's memory channel, one for both levels, or with
    /// `duplex_scope = "rank"` the ranks' own timelines and byte intervals.
    fn timelines(
        &self,
        src: u32,
        dst: u32,
        shm: Option<&ChannelParams>,
    ) -> (Timeline, Timeline, Option<(Channel, Channel)>) {
        let (from, to) = (self.node_of(src), self.node_of(dst));
        if let Some(level) = shm {
            if level.duplex_scope == DuplexScope::Rank {
                // Per rank, a segment may have a duplex of its own: byte
                // intervals when any size is not full duplex.
                let half = (!level.is_full_duplex())
                    .then_some((Channel::ShmRank(src), Channel::ShmRank(dst)));
                (Timeline::ShmTx(src), Timeline::ShmRx(dst), half)
            } else if level.duplex.is_full() {
                (Timeline::ShmTx(src), Timeline::ShmRx(dst), None)
            } else {
                (
                    Timeline::ShmNodeTx(from),
                    Timeline::ShmNodeRx(to),
                    Some((Channel::Shm(from), Channel::Shm(to))),
                )
            }
        } else {
            let half = (!self.machine.spec.network.is_full_duplex())
                .then_some((Channel::Nic(from), Channel::Nic(to)));
            (Timeline::NicTx(from), Timeline::NicRx(to), half)
        }
    }

    fn busy(&self, channel: Channel) -> Option<&HalfDuplex> {
        let (all, node) = match channel {
            Channel::Nic(node) => (&self.busy.nic, node),
            Channel::Shm(node) => (&self.busy.shm, node),
            Channel::ShmRank(rank) => (&self.busy.shm_rank, rank),
            Channel::NicShared(node) => (&self.busy.nic_shared, node),
        };
        all.get(node as usize)
            .or_else(|| self.busy.overflow.get(&channel))
    }

    fn busy_mut(&mut self, channel: Channel) -> &mut HalfDuplex {
        let calendars = &mut *self.busy;
        let (all, node) = match channel {
            Channel::Nic(node) => (&mut calendars.nic, node),
            Channel::Shm(node) => (&mut calendars.shm, node),
            Channel::ShmRank(rank) => (&mut calendars.shm_rank, rank),
            Channel::NicShared(node) => (&mut calendars.nic_shared, node),
        };
        match all.get_mut(node as usize) {
            Some(busy) => busy,
            None => calendars.overflow.entry(channel).or_default(),
        }
    }

    fn slots(&self, timeline: Timeline) -> (&[f64], u32) {
        match timeline {
            Timeline::NicTx(node) => (&self.nic_tx, node),
            Timeline::NicRx(node) => (&self.nic_rx, node),
            Timeline::ShmTx(rank) => (&self.shm_tx, rank),
            Timeline::ShmRx(rank) => (&self.shm_rx, rank),
            Timeline::ShmNodeTx(node) => (&self.shm_node_tx, node),
            Timeline::ShmNodeRx(node) => (&self.shm_node_rx, node),
            Timeline::RankTx(rank) => (&self.rank_tx, rank),
            Timeline::RankRx(rank) => (&self.rank_rx, rank),
            Timeline::ShmMem(node) => (&self.shm_mem, node),
            Timeline::SelfCopy(rank) => (&[], rank),
        }
    }

    /// When `timeline` can take the next message (−∞ when it never has).
    fn free_at(&self, timeline: Timeline) -> f64 {
        let (slots, index) = self.slots(timeline);
        match slots.get(index as usize) {
            Some(&free) => free,
            None => self
                .overflow
                .get(&timeline)
                .copied()
                .unwrap_or(f64::NEG_INFINITY),
        }
    }

    /// Moves `timeline`'s free time to `to` if that is later: timelines
    /// never go back.
    fn occupy_until(&mut self, timeline: Timeline, to: f64) {
        let (slots, index): (&mut [f64], u32) = match timeline {
            Timeline::NicTx(node) => (&mut self.nic_tx, node),
            Timeline::NicRx(node) => (&mut self.nic_rx, node),
            Timeline::ShmTx(rank) => (&mut self.shm_tx, rank),
            Timeline::ShmRx(rank) => (&mut self.shm_rx, rank),
            Timeline::ShmNodeTx(node) => (&mut self.shm_node_tx, node),
            Timeline::ShmNodeRx(node) => (&mut self.shm_node_rx, node),
            Timeline::RankTx(rank) => (&mut self.rank_tx, rank),
            Timeline::RankRx(rank) => (&mut self.rank_rx, rank),
            Timeline::ShmMem(node) => (&mut self.shm_mem, node),
            Timeline::SelfCopy(rank) => (&mut [], rank),
        };
        let slot = match slots.get_mut(index as usize) {
            Some(slot) => slot,
            None => self.overflow.entry(timeline).or_insert(f64::NEG_INFINITY),
        };
        *slot = slot.max(to);
    }
}

/// A channel's lines: its channel-wide keys after its label, then a line
/// per size range (`  below 8 B: L 5 µs, ...`, `  from 8 B: L 7.7 µs, ...`,
/// or `  all sizes: ...` without segments).
fn describe_channel(label: &str, channel: &ChannelParams) -> Vec<String> {
    let mtu = channel
        .mtu
        .map_or_else(|| "unlimited".to_owned(), format_size);
    let mut head = format!(
        "{label}: MTU {mtu}, eager limit {}, control messages {}, {}",
        format_size(channel.eager_limit),
        format_size(channel.control_bytes),
        channel.duplex.describe(),
    );
    if !channel.is_full_duplex() && channel.duplex_scope == DuplexScope::Rank {
        head.push_str(" per rank (each rank's core sends and receives)");
    }
    if channel.send_overhead_per_byte > 0.0 {
        head.push_str(&format!(
            ", an eager send's CPU time {} per byte beyond o_s (O)",
            format_time(channel.send_overhead_per_byte)
        ));
    }
    if channel.node_gap > 0.0 {
        head.push_str(&format!(
            ", the adapter's own g {} shared by the node's ranks",
            format_time(channel.node_gap)
        ));
    }
    if let Some(rate) = channel.node_bandwidth {
        head.push_str(&format!(
            ", the node's memory moves {} for all its ranks",
            format_bandwidth(rate)
        ));
    }
    if let Some(bytes) = channel.measured_to {
        head.push_str(&format!(", measured up to {}", format_size(bytes)));
    }
    let mut lines = vec![head];
    segment_lines(&mut lines, channel);
    if let Some(written) = &channel.written {
        lines.push(
            "  data the sender just wrote (a collective's library data, by rendezvous; [written]):"
                .to_owned(),
        );
        let mut inner = Vec::new();
        segment_lines(&mut inner, written);
        lines.extend(inner.into_iter().map(|line| format!("  {line}")));
    }
    lines
}

/// The lines of a channel's base values and segments.
fn segment_lines(lines: &mut Vec<String>, channel: &ChannelParams) {
    match channel.segments.first() {
        None => lines.push(format!("  all sizes: {}", describe_loggp(&channel.base()))),
        Some(first) => {
            lines.push(format!(
                "  below {}: {}",
                format_size(first.from),
                describe_loggp(&channel.base())
            ));
            for segment in &channel.segments {
                let duplex = segment
                    .duplex
                    .map_or_else(String::new, |d| format!(", {}", d.describe()));
                lines.push(format!(
                    "  from {}: {}{duplex}",
                    format_size(segment.from),
                    describe_loggp(&segment.params)
                ));
            }
        }
    }
}

fn describe_loggp(params: &LogGpParams) -> String {
    let speed = if params.gap_per_byte > 0.0 {
        format!(
            "{} (G {}/B)",
            format_bandwidth(params.bandwidth()),
            format_time(params.gap_per_byte)
        )
    } else {
        "G 0 (bytes take no adapter time)".to_owned()
    };
    let mut text = format!(
        "L {}, o_s {}, o_r {}, g {}, {speed}",
        format_time(params.latency),
        format_time(params.send_overhead),
        format_time(params.recv_overhead),
        format_time(params.gap),
    );
    if params.latency_per_byte > 0.0 {
        text.push_str(&format!(
            ", latency {}/B more",
            format_time(params.latency_per_byte)
        ));
    }
    text
}

impl LogGpRun<'_> {
    /// Whether a rendezvous message from `rank` to itself takes the
    /// device's ordinary path, priced as a message to another rank of its
    /// node on the `[shm]` channel (its RTS, CTS and data, on the rank's own
    /// send and receive timelines), instead of [`transfer_self`]'s copies.
    /// MPICH's CH4 (MPICH 4, and Intel MPI 2019 and later, which is built
    /// on it) has no self path in a communicator of more than one rank
    /// (ch4_send.h at v4.0.2: `MPIDI_Self_isend` only where
    /// `MPIDI_is_self_comm`), and its shared-memory single copy refuses
    /// a message to itself (ipc_send.h line 31), so above the eager limit
    /// the message runs the device's rendezvous with itself. Measured on
    /// the development machine (MPICH 4.0.2, VALIDATION.md 4.15 and 4.20):
    /// a self pair of 16 KiB to 1 MiB takes 3.5, 4.5, 6.8, 11.2, 22.8, 42.0
    /// and 84.3 µs, the one-way time to the other rank of the node at the
    /// same sizes 3.6, 4.7, 6.9, 11.3, 21.4, 42.4 and 84.7 µs. Eager self
    /// messages stay copies (0.11-0.20 µs up to 4 KiB, where the peer's
    /// one-way time is 0.19-0.72). MPICH 3's CH3 (`MPIDI_Isend_self`) and
    /// Open MPI's `btl/self` copy in memory at every size.
    ///
    /// [`transfer_self`]: LogGpRun::transfer_self
    fn self_takes_device(&self, rank: u32, kind: MessageKind) -> bool {
        use sim_core::coll::Library;
        kind != MessageKind::Eager
            && self.uses_shm(rank, rank)
            && matches!(
                self.machine.spec.collectives.library,
                Library::Mpich4 | Library::IntelMpi2019 | Library::IntelMpi2021
            )
    }

    /// A message from a rank to itself: the library's per-message work and
    /// memory copies on the rank's own core, no latency and no adapter.
    /// MPICH sends a rank's own block of the scattered alltoall(v) through
    /// MPI to itself (alltoall_intra_scattered.c at v4.0.2); CH4 hands a
    /// message to itself in a communicator of more than one rank to its
    /// shared-memory module (ch4_send.h: only size-1 communicators take
    /// `MPIDI_Self_isend`), whose eager path copies the data into a cell of
    /// its own queue and out of it again; Open MPI's `btl/self` copies it
    /// the same way. So an eager message costs the channel's `o_s` and two
    /// copies at the node's memcpy rate, a rendezvous control message
    /// `o_s`, rendezvous data one copy; the receive overhead `o_r` is the
    /// engine's, as for every message. The copies run where the rank's
    /// incoming shared-memory data is copied (its receive timeline, or the
    /// node's memory channel in half duplex; a timeline of its own when the
    /// machine has no shared memory), after what arrived before: a rank
    /// copies one message at a time (VALIDATION.md 4.15: MPICH 4 takes 183
    /// µs for a 1 MiB self pair beside a 1 MiB exchange with its peer, 84
    /// and 90 µs each alone). That timeline also keeps the rank's self
    /// messages in order (the non-overtaking contract). `written` makes no
    /// difference (the data is in the rank's own cache either way).
    /// Measured here (VALIDATION.md 4.14, 4.15): up to 4 KiB a self pair
    /// costs 0.11-0.24 µs, against `o_s + o_r` = 0.13 µs and the copies.
    /// Above the eager limit MPICH's CH4 runs its rendezvous with itself
    /// instead (`self_takes_device`).
    fn transfer_self(&mut self, rank: u32, bytes: u64, kind: MessageKind, ready: f64) -> Transfer {
        let params = self.channel_params(rank, rank);
        let send_overhead = params.params_for(bytes).send_overhead;
        let copy = self.library_copy_seconds(rank, bytes);
        let line = if self.uses_shm(rank, rank) {
            self.timelines(rank, rank, Some(params)).1
        } else {
            Timeline::SelfCopy(rank)
        };
        let (after, work) = match kind {
            MessageKind::Eager => (ready + send_overhead, 2.0 * copy),
            MessageKind::RendezvousRts | MessageKind::RendezvousCts => (ready + send_overhead, 0.0),
            MessageKind::RendezvousData => (ready, copy),
        };
        let done = after.max(self.free_at(line)) + work;
        self.occupy_until(line, done);
        Transfer {
            cpu_free: done,
            arrival: done,
        }
    }

    /// With `P = post(n)` of the pair's channel set and `L`, `g`, `o_s` of
    /// the segment of `n` (see [`ChannelParams::post_time`]), and
    /// `W = Σ m·G = n·G` over the packets ([`ChannelParams::wire_time`]):
    ///
    /// - The sending CPU spends `o_s` first (the engine charges it to the
    ///   rank); the adapter takes the message after that:
    ///   `start = max(ready + o_s, tx_free)`. The overhead is the core's, not
    ///   the adapter's: ranks of a node that share an adapter overlap their
    ///   overheads with each other's transfers.
    /// - `arrival = max(start + P − o_s, rx_free + g + W)`: the last byte
    ///   reaches the receiving adapter `L + W` after the adapter started
    ///   (one packet), unless that adapter is still taking earlier messages.
    /// - The adapters at both ends are busy with the message for its
    ///   per-message occupancy `g` and its bytes `W`: the sending one during
    ///   `[start, start + A_s]`, `A_s = g + W` (with an MTU, ParJava's
    ///   stop-and-wait packets before the last come first:
    ///   [`ChannelParams::send_busy`]), so
    ///   `tx_free = start + A_s`; the receiving one from its first byte for
    ///   `W + g`, `[arrival − W, arrival + g]`, so the next reception's
    ///   last byte comes no sooner than `g + W'` after `arrival` (`rx_free =
    ///   arrival`). LogGP (Alexandrov, Ionescu, Schauser, Scheiman, SPAA
    ///   1995): after a k-byte message a processor can send the next one
    ///   `(k−1)·G + g` later, and `g` is "the minimum time interval between
    ///   consecutive message transmissions or consecutive message receptions
    ///   at a processor"; LogGOPSim (Hoefler, Schneider, Lumsdaine, HPDC
    ///   2010) charges `g + (s−1)·G` to the NIC at both ends. We charge
    ///   `n·G` (see [`ChannelParams::packet_time`]).
    /// - `cpu_free`, for eager messages and rendezvous RTS/CTS:
    ///   `start + (P − T(last packet))`: the CPU is free once the adapter has
    ///   taken the last packet (ParJava's Post: "the buffer is passed to an
    ///   abstract channel, after which MPI no longer controls the sending"),
    ///   and for eager messages no sooner than `ready + o_s + O·n`, the
    ///   sender's copy of the message out of the user's buffer
    ///   (`send_overhead_per_byte`, LogGOPS: the CPU is busy `o + (s−1)·O`
    ///   and the NIC `g + (s−1)·G` from the same start, so the copy
    ///   overlaps the transfer and does not delay the arrival);
    ///   for rendezvous data: `arrival − L`, the user buffer is busy until
    ///   its last byte has left.
    ///
    /// The timelines: for the network, `tx_free` is the transmit timeline of
    /// `src`'s node's adapter and `rx_free` the receive timeline of `dst`'s
    /// node's adapter. In the SMP model the node's ranks share the adapter:
    /// each rank has its own transmit and receive timeline for its `g + W`
    /// (LogP's g is per processor: a node's ranks together send `k/g`
    /// small messages per second), and the node's adapter has one for the
    /// bytes `W` (and `node_gap`) of all its ranks, at each end a calendar
    /// of the intervals it is taken, filled first come first served but
    /// work-conserving: a message takes the adapter's idle time from its
    /// earliest start on, in as many gaps as it needs
    /// (`busy::Intervals::fill`), its last byte leaving (or arriving) when
    /// it has had `W`. For shared memory, full duplex: `src`'s
    /// send and `dst`'s receive timelines (per rank); otherwise per node,
    /// shared by its ranks. A message between two sockets of a node is
    /// charged with the `[socket]` parameters on the same timelines (by
    /// `[socket]`'s own duplex): the ranks' memory channels, or the node's
    /// one, carry both levels.
    ///
    /// Duplex (`duplex = "half"`, or a share `0 <= d < 1`; the message's
    /// network segment's own `duplex` where it has one): the two
    /// directions of an adapter (or memory channel) overlap for only `d` of
    /// their time, as a 32-bit/33 MHz PCI bus, where one bus master at a
    /// time moves data (PCI Local Bus Specification 2.2, chapter 3). Each
    /// channel keeps the busy intervals above per direction. A new transfer
    /// whose sending interval overlaps the opposite direction's intervals at
    /// `src`'s node by `x_s`, and whose receiving interval overlaps them at
    /// `dst`'s node by `x_r`, is slowed by `(1 − d)·max(x_s, x_r)`: while
    /// the two directions share the channel, each gets part of it; the
    /// slower end governs a message that streams through both. Two equal
    /// messages crossing each other then take `(1 − d)·(g + W − L)` longer
    /// than one (the fluid answer of two flows sharing one channel fairly,
    /// as in SimGrid's flow model, Velho et al., ACM TOMACS 23(4), 2013), and
    /// two large ones about `(2 − d)·W`.
    ///
    /// Approximations, first come first served: a "free at" timeline
    /// reserves in call order, so a later call whose data would fit into
    /// an idle gap before an earlier call's reservation still queues
    /// behind it (the node's shared adapter in the SMP model fills its
    /// idle gaps instead, above, but gives them to earlier calls first,
    /// where fair sharing would split them); and in a
    /// duplex conflict only the transfer computed later is slowed (the
    /// earlier one's arrival has been handed out already), where fair
    /// sharing would slow both by part of it. For the symmetric exchanges
    /// of benchmarks and collectives (every step ends when both messages
    /// have arrived) the step time is the same. Calls come in nondecreasing
    /// `ready` order (the trait's contract).
    ///
    /// Per pair, arrivals never decrease (the trait's non-overtaking
    /// contract): a pair always uses the same receive timeline, a timeline
    /// only moves later, and every transfer leaves it at its arrival; so a
    /// later transfer of the pair has `arrival' >= rx_free + g' + W' >=
    /// arrival` (the duplex slowdown only moves `arrival'` later). This
    /// holds across segments too, where the sender-side argument alone
    /// would not: a small message after a large one can have a smaller `L`.
    ///
    /// `written`: the data was written by the sender just before (a
    /// collective's library data), priced by the channel's written
    /// parameters where it has them ([`ChannelParams::for_data`]); every
    /// timeline is the same.
    fn transfer_data(
        &mut self,
        src: u32,
        dst: u32,
        bytes: u64,
        kind: MessageKind,
        ready: f64,
        written: bool,
    ) -> Transfer {
        if src == dst && !self.self_takes_device(src, kind) {
            return self.transfer_self(src, bytes, kind, ready);
        }
        let shm = self.uses_shm(src, dst);
        let level = self.channel_params(src, dst);
        let params = level.for_data(written);
        let (segment, duplex) = params.params_and_duplex(bytes);
        let (latency, gap, send_overhead) = (segment.latency, segment.gap, segment.send_overhead);
        let (before_last, last) = params.post_split(bytes);
        let post = before_last + last;
        let wire = params.wire_time(bytes);
        let share = duplex.overlap();
        let copy = match kind {
            MessageKind::Eager => params.send_overhead_per_byte * bytes as f64,
            _ => 0.0,
        };
        let (tx, rx, half) = self.timelines(src, dst, shm.then_some(level));
        // The adapter's time at each end.
        let send_busy = params.send_busy(bytes);
        let recv_busy = gap + wire;
        // In the SMP model the network adapter is shared: each rank has its
        // own way in and out (LogGP's g is per processor), busy for the
        // message's g and bytes, and the node's adapter takes the bytes of
        // all its ranks one message at a time.
        let per_rank = (!shm && self.machine.spec.model == CommModel::Smp)
            .then_some((Timeline::RankTx(src), Timeline::RankRx(dst)));
        // The adapter's own per-message occupancy (`node_gap`, network
        // only), shared by its node's ranks; with one rank per adapter it
        // and the rank's `g` are one occupancy, the larger.
        let node_gap = params.node_gap;
        let node_bandwidth = params.node_bandwidth;
        // Of the message's W, the node's shared adapter takes the link's
        // bytes, `n` at the channel's least `G`; the rest of a segment's
        // `G` (a small message's stream time per byte: ten times the
        // link's on an InfiniBand cluster, Alaska's osu_bw below 256 B,
        // VALIDATION.md 5.5) is the ranks' own work, on their own
        // timelines, which a node's ranks do side by side.
        let (node_send, node_recv) = match per_rank {
            Some(_) => {
                let rank_only = (wire - bytes as f64 * params.link_gap_per_byte()).max(0.0);
                (
                    send_busy - gap + node_gap - rank_only,
                    wire + node_gap - rank_only,
                )
            }
            None if node_gap > gap => (send_busy + (node_gap - gap), wire + node_gap),
            None => (send_busy, recv_busy),
        };

        // In the SMP model the node's shared adapter takes a message in the
        // first idle time long enough (first fit), at each end: its ranks
        // post their messages in their own order, and a message another
        // rank reserved for later leaves the adapter idle before it. A
        // "free at" timeline would queue every message behind the latest
        // one reserved: k ranks each posting a window of messages spaced
        // by their own g would leave the adapter idle between each rank's
        // messages and take k times too long. One rank's messages keep
        // their order on its own timelines (so a pair's arrivals never
        // decrease).
        let (start, mut arrival) = match per_rank {
            Some((rank_tx, rank_rx)) => {
                let (from, to) = (
                    Channel::NicShared(self.node_of(src)),
                    Channel::NicShared(self.node_of(dst)),
                );
                let earliest = (ready + send_overhead).max(self.free_at(rank_tx));
                // Every later transfer is ready at or after `ready` and its
                // intervals begin after it: older ones are done with.
                let sending = self.busy_mut(from);
                sending.tx.forget_before(ready);
                let (start, sent) = sending.tx.fill(earliest, node_send);
                // The last byte leaves `sent − start − node_send` later than
                // on an idle adapter.
                let floor = (start + post - send_overhead + (sent - start - node_send))
                    .max(self.free_at(rank_rx) + recv_busy);
                let receiving = self.busy_mut(to);
                receiving.rx.forget_before(ready);
                let (_, received) = receiving.rx.fill(floor - node_recv, node_recv);
                (start, floor.max(received))
            }
            None => {
                let start = (ready + send_overhead).max(self.free_at(tx));
                let floor = self.free_at(rx) + node_recv;
                (start, (start + post - send_overhead).max(floor))
            }
        };
        let mut slowed = 0.0;
        // The node's memory system (`[shm] node_bandwidth`, bytes/s): the
        // message's bytes pass through it after those of the node's
        // earlier shared-memory messages, `n / node_bandwidth` each, during
        // or after their own `W` (the last `W` before the arrival), so a
        // node's ranks together never copy faster than it: k equal messages
        // started at once end, the last of them, `max(W, k·n/C)` after the
        // first byte, what max-min fair sharing of the node's bandwidth
        // gives (SimGrid's flow model: Velho et al., ACM TOMACS 23(4),
        // 2013); earlier ones, first come first served, sooner.
        if shm
            && bytes > 0
            && let Some(rate) = node_bandwidth
        {
            let node = Timeline::ShmMem(self.node_of(src));
            let through = (arrival - wire).max(self.free_at(node)) + bytes as f64 / rate;
            self.occupy_until(node, through);
            if through > arrival {
                slowed = through - arrival;
                arrival = through;
            }
        }
        if let Some((from, to)) = half {
            let at_src = self
                .busy(from)
                .map_or(0.0, |busy| busy.rx.overlap(start, start + send_busy));
            let at_dst = self
                .busy(to)
                .map_or(0.0, |busy| busy.tx.overlap(arrival - wire, arrival + gap));
            let duplex = (1.0 - share) * at_src.max(at_dst);
            slowed += duplex;
            arrival += duplex;
        }
        match per_rank {
            // The node's adapter was taken in its calendars above.
            Some((rank_tx, rank_rx)) => {
                self.occupy_until(rank_tx, start + send_busy + slowed);
                self.occupy_until(rank_rx, arrival);
            }
            None => {
                self.occupy_until(tx, start + node_send + slowed);
                self.occupy_until(rx, arrival);
            }
        }
        if let Some((from, to)) = half {
            // Transfers come in nondecreasing `ready` order and every busy
            // interval begins at or after its transfer's `ready` (`start >=
            // ready`, `arrival − W − slowed >= start + L`): older intervals
            // are done with.
            let sending = self.busy_mut(from);
            sending.tx.forget_before(ready);
            sending.rx.forget_before(ready);
            sending.tx.reserve(start, start + send_busy + slowed);
            let receiving = self.busy_mut(to);
            receiving.tx.forget_before(ready);
            receiving.rx.forget_before(ready);
            receiving.rx.reserve(arrival - wire - slowed, arrival + gap);
        }
        let cpu_free = match kind {
            // The copy out of the user's buffer runs on the sender's core
            // from the end of `o_s`, beside the adapter's work.
            MessageKind::Eager => (start + before_last).max(ready + send_overhead + copy),
            MessageKind::RendezvousRts | MessageKind::RendezvousCts => start + before_last,
            // `arrival >= start + post − o_s >= start + L`, so this is
            // `>= start` up to rounding; the max keeps the trait's "never
            // before the time passed in" exact.
            // `rendezvous_send = "received"`: when the receiver has it.
            MessageKind::RendezvousData if self.machine.spec.node.rendezvous_send_received => {
                arrival
            }
            MessageKind::RendezvousData => (arrival - latency).max(start),
        };
        Transfer { cpu_free, arrival }
    }
}

impl Machine for LogGpRun<'_> {
    /// `nominal / cpu_rate` (ParJava section 3: `//CPURate`, the ratio of the
    /// modelled processor's performance to the reference one).
    fn compute_seconds(&self, _rank: u32, nominal: f64) -> f64 {
        nominal / self.machine.spec.node.cpu_rate
    }

    /// `[node] timer`: what one read of the clock costs (0 when the file
    /// has none).
    fn timer_seconds(&self, _rank: u32) -> f64 {
        self.machine.spec.node.timer
    }

    /// `bytes / memcpy_bandwidth` (ParJava table 1: `//memcpy`, the time to
    /// copy one byte in a node's memory).
    fn copy_seconds(&self, _rank: u32, bytes: u64) -> f64 {
        bytes as f64 / self.machine.spec.node.memcpy_bandwidth
    }

    /// With `[[node.memcpy_segments]]`, the segment of the copy's size
    /// (`overhead + bytes / bandwidth`); below the first, `memcpy`. The
    /// program's own copies (`copy_seconds`) stay at `memcpy`: a skeleton's
    /// `copy` stands for a pack out of its arrays, whose working set is
    /// the arrays', not the copy's size.
    fn library_copy_seconds(&self, rank: u32, bytes: u64) -> f64 {
        let node = &self.machine.spec.node;
        match RateSegment::find(&node.memcpy_segments, bytes) {
            Some(segment) => segment.seconds(bytes),
            None => self.copy_seconds(rank, bytes),
        }
    }

    /// `reduce_overhead + bytes / reduce_op` if the machine file gives the
    /// reduction's rate, else the overhead and a memory copy's time; with
    /// `[[node.reduce_segments]]`, the segment of the reduction's size.
    fn reduce_seconds(&self, rank: u32, bytes: u64) -> f64 {
        let node = &self.machine.spec.node;
        if let Some(segment) = RateSegment::find(&node.reduce_segments, bytes) {
            return segment.seconds(bytes);
        }
        node.reduce_overhead
            + match node.reduce_bandwidth {
                Some(rate) => bytes as f64 / rate,
                None => self.copy_seconds(rank, bytes),
            }
    }

    fn node_of(&self, rank: u32) -> u32 {
        LogGpRun::node_of(self, rank)
    }

    /// 0 `[network]`, 1 `[shm]`, 2 `[socket]`: the numbering of
    /// [`LogGpMachine::channel_sets`].
    fn channel_of(&self, src: u32, dst: u32) -> usize {
        self.channel_set(src, dst).0
    }

    /// The smallest `measured_to` of the machine's channels.
    fn extrapolated_above(&self) -> u64 {
        self.machine
            .channel_sets()
            .iter()
            .filter_map(|(_, c)| c.and_then(|c| c.measured_to))
            .min()
            .unwrap_or(u64::MAX)
    }

    /// The machine file's `[collectives]`, with the library's temporary
    /// buffers in the schedules when `[node] page_fault` prices them.
    fn collectives(&self) -> sim_core::coll::CollConfig {
        let mut cfg = self.machine.spec.collectives.clone();
        cfg.temporaries = self.machine.spec.node.heap.page_fault.is_some();
        cfg
    }

    fn progress_in_calls(&self) -> bool {
        self.machine.spec.node.progress_in_calls
    }

    fn datatype_seconds(&self, _rank: u32, blocks: u64) -> f64 {
        self.machine.spec.node.datatype.create_seconds(blocks)
    }

    fn pack_seconds(&self, _rank: u32, blocks: u64) -> f64 {
        self.machine.spec.node.datatype.pack_seconds(blocks)
    }

    /// `page_fault` times the pages of fresh memory the rank's allocator
    /// hands out for the buffer ([`GlibcHeap::alloc`]); 0 without
    /// `page_fault`.
    fn heap_alloc(&mut self, rank: u32, bytes: u64, touched: std::ops::Range<u64>) -> f64 {
        let heap = self.machine.spec.node.heap;
        let Some(per_page) = heap.page_fault else {
            return 0.0;
        };
        let pages = self
            .heaps
            .by_rank
            .entry(rank)
            .or_insert_with(|| GlibcHeap::new(heap.allocator, heap.page_size))
            .alloc(bytes, touched);
        pages as f64 * per_page
    }

    fn heap_free(&mut self, rank: u32, bytes: u64) {
        if let Some(h) = self.heaps.by_rank.get_mut(&rank) {
            h.free(bytes);
        }
    }

    fn flag_latency(&self, _src: u32, _dst: u32) -> f64 {
        self.machine
            .spec
            .node
            .flag_latency
            .unwrap_or(crate::params::DEFAULT_FLAG_LATENCY)
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

    /// `O·n` of the pair's channel set (`send_overhead_per_byte`, LogGOPS);
    /// to itself, the two copies of the self path (`transfer_self`), both
    /// on the rank's own core.
    fn send_copy(&self, src: u32, dst: u32, bytes: u64) -> f64 {
        if src == dst {
            return 2.0 * self.library_copy_seconds(src, bytes);
        }
        self.channel_params(src, dst).send_overhead_per_byte * bytes as f64
    }

    fn transfer(
        &mut self,
        src: u32,
        dst: u32,
        bytes: u64,
        kind: MessageKind,
        ready: f64,
    ) -> Transfer {
        self.transfer_data(src, dst, bytes, kind, ready, false)
    }

    /// As `transfer`, priced by the pair's channel's `[section.written]`
    /// parameters where it has them ([`ChannelParams::for_data`]).
    fn transfer_written(
        &mut self,
        src: u32,
        dst: u32,
        bytes: u64,
        kind: MessageKind,
        ready: f64,
    ) -> Transfer {
        self.transfer_data(src, dst, bytes, kind, ready, true)
    }

    /// Clears every timeline and sizes the state for `ranks` ranks:
    /// `ceil(ranks / p)` NICs (two "free at" timelines each in the hardware
    /// model, two calendars and two timelines per rank in the SMP model,
    /// and byte intervals in half duplex) and, in the SMP model with shared
    /// memory, two timelines
    /// per rank (full duplex) or per node (half duplex, with byte
    /// intervals), each when `[shm]` or `[socket]` needs it.
    fn shift_time(&mut self, delta: f64) -> bool {
        // A timeline never used is -inf and stays so.
        for t in [
            &mut self.nic_tx,
            &mut self.nic_rx,
            &mut self.shm_tx,
            &mut self.shm_rx,
            &mut self.shm_node_tx,
            &mut self.shm_node_rx,
            &mut self.rank_tx,
            &mut self.rank_rx,
            &mut self.shm_mem,
        ] {
            t.iter_mut().for_each(|x| *x += delta);
        }
        self.overflow.values_mut().for_each(|x| *x += delta);
        let c = &mut *self.busy;
        for h in c
            .nic
            .iter_mut()
            .chain(&mut c.shm)
            .chain(&mut c.shm_rank)
            .chain(&mut c.nic_shared)
            .chain(c.overflow.values_mut())
        {
            h.tx.shift(delta);
            h.rx.shift(delta);
        }
        true
    }

    fn reset(&mut self, ranks: u32) {
        self.ranks = ranks;
        self.heaps.by_rank.clear();
        self.nodes = ranks.div_ceil(self.machine.ranks_per_node()).max(1);
        self.per_cycle = StrengthReducedU32::new(self.nodes);
        let nodes = self.nodes as usize;
        let nic_half = if self.machine.spec.network.is_full_duplex() {
            0
        } else {
            nodes
        };
        // Inside a node, each level (`[shm]`, and `[socket]` if given) uses
        // the per-rank timelines when it is full duplex or partial per rank
        // (then with per-rank byte intervals too) and the per-node ones
        // otherwise.
        let spec = &self.machine.spec;
        let (shm_ranks, shm_rank_half, shm_nodes) = match (&spec.shm, spec.model) {
            (Some(shm), CommModel::Smp) => {
                let levels = std::iter::once(shm).chain(spec.socket.as_ref());
                levels.fold((0, 0, 0), |(per_rank, half, per_node), level| {
                    if level.is_full_duplex() {
                        (ranks as usize, half, per_node)
                    } else if level.duplex_scope == DuplexScope::Rank {
                        (ranks as usize, ranks as usize, per_node)
                    } else {
                        (per_rank, half, nodes)
                    }
                })
            }
            _ => (0, 0, 0),
        };
        // The hardware model's adapters are "free at" timelines (one rank
        // each, its messages in order); the SMP model's are shared by the
        // node's ranks and keep calendars instead, next to a timeline per
        // rank.
        let (nic, nic_shared, per_rank) = match self.machine.spec.model {
            CommModel::Smp => (0, nodes, ranks as usize),
            CommModel::Hardware => (nodes, 0, 0),
        };
        let shm_mem = match (&self.machine.spec.shm, self.machine.spec.model) {
            (Some(shm), CommModel::Smp) if shm.node_bandwidth.is_some() => nodes,
            _ => 0,
        };
        for (timelines, len) in [
            (&mut self.nic_tx, nic),
            (&mut self.nic_rx, nic),
            (&mut self.rank_tx, per_rank),
            (&mut self.rank_rx, per_rank),
            (&mut self.shm_tx, shm_ranks),
            (&mut self.shm_rx, shm_ranks),
            (&mut self.shm_node_tx, shm_nodes),
            (&mut self.shm_node_rx, shm_nodes),
            (&mut self.shm_mem, shm_mem),
        ] {
            timelines.clear();
            timelines.resize(len, f64::NEG_INFINITY);
        }
        let calendars = &mut *self.busy;
        for (busy, len) in [
            (&mut calendars.nic, nic_half),
            (&mut calendars.shm, shm_nodes),
            (&mut calendars.shm_rank, shm_rank_half),
            (&mut calendars.nic_shared, nic_shared),
        ] {
            busy.truncate(len);
            for channel in busy.iter_mut() {
                channel.tx.clear();
                channel.rx.clear();
            }
            busy.resize_with(len, HalfDuplex::default);
        }
        self.overflow.clear();
        calendars.overflow.clear();
    }
}

impl Default for LogGpMachine {
    fn default() -> Self {
        Self::builtin_default()
    }
}
