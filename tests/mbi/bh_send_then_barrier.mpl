// mbi: buffering-hazard
// ranks: 2
// expect: buffering_hazard
// what: rank 0 sends before a barrier that rank 1 enters before its receive, so the send must complete from a buffer (MBI BufferingHazard, send across a collective).
if rank == 0 {
    send(to: 1, bytes: 64)
    barrier()
} else {
    barrier()
    recv(from: 0, bytes: 64)
}
