/* What a read of the clock adds to an interval a benchmark times
 * (VALIDATION.md 4.17): the mean difference of two back-to-back MPI_Wtime
 * reads over 10^6 pairs, and the time of one read in a loop, three rounds.
 * mpicc -O2 -o timer timer.c && mpirun -np 1 ./timer
 * (2026-11-28, this VM, clocksource tsc: 0.029-0.031 us both ways). */
#include <mpi.h>
#include <stdio.h>
int main(int c, char **v) {
    MPI_Init(&c, &v);
    for (int round = 0; round < 3; round++) {
        int n = 1000000; double sum = 0, t0, t1;
        for (int i = 0; i < n; i++) { t0 = MPI_Wtime(); t1 = MPI_Wtime(); sum += t1 - t0; }
        double a = MPI_Wtime();
        for (int i = 0; i < n; i++) (void)MPI_Wtime();
        double per = (MPI_Wtime() - a) / n;
        printf("interval of two reads %.4f us; one read %.4f us; resolution %s\n", sum / n * 1e6, per * 1e6, MPI_WTIME_IS_GLOBAL ? "" : "");
    }
    printf("MPI_Wtick %.3g s\n", MPI_Wtick());
    MPI_Finalize();
}
