// mbi: correct
// ranks: 2
// expect: ok
// what: the same request variable is reused in every iteration, but each request is completed by wait before the variable is overwritten (MBI correct counterpart of the lost request).
param n = 4
if rank == 0 {
    let r = null
    for i in 0 .. n {
        r = isend(to: 1, bytes: 8, tag: i)
        wait(r)
    }
} else {
    let r = null
    for i in 0 .. n {
        r = irecv(from: 0, bytes: 8, tag: i)
        wait(r)
    }
}
