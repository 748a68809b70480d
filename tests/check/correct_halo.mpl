// A correct halo exchange with sendrecv: no findings, even unbuffered.
for it in 0 .. 3 {
    if rank > 0 { sendrecv(to: rank - 1, from: rank - 1, bytes: 100000) }
    if rank < size - 1 { sendrecv(to: rank + 1, from: rank + 1, bytes: 100000) }
}
allreduce(bytes: 8)

// snapshot: check --ranks 5 --format json
