/* The VM state probe of osu-ompi.sh (VALIDATION.md 4.10): a 1-byte ping-pong,
 * 3 x 10,000 round trips, prints the one-way time of each. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int c, char**v){MPI_Init(&c,&v);int r;MPI_Comm_rank(MPI_COMM_WORLD,&r);char *s=malloc(4<<20),*b=malloc(4<<20);
for(int k=0;k<3;k++){MPI_Barrier(MPI_COMM_WORLD);double t0=MPI_Wtime();for(int i=0;i<10000;i++){if(r==0){MPI_Send(s,1,MPI_BYTE,1,1,MPI_COMM_WORLD);MPI_Recv(b,1,MPI_BYTE,1,1,MPI_COMM_WORLD,MPI_STATUS_IGNORE);}else{MPI_Recv(b,1,MPI_BYTE,0,1,MPI_COMM_WORLD,MPI_STATUS_IGNORE);MPI_Send(s,1,MPI_BYTE,0,1,MPI_COMM_WORLD);}}
if(!r)printf("1 B one-way %.3f us\n",(MPI_Wtime()-t0)/10000/2*1e6);}MPI_Finalize();}
