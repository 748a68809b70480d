// Every rank sends to the next before receiving from the previous: a cycle
// of waits as soon as sends are not buffered.
param bytes = 100000
send(to: (rank + 1) % size, bytes: bytes)
recv(from: (rank + size - 1) % size, bytes: bytes)

// snapshot: check --ranks 6 --format json
// snapshot 5-ranks: check --ranks 5 --format json
