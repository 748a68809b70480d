// mbi: buffering-hazard
// ranks: 2
// expect: buffering_hazard
// what: both ranks send 64 bytes before receiving; it completes only because small standard sends are buffered (MBI P2P BufferingHazard, send-send).
let peer = 1 - rank
send(to: peer, bytes: 64)
recv(from: peer, bytes: 64)
