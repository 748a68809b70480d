param n = 3000
kernel stencil(rows, cols) cost 4.0e-9 * rows * cols
let rows = n / size
compute stencil(row, n)
