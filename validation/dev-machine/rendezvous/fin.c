/* VALIDATION.md 4.22: when a rendezvous send completes.
 * mpicc -O2 -o fin fin.c && mpirun -np 2 ./fin (and with mpicc.openmpi /
 * mpirun.openmpi --allow-run-as-root); output in fin.out. */
/* Rendezvous completion: per size, (a) ping-pong one-way (half round trip),
 * (b) one message 0->1 after a barrier: sender's and receiver's times,
 * (c) MPI_Sendrecv exchange after a barrier: mean time. Mean of ITERS. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#define ITERS 2000
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int peer = 1 - rank;
    char *s = malloc(1 << 20), *r = malloc(1 << 20);
    for (int i = 0; i < (1 << 20); i++) { s[i] = i; r[i] = 0; }
    if (rank == 0) printf("%8s %10s %10s %10s %10s\n", "bytes", "pingpong", "send", "recv", "exchange");
    for (int n = 1024; n <= (1 << 20); n *= 2) {
        double pp = 0, snd = 0, rcv = 0, ex = 0;
        for (int rep = 0; rep < 2; rep++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (int i = 0; i < ITERS; i++) {
                if (rank == 0) { MPI_Send(s, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD); MPI_Recv(r, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); }
                else { MPI_Recv(r, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); MPI_Send(s, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD); }
            }
            pp = (MPI_Wtime() - t0) / ITERS / 2;
            double a = 0, b = 0;
            for (int i = 0; i < ITERS; i++) {
                MPI_Barrier(MPI_COMM_WORLD);
                double t1 = MPI_Wtime();
                if (rank == 0) MPI_Send(s, n, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
                else MPI_Recv(r, n, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                a += MPI_Wtime() - t1;
                MPI_Barrier(MPI_COMM_WORLD);
                t1 = MPI_Wtime();
                MPI_Sendrecv(s, n, MPI_BYTE, peer, 2, r, n, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                b += MPI_Wtime() - t1;
            }
            a /= ITERS; b /= ITERS;
            double other_a, sum_b;
            MPI_Reduce(&b, &sum_b, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
            if (rank == 1) MPI_Send(&a, 1, MPI_DOUBLE, 0, 3, MPI_COMM_WORLD);
            if (rank == 0) { MPI_Recv(&other_a, 1, MPI_DOUBLE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE); snd = a; rcv = other_a; ex = sum_b / 2; }
        }
        if (rank == 0) printf("%8d %10.3f %10.3f %10.3f %10.3f\n", n, pp * 1e6, snd * 1e6, rcv * 1e6, ex * 1e6);
    }
    MPI_Finalize();
    return 0;
}
