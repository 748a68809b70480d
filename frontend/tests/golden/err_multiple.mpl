// several syntax errors, each reported once; parsing resumes at the next statement
param n = 
let x = (1 + 2
let y = 3 *
if x > 2 { let = 4 }
while { }
print("ok", x y)
let z = a < b < c
