// examples/npb/is.mpl: NAS Parallel Benchmarks 3.3 (MPI), IS, integer sort:
// bucket sort of 2^TOTAL_KEYS_LOG_2 integer keys spread over the ranks,
// 10 timed ranking iterations (after one untimed), each an allreduce of
// the bucket sizes, an alltoall of the send counts and an alltoallv of
// the keys.
//
// Follows NPB3.3-MPI/IS/is.c (main, rank, create_seq, full_verify; the
// class table is its CLASS #defines): TOTAL_KEYS_LOG_2 / MAX_KEY_LOG_2 /
// NUM_BUCKETS_LOG_2 = 16/11/9 (S), 20/16/10 (W), 23/19/10 (A), 25/21/10
// (B), 27/23/10 (C); MAX_ITERATIONS 10; MIN_PROCS 1; MAX_PROCS 128 for S
// and 1024 otherwise; the number of ranks a power of two (setparams.c's
// check_info). Per rank, call for call: the broadcast of the timer flag,
// 11 x (allreduce of NUM_BUCKETS + TEST_ARRAY_SIZE 4-byte counts,
// alltoall of one int, alltoallv of the keys), the MPI_MAX reduce of the
// time, full_verify's irecv/send of one key between neighbours and the
// reduce of the verification count; checked against a real run's counts
// in tests/npb.rs.
//
// The keys: create_seq draws each key as MAX_KEY/4 times a sum of four
// uniform numbers, so a key / (MAX_KEY/4) follows the Irwin-Hall
// distribution of n = 4, F(x) = 1/24 sum_{k <= x} (-1)^k C(4,k) (x-k)^4.
// rank() gives the buckets, in order, to the ranks until each has at
// least NUM_KEYS (its share) of all keys; every rank's keys follow the same
// distribution, so each sends a rank j the expected NUM_KEYS x (the mass
// of j's buckets), rounded down, the remainder to the last rank with
// buckets. The real counts differ from these by the sampling noise of the
// seed (a few keys in thousands); their sum, NUM_KEYS, is exact.
//
// Compute (one `op_time` per counted operation, measured on the target,
// validation/npb/README.md): create_seq draws 4 numbers per key (4 x
// NUM_KEYS); each rank() counts and scatters its keys into buckets (2 x
// NUM_KEYS + NUM_BUCKETS), then clears its key range, counts the keys it
// received and sums the range's prefixes (2 x range + received);
// full_verify places and checks each received key (2 x received).

param S = 0
param W = 1
param A = 2
param B = 3
param C = 4
param class = S                          // --param class=A selects class A
param total_keys = [65536, 1048576, 8388608, 33554432, 134217728][class]
param max_key = [2048, 65536, 524288, 2097152, 8388608][class]
param num_buckets = [512, 1024, 1024, 1024, 1024][class]
param max_procs = [128, 1024, 1024, 1024, 1024][class]
param max_iterations = 10
param test_array_size = 5
param op_time = 1.0e-9                   // seconds per counted operation

kernel create_seq(keys) cost op_time * 4 * keys
kernel bucket_sort(keys, buckets) cost op_time * (2 * keys + buckets)
kernel rank_keys(received, range) cost op_time * (received + 2 * range)
kernel full_verify(received) cost op_time * 2 * received

// F(x) of the Irwin-Hall distribution of n = 4 (the sum of four uniform
// numbers), 0 <= x <= 4.
fn irwin_hall4(x) {
    if x <= 0.0 {
        return 0.0
    }
    if x >= 4.0 {
        return 1.0
    }
    let binomial = [1, 4, 6, 4, 1]
    let sign = 1.0
    let f = 0.0
    for k in 0 .. floor(x) + 1 {
        let t = x - k
        f += sign * binomial[k] * t * t * t * t
        sign = -sign
    }
    return f / 24.0
}

// is.c rank(): which buckets each rank gets. Returns [first, last] bucket
// of every rank ([1, 0]: none, as is.c's ptr1 = 1 for the ranks left
// over) and the fraction of all keys in each rank's buckets.
fn distribution(p, num_keys) {
    let first = array(p, 1)
    let last = array(p, 0)
    let mass = array(p, 0.0)
    let accumulated = 0.0
    let j = 0
    let start = 0
    for b in 0 .. num_buckets {
        let hi = irwin_hall4(4.0 * (b + 1) / num_buckets)
        // bucket_sum_accumulator >= (j + 1) * NUM_KEYS, in fractions of all keys
        if j < p && hi * total_keys >= (j + 1) * num_keys {
            first[j] = start
            last[j] = b
            mass[j] = hi - accumulated
            accumulated = hi
            start = b + 1
            j += 1
        }
    }
    return [first, last, mass]
}

// setparams.c check_info and is.c main: a power of two, 1 ..= MAX_PROCS.
let pow2 = 1
while pow2 < size {
    pow2 *= 2
}
if pow2 != size {
    abort("is: the number of ranks must be a power of two, got", size)
}
if size > max_procs {
    abort("is: at most", max_procs, "ranks for this class (is.c MAX_PROCS), got", size)
}

let num_keys = total_keys / size
let d = distribution(size, num_keys)
let first = d[0]
let last = d[1]
let mass = d[2]
// What every rank sends to each rank (the same on every rank).
let counts = array(size, 0)
let given = 0
let last_owner = 0
for j in 0 .. size {
    if last[j] >= first[j] {
        counts[j] = floor(num_keys * mass[j])
        given += counts[j]
        last_owner = j
    }
}
counts[last_owner] += num_keys - given
let received = size * counts[rank]
let send_bytes = array(size, 0)            // 4-byte keys
for j in 0 .. size {
    send_bytes[j] = 4 * counts[j]
}
let range = 0
if last[rank] >= first[rank] {
    range = (last[rank] - first[rank] + 1) * (max_key / num_buckets)
}

fn iteration(num_keys, send_bytes, received, range) {
    compute bucket_sort(num_keys, num_buckets)
    allreduce(bytes: 4 * (num_buckets + test_array_size), elem: 4)   // bucket_size_totals
    alltoall(bytes: 4)                                      // send_count -> recv_count
    alltoallv(bytes: send_bytes)                                    // the keys
    compute rank_keys(received, range)
}

bcast(bytes: 4, root: 0)              // timeron
compute create_seq(num_keys)
iteration(num_keys, send_bytes, received, range)          // rank(1), untimed
let t0 = wtime()
for it in 1 .. max_iterations + 1 {
    iteration(num_keys, send_bytes, received, range)
}
let t = wtime() - t0
let maxtime = reduce(bytes: 8, elem: 8, value: t, op: max, root: 0)
// full_verify: the largest key goes to the next rank.
let r = null
if rank > 0 {
    r = irecv(from: rank - 1, bytes: 4, tag: 1000)
}
if rank < size - 1 {
    send(to: rank + 1, bytes: 4, tag: 1000)
}
if rank > 0 {
    wait(r)
}
compute full_verify(received)
reduce(bytes: 4, elem: 4, root: 0)             // passed_verification
if rank == 0 {
    print("Time in seconds =", maxtime)
}
