// arrays: literals, indexing, element assignment, builtins; arrays are values
param sizes = [8, 64, 512, 4096]

fn total(a) {
    a[0] = 0          // changes the function's own copy only
    return sum(a)
}

let empty = []
let a = [1, 2, 3]
let b = a             // a copy: changing b leaves a alone
b[0] = 10
b[1] += 5
b[len(b) - 1] *= 2
print(a, b, len(empty), sum(b), total(b), b[0])

let grid = array(3, array(2, 0))
grid[1][0] = 7        // nested: an element of an element
grid[2][1] += grid[1][0] + a[2]
print(grid, grid[2][1], [grid[0], [rank, size]][1][0])

for i in 0 .. len(sizes) {
    let r = irecv(from: (rank + size - 1) % size, bytes: sizes[i])
    send(to: (rank + 1) % size, bytes: sizes[i])
    let got = array(len(sizes), 0)
    got[i] = wait(r).bytes     // communication in the value is hoisted
    print(sizes[i], got)
}
