/* LD_PRELOAD shim: counts the bytes a process writes to sockets (sendmsg, send,
 * sendto, writev) and prints "SOCKBYTES n" to stderr at exit. For
 * lookup_experiment.sh: with I_MPI_FABRICS=ofi and the tcp provider every
 * message of Intel MPI goes through a socket. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
static unsigned long long total;
static int is_sock(int fd){ struct stat st; return fstat(fd,&st)==0 && S_ISSOCK(st.st_mode); }
#define REAL(name, ret, ...) static ret (*real_##name)(__VA_ARGS__); if(!real_##name) real_##name = dlsym(RTLD_NEXT, #name)
ssize_t sendmsg(int fd, const struct msghdr *m, int f){ REAL(sendmsg, ssize_t, int, const struct msghdr*, int); ssize_t r=real_sendmsg(fd,m,f); if(r>0) total+=r; return r; }
ssize_t send(int fd, const void *b, size_t n, int f){ REAL(send, ssize_t, int, const void*, size_t, int); ssize_t r=real_send(fd,b,n,f); if(r>0) total+=r; return r; }
ssize_t sendto(int fd, const void *b, size_t n, int f, const struct sockaddr *a, socklen_t l){ REAL(sendto, ssize_t, int, const void*, size_t, int, const struct sockaddr*, socklen_t); ssize_t r=real_sendto(fd,b,n,f,a,l); if(r>0) total+=r; return r; }
ssize_t writev(int fd, const struct iovec *v, int c){ REAL(writev, ssize_t, int, const struct iovec*, int); ssize_t r=real_writev(fd,v,c); if(r>0 && is_sock(fd)) total+=r; return r; }
__attribute__((destructor)) static void fin(void){ char b[64]; int k=snprintf(b,sizeof b,"SOCKBYTES %llu\n",total); write(2,b,k); }
