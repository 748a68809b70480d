// examples/osu/latency.mpl: OSU Micro-Benchmarks "osu_latency" as a parsim skeleton.
//
// The OSU method (mpi/pt2pt/osu_latency.c and util/osu_util.h of OMB 5.x):
// message sizes 0, 1, 2, 4, ... up to max_bytes (1 MiB); per size a
// barrier, then iterations + skip round trips, rank 0 sending (MPI_Send)
// and waiting for the reply (MPI_Recv), rank 1 answering; the clock starts
// after the first `skip` round trips. Up to 8192 bytes 10000 iterations and
// 100 skipped, above 1000 and 10 (LAT_LOOP_SMALL/LARGE,
// LAT_SKIP_SMALL/LARGE). Latency = time / (2 iterations), half a round
// trip, in microseconds, measured on rank 0 (OSU prints it as
// "Latency (us)"). Ranks other than 0 and 1 only take part in the barriers.
// Output (rank 0), the table `parsim validate` compares (min = max = avg):
//   #bytes #repetitions t_min[usec] t_max[usec] t_avg[usec]
param max_bytes = 1048576
param iters_small = 10000
param skip_small = 100
param iters_large = 1000
param skip_large = 10

if rank == 0 { print("#bytes #repetitions t_min[usec] t_max[usec] t_avg[usec]") }
let iters = iters_small
let skip = skip_small
let bytes = 0
while bytes <= max_bytes {
    if bytes > 8192 {
        iters = iters_large
        skip = skip_large
    }
    barrier()
    if rank == 0 {
        let t0 = 0.0
        for i in 0 .. iters + skip {
            if i == skip { t0 = wtime() }
            send(to: 1, bytes: bytes)
            recv(from: 1, bytes: bytes)
        }
        let latency = (wtime() - t0) * 1e6 / (2 * iters)
        print(bytes, iters, latency, latency, latency)
    } else if rank == 1 {
        for i in 0 .. iters + skip {
            recv(from: 0, bytes: bytes)
            send(to: 0, bytes: bytes)
        }
    }
    if bytes == 0 { bytes = 1 } else { bytes = bytes * 2 }
}
