/* glibc heap growth and trimming step by step (models/src/heap.rs, its unit
 * test follows_glibc_2_36_step_by_step): sbrk(0) around each call.
 * gcc -O1 -o pad pad.c && ./pad    (glibc 2.36, 2026-11-28:
 * b1-b0 135168, b2-b1 0, b3-b2 0, b4-b3 348160, b5-b4 299008, b6-b5 0,
 * b7-b6 -598016) */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <malloc.h>
int main(){
  setvbuf(stdout, NULL, _IONBF, 0);
  void *b[10]; char *ptr[10];
  b[0] = sbrk(0);
  ptr[0] = malloc(50000);  b[1] = sbrk(0);
  ptr[1] = malloc(300000); b[2] = sbrk(0);
  memset(ptr[1],1,300000); free(ptr[1]); b[3]=sbrk(0);
  ptr[2] = malloc(300000); b[4] = sbrk(0);
  memset(ptr[2],1,300000);
  ptr[3] = malloc(300000); b[5] = sbrk(0);
  memset(ptr[3],1,300000);
  free(ptr[3]); b[6]=sbrk(0);
  free(ptr[2]); b[7]=sbrk(0);
  for(int i=1;i<8;i++) printf("b%d-b%d = %ld\n", i, i-1, (long)((char*)b[i]-(char*)b[i-1]));
  printf("heap start %p ptrs %p %p %p %p\n", b[0], ptr[0], ptr[1], ptr[2], ptr[3]);
  return 0;
}
