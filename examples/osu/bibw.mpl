// examples/osu/bibw.mpl: OSU Micro-Benchmarks "osu_bibw" as a parsim skeleton.
//
// The OSU method (mpi/pt2pt/osu_bibw.c of OMB 5.x, constants from
// util/osu_util.h): message sizes 1, 2, 4, ... up to max_bytes (4 MiB); per
// iteration each of ranks 0 and 1 posts a window of 64 irecvs, then 64
// isends to the other, and waits for all 128. Up to 8192 bytes 100
// iterations after 10 skipped, above 20 after 2. Bandwidth = size *
// iterations * 64 * 2 / time (both directions' bytes), MB/s, on rank 0.
// Output (rank 0): IMB's table with the time per message of both directions
// together in microseconds, bytes / bandwidth, which is what `parsim
// validate` compares (it reads an osu_bibw table's MB/s the same way):
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
    if rank < 2 {
        let t0 = 0.0
        for i in 0 .. iters + skip {
            if i == skip { t0 = wtime() }
            for j in 0 .. window { let r = irecv(from: 1 - rank, bytes: bytes, tag: 10) }
            for j in 0 .. window { let s = isend(to: 1 - rank, bytes: bytes, tag: 10) }
            waitall()
        }
        let t = (wtime() - t0) * 1e6 / (2 * iters * window)
        if rank == 0 { print(bytes, iters, t, t, t) }
    }
    bytes = bytes * 2
}
