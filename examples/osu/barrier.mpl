// examples/osu/barrier.mpl: OSU Micro-Benchmarks "osu_barrier" as a parsim skeleton.
//
// The OSU method (mpi/collective/osu_barrier.c of OMB 5.x): iterations +
// skip barriers (the "large" counts, 100 and 10), each timed alone; the
// first `skip` not counted. Latency = the counted barriers' time /
// iterations, in microseconds; its minimum, maximum and average over the
// ranks go to rank 0. OSU prints the average as "Avg Latency(us)".
// Output (rank 0), the table `parsim validate` compares (no message size):
//   #repetitions t_min[usec] t_max[usec] t_avg[usec]
param iters = 100
param skip = 10

if rank == 0 { print("#repetitions t_min[usec] t_max[usec] t_avg[usec]") }
let timer = 0.0
for i in 0 .. iters + skip {
    let t0 = wtime()
    barrier()
    let t1 = wtime()
    if i >= skip { timer += t1 - t0 }
}
let latency = timer * 1e6 / iters
let tmin = reduce(root: 0, bytes: 8, value: latency, op: min)
let tmax = reduce(root: 0, bytes: 8, value: latency, op: max)
let tsum = reduce(root: 0, bytes: 8, value: latency, op: sum)
if rank == 0 { print(iters, tmin, tmax, tsum / size) }
