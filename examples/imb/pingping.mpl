// examples/imb/pingping.mpl: Pallas PMB 2.2 / Intel IMB-MPI1 "PingPing" as a parsim skeleton.
//
// The PMB/IMB method: message sizes 0, 1, 2, 4, ... up to max_bytes (4 MiB);
// repetitions max(1, min(1000, 40 MiB / bytes)); before the first size 2 warm-up calls at the largest size; a barrier before
// timing each size; t = (wtime() after the repetitions - before) / repetitions,
// in microseconds; t_min, t_max and t_avg over the active ranks. "k active of
// N": with --param active=K the benchmark runs in a communicator of the first
// K ranks while the others only take part in the communicator's creation.
// Output (from the first active rank): IMB's table,
//   #bytes #repetitions t_min[usec] t_max[usec] t_avg[usec]
// which `parsim validate` compares with a measured table.
//
// ranks 0 and 1 send to each other at the same time (isend, recv, wait).
param active = 2            // active ranks (the benchmark uses ranks 0 and 1)
param max_bytes = 4194304   // the largest message (4 MiB)
param max_reps = 1000
param warmup = 1            // 1: PMB's 2 warm-up calls at the largest size

fn active_count() {
    if active <= 0 || active > size { return size }
    return active
}

fn in_group() {
    if rank < active_count() { return 0 }
    return -1
}

let c = comm_split(color: in_group(), key: rank)
if c != null {
    let me = rank_in(c)
    let n = size_in(c)
    if me == 0 { print("#bytes #repetitions t_min[usec] t_max[usec] t_avg[usec]") }
    if warmup == 1 {
        let bytes = max_bytes
        for i in 0 .. 2 {
            if me < 2 {
                let r = isend(to: 1 - me, bytes: bytes, comm: c)
                recv(from: 1 - me, bytes: bytes, comm: c)
                wait(r)
            }
        }
    }
    let bytes = 0
    while bytes <= max_bytes {
        let reps = max(1, min(max_reps, 41943040 / max(bytes, 1)))
        barrier(comm: c)
        let t0 = wtime()
        for i in 0 .. reps {
            if me < 2 {
                let r = isend(to: 1 - me, bytes: bytes, comm: c)
                recv(from: 1 - me, bytes: bytes, comm: c)
                wait(r)
            }
        }
        let t = (wtime() - t0) / (reps) * 1e6
        let tmin = allreduce(bytes: 8, value: t, op: min, comm: c)
        let tmax = allreduce(bytes: 8, value: t, op: max, comm: c)
        let tsum = allreduce(bytes: 8, value: t, op: sum, comm: c)
        if me == 0 { print(bytes, reps, tmin, tmax, tsum / n) }
        if bytes == 0 { bytes = 1 } else { bytes = bytes * 2 }
    }
}
