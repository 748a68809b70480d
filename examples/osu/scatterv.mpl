// examples/osu/scatterv.mpl: OSU Micro-Benchmarks "osu_scatterv" as a parsim skeleton.
//
// The OSU method (mpi/collective/osu_scatterv.c and util/osu_util.h of OMB 5.x):
// message sizes min_bytes, 2 min_bytes, ... up to max_bytes (1 MiB); per
// size a barrier, then iterations + skip calls, each timed alone (wtime()
// just before and after the call) and followed by a barrier; the first
// `skip` calls are not counted. Up to 8192 bytes 1000 iterations and 100
// skipped, above 100 and 10 (COLL_LOOP_SMALL/LARGE, COLL_SKIP_SMALL/LARGE;
// later OMB versions skip 200 small: --param skip_small=200). Latency =
// the counted calls' time / iterations, in microseconds; its minimum,
// maximum and average over the ranks go to rank 0 (MPI_Reduce). OSU prints
// the average as "Avg Latency(us)" (and with -f the minimum and maximum).
// Output (rank 0), the table `parsim validate` compares:
//   #bytes #repetitions t_min[usec] t_max[usec] t_avg[usec]
//
// MPI_Scatterv of a `bytes` block (MPI_CHAR) from rank 0 to every rank; rank 0 gives every count, the others their own.
param min_bytes = 1
param max_bytes = 1048576
param iters_small = 1000
param skip_small = 100
param iters_large = 100
param skip_large = 10

if rank == 0 { print("#bytes #repetitions t_min[usec] t_max[usec] t_avg[usec]") }
let iters = iters_small
let skip = skip_small
let bytes = min_bytes
while bytes <= max_bytes {
    if bytes > 8192 {
        iters = iters_large
        skip = skip_large
    }
    // OMB fills the counts once per size (at the root, every rank's).
    let counts = bytes
    if rank == 0 { counts = array(size, bytes) }
    barrier()
    let timer = 0.0
    for i in 0 .. iters + skip {
        let t0 = wtime()
        scatterv(root: 0, bytes: counts)
        let t1 = wtime()
        if i >= skip { timer += t1 - t0 }
        barrier()
    }
    let latency = timer * 1e6 / iters
    let tmin = reduce(root: 0, bytes: 8, value: latency, op: min)
    let tmax = reduce(root: 0, bytes: 8, value: latency, op: max)
    let tsum = reduce(root: 0, bytes: 8, value: latency, op: sum)
    if rank == 0 { print(bytes, iters, tmin, tmax, tsum / size) }
    barrier()
    bytes = bytes * 2
}
