// `abort(...)` ends the run with a run-time error of the rank that calls
// it, at its line, its arguments making the message (exit code 4); the
// other ranks' output before it stays.
// snapshot: run --ranks 3
print("started")
if size % 2 != 0 {
    abort("needs an even number of ranks, got", size)
}
print("not reached")
