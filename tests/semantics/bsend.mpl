// Buffered sends never wait for the receiver, even far above the eager
// limit: both ranks sending first completes.
// snapshot: run --ranks 2
let peer = 1 - rank
bsend(to: peer, bytes: 10000000)
recv(from: peer, bytes: 10000000)
