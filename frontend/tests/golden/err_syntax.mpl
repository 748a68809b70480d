param n = 10
for i in 0 .. n {
    send(to: 1 bytes: 8 * n)
}
