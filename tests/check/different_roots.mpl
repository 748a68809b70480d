// Ranks disagree on the root of a broadcast.
bcast(root: rank % 2, bytes: 64)

// snapshot: check --ranks 4 --format json
