// waitany returns the index of the first completed request (rank 2 sends
// first), then the other, then -1; completed requests become null.
// Rank 0 prints: 1 0 -1 true true
// snapshot: run --ranks 3
kernel work(s) cost s
if rank == 0 {
    let a = irecv(from: 1, bytes: 8)
    let b = irecv(from: 2, bytes: 8)
    let i = waitany(a, b)
    let j = waitany(a, b)
    let k = waitany(a, b)
    print(i, j, k, a == null, b == null)
} else {
    // rank 2 sends first
    compute work(0.001 * (3 - rank))
    send(to: 0, bytes: 8)
}
