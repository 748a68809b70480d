// mbi: correct
// ranks: 5
// expect: ok
// what: a ring shift of large messages with sendrecv, which MPI guarantees not to deadlock for any number of ranks (MBI correct counterpart of the send ring).
param bytes = 1000000
sendrecv(to: (rank + 1) % size, from: (rank + size - 1) % size, bytes: bytes)
