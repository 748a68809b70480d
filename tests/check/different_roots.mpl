// Ranks disagree on the root of a broadcast.
bcast(root: rank % 2, bytes: 64)
