bcast(rot: 0, bytes: 8)
let sub = comm_split(colour: rank % 2)
probe(from: 0, bytes: 8)
