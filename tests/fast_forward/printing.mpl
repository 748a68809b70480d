// A loop that prints is never skipped: its output would be lost.
kernel work() cost 1e-4
for it in 0 .. 100 {
    compute work()
    allreduce(bytes: 8)
    if rank == 0 && it % 50 == 0 { print("iteration ", it) }
}
