// mbi: call-ordering
// ranks: 2
// expect: deadlock
// what: both ranks post an irecv but wait for it before sending, so the nonblocking receive does not help (MBI iP2P CallOrdering, irecv-wait-send on both sides).
let peer = 1 - rank
let r = irecv(from: peer, bytes: 8)
wait(r)
send(to: peer, bytes: 8)
