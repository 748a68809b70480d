// Rank 0 sends a message that nobody receives.
if rank == 0 { send(to: 1, bytes: 8, tag: 3) }

// snapshot: check --ranks 2 --format json
