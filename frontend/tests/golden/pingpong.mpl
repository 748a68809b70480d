// a ping-pong in the style of the PMB/IMB benchmark
param bytes = 1024
param reps = 1000
if rank == 0 {
    let t0 = wtime()
    for i in 0 .. reps { send(to: 1, bytes: bytes); recv(from: 1, bytes: bytes) }
    print("pingpong", bytes, (wtime() - t0) / (2 * reps) * 1e6)
} else if rank == 1 {
    for i in 0 .. reps { recv(from: 0, bytes: bytes); send(to: 0, bytes: bytes) }
}
