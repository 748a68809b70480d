// mbi: correct
// ranks: 2
// expect: ok
// what: both ranks post the irecv before a large blocking send and wait after it, which works even with zero buffering (MBI correct iP2P exchange).
param bytes = 1000000
let peer = 1 - rank
let r = irecv(from: peer, bytes: bytes)
send(to: peer, bytes: bytes)
wait(r)
