//! sim-core: parsim's program IR, the traits machine models implement, and
//! the deterministic event engine that runs one logical process per rank.
//!
//! This crate never parses text and never names a concrete model.

pub mod coll;
pub mod dot;
pub mod engine;
pub mod fold;
pub mod ir;
pub mod kernels;
pub mod model;
pub mod queue;
pub mod slots;
pub mod value;

pub use engine::{SimConfig, SimError, SimReport, simulate};
