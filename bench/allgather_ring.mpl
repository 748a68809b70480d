// An allgather of `bytes` per rank: under MPICH's classic rules a total of
// 80 KiB or more runs as a ring (MPIR_CVAR_ALLGATHER_LONG_MSG_SIZE), p - 1
// steps on every rank: p (p - 1) messages in all.
param bytes = 16
allgather(bytes: bytes)
