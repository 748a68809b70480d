// validation/progress/overlap.c as a skeleton: rank 0 isends `bytes` to
// rank 1 and waits; rank 1 posts the irecv, computes `compute_us` (with
// poll = 1: half, a test, half) and waits. Prints each rank's time from the
// start of its send or receive to the end of its wait, in us.
param bytes = 1048576
param compute_us = 1000
param poll = 0
kernel spin(s) cost s
barrier()
let t0 = wtime()
if rank == 0 {
    let r = isend(to: 1, bytes: bytes)
    wait(r)
} else {
    let r = irecv(from: 0, bytes: bytes)
    if poll == 1 {
        compute spin(compute_us * 0.5e-6)
        let done = test(r)
        compute spin(compute_us * 0.5e-6)
    } else {
        compute spin(compute_us * 1e-6)
    }
    wait(r)
}
print(rank, (wtime() - t0) * 1e6)
