// mbi: call-ordering
// ranks: 2
// expect: deadlock
// what: both ranks post a blocking receive before their send, so each waits for the other forever (MBI P2P CallOrdering, recv-recv).
let peer = 1 - rank
recv(from: peer, bytes: 64)
send(to: peer, bytes: 64)
