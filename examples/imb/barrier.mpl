// examples/imb/barrier.mpl: Pallas PMB 2.2 / Intel IMB-MPI1 "Barrier" as a parsim skeleton.
//
// Both PMB 2.2 and IMB-MPI1 (IMB_barrier.c) time a loop of barriers:
// t = (wtime() after the repetitions - before) / repetitions, in
// microseconds; t_min, t_max and t_avg over the active ranks. "k active of
// N": with --param active=K the benchmark runs in a communicator of the
// first K ranks while the others only take part in the communicator's
// creation (and, with timing = 2017, in IMB's MPI_COMM_WORLD barrier).
//
// timing = 2002 (the default): PMB 2.2, 1000 repetitions after one barrier.
//
// timing = 2017: IMB-MPI1 2017 and later (intel/mpi-benchmarks src_c):
// N_BARR = 2 barriers before the loop; the repetitions by the "dynamic"
// policy (IMB_mem_manager.c IMB_init_buffers_iter: one call, then enough
// for about a second, at most 1000, at most 1 + secs / t); a warm-up of
// n / 10 calls, at least min(10, n) (IMB_warm_up.c); then the timed loop.
// Output (from the first active rank): IMB's table,
//   #repetitions t_min[usec] t_max[usec] t_avg[usec]
// which `parsim validate` compares with a measured table.
//
// MPI_Barrier; no message size (the table has one row).
param active = 0            // active ranks; 0 = all
param max_bytes = 4194304   // the largest message (4 MiB)
param max_reps = 1000
param warmup = 1            // unused: PMB's Barrier has no warm-up (kept for a common command line)
param timing = 2002         // 2002: PMB 2.2; 2017: IMB 2017+'s repetitions and warm-up
param secs = 10             // timing 2017: IMB -time, seconds per sample
param after_pingpong = 0    // timing 2017: the largest size of a PingPong the same IMB process ran before this benchmark (`IMB-MPI1 PingPong Barrier -msglog 0:22`: 4194304); 0: none

// IMB's send and receive buffers, timing 2017 (IMB-MPI1's driver since
// IMB 2019, src_cpp/helpers/original_benchmark.h 192 and 218-219): for
// each size allocated (IMB_init_buffers_iter; s_len and r_len by benchmark,
// IMB_mem_manager.c; at least 1 byte asked and 8 allocated, IMB_alloc_buf
// and IMB_v_alloc; by MPI_Alloc_mem, which is malloc in MPICH and Open MPI),
// written (IMB_set_buf), and freed after it (IMB_del_s_buf, IMB_del_r_buf).
// They move glibc's dynamic thresholds, which decide whether the library's
// temporaries fault in on every call (VALIDATION.md 4.16).
fn imb_alloc(s_len, r_len) {
    malloc(bytes: max(s_len, 8))
    malloc(bytes: max(r_len, 8))
}

fn imb_free(s_len, r_len) {
    free(bytes: max(s_len, 8))
    free(bytes: max(r_len, 8))
}

// A PingPong the same IMB process ran before (`IMB-MPI1 PingPong Reduce`):
// its sizes 0, 1, 2, 4, ... up to `largest`, each with s_len = r_len =
// bytes.
fn pingpong_before(largest) {
    let b = 0
    while b <= largest {
        imb_alloc(b, b)
        imb_free(b, b)
        if b == 0 { b = 1 } else { b = 2 * b }
    }
}

fn active_count() {
    if active <= 0 || active > size { return size }
    return active
}

fn in_group() {
    if rank < active_count() { return 0 }
    return -1
}

// IMB's kernel (IMB_barrier.c): N_BARR = 2 barriers, then `reps` timed
// in one loop; the mean time per call in seconds.
fn sample(reps, c) {
    barrier(comm: c)
    barrier(comm: c)
    let t0 = wtime()
    for i in 0 .. reps { barrier(comm: c) }
    return (wtime() - t0) / reps
}

// IMB 2017+'s "dynamic" repetitions (IMB_mem_manager.c) for a benchmark
// of type Sync: at most max_reps (-iter), no previous size.
fn dynamic_reps(c) {
    let t = allreduce(bytes: 8, value: sample(1, c), op: max, comm: c)
    let rep_test = 1
    if t < 1.0 / max_reps {
        rep_test = max_reps
    } else if t < 1.0 {
        rep_test = floor(1.0 / t + 0.5)
    }
    rep_test = allreduce(bytes: 4, value: rep_test, op: max, comm: c)
    let n = min(max_reps, rep_test)
    if n > 1 { t = allreduce(bytes: 8, value: sample(n, c), op: max, comm: c) }
    let t_sample = max_reps
    if t > 1e-8 && 1 + secs / t <= 2147483647 { t_sample = floor(1 + secs / t) }
    n = min(max_reps, t_sample)
    bcast(root: 0, bytes: 4, comm: c)
    return n
}

let c = comm_split(color: in_group(), key: rank)
if timing == 2017 && c == null {
    // IMB's time-limit check and the barrier after the sample, on
    // MPI_COMM_WORLD (IMB_2018.c).
    allreduce(bytes: 4, value: 0, op: max)
    barrier()
}
if c != null {
    let me = rank_in(c)
    let n = size_in(c)
    if me == 0 { print("#repetitions t_min[usec] t_max[usec] t_avg[usec]") }
    let reps = max_reps
    let t = 0.0
    if timing == 2017 {
        if after_pingpong > 0 { pingpong_before(after_pingpong) }
        // Barrier: s_len = r_len = 0 (IMB_init_buffers_iter).
        imb_alloc(0, 0)
        reps = dynamic_reps(c)
        allreduce(bytes: 4, value: 0, op: max)
        sample(max(floor(reps / 10), min(10, reps)), c)
        t = sample(reps, c) * 1e6
        barrier()
        imb_free(0, 0)
    } else {
        barrier(comm: c)
        let t0 = wtime()
        for i in 0 .. reps { barrier(comm: c) }
        t = (wtime() - t0) / reps * 1e6
    }
    let tmin = allreduce(bytes: 8, value: t, op: min, comm: c)
    let tmax = allreduce(bytes: 8, value: t, op: max, comm: c)
    let tsum = allreduce(bytes: 8, value: t, op: sum, comm: c)
    if me == 0 { print(reps, tmin, tmax, tsum / n) }
}
