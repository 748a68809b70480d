// Different collectives at the same point are an error (exit code 4):
// allreduce here, but rank 0 called barrier.
// snapshot: run --ranks 3
if rank == 0 { barrier() } else { allreduce(bytes: 8) }
