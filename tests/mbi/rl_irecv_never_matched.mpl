// mbi: request-lifecycle
// ranks: 2
// expect: leaked_request
// what: rank 1 posts an irecv with tag 7 that no send will ever match and finishes without completing or cancelling it (MBI ReqLifecycle, pending receive request at finalize).
if rank == 0 {
    send(to: 1, bytes: 8, tag: 0)
} else {
    let r = irecv(from: 0, bytes: 8, tag: 7)
    recv(from: 0, bytes: 8, tag: 0)
}
