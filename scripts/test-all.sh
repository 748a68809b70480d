#!/usr/bin/env bash
# Runs every test of parsim on a fresh machine: installs what the tests need
# if it is missing, then formatting, lints and the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null 2>&1; then
    echo "cargo not found: install Rust with rustup (https://rustup.rs) first" >&2
    exit 1
fi
# rustfmt and clippy come with the default rustup profile; add them if absent.
if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
    rustup component add rustfmt clippy
fi

cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --all-targets --locked
