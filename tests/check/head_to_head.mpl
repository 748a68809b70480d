// Both ranks send first, then receive: fine while the messages are buffered
// (below the eager limit), a deadlock on an MPI that does not buffer.
param bytes = 1024
let peer = 1 - rank
send(to: peer, bytes: bytes)
recv(from: peer, bytes: bytes)

// snapshot: check --ranks 2 --format json
// snapshot unbuffered: check --ranks 2 --param bytes=100000 --format json
