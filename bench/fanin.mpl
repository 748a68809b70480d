// Fan-in: rank 0 posts one irecv per other rank, then waits for all of them;
// rank r computes for r us (order = 0) or (size - r) us (order = 1) and sends 8 bytes.
// One wait set and one posted-receive queue of size - 1 entries: order = 0 completes
// them front to back, order = 1 back to front (each arrival matches the last receive
// still posted). With late = 1 rank 0 computes for 2 * size us first, so every
// envelope has arrived before its receive is posted: each receive searches the
// queue of unexpected envelopes (order = 1: its envelope is the last one there).
param order = 0
param late = 0
kernel work(n) cost 1e-6 * n
if rank == 0 {
    if late == 1 {
        compute work(2 * size)
    }
    for i in 1 .. size {
        let r = irecv(from: i, tag: 0, bytes: 8)
    }
    waitall()
} else {
    if order == 0 {
        compute work(rank)
    } else {
        compute work(size - rank)
    }
    send(to: 0, tag: 0, bytes: 8)
}
