// mbi: correct
// ranks: 2
// expect: ok
// what: both ranks use buffered-mode bsend before receiving; bsend completes locally whatever the size (the skeleton does not model MPI_Buffer_attach, assumed large enough) (MBI correct BufferingHazard counterpart with MPI_Bsend).
param bytes = 1000000
let peer = 1 - rank
bsend(to: peer, bytes: bytes)
recv(from: peer, bytes: bytes)
