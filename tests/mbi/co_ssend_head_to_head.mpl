// mbi: call-ordering
// ranks: 2
// expect: deadlock
// what: both ranks ssend before receiving; a synchronous send never completes before its receive starts, so this hangs on every MPI (MBI P2P CallOrdering with MPI_Ssend).
let peer = 1 - rank
ssend(to: peer, bytes: 8)
recv(from: peer, bytes: 8)
