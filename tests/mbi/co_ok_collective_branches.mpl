// mbi: correct
// ranks: 4
// expect: ok
// what: the root and the other ranks reach the same collectives in the same order from different branches (different source lines), which MPI allows (MBI correct COLL).
if rank == 0 {
    bcast(root: 0, bytes: 64)
    barrier()
    reduce(root: 0, bytes: 8)
} else {
    follow_root()
}
fn follow_root() {
    bcast(root: 0, bytes: 64)
    barrier()
    reduce(root: 0, bytes: 8)
}
