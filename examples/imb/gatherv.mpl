// examples/imb/gatherv.mpl: Intel IMB-MPI1 "Gatherv" as a parsim skeleton.
//
// IMB-MPI1 2017 and later (intel/mpi-benchmarks src_c, IMB 2021.x); PMB 2.2
// has no Gatherv, and the loop timing of the IMB versions between them is
// not modelled. Each call is timed alone and followed by `sync` barriers
// (IMB_gatherv.c, `-sync`, default 1 since IMB 2017); sizes 0, then 1, 2, 4,
// ... (MPI_BYTE) up to max_bytes (IMB_2018.c); the number of repetitions
// per size by the "dynamic" policy (IMB_mem_manager.c
// IMB_init_buffers_iter: one call, then enough for about a second, at most
// min(1000, 40 MiB / bytes), at most 1 + secs / t, never more than the
// previous size); a warm-up of n / 10 calls, at least min(10, n)
// (IMB_warm_up.c); a size that starts after (max_log - 1) * secs seconds is
// not run (the time limit).
//
// The time is in microseconds; t_min, t_max and t_avg over the active
// ranks. "k active of N": with --param active=K the benchmark runs in a
// communicator of the first K ranks while the others only take part in the
// communicator's creation and in IMB's MPI_COMM_WORLD barrier after each
// size.
// Output (from the first active rank): IMB's table,
//   #bytes #repetitions t_min[usec] t_max[usec] t_avg[usec]
// which `parsim validate` compares with a measured table.
//
// MPI_Gatherv of `bytes` from every rank to the root (every count `bytes`, MPI_BYTE; the root knows them all).
// The 0-byte row: the libraries skip zero counts and return; the schedules
// send zero-byte messages (docs/collectives.md, "v-variants"), so it is
// predicted at about one message's time.
param active = 0            // active ranks; 0 = all
param max_bytes = 4194304   // the largest message (4 MiB)
param max_reps = 1000
param timing = 2017         // IMB 2017+'s per-call timing (the only one: see above)
param sync = 1              // barriers after each call (IMB -sync)
param secs = 10             // IMB -time, seconds per size
param root_shift = 0        // the root moves by this each call (IMB -root_shift; 0 since IMB 2017)
param unit = 1              // the datatype's size (MPI_BYTE)
param after_pingpong = 0    // timing 2017: the largest size of a PingPong the same IMB process ran before this benchmark (`IMB-MPI1 PingPong Reduce -msglog 0:22`: 4194304); 0: none

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

// The root of the i-th call of a sample: 0, then root_shift more each call
// (IMB_gatherv.c: `root = (root + root_shift) % num_procs`, from 0 in each
// call of the kernel).
fn root_of(i, c) {
    return i * root_shift % size_in(c)
}

// The benchmarked call, the i-th of a sample.
fn call(bytes, i, c) {
    gatherv(root: root_of(i, c), bytes: array(size_in(c), bytes), comm: c)
}

// IMB 2017+'s kernel (IMB_gatherv.c): N_BARR = 2 barriers, then `reps`
// calls, each timed alone and followed by `sync` barriers; the mean time
// per call in seconds.
fn sample(bytes, reps, c) {
    barrier(comm: c)
    barrier(comm: c)
    let t = 0.0
    for i in 0 .. reps {
        let t1 = wtime()
        call(bytes, i, c)
        t += wtime() - t1
        for k in 0 .. sync { barrier(comm: c) }
    }
    return t / reps
}

// IMB 2017+'s "dynamic" repetitions (IMB_mem_manager.c): `selected` is
// min(1000, 40 MiB / bytes), `prev` the previous size's count.
fn dynamic_reps(bytes, selected, prev, c) {
    let t = allreduce(bytes: 8, value: sample(bytes, 1, c), op: max, comm: c)
    let rep_test = 1
    if t < 1.0 / max_reps {
        rep_test = max_reps
    } else if t < 1.0 {
        rep_test = floor(1.0 / t + 0.5)
    }
    rep_test = allreduce(bytes: 4, value: rep_test, op: max, comm: c)
    let n = min(selected, rep_test)
    if n > 1 { t = allreduce(bytes: 8, value: sample(bytes, n, c), op: max, comm: c) }
    let t_sample = selected
    if t > 1e-8 && 1 + secs / t <= 2147483647 { t_sample = floor(1 + secs / t) }
    n = min(selected, prev, t_sample)
    bcast(root: 0, bytes: 4, comm: c)
    return n
}

fn report(t, reps, bytes, me, n, c) {
    let tmin = allreduce(bytes: 8, value: t, op: min, comm: c)
    let tmax = allreduce(bytes: 8, value: t, op: max, comm: c)
    let tsum = allreduce(bytes: 8, value: t, op: sum, comm: c)
    if me == 0 { print(bytes, reps, tmin, tmax, tsum / n) }
}

if timing != 2017 {
    abort("Gatherv has IMB 2017+'s timing only (timing = 2017), not", timing)
}
let c = comm_split(color: in_group(), key: rank)
let me = -1
let n = 0
if c != null {
    me = rank_in(c)
    n = size_in(c)
}
if me == 0 { print("#bytes #repetitions t_min[usec] t_max[usec] t_avg[usec]") }
if c != null && after_pingpong > 0 { pingpong_before(after_pingpong) }
let start = wtime()
let limit = max(floor(log2(max_bytes)) - 1, 1) * secs
let prev = max_reps
let bytes = 0
let iter = 0
while iter == 0 || bytes < max_bytes {
    if iter == 1 { bytes = unit } else if iter > 1 { bytes = min(max_bytes, 2 * bytes) }
    let over = 0
    if c != null {
        let selected = max_reps
        if bytes > 0 { selected = max(1, min(41943040 / bytes, max_reps)) }
        // Gatherv: s_len = bytes, r_len = n bytes (IMB_init_buffers_iter).
        imb_alloc(bytes, n * bytes)
        let reps = dynamic_reps(bytes, selected, prev, c)
        prev = reps
        if wtime() - start >= limit { over = 1 }
        over = allreduce(bytes: 4, value: over, op: max)
        if over == 0 {
            sample(bytes, max(floor(reps / 10), min(10, reps)), c)
            let t = sample(bytes, reps, c) * 1e6
            barrier()
            report(t, reps, bytes, me, n, c)
        }
        imb_free(bytes, n * bytes)
    } else {
        over = allreduce(bytes: 4, value: over, op: max)
        if over == 0 { barrier() }
    }
    if over != 0 { break }
    iter += 1
}
