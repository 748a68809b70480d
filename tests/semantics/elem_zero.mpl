// `elem:` is the size in bytes of one element: 0 is an error (exit code 4).
// snapshot: run --ranks 2
let e = rank * 0
reduce(root: 0, bytes: 8, elem: e)
