// Arrays are values: assigning copies. Rank 0 prints:
// [0, 10, 0, 0] [0, 15, 0, 0] 3 13.5 10
// snapshot: run --ranks 1
if rank == 0 {
    let a = array(4, 0)
    a[1] = 10
    let b = a
    b[1] += 5
    let c = [1, 2.5, a[1]]
    print(a, b, len(c), sum(c), c[2])
}
