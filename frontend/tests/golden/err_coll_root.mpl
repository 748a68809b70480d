allreduce(root: 0, bytes: 8)
barrier(comm: world, root: 1)
