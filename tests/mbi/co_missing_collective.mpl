// mbi: call-ordering
// ranks: 4
// expect: deadlock
// what: the last rank skips the reduce that every other rank calls, so the root waits forever for its contribution (MBI COLL CallOrdering, missing collective call).
if rank != size - 1 {
    reduce(root: 0, bytes: 8)
}
