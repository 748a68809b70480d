// Synchronous sends wait for the matching receive even when small, so two
// ranks that both send first deadlock (exit code 3, blocked in `ssend`);
// send_head_to_head.mpl is the same with standard sends, which complete.
// snapshot: run --ranks 2
let peer = 1 - rank
ssend(to: peer, bytes: 8)
recv(from: peer, bytes: 8)
