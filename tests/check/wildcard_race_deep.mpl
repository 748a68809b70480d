// A deadlock that needs two wildcard matches to go a particular way: only
// when rank 0's first receive takes rank 2 and its second takes rank 3
// does it wait for a message from rank 4, which never sends.
if rank == 0 {
    let a = recv(from: any, bytes: 8)
    let b = recv(from: any, bytes: 8)
    if a.source == 2 && b.source == 3 { recv(from: 4, bytes: 8) }
    recv(from: any, bytes: 8)
} else if rank <= 3 {
    send(to: 0, bytes: 8)
}

// snapshot: check --ranks 5 --format json
// snapshot explore: check --ranks 5 --explore --format json
// snapshot explore-3: check --ranks 5 --explore=3 --format json
