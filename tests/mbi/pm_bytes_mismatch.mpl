// mbi: parameter-matching
// ranks: 3
// expect: collective_mismatch
// what: the ranks give allreduce different counts (8, 16, 24 bytes) (MBI COLL ParamMatching, count mismatch).
allreduce(bytes: 8 * (rank + 1))
