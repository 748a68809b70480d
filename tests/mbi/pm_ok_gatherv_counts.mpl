// mbi: correct
// ranks: 4
// expect: ok
// what: gatherv and allgatherv with a different count on each rank, which the v-variants allow (MBI correct COLL, counts that legitimately differ).
gatherv(root: 0, bytes: 8 * (rank + 1))
allgatherv(bytes: [8, 16, 24, 32])
