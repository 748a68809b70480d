// A blocking receive from itself with no send: waits forever.
recv(from: rank, bytes: 8)

// snapshot: check --ranks 3 --format json
