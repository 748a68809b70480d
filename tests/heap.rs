//! The program's own heap (`malloc(bytes:)`, `free(bytes:)`): what its
//! allocations cost in page faults, and how they move glibc's dynamic
//! thresholds for the MPI library's temporaries (models/src/heap.rs;
//! VALIDATION.md 4.16).
//!
//! Machine: tests/support `closed_form_machine` with `[node] page_fault =
//! "2 us"` (4 KiB pages, glibc's allocator), so a page that faults costs 2
//! µs of the rank's time.

mod support;

use approx::assert_relative_eq;

const MIB: u64 = 1 << 20;

/// glibc 2.36 step by step (models/src/heap.rs): a first 1 MiB is mapped on
/// its own (at least the 128 KiB threshold), all 257 of its pages written
/// (the chunk's 16-byte header moves the data one page further); its free
/// unmaps it and raises the threshold to its size, so the second comes from
/// the heap, fresh memory again; its free leaves the top below the trim
/// threshold (twice the first chunk), so the third reuses it: no fault.
#[test]
fn malloc_faults_what_the_allocator_takes_fresh() {
    let dir = support::temp_dir();
    let m = support::closed_form_machine_with(&dir, "1 GB/s", "page_fault = \"2 us\"", "");
    let prog = dir.file(
        "p.mpl",
        &format!(
            "let t0 = wtime()\n\
             malloc(bytes: {MIB})\n\
             let t1 = wtime()\n\
             free(bytes: {MIB})\n\
             malloc(bytes: {MIB})\n\
             let t2 = wtime()\n\
             free(bytes: {MIB})\n\
             malloc(bytes: {MIB})\n\
             let t3 = wtime()\n\
             if rank == 0 {{ print((t1 - t0) * 1e6, (t2 - t1) * 1e6, (t3 - t2) * 1e6) }}\n"
        ),
    );
    let rows = support::run_rank0_table(
        prog.to_str().expect("utf-8"),
        &["--ranks", "2", "--machine", m.to_str().expect("utf-8")],
        &[],
    );
    assert_eq!(rows.len(), 1, "{rows:?}");
    let [first, second, third] = rows[0][..] else {
        panic!("three times: {:?}", rows[0]);
    };
    assert_relative_eq!(first, 257.0 * 2.0, max_relative = 1e-9);
    assert_relative_eq!(second, 257.0 * 2.0, max_relative = 1e-9);
    assert_relative_eq!(third, 0.0);
}

#[test]
fn free_without_a_live_malloc_of_that_size_is_a_run_time_error() {
    let dir = support::temp_dir();
    let prog = dir.file(
        "p.mpl",
        "malloc(bytes: 100)\nfree(bytes: 100)\nfree(bytes: 100)\n",
    );
    let o = support::parsim(&["run", prog.to_str().expect("utf-8"), "--ranks", "1"]);
    assert_eq!(o.status.code(), Some(4), "{}", support::stderr(&o));
    let err = support::stderr(&o);
    assert!(
        err.contains(
            "`free(bytes: 100)` frees nothing: this rank has no live `malloc` of 100 bytes"
        ),
        "{err}"
    );
    assert!(err.contains("p.mpl:3:1"), "{err}");
}

#[test]
fn malloc_has_no_value() {
    let dir = support::temp_dir();
    let prog = dir.file("p.mpl", "let x = malloc(bytes: 8)\n");
    let o = support::parsim(&["check", prog.to_str().expect("utf-8"), "--ranks", "1"]);
    assert!(!o.status.success());
    let err = support::stderr(&o);
    assert!(
        err.contains("`malloc` can only be used as a statement"),
        "{err}"
    );
}

/// IMB's Reduce (timing 2017) on 2 ranks of this machine's calibration
/// (validation/dev-machine/imb-written/machine-fast.toml: MPICH 4, one
/// node, `page_fault` 1.994 µs; without that key, no fault costs
/// anything). MPICH's reduce there allocates two temporaries of the vector
/// at the non-root rank, and alone the benchmark faults them in on every
/// call from 256 KiB on (glibc trims what the first call's free leaves).
/// After a PingPong up to 4 MiB in the same process (`after_pingpong`),
/// IMB's freed 4 MiB buffers have raised the thresholds: no size below 4
/// MiB faults, and 4 MiB still does. Measured so here (VALIDATION.md 4.16).
#[test]
fn imb_reduce_faults_unless_a_pingpong_raised_the_thresholds() {
    let dir = support::temp_dir();
    let calibrated = "validation/dev-machine/imb-written/machine-fast.toml";
    let text = std::fs::read_to_string(calibrated).expect("the calibrated machine");
    let no_faults: String = text
        .lines()
        .filter(|l| !l.starts_with("page_fault = "))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(
        text.lines().any(|l| l.starts_with("page_fault = ")),
        "the calibrated machine has a page_fault key"
    );
    let no_faults = dir.file("no-faults.toml", &no_faults);
    let row = |faults: bool, after: u64, bytes: u64| -> f64 {
        let m = if faults {
            calibrated
        } else {
            no_faults.to_str().expect("utf-8")
        };
        let after = format!("after_pingpong={after}");
        let rows = support::run_rank0_table(
            "examples/imb/reduce.mpl",
            &["--ranks", "2", "--machine", m],
            &["timing=2017", "secs=1", &after],
        );
        rows.iter()
            .find(|r| r[0] as u64 == bytes)
            .map(|r| r[4])
            .unwrap_or_else(|| panic!("no row of {bytes} bytes"))
    };
    for bytes in [MIB / 4, MIB, 2 * MIB] {
        // After the PingPong: the same time with or without page faults.
        assert_relative_eq!(
            row(true, 4 * MIB, bytes),
            row(false, 4 * MIB, bytes),
            max_relative = 1e-12
        );
        // Alone: far more (two fresh vectors, n / 4 KiB faults of 2 us
        // each, against the vector's transfer at about 0.1 ns/B).
        assert!(row(true, 0, bytes) > 2.0 * row(false, 0, bytes), "{bytes}");
    }
    assert!(row(true, 4 * MIB, 4 * MIB) > 2.0 * row(false, 4 * MIB, 4 * MIB));
}
