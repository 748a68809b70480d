let s = recv(from: 0, bytes: 8)
s.source = 1
len([1, 2])[0] = 2
let a = [[1, 2], [3]]
a[0][1] = 5
(a[1])[0] += 1
a[0] = [7] = 3
