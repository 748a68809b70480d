param a = rank * 2
param b = c + 1
param c = wtime()
param d = a + 1
