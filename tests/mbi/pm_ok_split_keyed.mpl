// mbi: correct
// ranks: 4
// expect: ok
// what: comm_split with a reversing key renumbers the ranks; the ring exchange and the broadcast use ranks in the new communicator consistently (MBI correct COM).
let c = comm_split(color: 0, key: size - rank)
let me = rank_in(c)
let n = size_in(c)
sendrecv(to: (me + 1) % n, from: (me + n - 1) % n, bytes: 64, comm: c)
bcast(root: 0, bytes: 64, comm: c)
