// A collective in a rank-dependent branch: rank 0 skips it.
if rank != 0 { barrier() }

// snapshot: check --ranks 4 --format json
