// Standard sends of 8 bytes are eager: both ranks sending first completes
// (ssend_head_to_head.mpl deadlocks).
// snapshot: run --ranks 2
let peer = 1 - rank
send(to: peer, bytes: 8)
recv(from: peer, bytes: 8)
