// mbi: call-ordering
// ranks: 2
// expect: deadlock
// what: both ranks block in probe for a message from the other before sending it (MBI PROB CallOrdering, probe-probe).
let peer = 1 - rank
let s = probe(from: peer)
send(to: peer, bytes: 8)
recv(from: peer, bytes: s.bytes)
