// An isend whose request is never waited for.
if rank == 0 { let r = isend(to: 1, bytes: 8) } else if rank == 1 { recv(from: 0, bytes: 8) }

// snapshot: check --ranks 2 --format json
