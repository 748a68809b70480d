// examples/imb/biband.mpl: Intel IMB-MPI1 "Biband" as a parsim skeleton.
//
// The IMB method (IMB 2019, src_c/IMB_bandwidth.c, IMB_bi_bandwidth):
// `size / 2` pairs, rank i < pairs exchanging with rank i + pairs (with
// block placement and `pairs` ranks per node every pair crosses between
// two nodes: run it with `--ppn PAIRS`). Message sizes 0, 1, 2, 4, ... up
// to max_bytes (4 MiB); samples max(1, min(1000, 40 MiB / bytes)); two
// barriers, then per sample each rank of a pair posts a window of 64
// irecvs and 64 isends to the other and waits for all 128, then the lower
// rank receives a 1-byte acknowledgement from the upper one. Each rank's
// time per sample; IMB reports Msg/sec = 2 * pairs * 64 / (the slowest
// rank's time per sample), both directions' messages.
// "k active of N" (IMB's -npmin: the benchmark runs on the first 2, 4, ...
// processes in turn; `parsim validate` reads each block of the table as
// --param active=K on N ranks): the pairs are those of the first K ranks,
// in a communicator of them (IMB_init_communicator: MPI_Comm_split by
// rank < K), and the others take part only in its creation.
// Output (the first rank): IMB's table with the time per message of the
// aggregate, 1 / (Msg/sec) in microseconds, which is what `parsim validate`
// compares (it reads IMB's Msg/sec column the same way):
//   #bytes #repetitions t_min[usec] t_max[usec] t_avg[usec]
param active = 0            // active ranks; 0 = all
param max_bytes = 4194304
param window = 64
param max_reps = 1000

fn active_count() {
    if active <= 0 || active > size { return size }
    return active
}

fn in_group() {
    if rank < active_count() { return 0 }
    return -1
}

let c = comm_split(color: in_group(), key: rank)
let pairs = active_count() / 2
if rank == 0 { print("#bytes #repetitions t_min[usec] t_max[usec] t_avg[usec]") }
let bytes = 0
while c != null && bytes <= max_bytes {
    let reps = max(1, min(max_reps, 41943040 / max(bytes, 1)))
    barrier(comm: c)
    barrier(comm: c)
    let t0 = wtime()
    if rank < 2 * pairs {
        let peer = rank + pairs
        if rank >= pairs { peer = rank - pairs }
        for i in 0 .. reps {
            for j in 0 .. window { let r = irecv(from: peer, bytes: bytes, tag: 1) }
            for j in 0 .. window { let s = isend(to: peer, bytes: bytes, tag: 1) }
            waitall()
            if rank < pairs {
                recv(from: peer, bytes: 1, tag: 1)
            } else {
                send(to: peer, bytes: 1, tag: 1)
            }
        }
    }
    let t = (wtime() - t0) / reps
    let tmax = allreduce(bytes: 8, value: t, op: max, comm: c)
    let per = tmax * 1e6 / (2 * pairs * window)
    if rank == 0 { print(bytes, reps, per, per, per) }
    if bytes == 0 { bytes = 1 } else { bytes = bytes * 2 }
}
