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
