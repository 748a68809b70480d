//! parsim's machine models.
//!
//! A machine is a description ([`sim_core::model::MachineDesc`]: parsed
//! once, immutable, shared between threads) that starts one run state per
//! simulation (a [`sim_core::model::Machine`], which holds the NIC
//! timelines).
//!
//! One concrete description: [`LogGpMachine`] (runs: [`LogGpRun`]), LogGP
//! (Alexandrov et al., SPAA 1995) with the MTU fragmentation and the two
//! communication models of the ParJava interpreter (Padaryan, "Estimating
//! parallel program run time with the ParJava interpreter"): *Hardware*,
//! every rank on its own node, and *SMP*, ranks placed on nodes whose
//! intra-node messages use shared-memory parameters. Parameters can change
//! with the message size (piecewise LogGP, [`Segment`]), and NICs and
//! memory channels have transmit and receive timelines, shared in half
//! duplex ([`Duplex`]).
//!
//! The other: [`PluginMachine`] (runs: [`PluginRun`]), a user's own model
//! in a shared library behind a small, versioned C ABI
//! (`examples/plugin/parsim_model.h`); its runs take turns with the one
//! model object the library created.
//!
//! Machines are described in TOML with units written out (see [`units`]:
//! `MB` = 10^6 bytes, `MiB` = 2^20 bytes). [`load_machine`] reads a file of
//! any kind into an [`AnyMachine`] (runs: [`AnyRun`]), chosen by the
//! file's `model` key;
//! [`LogGpMachine::load`] and [`LogGpMachine::from_toml_str`] read LogGP
//! files only. [`LogGpMachine::builtin_default`] is a present-day
//! InfiniBand cluster. [`AnyMachine::zero_buffering`] is the same machine
//! with eager limit 0 (`parsim check`).
//!
//! This crate owns the machine-file format: [`config`] reads it, edits it
//! by key path ([`config::set_key`]) and writes it ([`config::write`]).

#![deny(unsafe_code)] // except in `plugin::ffi`, with its safety argument

mod any;
mod busy;
pub mod config;
mod error;
pub mod heap;
mod machine;
mod params;
mod plugin;
pub mod units;

pub use any::{AnyMachine, AnyRun, load_machine};
pub use config::MachineSpec;
pub use error::MachineError;
pub use machine::{IN_MEMORY_FILE, Level, LogGpMachine, LogGpRun};
pub use params::{
    ChannelParams, CommModel, DEFAULT_FLAG_LATENCY, DEFAULT_PROGRESS_IN_CALLS, DatatypeCosts,
    Duplex, DuplexScope, HeapParams, LogGpParams, NodeParams, Packets, Placement, RateSegment,
    Segment,
};
pub use plugin::{PLUGIN_ABI_VERSION, PluginMachine, PluginRun, PluginSpec, PluginViolation};
