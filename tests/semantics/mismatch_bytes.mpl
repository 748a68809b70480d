// A collective's sizes must agree (exit code 4): with bytes 16 here, but
// rank 0 gave 8.
// snapshot: run --ranks 2
allreduce(bytes: 8 * (rank + 1))
