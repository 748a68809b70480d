kernel stencil(rows, cols) cost 4.0e-9 * rows * cols
compute stencl(100, 100)
