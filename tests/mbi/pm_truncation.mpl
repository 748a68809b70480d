// mbi: parameter-matching
// ranks: 2
// expect: error
// what: rank 0 sends 1024 bytes into a 512-byte receive, a truncation error (MBI P2P ParamMatching, count mismatch / MPI_ERR_TRUNCATE).
if rank == 0 {
    send(to: 1, bytes: 1024)
} else {
    recv(from: 0, bytes: 512)
}
