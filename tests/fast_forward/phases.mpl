// The body changes its way at iteration 150: the skip stops before it,
// and the second phase is observed and skipped on its own.
kernel work() cost 1e-5
kernel extra() cost 1e-4
let timer = 0.0
for it in 0 .. 400 {
    let t0 = wtime()
    compute work()
    if it >= 150 { compute extra() }
    allreduce(bytes: 8)
    timer += wtime() - t0
}
if rank == 0 { print("timer", timer) }
