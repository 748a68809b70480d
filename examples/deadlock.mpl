// examples/deadlock.mpl: a real deadlock, whatever the MPI implementation's buffering.
//
// Ranks 0 and 1 each post a blocking receive from the other FIRST and only then send.
// A blocking recv returns only when a matching message has arrived, and neither rank
// ever reaches its send, so no message is ever sent: both wait forever. Buffering
// cannot help (there is nothing to buffer); this is the cyclic wait that ParJava's
// conflict detector reports ("mutual waiting for messages"). Ranks >= 2 do nothing and
// finish. Expected: `parsim run examples/deadlock.mpl --ranks 2` exits with code 3 and
// names ranks 0 and 1, each blocked in recv on the other (tag 7, 8 bytes) at the
// `recv` lines below.
//
// The fix is to swap the order on one side, or to use
// sendrecv(to: peer, from: peer, bytes: 8, tag: 7) on both.

param bytes = 8

if rank == 0 {
    recv(from: 1, bytes: bytes, tag: 7)
    send(to: 1, bytes: bytes, tag: 7)
} else if rank == 1 {
    recv(from: 0, bytes: bytes, tag: 7)
    send(to: 0, bytes: bytes, tag: 7)
}
