// Collectives with different roots are an error (exit code 4) naming both
// calls' lines (5:5 and 7:5).
// snapshot: run --ranks 2
if rank == 0 {
    bcast(root: 0, bytes: 8)
} else {
    bcast(root: 1, bytes: 8)
}
