//! parsim's machine models.
//!
//! One concrete [`sim_core::model::Machine`]: [`LogGpMachine`], LogGP
//! (Alexandrov et al., SPAA 1995) with the MTU fragmentation and the two
//! communication models of the ParJava interpreter (Padaryan, "Estimating
//! parallel program run time with the ParJava interpreter"): *Hardware*,
//! every rank on its own node, and *SMP*, ranks placed on nodes whose
//! intra-node messages use shared-memory parameters. Parameters can change
//! with the message size (piecewise LogGP, [`Segment`]), and NICs and
//! memory channels have transmit and receive timelines, shared in half
//! duplex ([`Duplex`]).
//!
//! Machines are described in TOML with units written out (see [`units`]:
//! `MB` = 10^6 bytes, `MiB` = 2^20 bytes) and loaded with
//! [`LogGpMachine::load`] or [`LogGpMachine::from_toml_str`];
//! [`LogGpMachine::builtin_default`] is a present-day InfiniBand cluster.

mod config;
mod error;
mod machine;
mod params;
pub mod units;

pub use config::MachineSpec;
pub use error::MachineError;
pub use machine::{IN_MEMORY_FILE, LogGpMachine};
pub use params::{
    ChannelParams, CommModel, Duplex, LogGpParams, NodeParams, Packets, Placement, Segment,
};
