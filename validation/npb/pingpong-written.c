/* pingpong-written: a ping-pong whose buffers are in the caches and
 * clean (as IMB's and OSU's, written once at start), against one whose
 * sender writes its buffer before every send (as an application sends
 * what it just computed), memset's own time measured alone and
 * subtracted. Best of 5 trials of 2,000 (200 from 64 KiB) round trips,
 * half a round trip printed. VALIDATION.md section 7.2.
 *
 *   mpicc -O2 -o pingpong-written validation/npb/pingpong-written.c
 *   mpirun -np 2 ./pingpong-written
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc,char**argv){MPI_Init(&argc,&argv);int me;MPI_Comm_rank(MPI_COMM_WORLD,&me);
long sizes[]={2048,8192,16384,32768,65536,131072,262144,524288,1<<20};char*sb=malloc(1<<20),*rb=malloc(1<<20);memset(sb,1,1<<20);memset(rb,1,1<<20);
for(int si=0;si<9;si++){long n=sizes[si];int reps=n<65536?2000:200;
 for(int mode=0;mode<2;mode++){double best=1e9;
  for(int trial=0;trial<5;trial++){MPI_Barrier(MPI_COMM_WORLD);double t0=MPI_Wtime();
   for(int i=0;i<reps;i++){
    if(me==0){if(mode)memset(sb,i,n);MPI_Send(sb,n,MPI_BYTE,1,0,MPI_COMM_WORLD);MPI_Recv(rb,n,MPI_BYTE,1,0,MPI_COMM_WORLD,MPI_STATUS_IGNORE);}
    else{MPI_Recv(rb,n,MPI_BYTE,0,0,MPI_COMM_WORLD,MPI_STATUS_IGNORE);if(mode)memset(sb,i,n);MPI_Send(sb,n,MPI_BYTE,0,0,MPI_COMM_WORLD);}}
   double t=(MPI_Wtime()-t0)/reps/2; if(t<best)best=t;}
  /* subtract the memset's own time, measured alone */
  double tm=0; if(mode){double t0=MPI_Wtime();for(int i=0;i<reps;i++)memset(sb,i,n);tm=(MPI_Wtime()-t0)/reps;}
  if(me==0)printf("%8ld B %s: %.3f us one way%s\n",n,mode?"written":"hot    ",(best-tm)*1e6,mode?" (memset subtracted)":"");}}
MPI_Finalize();}
