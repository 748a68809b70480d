// A request that can never complete: nobody sends to rank 0.
if rank == 0 {
    let a = irecv(from: 1, bytes: 8)
    let b = irecv(from: 1, bytes: 8, tag: 9)
    send(to: 1, bytes: 8)
    waitall(a, b)
} else if rank == 1 {
    recv(from: 0, bytes: 8)
    send(to: 0, bytes: 8)
}

// snapshot: check --ranks 2 --format json
