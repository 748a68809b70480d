//! Model parameters: one channel set (network or shared memory) and the node.

/// The parameters of one set of channels: the network, or shared memory
/// inside a node. All times in seconds, sizes in bytes.
///
/// LogGP (Alexandrov, Ionescu, Schauser, Scheiman, "LogGP: Incorporating Long
/// Messages into the LogP Model", SPAA 1995) with the finite system buffer
/// (MTU) of the ParJava interpreter (Padaryan, "Estimating parallel program
/// run time with the ParJava interpreter", section 3).
#[derive(Debug, Clone, PartialEq)]
pub struct ChannelParams {
    /// L: wire latency of one packet, from the end of the send overhead to
    /// the arrival of its first byte.
    pub latency: f64,
    /// o_s: CPU time the sender spends per packet.
    pub send_overhead: f64,
    /// o_r: CPU time the receiver spends to complete a receive.
    pub recv_overhead: f64,
    /// O (`send_overhead_per_byte`): CPU seconds per byte that an eager
    /// send keeps the sender busy beyond `o_s`, copying the message out of
    /// the user's buffer (LogGOPS: Hoefler, Schneider, Lumsdaine,
    /// "LogGOPSim", HPDC 2010, where a send occupies the CPU `o + (s−1)·O`
    /// and the network `g + (s−1)·G` from the same start). The copy runs
    /// while the message travels, so it does not delay the arrival; it
    /// delays what the sender does next. 0: the CPU is free after `o_s`
    /// (LogGP).
    pub send_overhead_per_byte: f64,
    /// g: minimum time between the starts of two messages of one channel.
    pub gap: f64,
    /// G: seconds per byte, `1 / bandwidth`: how long each byte occupies
    /// the adapter (LogGP's G; what a stream of messages shows).
    pub gap_per_byte: f64,
    /// Seconds per byte that a message's last byte arrives later, beyond
    /// `G`, without occupying the adapter (a protocol's pipeline fill, or a
    /// copy on the path): a ping-pong's per-byte slope is `G` plus this.
    /// 0 unless a stream says the adapter is faster than the ping-pong.
    pub latency_per_byte: f64,
    /// The system buffer: at most this many bytes per packet; `None` is
    /// unlimited (ParJava's default).
    pub mtu: Option<u64>,
    /// Messages of at least this many bytes use the rendezvous protocol.
    pub eager_limit: u64,
    /// Size of a rendezvous control message (RTS/CTS).
    pub control_bytes: u64,
    /// Per-message-size parameters (piecewise LogGP), sorted by strictly
    /// increasing [`Segment::from`]. A message of `n` bytes uses the last
    /// segment whose `from <= n`, or the base values above when `n` is below
    /// the first segment's `from` (or there are none).
    pub segments: Vec<Segment>,
    /// Whether a NIC (network) or a node's memory channel (shared memory)
    /// moves data both ways at once.
    pub duplex: Duplex,
    /// Inside a node (`[shm]`, `[socket]`), what a duplex below full
    /// applies to: the node's one memory channel, which all its ranks'
    /// transfers share (the default), or each rank's core, whose sends and
    /// receives overlap by `duplex` while other ranks' transfers go on
    /// beside them. The network's duplex is always its node adapter's.
    pub duplex_scope: DuplexScope,
    /// Network only (`node_gap`): the adapter's own per-message occupancy,
    /// shared by all ranks of its node, next to each rank's `g`: the
    /// adapter's message-rate limit (a ConnectX-4 is specified for about
    /// 150 million messages per second, ≈ 6.7 ns per message). 0: no limit
    /// beyond the ranks' own `g`.
    pub node_gap: f64,
    /// Shared memory only (`node_bandwidth`): the bytes per second a node's
    /// memory system moves for all its ranks' shared-memory messages
    /// together (each message also moves at its own rate `1/G` at most).
    /// `None`: no node-wide limit.
    pub node_bandwidth: Option<f64>,
    /// `measured_to`: the largest message of the table the channel was
    /// calibrated from. Larger messages are priced by extending the last
    /// segment, which the measurements do not support (beyond the caches a
    /// copy slows: VALIDATION.md section 6), so a run that sends them is
    /// warned. `None`: not recorded (no warning).
    pub measured_to: Option<u64>,
    /// `[section.written]`: the channel as it moves data its sender's core
    /// has just written (a library's temporary filled by a copy or a
    /// reduction, a block it received and forwards), where that costs more
    /// than data written long before (the clean buffers of IMB's and OSU's
    /// ping-pongs). On shared memory a rendezvous message is copied by the
    /// receiver's core straight from the sender's memory (CMA, XPMEM), and
    /// lines the sender's core holds modified come from its cache, not
    /// from the shared cache (VALIDATION.md section 4.8: +20 µs at 128 KiB
    /// on the development machine). Its base values and segments are the
    /// ones a written ping-pong (`PingPongWritten`) gives; everything else
    /// (MTU, eager limit, control messages, duplex, the node's shared
    /// limits) is this channel's. The engine prices a collective's sends
    /// of library data with it ([`ChannelParams::for_data`]).
    ///
    /// Invariant: the inner channel's own `written` is `None`.
    pub written: Option<Box<ChannelParams>>,
}

impl Default for ChannelParams {
    /// All times 0, infinite bandwidth (G = 0), unlimited MTU, eager limit
    /// and control messages 0, no segments, full duplex: a base to fill in
    /// with `..ChannelParams::default()`.
    fn default() -> Self {
        Self {
            latency: 0.0,
            send_overhead: 0.0,
            recv_overhead: 0.0,
            send_overhead_per_byte: 0.0,
            gap: 0.0,
            gap_per_byte: 0.0,
            latency_per_byte: 0.0,
            mtu: None,
            eager_limit: 0,
            control_bytes: 0,
            segments: Vec::new(),
            duplex: Duplex::FULL,
            duplex_scope: DuplexScope::Node,
            node_gap: 0.0,
            node_bandwidth: None,
            measured_to: None,
            written: None,
        }
    }
}

/// The LogGP parameters that depend on the message size: the base values of
/// a channel set, or one segment's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogGpParams {
    /// L: wire latency of one packet.
    pub latency: f64,
    /// o_s: CPU time the sender spends per packet.
    pub send_overhead: f64,
    /// o_r: CPU time the receiver spends to complete a receive.
    pub recv_overhead: f64,
    /// g: minimum time between the starts of two messages of one channel.
    pub gap: f64,
    /// G: seconds per byte the adapter is busy.
    pub gap_per_byte: f64,
    /// Seconds per byte of latency beyond G (see
    /// [`ChannelParams::latency_per_byte`]).
    pub latency_per_byte: f64,
}

impl LogGpParams {
    /// Time of one packet of `m` bytes: `T(m) = o_s + L + m·(G + G_L)`,
    /// `G_L` the latency per byte (see [`ChannelParams::packet_time`] for
    /// why `m·G` and not `(m − 1)·G`).
    pub fn packet_time(&self, m: u64) -> f64 {
        self.send_overhead + self.latency + m as f64 * (self.gap_per_byte + self.latency_per_byte)
    }

    /// Bandwidth in bytes per second (`1 / G`; infinite when G = 0).
    pub fn bandwidth(&self) -> f64 {
        1.0 / self.gap_per_byte
    }
}

/// One segment of a piecewise LogGP channel set: the parameters of messages
/// of at least `from` bytes (up to the next segment's `from`).
///
/// Piecewise parameters follow the protocol switches that make steps and
/// changes of slope in measured ping-pong curves (e.g. an eager/rendezvous
/// or inline/DMA switch); the same idea as the per-size-range parameters of
/// Netgauge's PRTT LogGP measurement (Hoefler, Lichei, Rehm, "Low-Overhead
/// LogGP Parameter Assessment for Modern Interconnection Networks", IPDPS
/// 2007) and SimGrid's piecewise-linear SMPI network factors.
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    /// The smallest message size, in bytes, the segment applies to.
    pub from: u64,
    /// The segment's parameters; all five are set (keys a machine file
    /// leaves out are filled in from the channel's base values when it is
    /// read).
    pub params: LogGpParams,
    /// The duplex overlap of this segment's messages, where it differs from
    /// the channel's ([`ChannelParams::duplex`]); network only (checked when
    /// a machine file is read). A segment is a transfer mechanism (inline
    /// or programmed I/O, an eager copy, a DMA or RDMA transfer), and how
    /// the two directions of an adapter share its bus depends on the
    /// mechanism: on EKSS-1 two crossing messages of 4-64 KiB cost 1.6
    /// times one, of 512 KiB and more 2.0-2.07 times (VALIDATION.md 2.4).
    /// `None`: the channel's duplex.
    pub duplex: Option<Duplex>,
}

/// Whether a channel moves data in both directions at once: the share of
/// the time of one direction's transfers that can overlap transfers going
/// the other way through the same adapter (or memory channel).
///
/// 1 is full duplex (sending and receiving never delay each other), 0 is
/// half duplex (a bus that moves data one way at a time, such as
/// 32-bit/33 MHz PCI, where one bus master at a time moves data: PCI Local
/// Bus Specification 2.2, chapter 3), and a value between them a channel
/// whose two directions overlap partly (a bus that interleaves the two
/// directions' transactions with some loss, or a DMA engine shared by both
/// directions for part of each transfer). Where transfers of opposite
/// directions overlap in time, each new one is slowed by `1 − overlap` of
/// the time they overlap ([`crate::LogGpRun`]'s `transfer`).
///
/// Invariant: `0 <= overlap <= 1` (checked when a machine file is read).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Duplex {
    overlap: f64,
}

impl Default for Duplex {
    fn default() -> Self {
        Self::FULL
    }
}

impl Duplex {
    /// Full duplex: the two directions never delay each other.
    pub const FULL: Duplex = Duplex { overlap: 1.0 };
    /// Half duplex: one direction at a time.
    pub const HALF: Duplex = Duplex { overlap: 0.0 };

    /// A channel whose two directions overlap for `overlap` of their time;
    /// `None` outside `[0, 1]` (or NaN).
    pub fn partial(overlap: f64) -> Option<Duplex> {
        (0.0..=1.0).contains(&overlap).then_some(Duplex { overlap })
    }

    /// A duplex as written on a command line: `full`, `half`, or the
    /// overlap share as a number from 0 to 1.
    pub fn parse(text: &str) -> Option<Duplex> {
        match text.trim() {
            "full" => Some(Self::FULL),
            "half" => Some(Self::HALF),
            other => other.parse::<f64>().ok().and_then(Self::partial),
        }
    }

    /// The share of the two directions' time that overlaps: 1 full, 0 half.
    pub fn overlap(self) -> f64 {
        self.overlap
    }

    /// Whether the two directions are independent (no calendars needed).
    pub fn is_full(self) -> bool {
        self.overlap >= 1.0
    }

    /// The value for a machine file: `"full"`, `"half"`, or the overlap as
    /// a number (`0.3`).
    pub fn as_str(self) -> String {
        self.keyword().map_or_else(
            || format!("{}", (self.overlap * 1000.0).round() / 1000.0),
            str::to_owned,
        )
    }

    /// `"full"` or `"half"` when the duplex is one of the two; `None` for
    /// a share between them.
    pub fn keyword(self) -> Option<&'static str> {
        if self.is_full() {
            Some("full")
        } else if self.overlap <= 0.0 {
            Some("half")
        } else {
            None
        }
    }

    /// For descriptions: `full duplex`, `half duplex`, or `duplex overlap
    /// 0.3`.
    pub fn describe(self) -> String {
        match self.keyword() {
            Some(word) => format!("{word} duplex"),
            None => format!("duplex overlap {}", self.as_str()),
        }
    }
}

/// What a shared-memory channel's duplex below full applies to
/// ([`ChannelParams::duplex_scope`]).
///
/// On a node of around 2000 (EKSS-1's dual Pentium III on one front-side
/// bus) the memory bus is one channel that every copy crosses: `Node`.
/// On a present-day node each rank's core does its messages' copies
/// (MPICH's and Open MPI's shared-memory eager cells and single-copy
/// rendezvous: the sender's core copies in, the receiver's core copies
/// out), so a rank that sends and receives at once slows its own copies,
/// not its neighbours': `Rank`, the per-rank adapter of the network model
/// moved into the node (VALIDATION.md 6.4). Full duplex makes the two the
/// same (a send and a receive timeline per rank).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DuplexScope {
    /// One memory channel per node: all its ranks' transfers share one
    /// send and one receive timeline, whose directions overlap by `d`.
    #[default]
    Node,
    /// Each rank's own send and receive timelines, whose directions
    /// overlap by `d`.
    Rank,
}

impl DuplexScope {
    /// The value for a machine file.
    pub fn as_str(self) -> &'static str {
        match self {
            DuplexScope::Node => "node",
            DuplexScope::Rank => "rank",
        }
    }
}

/// How a message of `n` bytes splits into packets of the system buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packets {
    /// Number of packets of exactly `size` bytes.
    pub full: u64,
    /// Bytes of the size of each full packet.
    pub size: u64,
    /// Bytes of the trailing short packet; 0 when there is none.
    pub rest: u64,
}

impl Packets {
    /// Total number of packets (at least 1: a 0-byte message is one packet).
    pub fn count(&self) -> u64 {
        self.full + u64::from(self.rest > 0)
    }
}

impl ChannelParams {
    /// The parameters that price a message whose data its sender has just
    /// written (`written`): the `[section.written]` channel where the
    /// machine file has one, this channel otherwise (and for data written
    /// long before).
    pub fn for_data(&self, written: bool) -> &ChannelParams {
        match (&self.written, written) {
            (Some(inner), true) => inner,
            _ => self,
        }
    }

    /// Bandwidth of the base values in bytes per second (`1 / G`; infinite
    /// when G = 0).
    pub fn bandwidth(&self) -> f64 {
        1.0 / self.gap_per_byte
    }

    /// The base values (those in force below the first segment).
    pub fn base(&self) -> LogGpParams {
        LogGpParams {
            latency: self.latency,
            send_overhead: self.send_overhead,
            recv_overhead: self.recv_overhead,
            gap: self.gap,
            gap_per_byte: self.gap_per_byte,
            latency_per_byte: self.latency_per_byte,
        }
    }

    /// The index of the segment a message of `n` bytes uses: the last one
    /// with `from <= n`; `None` for the base values.
    pub fn segment_index(&self, n: u64) -> Option<usize> {
        // `segments` is sorted by `from` (validated), so the segments with
        // `from <= n` are a prefix.
        self.segments
            .partition_point(|segment| segment.from <= n)
            .checked_sub(1)
    }

    /// The link's own time per byte: the least positive `G` of the base
    /// and the segments (the large messages' rate, where the per-message
    /// work of the ranks no longer shows); 0 when none is positive. A
    /// segment's `G` above it is the stream's time per byte of that size,
    /// of which the rest is work on the sending and receiving ranks'
    /// cores (a copy into a bounce buffer, an inline send), which ranks
    /// sharing a node's adapter do in parallel (`LogGpRun::transfer_data`).
    pub fn link_gap_per_byte(&self) -> f64 {
        let least = std::iter::once(self.gap_per_byte)
            .chain(self.segments.iter().map(|s| s.params.gap_per_byte))
            .filter(|g| *g > 0.0)
            .fold(f64::INFINITY, f64::min);
        if least.is_finite() { least } else { 0.0 }
    }

    /// The parameters of a message of `n` bytes (the whole message, before
    /// MTU fragmentation): its segment's, or the base values.
    pub fn params_for(&self, n: u64) -> LogGpParams {
        match self.segment_index(n) {
            Some(index) => self.segments[index].params,
            None => self.base(),
        }
    }

    /// The duplex overlap of a message of `n` bytes: its segment's own, or
    /// the channel's.
    pub fn duplex_for(&self, n: u64) -> Duplex {
        self.segment_index(n)
            .and_then(|index| self.segments[index].duplex)
            .unwrap_or(self.duplex)
    }

    /// [`ChannelParams::params_for`] and [`ChannelParams::duplex_for`] with
    /// one search of the segments.
    pub fn params_and_duplex(&self, n: u64) -> (LogGpParams, Duplex) {
        match self.segment_index(n) {
            Some(index) => {
                let segment = &self.segments[index];
                (segment.params, segment.duplex.unwrap_or(self.duplex))
            }
            None => (self.base(), self.duplex),
        }
    }

    /// Whether no message of the channel has a duplex below full (the
    /// channel's and every segment's): then no byte intervals are kept.
    pub fn is_full_duplex(&self) -> bool {
        self.duplex.is_full()
            && self
                .segments
                .iter()
                .all(|segment| segment.duplex.is_none_or(Duplex::is_full))
    }

    /// Splits `n` bytes into packets. With a finite MTU M and n > M:
    /// floor(n/M) packets of M bytes plus one of n mod M bytes if that is
    /// positive (ParJava section 3: "at most MTU bytes per Post"). Otherwise
    /// one packet of n bytes, also for n = 0.
    pub fn packets(&self, n: u64) -> Packets {
        match self.mtu {
            Some(mtu) if mtu > 0 && n > mtu => Packets {
                full: n / mtu,
                size: mtu,
                rest: n % mtu,
            },
            _ => Packets {
                full: 1,
                size: n,
                rest: 0,
            },
        }
    }

    /// Time of a message of `m <= MTU` bytes, one packet:
    /// `T(m) = o_s + L + m·G` with the parameters of `m`'s segment.
    ///
    /// ParJava (section 3): `Time(Post(n)) = b·n + d_p(n)`, `d_p(0) = l`, after
    /// LogGP (Alexandrov et al. 1995), with `d_p = o_s + L` here. LogGP charges
    /// `(m − 1)·G` for an m-byte message; we charge `m·G` so that the
    /// bandwidth of a long message is exactly `1/G` and a 0-byte message
    /// costs exactly `o_s + L`.
    pub fn packet_time(&self, m: u64) -> f64 {
        self.params_for(m).packet_time(m)
    }

    /// `Time(Post(n))`, the sum of the packet times, all with the parameters
    /// of the segment of `n` (the whole message).
    ///
    /// ParJava (section 3), stop-and-wait through a system buffer of MTU bytes:
    /// `Time(Post(n)) = floor(n/MTU)·Time(Post(MTU)) + Time(Post(n mod MTU))`,
    /// where the last term is dropped when `n mod MTU = 0` (there is no empty
    /// trailing packet). Without an MTU, or for `n ≤ MTU`, `T(n)`.
    pub fn post_time(&self, n: u64) -> f64 {
        let (before_last, last) = self.post_split(n);
        before_last + last
    }

    /// The serialisation time of a message of `n` bytes, `W = Σ m·G` over
    /// its packets `= n·G` with the G of `n`'s segment: how long its bytes
    /// occupy a NIC (or memory channel) on either side.
    pub fn wire_time(&self, n: u64) -> f64 {
        n as f64 * self.params_for(n).gap_per_byte
    }

    /// How long the sending adapter is busy with a message of `n` bytes:
    /// the packets before the last, sent stop-and-wait (each a whole
    /// `T(m)`, ParJava), then the per-message occupancy `g` and the last
    /// packet's bytes `m·G` (LogGP). Without an MTU: `g + n·G`. The latency
    /// per byte is not adapter time.
    pub fn send_busy(&self, n: u64) -> f64 {
        let params = self.params_for(n);
        let packets = self.packets(n);
        let (before_last, _) = self.post_split(n);
        let last = if packets.rest > 0 {
            packets.rest
        } else {
            packets.size
        };
        before_last + params.gap + last as f64 * params.gap_per_byte
    }

    /// `post_time(n)` split into (all packets but the last, the last packet).
    pub(crate) fn post_split(&self, n: u64) -> (f64, f64) {
        let params = self.params_for(n);
        let packets = self.packets(n);
        let full_time = params.packet_time(packets.size);
        if packets.rest > 0 {
            (
                packets.full as f64 * full_time,
                params.packet_time(packets.rest),
            )
        } else {
            // `packets.full >= 1` here: `packets()` gives either `full = 1`
            // or `full = n / mtu` with `n > mtu`, so the subtraction is exact.
            ((packets.full - 1) as f64 * full_time, full_time)
        }
    }
}

/// How ranks are placed on nodes in the SMP model (`placement`), and how a
/// node's ranks are placed on its sockets (`socket_placement`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// `node = rank / ranks_per_node`: consecutive ranks share a node.
    Block,
    /// `node = rank % nodes`, `nodes = ceil(ranks / ranks_per_node)`: ranks
    /// dealt round-robin over the nodes.
    Cyclic,
}

impl Placement {
    /// The name used in machine files.
    pub fn as_str(self) -> &'static str {
        match self {
            Placement::Block => "block",
            Placement::Cyclic => "cyclic",
        }
    }
}

/// The two communication models of ParJava (section 3, classes `Hardware`
/// and `SMP`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommModel {
    /// Every rank on its own single-processor node; every message uses the
    /// network.
    Hardware,
    /// Nodes of `ranks_per_node` processors; messages between ranks of one
    /// node use the shared-memory parameters.
    Smp,
}

impl CommModel {
    /// The name used in machine files.
    pub fn as_str(self) -> &'static str {
        match self {
            CommModel::Hardware => "hardware",
            CommModel::Smp => "smp",
        }
    }
}

/// The node model (ParJava section 3, table 1: `//CPURate`, `//memcpy`) and
/// the placement of ranks on nodes.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeParams {
    /// Speed relative to the machine the kernel costs were measured on;
    /// nominal seconds are divided by it.
    pub cpu_rate: f64,
    /// Memory copy bandwidth in bytes per second.
    pub memcpy_bandwidth: f64,
    /// Ranks per node (p); 1 in the Hardware model.
    pub ranks_per_node: u32,
    /// Placement of ranks on nodes.
    pub placement: Placement,
    /// Sockets per node (`sockets`, at least 1): a node's ranks are spread
    /// over them, and a message between two of its sockets uses the
    /// `[socket]` channel when the machine has one.
    pub sockets: u32,
    /// Placement of a node's ranks on its sockets (`socket_placement`), by
    /// the rank's index among its node's ranks `i`: block, `socket = i /
    /// ceil(ranks_per_node / sockets)` (as `mpirun --map-by core
    /// --bind-to core` places them), or cyclic, `socket = i % sockets`
    /// (Open MPI's `--map-by socket`).
    pub socket_placement: Placement,
    /// Bytes per second the reduction operation combines (`reduce_op`);
    /// `None`: as fast as `memcpy` (the default of `Machine::reduce_seconds`).
    pub reduce_bandwidth: Option<f64>,
    /// Seconds each reduction step costs beyond its bytes
    /// (`reduce_overhead`): the call of the operation on a buffer (MPICH's
    /// `MPIR_Reduce_local`, timed by `calibrate net --run` as
    /// `MPI_Reduce_local` of one float). Invariant: finite and >= 0.
    pub reduce_overhead: f64,
    /// Seconds a read of the clock costs the rank (`timer`; `MPI_Wtime`,
    /// which a benchmark calls on both sides of what it times, so each
    /// timed interval holds about one read more than its work; measured by
    /// `calibrate net --run`). Default 0. Invariant: finite and >= 0.
    pub timer: f64,
    /// `progress`: `"calls"` (true), the MPI library progresses a
    /// rendezvous only inside MPI calls (no progress thread: MPICH, Open MPI
    /// and Intel MPI by default), so a rendezvous message matched while its
    /// receiver computes waits for the receiver's next MPI call; `"async"`
    /// (false), a progress thread or the hardware answers it at once.
    pub progress_in_calls: bool,
    /// `rendezvous_send`: when a rendezvous send completes. `"sent"`
    /// (false, the default): when its last byte has left the sender
    /// (`arrival - L`; a sender that writes the data out itself, ParJava's
    /// SCI). `"received"` (true): when the receiver has it, as in today's
    /// libraries, whose receiver reads the sender's buffer and answers
    /// (MPICH's UCX and CMA rendezvous, Open MPI's RGET) or whose put waits
    /// for the transport's acknowledgement. Measured by `calibrate net
    /// --run` (RendezvousSend/RendezvousRecv: the sender of one message
    /// done 0.02-0.07 µs after its receiver under MPICH 4.0.2 on the
    /// development machine, VALIDATION.md 4.22).
    pub rendezvous_send_received: bool,
    /// Seconds from a core's store to a flag in shared memory until another
    /// core of the node sees it (`flag_latency`): one cache-line transfer,
    /// the step of the shared-memory collectives (`sim_core::coll::Op::Flag`).
    /// `None`: [`DEFAULT_FLAG_LATENCY`], assumed. Invariant: finite, >= 0.
    pub flag_latency: Option<f64>,
    /// What the library's derived datatypes cost the rank's core (`type_*`
    /// keys); each `None` takes [`DatatypeCosts::ASSUMED`]'s value.
    pub datatype: DatatypeCosts,
    /// What the library's temporary buffers cost (`page_fault`,
    /// `page_size`, `allocator`).
    pub heap: HeapParams,
    /// `[[node.memcpy_segments]]`: the cost of a copy by its size, where the
    /// size decides which cache level holds the buffers (a copy of 256 KiB
    /// that a loop repeats runs from the caches, one of 4 MiB from memory:
    /// 45 and 13 GB/s on the development machine). Empty: every copy at
    /// `memcpy_bandwidth`. Sizes below the first segment's `from` too.
    pub memcpy_segments: Vec<RateSegment>,
    /// `[[node.reduce_segments]]`: the reduction's cost by its size (the
    /// same cache levels, measured by `MPI_Reduce_local`). Empty:
    /// `reduce_overhead` + `reduce_bandwidth` for every size; also below the
    /// first segment's `from`.
    pub reduce_segments: Vec<RateSegment>,
}

/// From `from` bytes on (up to the next segment's `from`), an operation of
/// `n` bytes costs `overhead + n · per_byte` seconds. Invariants: `overhead`
/// and `per_byte` finite and >= 0; in a list, `from` strictly increasing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateSegment {
    pub from: u64,
    pub overhead: f64,
    pub per_byte: f64,
}

impl RateSegment {
    /// The segment of `segments` (sorted by `from`) that prices `bytes`:
    /// the last whose `from` is at most `bytes`; `None` below the first.
    pub fn find(segments: &[RateSegment], bytes: u64) -> Option<&RateSegment> {
        let after = segments.partition_point(|s| s.from <= bytes);
        after.checked_sub(1).map(|i| &segments[i])
    }

    /// `overhead + bytes · per_byte`.
    pub fn seconds(&self, bytes: u64) -> f64 {
        self.overhead + bytes as f64 * self.per_byte
    }
}

/// The page faults of a collective's temporary buffers
/// (`sim_core::coll::Op::Alloc`): `page_fault` seconds per page of fresh
/// memory written (fault, zeroing, and the release when the allocator gives
/// it back), the pages being `page_size` bytes and the allocator's policy
/// `allocator` deciding which memory is fresh (`crate::heap`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HeapParams {
    /// `None`: not modelled (temporaries cost nothing). Invariant: finite,
    /// >= 0.
    pub page_fault: Option<f64>,
    /// Invariant: > 0.
    pub page_size: u64,
    pub allocator: crate::heap::Allocator,
}

impl Default for HeapParams {
    /// Not modelled; 4 KiB pages (x86-64 and most Linux systems); glibc.
    fn default() -> Self {
        HeapParams {
            page_fault: None,
            page_size: 4096,
            allocator: crate::heap::Allocator::Glibc,
        }
    }
}

/// The cost of a derived datatype of `k` blocks: `create + create_per_block
/// · k` seconds to create, commit and free it, `pack + pack_per_block · k`
/// to pack or unpack through it (Bruck's alltoall does both in every
/// step). `None`: not given, [`DatatypeCosts::ASSUMED`]'s value.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DatatypeCosts {
    pub create: Option<f64>,
    pub create_per_block: Option<f64>,
    pub pack: Option<f64>,
    pub pack_per_block: Option<f64>,
}

impl DatatypeCosts {
    /// MPICH 4.0.2 on the development machine
    /// (`validation/dev-machine/datatype.c`, VALIDATION.md section 5.4):
    /// `MPI_Type_create_indexed_block` + commit + free 0.78 µs + 3.9 ns per
    /// block, `MPI_Pack` 0.355 µs + 1.3 ns per block (Intel MPI 2021.13 on
    /// the same machine: 0.43 µs + 4.5 ns, 0.1 µs + 3.4 ns).
    pub const ASSUMED: [f64; 4] = [0.78e-6, 3.9e-9, 0.355e-6, 1.3e-9];

    /// Seconds to create, commit and free a type of `blocks` blocks.
    pub fn create_seconds(&self, blocks: u64) -> f64 {
        self.create.unwrap_or(Self::ASSUMED[0])
            + self.create_per_block.unwrap_or(Self::ASSUMED[1]) * blocks as f64
    }

    /// Seconds to pack or unpack `blocks` blocks through one.
    pub fn pack_seconds(&self, blocks: u64) -> f64 {
        self.pack.unwrap_or(Self::ASSUMED[2])
            + self.pack_per_block.unwrap_or(Self::ASSUMED[3]) * blocks as f64
    }

    /// Whether every cost is given (none assumed).
    pub fn all_given(&self) -> bool {
        self.create.is_some()
            && self.create_per_block.is_some()
            && self.pack.is_some()
            && self.pack_per_block.is_some()
    }
}

/// `node.flag_latency` when the machine file does not give it: 0.1 µs, the
/// order of a cache-line transfer between two cores of one socket of a
/// present-day x86 server (50-150 ns; more between sockets).
pub const DEFAULT_FLAG_LATENCY: f64 = 1e-7;

/// `node.progress` when the machine file does not give it.
pub const DEFAULT_PROGRESS_IN_CALLS: bool = true;
