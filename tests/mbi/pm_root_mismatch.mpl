// mbi: parameter-matching
// ranks: 3
// expect: collective_mismatch
// what: rank 2 passes a different root to gather than ranks 0 and 1 (MBI COLL ParamMatching, root mismatch).
let root = 0
if rank == 2 { root = 1 }
gather(root: root, bytes: 8)
