//! Collectives through shared memory inside a node (MPICH's
//! `release_gather`, Intel MPI's SHM-based algorithms; `sim-core`
//! `coll/shm.rs`), checked in closed form on one node of 4 ranks.
//!
//! Machine: one node of 4 ranks, memcpy 1 GB/s (a copy of n bytes takes n
//! ns), reductions at 0.5 GB/s (2 ns/B), a flag seen `F` = 0.2 µs after
//! its store, MPICH 4's rules with `shared_memory = true` (a `ch4:ofi`
//! build). The point-to-point channels are slow (10 µs) so that any
//! message would show.

mod support;

use approx::assert_relative_eq;

const F: f64 = 0.2e-6;
const COPY_PER_BYTE: f64 = 1e-9;
const REDUCE_PER_BYTE: f64 = 2e-9;

fn machine(dir: &support::TempDir, shared_memory: bool) -> std::path::PathBuf {
    let text = format!(
        r#"name = "one node, shared-memory collectives"
model = "smp"
[node]
ranks_per_node = 4
memcpy = "1 GB/s"
reduce_op = "0.5 GB/s"
flag_latency = "0.2 us"
[network]
latency = "10 us"
bandwidth = "1 GB/s"
eager_limit = "64 KiB"
[shm]
latency = "10 us"
bandwidth = "1 GB/s"
eager_limit = "64 KiB"
[collectives]
library = "mpich-4"
shared_memory = {shared_memory}
"#
    );
    dir.file("machine.toml", &text)
}

fn finish(program: &str, shared_memory: bool) -> Vec<f64> {
    let dir = support::temp_dir();
    let m = machine(&dir, shared_memory);
    let prog = dir.file("prog.mpl", program);
    support::finish_times(&support::run_json(&prog, 4, &m))
}

#[test]
fn an_allreduce_on_one_node_is_a_gather_and_a_release() {
    // 4 ranks, reduce tree k-ary 4 and bcast tree k-ary 64: rank 0 is every
    // other rank's parent in both. Each rank copies its n bytes into its
    // cell (C = n ns) and stores its gather flag; rank 0 sees the three
    // flags at C + F and combines three cells (3 n · 2 ns); then it stores
    // its release flag and copies the result out (C); the others see the
    // flag F later and copy the result out too.
    let n = 4096.0;
    let c = n * COPY_PER_BYTE;
    let reduced = c + F + 3.0 * n * REDUCE_PER_BYTE;
    let t = finish("allreduce(bytes: 4096)\n", true);
    assert_relative_eq!(t[0], reduced + c, max_relative = 1e-9);
    for &leaf in &t[1..] {
        assert_relative_eq!(leaf, reduced + F + c, max_relative = 1e-9);
    }
    // Without shared memory the same call is messages at 10 µs each.
    let messages = finish("allreduce(bytes: 4096)\n", false);
    assert!(messages[0] > 10e-6, "{messages:?}");
}

#[test]
fn a_bcast_copies_in_once_and_every_other_rank_copies_out() {
    // From rank 0 (the node's first rank, composition alpha): rank 0 copies
    // n bytes into the cell and stores its flag; the others see it F later
    // and copy out. One chunk (n < 8064 bytes): no gather flag is waited
    // for within the call.
    let n = 1000.0;
    let c = n * COPY_PER_BYTE;
    let t = finish("bcast(root: 0, bytes: 1000)\n", true);
    assert_relative_eq!(t[0], c, max_relative = 1e-9);
    for &other in &t[1..] {
        assert_relative_eq!(other, c + F + c, max_relative = 1e-9);
    }
}

#[test]
fn a_barrier_is_a_gather_and_a_release_of_flags() {
    // MPICH 4's barrier on a node: composition alpha, a shared-memory
    // barrier (gather + release on the bcast tree) and a 1-byte bcast
    // (copy in, flag, copy out). Rank 0 sees the three gather flags at F,
    // releases (the others see it at 2F), then copies 1 byte in and
    // releases again (the others see that at 2F + 1 ns and copy the byte
    // out).
    let t = finish("barrier()\n", true);
    let byte = COPY_PER_BYTE;
    assert_relative_eq!(t[0], F + byte, max_relative = 1e-9);
    for &other in &t[1..] {
        assert_relative_eq!(other, 2.0 * F + 2.0 * byte, max_relative = 1e-9);
    }
}

#[test]
fn shared_memory_is_refused_where_the_library_has_none() {
    let dir = support::temp_dir();
    let text = std::fs::read_to_string(machine(&dir, true))
        .expect("machine")
        .replace("mpich-4", "openmpi-5");
    let m = dir.file("bad.toml", &text);
    let prog = dir.file("prog.mpl", "barrier()\n");
    let out = support::parsim(&[
        "run",
        prog.to_str().expect("utf-8 path"),
        "--ranks",
        "4",
        "--machine",
        m.to_str().expect("utf-8 path"),
    ]);
    assert!(!out.status.success());
    let err = support::stderr(&out);
    assert!(err.contains("collectives.shared_memory"), "{err}");
}
