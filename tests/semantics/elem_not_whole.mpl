// A byte count that is not a whole number of the call's elements is an
// error (exit code 4) at the call.
// snapshot: run --ranks 2
allreduce(bytes: 10, elem: 4)
