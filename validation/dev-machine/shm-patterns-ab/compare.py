#!/usr/bin/env python3
# Usage: python3 compare.py RESULTS_BEFORE RESULTS_AFTER
# Per collective, the median over the rounds of each round's median |error|:
# B (no [shm] patterns) and A (with them) of RESULTS_BEFORE, A of RESULTS_AFTER
# (VALIDATION.md 6.4: results.txt, [shm] full duplex; results-rank.txt, its
# duplex fitted per rank).
import re,sys,statistics as st
def load(f):
    d={}
    for l in open(f):
        m=re.match(r'(\S+) (\S+) (\S) all: .*median \|error\| ([\d.]+)%',l)
        if m: d.setdefault((m[2],m[3]),[]).append(float(m[4]))
    return d
old=load(sys.argv[1]); new=load(sys.argv[2])
for (b,v) in sorted(old):
    if v!='A': continue
    o=old[(b,'A')]; n=new.get((b,'A'),[]); B=old.get((b,'B'),[])
    print(f"{b:15s} B(no patterns) {st.median(B):5.1f}  A before {st.median(o):5.1f}  A after {st.median(n) if n else float('nan'):5.1f}  ({len(n)} rounds)")
