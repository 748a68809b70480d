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

# System packages the end-to-end tests use: MPICH (mpicc, mpirun) for the
# real MPI runs of emitted programs and the calibration loop, SimGrid
# (smpicc) to check that emitted C builds for SMPI, a C compiler for native
# kernels, Chromium (headless) for the report page, tmux for the live
# monitor, DejaVu fonts for PNG charts, Graphviz for the documents'
# `parsim graph ... | dot` (every documented command runs in a test).
missing=()
command -v cc >/dev/null 2>&1 || missing+=(gcc libc6-dev)
command -v mpicc >/dev/null 2>&1 || missing+=(mpich libmpich-dev)
command -v smpicc >/dev/null 2>&1 || missing+=(libsimgrid-dev)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v tmux >/dev/null 2>&1 || missing+=(tmux)
command -v dot >/dev/null 2>&1 || missing+=(graphviz)
fc-list 2>/dev/null | grep -qi dejavu || missing+=(fonts-dejavu-core fontconfig)
if [ ${#missing[@]} -gt 0 ]; then
    echo "installing: ${missing[*]}"
    as_root=()
    [ "$(id -u)" -eq 0 ] || as_root=(sudo)
    "${as_root[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq "${missing[@]}"
fi
# With these set, a test that needs one of the tools fails instead of
# skipping when it is missing (CI=true does the same for every such test,
# the shared data beside the workspace included: PARSIM_REQUIRE_SHARED;
# tests/support/mod.rs).
export PARSIM_REQUIRE_MPI=1 PARSIM_REQUIRE_CHROMIUM=1 PARSIM_REQUIRE_TMUX=1

cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked
cargo test --workspace --all-targets --locked
