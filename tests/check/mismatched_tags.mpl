// The tags do not match: rank 1 waits for tag 2, rank 0 sent tag 1.
if rank == 0 { send(to: 1, bytes: 8, tag: 1) } else if rank == 1 { recv(from: 0, bytes: 8, tag: 2) }

// snapshot: check --ranks 2 --format json
