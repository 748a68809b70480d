// mbi: correct
// ranks: 2
// expect: ok
// what: both ranks isend a large message, receive, and only then wait for the send, safe without any buffering (MBI correct counterpart of the send-send exchange).
param bytes = 1000000
let peer = 1 - rank
let r = isend(to: peer, bytes: bytes)
recv(from: peer, bytes: bytes)
wait(r)
