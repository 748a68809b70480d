//! Graphviz DOT rendering of a [`crate::ir::Program`] (`parsim graph`).
