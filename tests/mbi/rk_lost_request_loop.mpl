// mbi: resource-leak
// ranks: 2
// expect: leaked_request
// what: rank 0 overwrites its isend request in every iteration and waits only for the last one, so the earlier requests are lost and never freed (MBI ResLeak / Umpire lost-request).
param n = 4
if rank == 0 {
    let r = null
    for i in 0 .. n {
        r = isend(to: 1, bytes: 8, tag: i)
    }
    wait(r)
} else {
    for i in 0 .. n { recv(from: 0, bytes: 8, tag: i) }
}
