// A deadlock with every kind of wait: rank 0 waits for either of two
// messages (OR), rank 1 for both (AND), rank 2 for a message from any rank.
if rank == 0 {
    let a = irecv(from: 1, bytes: 8)
    let b = irecv(from: 2, bytes: 8)
    let i = waitany(a, b)
} else if rank == 1 {
    let a = irecv(from: 0, bytes: 8)
    let b = irecv(from: 2, bytes: 8)
    waitall(a, b)
} else {
    recv(from: any, bytes: 8)
}

// snapshot: check --ranks 3
