// mbi: correct
// ranks: 2
// expect: ok
// what: rank 1 posts its irecv before the barrier and waits after it, so rank 0's large send after the barrier always finds a posted receive (MBI correct, send/recv that works only because the irecv is posted first).
param bytes = 1000000
if rank == 0 {
    barrier()
    send(to: 1, bytes: bytes)
} else {
    let r = irecv(from: 0, bytes: bytes)
    barrier()
    wait(r)
}
