param sizes = [8, 64]
sizes[0] = 16
sizes[1] += 1
undeclared[0] = 1
