// mbi: correct
// ranks: 4
// expect: ok
// what: the root of bcast and reduce is computed at run time by an allreduce, so every rank passes the same root (MBI correct COLL root).
let root = allreduce(bytes: 8, value: rank, op: max)
bcast(root: root, bytes: 1024)
reduce(root: root, bytes: 8)
