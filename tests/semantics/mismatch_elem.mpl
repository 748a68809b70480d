// Collectives whose ranks give different element sizes (datatypes) are an
// error (exit code 4) naming both calls' lines: the libraries would pick
// their algorithms from different element counts.
// snapshot: run --ranks 2
if rank == 0 {
    allreduce(bytes: 64, elem: 4)
} else {
    allreduce(bytes: 64, elem: 8)
}
