let r = irecv(from: 0, bytes: 8)
if test(1 + 2) { wait(r) }
let i = waitany(r, 7)
