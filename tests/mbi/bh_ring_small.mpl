// mbi: buffering-hazard
// ranks: 4
// expect: buffering_hazard
// what: every rank sends a small message to its right neighbour before receiving from its left, a cycle that needs buffering (MBI BufferingHazard, ring of standard sends).
send(to: (rank + 1) % size, bytes: 256)
recv(from: (rank + size - 1) % size, bytes: 256)
