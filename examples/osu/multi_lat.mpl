// examples/osu/multi_lat.mpl: OSU Micro-Benchmarks "osu_multi_lat" (latency
// of many pairs at once) as a parsim skeleton.
//
// The OSU method (mpi/pt2pt/osu_multi_lat.c of OMB 5.6, constants from
// util/osu_util.h): `size / 2` pairs; rank i < pairs plays ping-pong with
// rank i + pairs, so with block placement and `pairs` ranks per node every
// pair crosses between two nodes (run it with `--ppn PAIRS`). Message sizes
// 0, 1, 2, 4, ... up to max_bytes (1 MiB here, as examples/osu/latency.mpl;
// pass OMB's -m with --param max_bytes). Per size a barrier of all ranks,
// then iterations + skip round trips (MPI_Send, MPI_Recv; the partner
// answers); after the skipped ones each rank reads the clock and then joins
// a barrier of all ranks, which is inside the timed span. Up to 8192 bytes
// 10000 iterations and 100 skipped, above 1000 and 10 (LAT_LOOP_SMALL/LARGE,
// LAT_SKIP_SMALL/LARGE). Each rank's latency = its time / (2 iterations);
// they are summed to rank 0 (MPI_Reduce) and averaged over the 2 * pairs
// ranks, in microseconds (OSU prints "Latency (us)").
// With an odd number of ranks OSU pairs the last rank with rank `pairs` as
// well, which MPI cannot match as the benchmark means; this skeleton leaves
// that rank out of the ping-pong (it takes part in the barriers and the
// reduction) and says so.
// OMB 7 put a barrier before every round trip and times only the round
// trips (`-c`/validation rework); this is the 5.x method.
// Output (rank 0), the table `parsim validate` compares (min = max = avg):
//   #bytes #repetitions t_min[usec] t_max[usec] t_avg[usec]
param max_bytes = 1048576
param iters_small = 10000
param skip_small = 100
param iters_large = 1000
param skip_large = 10

let pairs = size / 2
if rank == 0 {
    if size % 2 == 1 { print("odd number of ranks: rank", size - 1, "has no partner and only joins the barriers") }
    print("#bytes #repetitions t_min[usec] t_max[usec] t_avg[usec]")
}
let iters = iters_small
let skip = skip_small
let bytes = 0
while bytes <= max_bytes {
    barrier()
    if bytes > 8192 {
        iters = iters_large
        skip = skip_large
    }
    let t0 = 0.0
    if rank < 2 * pairs {
        for i in 0 .. iters + skip {
            if i == skip {
                t0 = wtime()
                barrier()
            }
            if rank < pairs {
                send(to: rank + pairs, bytes: bytes, tag: 1)
                recv(from: rank + pairs, bytes: bytes, tag: 1)
            } else {
                recv(from: rank - pairs, bytes: bytes, tag: 1)
                send(to: rank - pairs, bytes: bytes, tag: 1)
            }
        }
    } else {
        barrier()
    }
    let latency = 0.0
    if rank < 2 * pairs { latency = (wtime() - t0) * 1e6 / (2 * iters) }
    let total = reduce(root: 0, bytes: 8, value: latency, op: sum)
    if rank == 0 {
        let avg = total / (2 * pairs)
        print(bytes, iters, avg, avg, avg)
    }
    if bytes == 0 { bytes = 1 } else { bytes = bytes * 2 }
}
