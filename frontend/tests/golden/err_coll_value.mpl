let t = 1.0
barrier(value: t)
gatherv(bytes: 8, value: t)
