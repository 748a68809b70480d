// A scan's low ranks finish before the high ones have entered (rank me
// needs the values of ranks 0..=me only): each still gets its own prefix.
// The fuzz target `programs` found this program when scan results were
// first computed once per call (a prefix was taken before rank 4 had
// given its value). A value needs bytes to travel in: `value:` with
// `bytes: 0` is an error (such a call need not wait for the other ranks,
// whose values would not be there).
// snapshot: run --ranks 5
reduce(bytes: 684, root: 3 % size)
sendrecv(to: (rank + 1) % size, from: (rank + size - 1) % size, bytes: 24, tag: 0)
reduce(bytes: 1016, root: 4 % size)
print("scan", scan(bytes: 8, value: rank + 1), "exscan", exscan(bytes: 8, value: rank + 1))
print("allreduce", allreduce(bytes: 8, value: rank, op: max))
barrier()
print("allreduce", allreduce(bytes: 0, value: rank, op: max))
