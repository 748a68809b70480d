/* What a 2-rank MPICH collective costs beyond its messages (VALIDATION.md
 * section 4.1): MPI_Reduce_local, MPI_Sendrecv, MPI_Allreduce and
 * MPI_Barrier timed in loops, for 1, 2, 256 and 262144 floats.
 *   mpicc -O2 -o coll-costs coll-costs.c && mpirun -np 2 ./coll-costs */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int c, char**v){MPI_Init(&c,&v);int r;MPI_Comm_rank(MPI_COMM_WORLD,&r);
float a[1<<18],b[1<<18];for(int i=0;i<(1<<18);i++){a[i]=i;b[i]=1;}
int ns[]={1,2,256,262144};
for(int k=0;k<4;k++){int n=ns[k];int reps=n>1000?200:100000;
 double t0=MPI_Wtime();for(int i=0;i<reps;i++)MPI_Reduce_local(a,b,n,MPI_FLOAT,MPI_SUM);
 double t=(MPI_Wtime()-t0)/reps;
 MPI_Barrier(MPI_COMM_WORLD);
 t0=MPI_Wtime();for(int i=0;i<reps;i++)MPI_Sendrecv(a,n,MPI_FLOAT,1-r,0,b,n,MPI_FLOAT,1-r,0,MPI_COMM_WORLD,MPI_STATUS_IGNORE);
 double s=(MPI_Wtime()-t0)/reps;
 MPI_Barrier(MPI_COMM_WORLD);
 t0=MPI_Wtime();for(int i=0;i<reps;i++)MPI_Allreduce(a,b,n,MPI_FLOAT,MPI_SUM,MPI_COMM_WORLD);
 double ar=(MPI_Wtime()-t0)/reps;
 MPI_Barrier(MPI_COMM_WORLD);
 t0=MPI_Wtime();for(int i=0;i<reps;i++)MPI_Barrier(MPI_COMM_WORLD);
 double ba=(MPI_Wtime()-t0)/reps;
 if(r==0)printf("n=%d floats: reduce_local %.3f us, sendrecv %.3f us, allreduce %.3f us, barrier %.3f us\n",n,t*1e6,s*1e6,ar*1e6,ba*1e6);}
MPI_Finalize();}
