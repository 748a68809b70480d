// examples/osu/bw.mpl: OSU Micro-Benchmarks "osu_bw" as a parsim skeleton.
//
// The OSU method (mpi/pt2pt/osu_bw.c of OMB 5.x, constants from
// util/osu_util.h): message sizes 1, 2, 4, ... up to max_bytes (4 MiB); a
// window of 64 messages per iteration: rank 0 posts 64 isends and waits for
// all, rank 1 posts 64 irecvs, waits for all and answers with a 4-byte
// message (tag 101). Up to 8192 bytes 100 iterations after 10 skipped,
// above 20 after 2 (LOOP_LARGE, SKIP_LARGE); the clock starts after the
// skipped ones. Bandwidth = size * iterations * 64 / time, MB/s (10^6
// bytes), on rank 0.
// Output (rank 0): IMB's table with the time per message in microseconds,
// bytes / bandwidth, which is what `parsim validate` compares (it reads an
// osu_bw table's MB/s as bytes / (MB/s) too):
//   #bytes #repetitions t_min[usec] t_max[usec] t_avg[usec]
param max_bytes = 4194304
param window = 64
param iters_small = 100
param skip_small = 10
param iters_large = 20
param skip_large = 2

if rank == 0 { print("#bytes #repetitions t_min[usec] t_max[usec] t_avg[usec]") }
let iters = iters_small
let skip = skip_small
let bytes = 1
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
            for j in 0 .. window { let r = isend(to: 1, bytes: bytes, tag: 100) }
            waitall()
            recv(from: 1, bytes: 4, tag: 101)
        }
        let t = (wtime() - t0) * 1e6 / (iters * window)
        print(bytes, iters, t, t, t)
    } else if rank == 1 {
        for i in 0 .. iters + skip {
            for j in 0 .. window { let r = irecv(from: 0, bytes: bytes, tag: 100) }
            waitall()
            send(to: 0, bytes: 4, tag: 101)
        }
    }
    bytes = bytes * 2
}
