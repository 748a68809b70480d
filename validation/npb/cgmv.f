c     NPB CG's matrix product, timed on the real matrix of a class, for
c     the matvec kernel's per-row cost in examples/npb/cg.mpl (`row_ops`,
c     VALIDATION.md 7.6). The loop is conj_grad's "q = A.p" of
c     NPB3.3-MPI/CG/cg.f, line for line:
c         do j=1,lastrow-firstrow+1
c            sum = 0.d0
c            do k=rowstr(j),rowstr(j+1)-1
c               sum = sum + a(k)*p(colidx(k))
c            enddo
c            w(j) = sum
c         enddo
c     FILE is the one-rank block that cg.f holds after makea (rows,
c     columns, nonzeros; rowstr; colidx with local column numbers),
c     written by a one-rank run of cg.f with a dump added after the
c     column shift (validation/npb/run.sh builds it). The kernel times it
c     and its NPCOLS column blocks: makea keeps on each rank the entries
c     that fall into its columns, so the ranks of one process row hold
c     exactly these blocks, every row, part of the columns. Each block is
c     timed alone on this core: best of 7 x REPS calls. Prints one line
c     per block: rows, columns, nonzeros, seconds per call.
c     Usage: cgmv FILE NPCOLS REPS
      program cgmv
      implicit none
      character*256 fname, arg
      integer rows, cols, nnz, npcols, reps
      call getarg(1, fname)
      call getarg(2, arg)
      read(arg,*) npcols
      call getarg(3, arg)
      read(arg,*) reps
      open(unit=7, file=fname, status='old')
      read(7, *) rows, cols, nnz
      call blocks(rows, cols, nnz, npcols, reps)
      end

      subroutine blocks(rows, cols, nnz, npcols, reps)
      implicit none
      integer rows, cols, nnz, npcols, reps
      integer rowstr(rows+1), colidx(nnz)
      integer bstr(rows+1), bcol(nnz)
      integer j, k, b, n, lo, hi
      read(7, *) (rowstr(j), j=1,rows+1)
      read(7, *) (colidx(k), k=1,nnz)
      close(7)
      call bench(rows, cols, rowstr, colidx, nnz, reps)
      do b = 1, npcols
         lo = (b - 1) * (cols / npcols) + 1
         hi = b * (cols / npcols)
         if (b .eq. npcols) hi = cols
         n = 0
         bstr(1) = 1
         do j = 1, rows
            do k = rowstr(j), rowstr(j+1) - 1
               if (colidx(k) .ge. lo .and. colidx(k) .le. hi) then
                  n = n + 1
                  bcol(n) = colidx(k) - lo + 1
               endif
            enddo
            bstr(j+1) = n + 1
         enddo
         call bench(rows, hi - lo + 1, bstr, bcol, n, reps)
      enddo
      end

      subroutine bench(rows, cols, rowstr, colidx, nnz, reps)
      implicit none
      integer rows, cols, nnz, reps
      integer rowstr(rows+1), colidx(nnz)
      double precision a(nnz), p(cols), w(rows)
      integer j, k, it, r
      double precision sum, best, t
      integer*8 c0, c1, rate
      do k = 1, nnz
         a(k) = 1.0d0 / k
      enddo
      do j = 1, cols
         p(j) = j * 1.0d-3
      enddo
      best = 1.0d30
      do r = 1, 7
         call system_clock(c0, rate)
         do it = 1, reps
            do j = 1, rows
               sum = 0.d0
               do k = rowstr(j), rowstr(j+1)-1
                  sum = sum + a(k)*p(colidx(k))
               enddo
               w(j) = sum
            enddo
c           the next call's input depends on this one's output
            p(mod(it, cols) + 1) = p(mod(it, cols) + 1) + w(1)*1.0d-30
         enddo
         call system_clock(c1)
         t = dble(c1 - c0) / dble(rate) / reps
         if (t .lt. best) best = t
      enddo
      write(*, '(i9, i9, i10, es14.6)') rows, cols, nnz, best
      end
