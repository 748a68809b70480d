// A rank that skips a collective deadlocks the others (exit code 3): they
// are blocked in `barrier`, waiting on a rank that has already finished.
// snapshot: run --ranks 4
if rank != 2 { barrier() }
