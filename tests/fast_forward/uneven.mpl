// Ranks run different numbers of iterations of a loop without messages.
kernel work() cost 1e-4
if rank == 0 { print("start") }
for it in 0 .. 100 + 10 * rank {
    compute work()
}
barrier()
