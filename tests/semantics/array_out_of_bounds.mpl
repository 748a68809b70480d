// An index past the end is a run-time error (exit code 4): index 2 is out
// of bounds for an array of length 2.
// snapshot: run --ranks 1
let a = [1, 2]
print(a[2])
