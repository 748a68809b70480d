// mbi: parameter-matching
// ranks: 2
// expect: deadlock
// what: each rank's sendrecv sends and expects its own rank as tag, so neither receive matches the peer's message (MBI P2P ParamMatching, tag mismatch in sendrecv).
let peer = 1 - rank
sendrecv(to: peer, from: peer, bytes: 8, tag: rank + 1)
