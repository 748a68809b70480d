// mbi: request-lifecycle
// ranks: 2
// expect: leaked_request
// what: rank 1 posts an irecv that rank 0's send matches, but never completes the request (MBI ReqLifecycle, missing wait on MPI_Irecv).
if rank == 0 {
    send(to: 1, bytes: 8)
} else {
    let r = irecv(from: 0, bytes: 8)
}
barrier()
