// examples/osu/mbw_mr.mpl: OSU Micro-Benchmarks "osu_mbw_mr" (multiple
// bandwidth / message rate) as a parsim skeleton.
//
// The OSU method (mpi/pt2pt/osu_mbw_mr.c of OMB 5.x): `size / 2` pairs;
// rank i < pairs sends to rank i + pairs, so with block placement and
// `pairs` ranks per node every pair crosses between two nodes (run it with
// `--ppn PAIRS`). Message sizes 1, 2, 4, ... up to max_bytes (4 MiB); per
// iteration each sender posts a window of 64 isends and waits for all, its
// receiver posts 64 irecvs, waits for all and answers with 4 bytes. Up to
// message sizes 100 iterations after 10 skipped (`calc_bw` does not switch
// to fewer iterations for large messages, unlike osu_bw), with a barrier of
// all ranks after the skipped ones. Each sender times its iterations; the
// times are summed to rank 0 (MPI_Reduce) and averaged over the pairs; the
// aggregate bandwidth = pairs * size * iterations * 64 / average time,
// MB/s, and the message rate = bandwidth / size.
// Output (rank 0): IMB's table with the time per message of the aggregate
// stream in microseconds, bytes / aggregate bandwidth, which is what
// `parsim validate` compares (it reads osu_mbw_mr's MB/s the same way):
//   #bytes #repetitions t_min[usec] t_max[usec] t_avg[usec]
param max_bytes = 4194304
param window = 64
param iters = 100
param skip = 10

let pairs = size / 2
if rank == 0 { print("#bytes #repetitions t_min[usec] t_max[usec] t_avg[usec]") }
let bytes = 1
while bytes <= max_bytes {
    barrier()
    let t = 0.0
    if rank < pairs {
        let t0 = 0.0
        for i in 0 .. iters + skip {
            if i == skip {
                barrier()
                t0 = wtime()
            }
            for j in 0 .. window { let r = isend(to: rank + pairs, bytes: bytes, tag: 100) }
            waitall()
            recv(from: rank + pairs, bytes: 4, tag: 101)
        }
        t = wtime() - t0
    } else if rank < 2 * pairs {
        for i in 0 .. iters + skip {
            if i == skip { barrier() }
            for j in 0 .. window { let r = irecv(from: rank - pairs, bytes: bytes, tag: 100) }
            waitall()
            send(to: rank - pairs, bytes: 4, tag: 101)
        }
    } else {
        barrier()
    }
    let total = allreduce(bytes: 8, value: t, op: sum)
    let per = (total / pairs) * 1e6 / (pairs * iters * window)
    if rank == 0 { print(bytes, iters, per, per, per) }
    bytes = bytes * 2
}
