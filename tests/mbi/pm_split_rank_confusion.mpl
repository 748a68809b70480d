// mbi: parameter-matching
// ranks: 4
// expect: deadlock
// what: after a split by parity, world rank 3 (rank 1 of the odd group) receives from 'rank 1' meaning world rank 1, but in the subcommunicator that is itself (MBI ParamMatching, source given in the wrong communicator's numbering).
let c = comm_split(color: rank % 2)
if rank == 1 {
    send(to: 1, bytes: 8, comm: c)
} else if rank == 3 {
    recv(from: 1, bytes: 8, comm: c)
}
