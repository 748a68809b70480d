//! Machine files: TOML walked by hand so that every error names its exact
//! key path. The format is documented in `examples/machines/README.md`.
//!
//! This crate owns the format: it reads it (below), edits it by key path
//! ([`set_key`], for what-if studies) and writes it ([`write`](mod@write)).

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use sim_core::coll::{self, Algorithm, CollConfig, Library, ZeroCount};
use sim_core::ir::CollKind;
use toml::{Table, Value};

pub mod write;

use crate::error::MachineError;
use crate::params::{
    ChannelParams, CommModel, Duplex, DuplexScope, LogGpParams, NodeParams, Placement, RateSegment,
    Segment,
};
use crate::plugin::PluginSpec;
use crate::units::{self, UnitError, format_size};

/// A complete, static machine description: what a machine file says.
#[derive(Debug, Clone, PartialEq)]
pub struct MachineSpec {
    /// Short name (`name`).
    pub name: String,
    /// Free text (`description`), may be empty.
    pub description: String,
    /// Hardware or SMP (`model`).
    pub model: CommModel,
    /// The node model and placement (`[node]`).
    pub node: NodeParams,
    /// Network parameters (`[network]`).
    pub network: ChannelParams,
    /// Shared-memory parameters (`[shm]`); used only in the SMP model.
    pub shm: Option<ChannelParams>,
    /// Parameters of a message between two sockets of one node (`[socket]`);
    /// SMP model with `node.sockets > 1` only. Without it such messages use
    /// `[shm]`.
    pub socket: Option<ChannelParams>,
    /// Collective algorithms (`[collectives]`): the library whose selection
    /// rules apply (default MPICH) and per-collective forced algorithms.
    pub collectives: CollConfig,
}

const ROOT_KEYS: &[&str] = &[
    "name",
    "description",
    "model",
    "node",
    "network",
    "shm",
    "socket",
    "collectives",
];
const NODE_KEYS: &[&str] = &[
    "cpu_rate",
    "memcpy",
    "ranks_per_node",
    "placement",
    "sockets",
    "socket_placement",
    "reduce_op",
    "reduce_overhead",
    "timer",
    "progress",
    "rendezvous_send",
    "flag_latency",
    "type_create",
    "type_create_per_block",
    "type_pack",
    "type_pack_per_block",
    "page_fault",
    "page_size",
    "allocator",
    "memcpy_segments",
    "reduce_segments",
];
/// The keys of one `[[node.memcpy_segments]]` or `[[node.reduce_segments]]`.
const RATE_SEGMENT_KEYS: &[&str] = &["from", "overhead", "bandwidth"];
const CHANNEL_KEYS: &[&str] = &[
    "latency",
    "bandwidth",
    "gap_per_byte",
    "send_overhead",
    "recv_overhead",
    "gap",
    "latency_per_byte",
    "send_overhead_per_byte",
    "mtu",
    "eager_limit",
    "control_bytes",
    "duplex",
    "duplex_scope",
    "segments",
    "node_gap",
    "node_bandwidth",
    "measured_to",
    "written",
];
/// The keys of a channel's `[section.written]` table: what a ping-pong of
/// data written just before each send fits (the rest is the channel's).
const WRITTEN_KEYS: &[&str] = &[
    "latency",
    "bandwidth",
    "gap_per_byte",
    "send_overhead",
    "recv_overhead",
    "gap",
    "latency_per_byte",
    "segments",
];
/// The keys of one `[[network.segments]]` table: `from` and the LogGP
/// parameters that may change with the message size.
const SEGMENT_KEYS: &[&str] = &[
    "from",
    "latency",
    "bandwidth",
    "gap_per_byte",
    "send_overhead",
    "recv_overhead",
    "gap",
    "latency_per_byte",
    "duplex",
];

const TIME_EXPECTED: &str = "a time such as \"30 us\"";
const SIZE_EXPECTED: &str = "a size such as \"64 KiB\"";
const MTU_EXPECTED: &str = "a size such as \"9 KiB\" or \"unlimited\"";
const BANDWIDTH_EXPECTED: &str = "a bandwidth such as \"200 MB/s\"";

/// A key path that [`set_key`] cannot set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SetKeyError {
    /// A part of the path before the last names a value that is not a table.
    #[error("`{0}` is not a section")]
    NotASection(String),
}

/// Sets the key at a dotted path (`network.bandwidth`) of a parsed machine
/// file to `value`, creating the sections on the way. A value that reads as
/// an integer or a float is stored as that number; anything else (`"1
/// GB/s"`) as a string, as a machine file writes units. The result is
/// checked when the table is read as a machine.
pub fn set_key(table: &mut Table, key: &str, value: &str) -> Result<(), SetKeyError> {
    let mut parts: Vec<&str> = key.split('.').collect();
    // `split` yields at least one part, so there is a last one.
    let last = parts.pop().unwrap_or(key);
    let mut t = table;
    for p in parts {
        t = t
            .entry(p.to_owned())
            .or_insert_with(|| Value::Table(Table::new()))
            .as_table_mut()
            .ok_or_else(|| SetKeyError::NotASection(p.to_owned()))?;
    }
    let v = if let Ok(i) = value.parse::<i64>() {
        Value::Integer(i)
    } else if let Ok(f) = value.parse::<f64>() {
        Value::Float(f)
    } else {
        Value::String(value.to_owned())
    };
    t.insert(last.to_owned(), v);
    Ok(())
}

/// Parses and validates a LogGP machine file.
pub(crate) fn parse(text: &str, file: &str) -> Result<MachineSpec, MachineError> {
    from_table(&parse_table(text, file)?, file)
}

/// Parses a machine file's text into a TOML table.
pub(crate) fn parse_table(text: &str, file: &str) -> Result<Table, MachineError> {
    text.parse()
        .map_err(|err: toml::de::Error| MachineError::Syntax {
            file: file.into(),
            message: err.to_string().trim_end().into(),
        })
}

/// A machine file's name (for messages) and text.
pub(crate) fn read_file(path: &Path) -> Result<(String, String), MachineError> {
    let file = path.display().to_string();
    match std::fs::read_to_string(path) {
        Ok(text) => Ok((file, text)),
        Err(source) => Err(MachineError::Io { file, source }),
    }
}

/// Reads and validates a LogGP machine from a parsed file.
pub(crate) fn from_table(table: &Table, file: &str) -> Result<MachineSpec, MachineError> {
    let walker = Walker::new(file);
    // Before the keys are checked, which would only call `[plugin]` unknown.
    if let Some(value) = table.get("model").filter(|_| is_plugin(table)) {
        return Err(walker.bad_value(
            "model",
            "\"hardware\" or \"smp\" for a LogGP machine",
            value,
            Some(
                "a plugin machine is loaded with `models::load_machine`, which reads every kind"
                    .into(),
            ),
        ));
    }
    let spec = walker.root(table)?;
    validate(&spec, file)?;
    Ok(spec)
}

/// Whether a parsed machine file selects a plugin (`model = "plugin"`).
pub(crate) fn is_plugin(table: &Table) -> bool {
    table.get("model").and_then(Value::as_str) == Some("plugin")
}

/// Reads a plugin machine file (`model = "plugin"`); a relative
/// `plugin.library` is resolved against `base_dir`, the machine file's
/// directory.
pub(crate) fn plugin_from_table(
    table: &Table,
    file: &str,
    base_dir: &Path,
) -> Result<PluginSpec, MachineError> {
    Walker::new(file).plugin_root(table, base_dir)
}

/// Walks the table. Values that are present are checked as they are met;
/// the first missing required key is only recorded (with a placeholder value
/// standing in for it) and reported once the whole file has been walked, so
/// that a wrong value is reported before a missing key.
struct Walker<'f> {
    file: &'f str,
    first_missing: RefCell<Option<MachineError>>,
}

const MODEL_EXPECTED: &str = "\"hardware\", \"smp\" or \"plugin\"";
const PLUGIN_ROOT_KEYS: &[&str] = &["name", "description", "model", "plugin"];
const PLUGIN_KEYS: &[&str] = &["library", "params"];

fn join(section: &str, key: &str) -> String {
    if section.is_empty() {
        key.into()
    } else {
        format!("{section}.{key}")
    }
}

impl<'f> Walker<'f> {
    fn new(file: &'f str) -> Self {
        Walker {
            file,
            first_missing: RefCell::new(None),
        }
    }

    fn root(&self, table: &Table) -> Result<MachineSpec, MachineError> {
        self.check_keys("", table, ROOT_KEYS)?;
        let name = match self.required("", table, "name", None) {
            Some(value) => self.string(&value, "name")?,
            None => String::new(),
        };
        let description = match table.get("description") {
            Some(value) => self.string(value, "description")?,
            None => String::new(),
        };
        let model = match self.required("", table, "model", Some(MODEL_EXPECTED)) {
            None => CommModel::Hardware, // placeholder; the missing key is reported
            Some(value) => match value.as_str() {
                Some("hardware") => CommModel::Hardware,
                Some("smp") => CommModel::Smp,
                _ => return Err(self.bad_value("model", MODEL_EXPECTED, &value, None)),
            },
        };
        let empty = Table::new();
        let node = self.node(self.required_section(table, "node", &empty)?)?;
        let network = self.channel("network", self.required_section(table, "network", &empty)?)?;
        let shm = match self.section(table, "shm")? {
            Some(shm) => Some(self.channel("shm", shm)?),
            None => None,
        };
        let socket = match self.section(table, "socket")? {
            Some(socket) => Some(self.channel("socket", socket)?),
            None => None,
        };
        let collectives = match self.section(table, "collectives")? {
            Some(c) => self.collectives(c)?,
            None => CollConfig::default(),
        };
        if let Some(missing) = self.first_missing.take() {
            return Err(missing);
        }
        Ok(MachineSpec {
            name,
            description,
            model,
            node,
            network,
            shm,
            socket,
            collectives,
        })
    }

    /// A plugin machine: `name`, `description`, `model = "plugin"` and
    /// `[plugin]` with `library` and `[plugin.params]`.
    fn plugin_root(&self, table: &Table, base_dir: &Path) -> Result<PluginSpec, MachineError> {
        self.check_keys("", table, PLUGIN_ROOT_KEYS)?;
        let name = match self.required("", table, "name", None) {
            Some(value) => self.string(&value, "name")?,
            None => String::new(),
        };
        let description = match table.get("description") {
            Some(value) => self.string(value, "description")?,
            None => String::new(),
        };
        let empty = Table::new();
        let plugin = self.required_section(table, "plugin", &empty)?;
        self.check_keys("plugin", plugin, PLUGIN_KEYS)?;
        let library = match self.required(
            "plugin",
            plugin,
            "library",
            Some("the path of the shared library, relative to this file"),
        ) {
            Some(value) => {
                let text = self.string(&value, "plugin.library")?;
                if text.trim().is_empty() {
                    return Err(self.out_of_range(
                        "plugin.library",
                        "must name a shared library, got an empty path".into(),
                    ));
                }
                base_dir.join(text)
            }
            None => PathBuf::new(), // placeholder; the missing key is reported
        };
        let mut params = Vec::new();
        if let Some(section) = plugin.get("params") {
            let Value::Table(section) = section else {
                return Err(self.bad_value(
                    "plugin.params",
                    "a table `[plugin.params]`",
                    section,
                    None,
                ));
            };
            for (key, value) in section {
                let path = format!("plugin.params.{key}");
                let text = match value {
                    Value::String(text) => text.clone(),
                    Value::Integer(i) => i.to_string(),
                    // Debug: the shortest text that reads back to the same
                    // double, with an exponent when it is very large or
                    // small (`2.5e-6`), and always with a `.` or `e`.
                    Value::Float(x) => format!("{x:?}"),
                    Value::Boolean(b) => b.to_string(),
                    Value::Datetime(_) | Value::Array(_) | Value::Table(_) => {
                        return Err(self.bad_value(
                            &path,
                            "a string, number or boolean",
                            value,
                            None,
                        ));
                    }
                };
                if key.contains('\0') || text.contains('\0') {
                    return Err(self.out_of_range(&path, "must not contain a NUL character".into()));
                }
                params.push((key.clone(), text));
            }
        }
        if let Some(missing) = self.first_missing.take() {
            return Err(missing);
        }
        Ok(PluginSpec {
            name,
            description,
            library,
            params,
        })
    }

    fn node(&self, table: &Table) -> Result<NodeParams, MachineError> {
        const S: &str = "node";
        self.check_keys(S, table, NODE_KEYS)?;
        let cpu_rate = match table.get("cpu_rate") {
            None => 1.0,
            Some(value) => {
                let rate = match value {
                    Value::Float(x) => *x,
                    Value::Integer(i) => *i as f64,
                    _ => {
                        return Err(self.bad_value(
                            "node.cpu_rate",
                            "a number such as 1.0",
                            value,
                            None,
                        ));
                    }
                };
                if !(rate > 0.0 && rate.is_finite()) {
                    return Err(self
                        .out_of_range("node.cpu_rate", format!("must be positive, got {value}")));
                }
                rate
            }
        };
        let memcpy_bandwidth =
            match self.required(S, table, "memcpy", Some("a bandwidth such as \"1 GB/s\"")) {
                Some(value) => self.positive_bandwidth("node.memcpy", &value)?,
                None => 1.0, // placeholder; the missing key is reported
            };
        let ranks_per_node = match table.get("ranks_per_node") {
            None => 1,
            Some(value) => {
                let Value::Integer(count) = value else {
                    return Err(self.bad_value(
                        "node.ranks_per_node",
                        "a positive integer such as 2",
                        value,
                        None,
                    ));
                };
                u32::try_from(*count)
                    .ok()
                    .filter(|&p| p > 0)
                    .ok_or_else(|| {
                        self.out_of_range(
                            "node.ranks_per_node",
                            format!("must be between 1 and {}, got {count}", u32::MAX),
                        )
                    })?
            }
        };
        let placement = self.placement(table, "placement")?;
        let sockets = match table.get("sockets") {
            None => 1,
            Some(value) => {
                let Value::Integer(count) = value else {
                    return Err(self.bad_value(
                        "node.sockets",
                        "a positive integer such as 2",
                        value,
                        None,
                    ));
                };
                u32::try_from(*count)
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| {
                        self.out_of_range(
                            "node.sockets",
                            format!("must be between 1 and {}, got {count}", u32::MAX),
                        )
                    })?
            }
        };
        let socket_placement = self.placement(table, "socket_placement")?;
        // `reduce_op`: the rate of the reduction operation, as a bandwidth
        // ("2 GB/s") or a time per byte ("0.5 ns/B").
        let reduce_bandwidth = match table.get("reduce_op") {
            None => None,
            Some(value) => {
                let per_byte = value
                    .as_str()
                    .and_then(|t| t.trim().strip_suffix("/B"))
                    .map(str::to_owned);
                Some(match per_byte {
                    Some(t) => {
                        let secs = self.time("node.reduce_op", &Value::String(t))?;
                        if !(secs > 0.0 && secs.is_finite()) {
                            return Err(self.out_of_range(
                                "node.reduce_op",
                                format!("must be positive, got {value}"),
                            ));
                        }
                        1.0 / secs
                    }
                    None => self.positive_bandwidth("node.reduce_op", value)?,
                })
            }
        };
        let reduce_overhead = match table.get("reduce_overhead") {
            Some(value) => self.time("node.reduce_overhead", value)?,
            None => 0.0,
        };
        let timer = match table.get("timer") {
            Some(value) => self.time("node.timer", value)?,
            None => 0.0,
        };
        let rendezvous_send_received = match table.get("rendezvous_send") {
            None => false,
            Some(value) => match value.as_str() {
                Some("sent") => false,
                Some("received") => true,
                _ => {
                    return Err(self.bad_value(
                        "node.rendezvous_send",
                        "\"sent\" (a rendezvous send completes when its last byte has left) or \"received\" (when the receiver has it: today's libraries)",
                        value,
                        None,
                    ));
                }
            },
        };
        let progress_in_calls = match table.get("progress") {
            None => crate::params::DEFAULT_PROGRESS_IN_CALLS,
            Some(value) => match value.as_str() {
                Some("calls") => true,
                Some("async") => false,
                _ => {
                    return Err(self.bad_value(
                        "node.progress",
                        "\"calls\" (the library progresses only inside MPI calls) or \"async\" (a progress thread or the hardware)",
                        value,
                        None,
                    ));
                }
            },
        };
        let flag_latency = match table.get("flag_latency") {
            None => None,
            Some(value) => Some(self.time("node.flag_latency", value)?),
        };
        let mut datatype = crate::params::DatatypeCosts::default();
        for (key, slot) in [
            ("type_create", &mut datatype.create),
            ("type_create_per_block", &mut datatype.create_per_block),
            ("type_pack", &mut datatype.pack),
            ("type_pack_per_block", &mut datatype.pack_per_block),
        ] {
            if let Some(value) = table.get(key) {
                *slot = Some(self.time(&join("node", key), value)?);
            }
        }
        let mut heap = crate::params::HeapParams::default();
        if let Some(value) = table.get("page_fault") {
            heap.page_fault = Some(self.time("node.page_fault", value)?);
        }
        if let Some(value) = table.get("page_size") {
            let bytes = self.size("node.page_size", value, "a page size such as \"4 KiB\"")?;
            if bytes == 0 {
                return Err(
                    self.out_of_range("node.page_size", format!("must be positive, got {value}"))
                );
            }
            heap.page_size = bytes;
        }
        if let Some(value) = table.get("allocator") {
            heap.allocator = match value.as_str().and_then(crate::heap::Allocator::from_name) {
                Some(a) => a,
                None => {
                    return Err(self.bad_value(
                        "node.allocator",
                        "\"glibc\" (malloc's default, dynamic thresholds) or \"retain\" (an allocator that keeps what it got)",
                        value,
                        None,
                    ));
                }
            };
        }
        let memcpy_segments = match table.get("memcpy_segments") {
            None => Vec::new(),
            Some(value) => self.rate_segments("node.memcpy_segments", value)?,
        };
        let reduce_segments = match table.get("reduce_segments") {
            None => Vec::new(),
            Some(value) => self.rate_segments("node.reduce_segments", value)?,
        };
        Ok(NodeParams {
            memcpy_segments,
            reduce_segments,
            cpu_rate,
            memcpy_bandwidth,
            ranks_per_node,
            placement,
            sockets,
            socket_placement,
            reduce_bandwidth,
            reduce_overhead,
            timer,
            progress_in_calls,
            rendezvous_send_received,
            flag_latency,
            datatype,
            heap,
        })
    }

    /// `node.placement` or `node.socket_placement`: `"block"` (the
    /// default) or `"cyclic"`.
    fn placement(&self, table: &Table, key: &str) -> Result<Placement, MachineError> {
        match table.get(key) {
            None => Ok(Placement::Block),
            Some(value) => match value.as_str() {
                Some("block") => Ok(Placement::Block),
                Some("cyclic") => Ok(Placement::Cyclic),
                _ => {
                    Err(self.bad_value(&join("node", key), "\"block\" or \"cyclic\"", value, None))
                }
            },
        }
    }

    /// `[collectives]`: `library = "openmpi-5"` (see [`Library::from_name`]), `zero_count`,
    /// `call_overhead` (a time, or a table of `default` and per-collective times) and, per
    /// collective, a forced algorithm (`alltoall = "pairwise"`).
    fn collectives(&self, table: &Table) -> Result<CollConfig, MachineError> {
        let mut keys: Vec<&str> = vec!["library", "zero_count", "call_overhead", "shared_memory"];
        keys.extend(CollKind::ALL.iter().map(|k| k.name()));
        self.check_keys("collectives", table, &keys)?;
        let mut cfg = CollConfig::default();
        if let Some(value) = table.get("library") {
            cfg.library = value.as_str().and_then(Library::from_name).ok_or_else(|| {
                self.bad_value("collectives.library", &Library::known(), value, None)
            })?;
        }
        if let Some(value) = table.get("zero_count") {
            cfg.zero_count = Some(match value.as_str() {
                Some("return") => ZeroCount::Return,
                Some("communicate") => ZeroCount::Communicate,
                Some("barrier") => ZeroCount::Barrier,
                _ => {
                    return Err(self.bad_value(
                        "collectives.zero_count",
                        "\"return\" (MPICH, Open MPI), \"communicate\" or \"barrier\"",
                        value,
                        None,
                    ));
                }
            });
        }
        match table.get("call_overhead") {
            None => {}
            // One time for every call, or a table: `default` and one time
            // per collective that costs otherwise (`calibrate net --run`
            // measures each, VALIDATION.md 4.19).
            Some(Value::Table(per)) => {
                let mut keys = vec!["default"];
                keys.extend(CollKind::ALL.iter().map(|k| k.name()));
                self.check_keys("collectives.call_overhead", per, &keys)?;
                if let Some(value) = per.get("default") {
                    cfg.call_overhead = self.time("collectives.call_overhead.default", value)?;
                }
                for kind in CollKind::ALL {
                    if let Some(value) = per.get(kind.name()) {
                        let key = format!("collectives.call_overhead.{}", kind.name());
                        let t = self.time(&key, value)?;
                        cfg.set_call_overhead(kind, t);
                    }
                }
            }
            Some(value) => cfg.call_overhead = self.time("collectives.call_overhead", value)?,
        }
        if let Some(value) = table.get("shared_memory") {
            let Value::Boolean(on) = value else {
                return Err(self.bad_value(
                    "collectives.shared_memory",
                    "true (the library runs its collectives inside a node through shared memory: MPICH 4 built with ch4:ofi, Intel MPI) or false",
                    value,
                    None,
                ));
            };
            if *on && !cfg.library.has_shared_memory() {
                return Err(self.out_of_range(
                    "collectives.shared_memory",
                    format!(
                        "{} has no shared-memory collectives parsim models (mpich-4 and intelmpi-* do)",
                        cfg.library.name()
                    ),
                ));
            }
            cfg.shared_memory = Some(*on);
        }
        for kind in CollKind::ALL {
            let Some(value) = table.get(kind.name()) else {
                continue;
            };
            let key = format!("collectives.{}", kind.name());
            let names: Vec<&str> = coll::algorithms_for(kind)
                .iter()
                .map(|a| a.name())
                .collect();
            let expected = format!(
                "one of {}",
                names
                    .iter()
                    .map(|n| format!("\"{n}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            // The library's own name for its variant (under Open MPI,
            // "binomial" bcast is Open MPI's binomial tree).
            let alg = value
                .as_str()
                .and_then(|name| Algorithm::resolve(cfg.library, kind, name).ok())
                .ok_or_else(|| self.bad_value(&key, &expected, value, None))?;
            cfg.forced.push((kind, alg));
        }
        Ok(cfg)
    }

    fn channel(&self, section: &str, table: &Table) -> Result<ChannelParams, MachineError> {
        self.check_keys(section, table, CHANNEL_KEYS)?;
        let key = |name: &str| join(section, name);
        let latency = match self.required(section, table, "latency", None) {
            Some(value) => self.time(&key("latency"), &value)?,
            None => 0.0, // placeholder; the missing key is reported
        };
        let gap_per_byte = match self.gap_per_byte(section, table)? {
            Some(g) => g,
            None => {
                self.record_missing(
                    &key("bandwidth"),
                    Some(format!("or `{}`, seconds per byte", key("gap_per_byte"))),
                );
                0.0 // placeholder; the missing key is reported
            }
        };
        let optional_time = |name: &str| match table.get(name) {
            Some(value) => self.time(&key(name), value),
            None => Ok(0.0),
        };
        let send_overhead = optional_time("send_overhead")?;
        let recv_overhead = optional_time("recv_overhead")?;
        let gap = optional_time("gap")?;
        let latency_per_byte = optional_time("latency_per_byte")?;
        let send_overhead_per_byte = optional_time("send_overhead_per_byte")?;
        let mtu = match table.get("mtu") {
            None => None,
            Some(value)
                if value
                    .as_str()
                    .is_some_and(|text| text.trim() == "unlimited") =>
            {
                None
            }
            Some(value) => {
                let mtu = self.size(&key("mtu"), value, MTU_EXPECTED)?;
                if mtu == 0 {
                    return Err(
                        self.out_of_range(&key("mtu"), format!("must be positive, got {value}"))
                    );
                }
                Some(mtu)
            }
        };
        let eager_limit = match self.required(section, table, "eager_limit", None) {
            Some(value) => self.size(&key("eager_limit"), &value, SIZE_EXPECTED)?,
            None => 0, // placeholder; the missing key is reported
        };
        let control_bytes = match table.get("control_bytes") {
            Some(value) => self.size(&key("control_bytes"), value, SIZE_EXPECTED)?,
            None => 0,
        };
        let duplex = match table.get("duplex") {
            None => Duplex::FULL,
            Some(value) => self.duplex(&key("duplex"), value)?,
        };
        let duplex_scope = match table.get("duplex_scope") {
            None => DuplexScope::Node,
            Some(_) if section == "network" => {
                return Err(self.out_of_range(
                    &key("duplex_scope"),
                    "belongs in `[shm]` or `[socket]`: the network's duplex is always its \
                     node adapter's"
                        .to_owned(),
                ));
            }
            Some(value) => match value.as_str() {
                Some("node") => DuplexScope::Node,
                Some("rank") => DuplexScope::Rank,
                _ => {
                    return Err(self.out_of_range(
                        &key("duplex_scope"),
                        format!(
                            "must be \"node\" (one memory channel per node) or \"rank\" \
                             (each rank's core), got {value}"
                        ),
                    ));
                }
            },
        };
        let measured_to = match table.get("measured_to") {
            Some(value) => Some(self.size(&key("measured_to"), value, SIZE_EXPECTED)?),
            None => None,
        };
        let (node_gap, node_bandwidth) = self.node_shared(section, table)?;
        let base = LogGpParams {
            latency,
            send_overhead,
            recv_overhead,
            gap,
            gap_per_byte,
            latency_per_byte,
        };
        let segments = match table.get("segments") {
            None => Vec::new(),
            // A segment's own duplex: on the network, and inside a node
            // where the duplex is each rank's (its timelines are the
            // rank's own at every size, so a segment may cross with its
            // own share).
            Some(value) => self.segments(
                &key("segments"),
                value,
                &base,
                section == "network" || duplex_scope == DuplexScope::Rank,
            )?,
        };
        let mut channel = ChannelParams {
            latency,
            send_overhead,
            recv_overhead,
            send_overhead_per_byte,
            gap,
            gap_per_byte,
            latency_per_byte,
            mtu,
            eager_limit,
            control_bytes,
            segments,
            duplex,
            duplex_scope,
            node_gap,
            node_bandwidth,
            measured_to,
            written: None,
        };
        if let Some(written) = self.section(table, "written")? {
            channel.written = Some(Box::new(self.written(
                &key("written"),
                written,
                &channel,
            )?));
        }
        Ok(channel)
    }

    /// `[section.written]`: the channel for data its sender has just
    /// written ([`ChannelParams::written`]): the LogGP parameters a written
    /// ping-pong fits, each inherited from the channel where not given,
    /// and its own `[[section.written.segments]]` (which inherit its base);
    /// the rest is the channel's.
    fn written(
        &self,
        section: &str,
        table: &Table,
        channel: &ChannelParams,
    ) -> Result<ChannelParams, MachineError> {
        self.check_keys(section, table, WRITTEN_KEYS)?;
        let key = |name: &str| join(section, name);
        let base = self.inherited(section, table, &channel.base())?;
        // A written segment has the channel's duplex: how the two
        // directions share the adapter is the mechanism's, not the data's.
        let segments = match table.get("segments") {
            None => Vec::new(),
            Some(value) => self.segments(&key("segments"), value, &base, false)?,
        };
        Ok(ChannelParams {
            latency: base.latency,
            send_overhead: base.send_overhead,
            recv_overhead: base.recv_overhead,
            gap: base.gap,
            gap_per_byte: base.gap_per_byte,
            latency_per_byte: base.latency_per_byte,
            segments,
            written: None,
            ..channel.clone()
        })
    }

    /// A channel's node-wide keys: `node_gap` (the network adapter's own
    /// per-message occupancy, `[network]` only) and `node_bandwidth` (the
    /// node's memory throughput for shared-memory messages, `[shm]` only).
    /// Each belongs to one section: in the other it would have no meaning,
    /// so it is an error naming the key, not a key quietly ignored.
    fn node_shared(
        &self,
        section: &str,
        table: &Table,
    ) -> Result<(f64, Option<f64>), MachineError> {
        let key = |name: &str| join(section, name);
        let misplaced = |name: &str, home: &str, what: &str| {
            self.out_of_range(&key(name), format!("belongs in `[{home}]`: it is {what}"))
        };
        let node_gap = match table.get("node_gap") {
            None => 0.0,
            Some(_) if section != "network" => {
                return Err(misplaced(
                    "node_gap",
                    "network",
                    "the network adapter's per-message occupancy, shared by its node's ranks",
                ));
            }
            Some(value) => self.time(&key("node_gap"), value)?,
        };
        let node_bandwidth = match table.get("node_bandwidth") {
            None => None,
            Some(_) if section != "shm" => {
                return Err(misplaced(
                    "node_bandwidth",
                    "shm",
                    "the node's memory throughput for shared-memory messages",
                ));
            }
            Some(value) => Some(self.positive_bandwidth(&key("node_bandwidth"), value)?),
        };
        Ok((node_gap, node_bandwidth))
    }

    /// `[[network.segments]]`: an array of tables, each with a required
    /// `from` (strictly increasing) and any of the LogGP parameters; keys
    /// not given inherit `base`.
    fn segments(
        &self,
        key: &str,
        value: &Value,
        base: &LogGpParams,
        network: bool,
    ) -> Result<Vec<Segment>, MachineError> {
        self.ordered_by_from(
            key,
            value,
            "an array of tables `[[...segments]]` with `from` and parameters",
            "a table with `from`",
            |section, table| self.segment(section, table, base, network),
            |segment| segment.from,
        )
    }

    /// An array of tables `key[i]`, each parsed by `parse` (given its
    /// section name, `key[i]`), whose `from` strictly increases: the
    /// segments of a channel and of the node's rates.
    fn ordered_by_from<T>(
        &self,
        key: &str,
        value: &Value,
        expected: &str,
        item_expected: &str,
        parse: impl Fn(&str, &Table) -> Result<T, MachineError>,
        from: impl Fn(&T) -> u64,
    ) -> Result<Vec<T>, MachineError> {
        let Value::Array(items) = value else {
            return Err(self.bad_value(key, expected, value, None));
        };
        let mut parsed: Vec<T> = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            let section = format!("{key}[{index}]");
            let Value::Table(table) = item else {
                return Err(self.bad_value(&section, item_expected, item, None));
            };
            let next = parse(&section, table)?;
            // Not a let chain: those are newer than the MSRV (1.85).
            if let Some(previous) = parsed.last().filter(|p| from(&next) <= from(p)) {
                return Err(self.out_of_range(
                    &join(&section, "from"),
                    not_increasing(from(&next), from(previous)),
                ));
            }
            parsed.push(next);
        }
        Ok(parsed)
    }

    /// `[[node.memcpy_segments]]` / `[[node.reduce_segments]]`: an array of
    /// tables, each with a required `from` (strictly increasing) and
    /// `bandwidth` (positive, or `"unlimited"`: no cost per byte), and an
    /// optional `overhead` (a time, default 0).
    fn rate_segments(&self, key: &str, value: &Value) -> Result<Vec<RateSegment>, MachineError> {
        self.ordered_by_from(
            key,
            value,
            "an array of tables with `from`, `bandwidth` and optionally `overhead`",
            "a table with `from` and `bandwidth`",
            |section, table| self.rate_segment(section, table),
            |segment| segment.from,
        )
    }

    /// One `[[node.memcpy_segments]]` or `[[node.reduce_segments]]` table.
    fn rate_segment(&self, section: &str, table: &Table) -> Result<RateSegment, MachineError> {
        self.check_keys(section, table, RATE_SEGMENT_KEYS)?;
        let from = match self.required(section, table, "from", Some(SIZE_EXPECTED)) {
            Some(value) => self.size(&join(section, "from"), &value, SIZE_EXPECTED)?,
            None => 0, // placeholder; the missing key is reported
        };
        let per_byte = match self.required(section, table, "bandwidth", Some(BANDWIDTH_EXPECTED)) {
            Some(Value::String(text)) if text.trim() == "unlimited" => 0.0,
            Some(value) => 1.0 / self.positive_bandwidth(&join(section, "bandwidth"), &value)?,
            None => 0.0, // placeholder; the missing key is reported
        };
        let overhead = match table.get("overhead") {
            Some(value) => self.time(&join(section, "overhead"), value)?,
            None => 0.0,
        };
        Ok(RateSegment {
            from,
            overhead,
            per_byte,
        })
    }

    /// G from `bandwidth` or `gap_per_byte` (never both); `None` when
    /// neither is given (the caller decides: required, or inherited).
    fn gap_per_byte(&self, section: &str, table: &Table) -> Result<Option<f64>, MachineError> {
        let key = |name: &str| join(section, name);
        match (table.get("bandwidth"), table.get("gap_per_byte")) {
            (Some(_), Some(_)) => Err(MachineError::Conflict {
                file: self.file.into(),
                key: key("bandwidth"),
                other: key("gap_per_byte"),
            }),
            (Some(bandwidth), None) => Ok(Some(
                1.0 / self.positive_bandwidth(&key("bandwidth"), bandwidth)?,
            )),
            (None, Some(gap_per_byte)) => self.time(&key("gap_per_byte"), gap_per_byte).map(Some),
            (None, None) => Ok(None),
        }
    }

    fn segment(
        &self,
        section: &str,
        table: &Table,
        base: &LogGpParams,
        network: bool,
    ) -> Result<Segment, MachineError> {
        self.check_keys(section, table, SEGMENT_KEYS)?;
        let key = |name: &str| join(section, name);
        let from = match self.required(section, table, "from", Some(SIZE_EXPECTED)) {
            Some(value) => self.size(&key("from"), &value, SIZE_EXPECTED)?,
            None => 0, // placeholder; the missing key is reported
        };
        let params = self.inherited(section, table, base)?;
        // A segment's own duplex changes only how its messages cross others
        // on the network adapter's byte intervals. Inside a node the
        // channel's duplex also chooses the timelines (per rank or per
        // node) for every size, which a segment cannot change alone.
        let duplex = match table.get("duplex") {
            None => None,
            Some(_) if !network => {
                return Err(self.out_of_range(
                    &key("duplex"),
                    "a segment's own duplex belongs in `[[network.segments]]`, or inside \
                     a node with `duplex_scope = \"rank\"`; with one memory channel per \
                     node give the channel's `duplex`"
                        .to_owned(),
                ));
            }
            Some(value) => Some(self.duplex(&key("duplex"), value)?),
        };
        Ok(Segment {
            from,
            params,
            duplex,
        })
    }

    /// The LogGP parameters a table gives (`latency`, `send_overhead`,
    /// `recv_overhead`, `gap`, `latency_per_byte`, `bandwidth` or
    /// `gap_per_byte`), each inherited from `base` where not given: a
    /// segment's over its channel's base, a written channel's over its
    /// channel's.
    fn inherited(
        &self,
        section: &str,
        table: &Table,
        base: &LogGpParams,
    ) -> Result<LogGpParams, MachineError> {
        let key = |name: &str| join(section, name);
        let time_or = |name: &str, inherited: f64| match table.get(name) {
            Some(value) => self.time(&key(name), value),
            None => Ok(inherited),
        };
        Ok(LogGpParams {
            latency: time_or("latency", base.latency)?,
            send_overhead: time_or("send_overhead", base.send_overhead)?,
            recv_overhead: time_or("recv_overhead", base.recv_overhead)?,
            gap: time_or("gap", base.gap)?,
            // Read in the order a bad key has always been reported in.
            latency_per_byte: time_or("latency_per_byte", base.latency_per_byte)?,
            gap_per_byte: self
                .gap_per_byte(section, table)?
                .unwrap_or(base.gap_per_byte),
        })
    }

    /// A `duplex` value: `"full"`, `"half"` or the overlap share.
    fn duplex(&self, key: &str, value: &Value) -> Result<Duplex, MachineError> {
        let parsed = match value {
            Value::String(text) if text == "full" => Some(Duplex::FULL),
            Value::String(text) if text == "half" => Some(Duplex::HALF),
            Value::Float(share) => Duplex::partial(*share),
            Value::Integer(share) => Duplex::partial(*share as f64),
            _ => None,
        };
        parsed.ok_or_else(|| {
            self.bad_value(
                key,
                "\"full\", \"half\", or the share of time the two directions overlap, a number from 0 (half) to 1 (full)",
                value,
                None,
            )
        })
    }

    /// Refuses keys not in `allowed`, suggesting the closest allowed one.
    fn check_keys(
        &self,
        section: &str,
        table: &Table,
        allowed: &[&str],
    ) -> Result<(), MachineError> {
        match table.keys().find(|key| !allowed.contains(&key.as_str())) {
            None => Ok(()),
            Some(key) => Err(MachineError::UnknownKey {
                file: self.file.into(),
                key: join(section, key),
                suggestion: closest(key, allowed).map(str::to_owned),
            }),
        }
    }

    fn section<'t>(&self, table: &'t Table, key: &str) -> Result<Option<&'t Table>, MachineError> {
        match table.get(key) {
            None => Ok(None),
            Some(Value::Table(section)) => Ok(Some(section)),
            Some(value) => Err(self.bad_value(key, &format!("a table `[{key}]`"), value, None)),
        }
    }

    /// A top-level table that must be present; `empty` stands in for it
    /// when it is missing (which is recorded).
    fn required_section<'t>(
        &self,
        table: &'t Table,
        key: &str,
        empty: &'t Table,
    ) -> Result<&'t Table, MachineError> {
        Ok(self.section(table, key)?.unwrap_or_else(|| {
            self.record_missing(key, None);
            empty
        }))
    }

    /// The value of a required key; when it is missing, records that and
    /// returns `None` (the caller substitutes a placeholder).
    fn required(
        &self,
        section: &str,
        table: &Table,
        key: &str,
        hint: Option<&str>,
    ) -> Option<Value> {
        let value = table.get(key).cloned();
        if value.is_none() {
            self.record_missing(
                &join(section, key),
                hint.map(|hint| format!("expected {hint}")),
            );
        }
        value
    }

    fn record_missing(&self, key: &str, hint: Option<String>) {
        let mut first = self.first_missing.borrow_mut();
        if first.is_none() {
            *first = Some(MachineError::MissingKey {
                file: self.file.into(),
                key: key.into(),
                hint,
            });
        }
    }

    fn string(&self, value: &Value, key: &str) -> Result<String, MachineError> {
        value
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| self.bad_value(key, "a string", value, None))
    }

    /// A non-negative time in seconds.
    fn time(&self, key: &str, value: &Value) -> Result<f64, MachineError> {
        let seconds = self.quantity(
            key,
            value,
            TIME_EXPECTED,
            units::parse_time,
            "s, ms, us, µs, ns",
        )?;
        if seconds < 0.0 {
            return Err(self.out_of_range(key, format!("must not be negative, got {value}")));
        }
        Ok(seconds)
    }

    /// A positive, finite bandwidth in bytes per second.
    fn positive_bandwidth(&self, key: &str, value: &Value) -> Result<f64, MachineError> {
        let rate = self.quantity(
            key,
            value,
            BANDWIDTH_EXPECTED,
            units::parse_bandwidth,
            "B/s, KB/s, MB/s, GB/s, KiB/s, MiB/s, GiB/s, kbit/s, Mbit/s, Gbit/s",
        )?;
        if rate <= 0.0 {
            return Err(self.out_of_range(key, format!("must be positive, got {value}")));
        }
        Ok(rate)
    }

    /// A whole, non-negative number of bytes.
    fn size(&self, key: &str, value: &Value, expected: &str) -> Result<u64, MachineError> {
        let bytes = self.quantity(
            key,
            value,
            expected,
            units::parse_size,
            "B, KB, MB, GB, KiB, MiB, GiB",
        )?;
        if bytes < 0.0 {
            return Err(self.out_of_range(key, format!("must not be negative, got {value}")));
        }
        if bytes.fract() != 0.0 {
            return Err(
                self.out_of_range(key, format!("must be a whole number of bytes, got {value}"))
            );
        }
        // 2^64 as f64 is exact; everything below it converts without loss of
        // the integer value (it is whole, checked above).
        if bytes >= 18_446_744_073_709_551_616.0 {
            return Err(self.out_of_range(key, format!("is too large, got {value}")));
        }
        Ok(bytes as u64)
    }

    fn quantity(
        &self,
        key: &str,
        value: &Value,
        expected: &str,
        parse: fn(&str) -> Result<f64, UnitError>,
        known_units: &str,
    ) -> Result<f64, MachineError> {
        let Some(text) = value.as_str() else {
            let hint = matches!(value, Value::Integer(_) | Value::Float(_))
                .then(|| "write the quantity as a string with its unit".to_owned());
            return Err(self.bad_value(key, expected, value, hint));
        };
        parse(text).map_err(|err| {
            let hint = match err {
                UnitError::UnknownUnit(_) | UnitError::MissingUnit => {
                    format!("{err}; known units: {known_units}")
                }
                UnitError::NoNumber | UnitError::AmbiguousBits(..) | UnitError::NotFinite => {
                    err.to_string()
                }
            };
            self.bad_value(key, expected, value, Some(hint))
        })
    }

    fn bad_value(
        &self,
        key: &str,
        expected: &str,
        value: &Value,
        hint: Option<String>,
    ) -> MachineError {
        MachineError::BadValue {
            file: self.file.into(),
            key: key.into(),
            expected: expected.into(),
            got: value.to_string(),
            hint,
        }
    }

    fn out_of_range(&self, key: &str, reason: String) -> MachineError {
        MachineError::OutOfRange {
            file: self.file.into(),
            key: key.into(),
            reason,
        }
    }
}

/// The allowed key closest to `key` by edit distance, if it is close enough
/// to be a typo (at most 2 edits, and fewer edits than the key has letters).
fn closest<'a>(key: &str, allowed: &[&'a str]) -> Option<&'a str> {
    let key = key.to_lowercase();
    allowed
        .iter()
        .map(|&candidate| (levenshtein(&key, candidate), candidate))
        .filter(|&(distance, candidate)| distance <= 2 && distance < candidate.chars().count())
        .min_by_key(|&(distance, _)| distance)
        .map(|(_, candidate)| candidate)
}

/// Levenshtein edit distance (insertions, deletions, substitutions).
fn levenshtein(a: &str, b: &str) -> usize {
    strsim::levenshtein(a, b)
}

/// Checks the ranges and the cross-key rules of a spec, whether it came from
/// a file or from code. Errors name the key the offending field is read from.
pub(crate) fn validate(spec: &MachineSpec, file: &str) -> Result<(), MachineError> {
    let out_of_range = |key: &str, reason: String| MachineError::OutOfRange {
        file: file.into(),
        key: key.into(),
        reason,
    };
    let node = &spec.node;
    if !(node.cpu_rate > 0.0 && node.cpu_rate.is_finite()) {
        return Err(out_of_range(
            "node.cpu_rate",
            format!("must be positive, got {}", node.cpu_rate),
        ));
    }
    if !(node.memcpy_bandwidth > 0.0 && node.memcpy_bandwidth.is_finite()) {
        return Err(out_of_range(
            "node.memcpy",
            format!(
                "must be a positive, finite bandwidth, got {} B/s",
                node.memcpy_bandwidth
            ),
        ));
    }
    for (name, segments) in [
        ("node.memcpy_segments", &node.memcpy_segments),
        ("node.reduce_segments", &node.reduce_segments),
    ] {
        for (index, segment) in segments.iter().enumerate() {
            let ok = |x: f64| x >= 0.0 && x.is_finite();
            if !ok(segment.overhead) || !ok(segment.per_byte) {
                return Err(out_of_range(
                    &format!("{name}[{index}]"),
                    format!(
                        "overhead and time per byte must be finite and not negative, got {} s and {} s/B",
                        segment.overhead, segment.per_byte
                    ),
                ));
            }
            if index > 0 && segment.from <= segments[index - 1].from {
                return Err(out_of_range(
                    &format!("{name}[{index}].from"),
                    not_increasing(segment.from, segments[index - 1].from),
                ));
            }
        }
    }
    if node.ranks_per_node == 0 {
        return Err(out_of_range(
            "node.ranks_per_node",
            "must be at least 1, got 0".into(),
        ));
    }
    if spec.model == CommModel::Hardware && node.ranks_per_node != 1 {
        return Err(out_of_range(
            "node.ranks_per_node",
            format!(
                "the hardware model puts every rank on its own node, so it must be 1, got {} \
                 (use model = \"smp\" for several ranks per node)",
                node.ranks_per_node
            ),
        ));
    }
    if node.sockets == 0 {
        return Err(out_of_range(
            "node.sockets",
            "must be at least 1, got 0".into(),
        ));
    }
    if spec.model == CommModel::Hardware && node.sockets != 1 {
        return Err(out_of_range(
            "node.sockets",
            format!(
                "the hardware model puts every rank on its own node, so it must be 1, got {} \
                 (use model = \"smp\" for a node of several sockets)",
                node.sockets
            ),
        ));
    }
    validate_channel(&spec.network, "network", file)?;
    if let Some(socket) = &spec.socket {
        let reason = if spec.model != CommModel::Smp {
            Some(
                "the [socket] channel is for messages between two sockets of a node, so it \
                 needs model = \"smp\""
                    .to_owned(),
            )
        } else if node.sockets < 2 {
            Some(format!(
                "the [socket] channel needs at least 2 sockets per node (node.sockets), got {}",
                node.sockets
            ))
        } else if spec.shm.is_none() {
            Some(
                "the [socket] channel needs a [shm] table too (messages inside one socket)"
                    .to_owned(),
            )
        } else {
            None
        };
        if let Some(reason) = reason {
            return Err(out_of_range("socket", reason));
        }
        validate_channel(socket, "socket", file)?;
    }
    match &spec.shm {
        Some(shm) => validate_channel(shm, "shm", file)?,
        None if spec.model == CommModel::Smp && node.ranks_per_node > 1 => {
            return Err(MachineError::MissingKey {
                file: file.into(),
                key: "shm".into(),
                hint: Some(
                    "model = \"smp\" with more than one rank per node needs the shared-memory \
                     parameters in a `[shm]` table"
                        .into(),
                ),
            });
        }
        None => {}
    }
    Ok(())
}

fn not_increasing(from: u64, previous: u64) -> String {
    format!(
        "segments must have strictly increasing `from`: {} is not above the previous \
         segment's {}",
        format_size(from),
        format_size(previous)
    )
}

/// The LogGP times of a channel or segment are finite and not negative.
fn validate_times(params: &LogGpParams, section: &str, file: &str) -> Result<(), MachineError> {
    let times = [
        ("latency", params.latency),
        ("send_overhead", params.send_overhead),
        ("recv_overhead", params.recv_overhead),
        ("gap", params.gap),
        ("gap_per_byte", params.gap_per_byte),
        ("latency_per_byte", params.latency_per_byte),
    ];
    for (name, seconds) in times {
        if !(seconds >= 0.0 && seconds.is_finite()) {
            return Err(MachineError::OutOfRange {
                file: file.into(),
                key: join(section, name),
                reason: format!("must be a non-negative, finite time, got {seconds} s"),
            });
        }
    }
    Ok(())
}

fn validate_channel(
    channel: &ChannelParams,
    section: &str,
    file: &str,
) -> Result<(), MachineError> {
    validate_times(&channel.base(), section, file)?;
    if let Some(written) = &channel.written {
        if written.written.is_some() {
            return Err(MachineError::OutOfRange {
                file: file.into(),
                key: join(section, "written.written"),
                reason: "a written channel has no written channel of its own".into(),
            });
        }
        validate_channel(written, &join(section, "written"), file)?;
    }
    for (index, segment) in channel.segments.iter().enumerate() {
        let section = format!("{section}.segments[{index}]");
        validate_times(&segment.params, &section, file)?;
        let previous = index
            .checked_sub(1)
            .and_then(|i| channel.segments.get(i))
            .filter(|p| segment.from <= p.from);
        if let Some(previous) = previous {
            return Err(MachineError::OutOfRange {
                file: file.into(),
                key: join(&section, "from"),
                reason: not_increasing(segment.from, previous.from),
            });
        }
    }
    if !(channel.send_overhead_per_byte >= 0.0 && channel.send_overhead_per_byte.is_finite()) {
        return Err(MachineError::OutOfRange {
            file: file.into(),
            key: join(section, "send_overhead_per_byte"),
            reason: format!(
                "must be a non-negative, finite time per byte, got {} s",
                channel.send_overhead_per_byte
            ),
        });
    }
    if !(channel.node_gap >= 0.0 && channel.node_gap.is_finite()) {
        return Err(MachineError::OutOfRange {
            file: file.into(),
            key: join(section, "node_gap"),
            reason: format!(
                "must be a non-negative, finite time, got {} s",
                channel.node_gap
            ),
        });
    }
    if let Some(rate) = channel.node_bandwidth
        && !(rate > 0.0 && rate.is_finite())
    {
        return Err(MachineError::OutOfRange {
            file: file.into(),
            key: join(section, "node_bandwidth"),
            reason: format!("must be a positive, finite bandwidth, got {rate} B/s"),
        });
    }
    if channel.mtu == Some(0) {
        return Err(MachineError::OutOfRange {
            file: file.into(),
            key: join(section, "mtu"),
            reason: "must be positive or \"unlimited\", got 0 B".into(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{closest, levenshtein};

    #[test]
    fn edit_distance() {
        assert_eq!(levenshtein("latncy", "latency"), 1);
        assert_eq!(levenshtein("", "gap"), 3);
        assert_eq!(levenshtein("kitten", "sitting"), 3);
    }

    #[test]
    fn suggestions() {
        let keys = ["latency", "gap", "mtu"];
        assert_eq!(closest("latncy", &keys), Some("latency"));
        assert_eq!(closest("Latency", &keys), Some("latency"));
        assert_eq!(closest("colour", &keys), None);
    }
}

#[cfg(test)]
mod set_key_tests {
    use super::{SetKeyError, Table, Value, parse, set_key};

    const FILE: &str = "name = \"t\"\nmodel = \"hardware\"\n[node]\nmemcpy = \"1 GB/s\"\n\
                        [network]\nlatency = \"1 us\"\nbandwidth = \"1 GB/s\"\neager_limit = \"64 KiB\"\n";

    #[test]
    fn keys_are_set_by_path_with_numbers_kept_numbers() {
        let mut table: Table = match FILE.parse() {
            Ok(table) => table,
            Err(err) => panic!("{err}"),
        };
        assert_eq!(set_key(&mut table, "network.bandwidth", "10 GB/s"), Ok(()));
        assert_eq!(set_key(&mut table, "node.cpu_rate", "2"), Ok(()));
        assert_eq!(set_key(&mut table, "node.ranks_per_node", "1"), Ok(()));
        assert_eq!(
            set_key(&mut table, "collectives.library", "openmpi"),
            Ok(())
        );
        assert_eq!(table["node"]["cpu_rate"], Value::Integer(2));
        let text = table.to_string();
        let spec = match parse(&text, "t.toml") {
            Ok(spec) => spec,
            Err(err) => panic!("{err}\n{text}"),
        };
        assert_eq!(spec.network.gap_per_byte, 1e-10);
        assert_eq!(spec.node.cpu_rate, 2.0);
        assert_eq!(spec.collectives.library, sim_core::coll::Library::OpenMpi5);
        // A float stays a float.
        assert_eq!(set_key(&mut table, "node.cpu_rate", "0.5"), Ok(()));
        assert_eq!(table["node"]["cpu_rate"], Value::Float(0.5));
    }

    #[test]
    fn a_value_on_the_path_is_not_a_section() {
        let mut table: Table = match FILE.parse() {
            Ok(table) => table,
            Err(err) => panic!("{err}"),
        };
        let err = set_key(&mut table, "name.first", "x");
        assert_eq!(err, Err(SetKeyError::NotASection("name".into())));
        assert_eq!(
            err.map_err(|e| e.to_string()),
            Err("`name` is not a section".to_owned())
        );
    }
}
