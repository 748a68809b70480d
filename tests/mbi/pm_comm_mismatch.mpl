// mbi: parameter-matching
// ranks: 2
// expect: deadlock
// what: rank 0 sends on a duplicate of world but rank 1 receives on world, and messages never match across communicators (MBI P2P ParamMatching, communicator mismatch).
let d = comm_dup(world)
if rank == 0 {
    send(to: 1, bytes: 8, comm: d)
} else {
    recv(from: 0, bytes: 8)
}
