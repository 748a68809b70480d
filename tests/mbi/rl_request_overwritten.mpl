// mbi: request-lifecycle
// ranks: 2
// expect: leaked_request
// what: the variable holding the first irecv's request is overwritten by a second irecv, and only the second is waited for (MBI ReqLifecycle, request handle overwritten).
if rank == 0 {
    send(to: 1, bytes: 8, tag: 0)
    send(to: 1, bytes: 8, tag: 1)
} else {
    let r = irecv(from: 0, bytes: 8, tag: 0)
    r = irecv(from: 0, bytes: 8, tag: 1)
    wait(r)
}
