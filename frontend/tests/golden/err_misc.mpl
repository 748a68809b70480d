fn f(a, a) { return a }
let q = 1
break
fn g() { return q }
x = 5
let r = isend(to: 1, bytes: 8)
wait(r + 1)
send(to: any, bytes: 8)
let s = "text"
min(1, 2)
for i in 0 .. 10 step 0 { }
undefined_fn(3)
