// probe_race.mpl with a polling iprobe: an iprobe of any sender that finds
// a message chooses it as a wildcard receive would (MPI 4.1 section
// 3.8.1), so it races like a blocking probe. In the natural run rank 1's
// 1024 bytes arrive first and the program is correct; rank 2's send is not
// causally after the iprobe, so under other timing the poll returns its 8
// bytes and the receive from rank 1 sized by it truncates. --explore
// forces the poll to rank 2: until rank 2's message arrives the iprobe
// finds nothing (a legal answer at that time) and the loop polls again.
// snapshot: check --ranks 3 --format json
// snapshot explore: check --ranks 3 --explore --format json
kernel work(s) cost s
kernel spin() cost 1e-6
if rank == 0 {
    let s = iprobe(from: any)
    while s == null {
        compute spin()
        s = iprobe(from: any)
    }
    recv(from: 1, bytes: s.bytes)
    recv(from: 2, bytes: 8)
} else if rank == 1 {
    send(to: 0, bytes: 1024)
} else {
    compute work(0.001)
    send(to: 0, bytes: 8)
}
