// mbi: correct
// ranks: 3
// expect: ok
// what: several isends and irecvs are completed by a single waitall() without arguments, which waits for every pending request of the rank (the skeleton form of MPI_Waitall on an array of requests).
let right = (rank + 1) % size
let left = (rank + size - 1) % size
let a = irecv(from: left, bytes: 64, tag: 1)
let b = irecv(from: right, bytes: 64, tag: 2)
let c = isend(to: right, bytes: 64, tag: 1)
let d = isend(to: left, bytes: 64, tag: 2)
waitall()
