// examples/osu/reduce_scatter.mpl: OSU Micro-Benchmarks "osu_reduce_scatter" as a parsim skeleton.
//
// The OSU method (mpi/collective/osu_reduce_scatter.c and util/osu_util.h of OMB 5.x):
// message sizes min_bytes, 2 min_bytes, ... up to max_bytes (1 MiB); per
// size a barrier, then iterations + skip calls, each timed alone (wtime()
// just before and after the call) and followed by a barrier; the first
// `skip` calls are not counted. Up to 8192 floats (32 KiB: OMB compares the
// element count, `size > LARGE_MESSAGE_SIZE`, in osu_reduce_scatter.c of OMB
// 5.4.1 to 6.1) 1000 iterations and 100 skipped, above 100 and 10 (COLL_LOOP_SMALL/LARGE, COLL_SKIP_SMALL/LARGE;
// later OMB versions skip 200 small: --param skip_small=200). Latency =
// the counted calls' time / iterations, in microseconds; its minimum,
// maximum and average over the ranks go to rank 0 (MPI_Reduce). OSU prints
// the average as "Avg Latency(us)" (and with -f the minimum and maximum).
// Output (rank 0), the table `parsim validate` compares:
//   #bytes #repetitions t_min[usec] t_max[usec] t_avg[usec]
//
// MPI_Reduce_scatter of a vector of `bytes` (MPI_FLOAT, MPI_SUM), split as
// osu_reduce_scatter.c does: n = bytes / 4 floats; with fewer floats than
// ranks one float each to the first n ranks, else n / size each and one
// more to the first n mod size.
param min_bytes = 4
param max_bytes = 1048576
param iters_small = 1000
param skip_small = 100
param iters_large = 100
param skip_large = 10
param elem = 4              // the datatype's size: OMB reduces MPI_FLOAT (size / sizeof(float) elements)

// Rank i's block of a vector of n elements, in bytes.
fn block(i, n) {
    if n < size {
        if i < n { return elem }
        return 0
    }
    let b = n / size
    if i < n % size { b += 1 }
    return b * elem
}

if rank == 0 { print("#bytes #repetitions t_min[usec] t_max[usec] t_avg[usec]") }
let iters = iters_small
let skip = skip_small
let bytes = min_bytes
while bytes <= max_bytes {
    if bytes / elem > 8192 {
        iters = iters_large
        skip = skip_large
    }
    let counts = array(size, 0)
    for r in 0 .. size { counts[r] = block(r, bytes / elem) }
    barrier()
    let timer = 0.0
    for i in 0 .. iters + skip {
        let t0 = wtime()
        reduce_scatter(bytes: counts, elem: elem)
        let t1 = wtime()
        if i >= skip { timer += t1 - t0 }
        barrier()
    }
    let latency = timer * 1e6 / iters
    let tmin = reduce(root: 0, bytes: 8, elem: 8, value: latency, op: min)
    let tmax = reduce(root: 0, bytes: 8, elem: 8, value: latency, op: max)
    let tsum = reduce(root: 0, bytes: 8, elem: 8, value: latency, op: sum)
    if rank == 0 { print(bytes, iters, tmin, tmax, tsum / size) }
    barrier()
    bytes = bytes * 2
}
