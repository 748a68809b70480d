// The ranks disagree on the order of two collectives on two communicators:
// rank 0 enters the duplicate's barrier first, the others the world's.
let d = comm_dup(world)
if rank == 0 {
    barrier(comm: d)
    barrier()
} else {
    barrier()
    barrier(comm: d)
}

// snapshot: check --ranks 4 --format json
