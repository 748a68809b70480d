//! Slot sharing for one run: variables of a function whose values are never
//! needed at the same time share a frame slot.
//!
//! The frontend gives every variable of a function its own slot, so a
//! frame holds as many values as the function has names. A rank's frame
//! keeps four values inline and moves all of them to the heap beyond that
//! (`engine::state::Frame`): W2 (`bench/w2_stencil2d.mpl`) has 16 names, of
//! which 8 are request handles that nothing reads after their `let`, and
//! paid 272 B per rank for them on the heap. Here, per function, a liveness
//! analysis over the block graph finds where each variable's value can
//! still be read, two variables interfere when one is written while the
//! other's value may still be read (Chaitin's interference graph, as a
//! register allocator builds it: G. J. Chaitin, "Register allocation and
//! spilling via graph coloring", SIGPLAN 1982), and a greedy colouring gives
//! each variable the lowest slot none of its interfering variables has.
//!
//! What a run computes does not change: a variable is only ever read where
//! it is live, and while it is live nothing else writes its slot. That
//! includes a variable read before any assignment (null): it is live from
//! the function's entry, where every slot is null, so no other variable
//! writes its slot first. Parameters keep slots `0..params.len()` (a call
//! passes its arguments there). A dead store still needs a slot for the
//! moment it is written; all dead stores of a block can share one.
//!
//! The engine runs the specialised copy of the program (`crate::fold`);
//! the program the frontend built, which DOT output, `emit-c` and the
//! diagnostics read, keeps its own slots and names.

use fixedbitset::FixedBitSet;
use petgraph::graph::NodeIndex;

use crate::ir::{CommOp, Expr, Function, MsgArgs, PrintArg, Program, Slot, Stmt, Terminator};

/// Renumbers the slots of every function of `program` so that variables
/// that are never live at once share one (see the module documentation).
pub fn compact(program: &mut Program) {
    for f in &mut program.functions {
        compact_function(f);
    }
}

/// How a statement touches a slot: reads it, writes it (after its reads),
/// or both (each slot is visited once, so that renaming maps it once).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Use,
    Def,
    UseDef,
}

fn expr(e: &mut Expr, f: &mut impl FnMut(&mut Slot, Role)) {
    match e {
        Expr::Local(s) => f(s, Role::Use),
        Expr::RankIn(x) | Expr::SizeIn(x) | Expr::Unary(_, x) | Expr::Field(x, _) => expr(x, f),
        Expr::Index(a, b) | Expr::Binary(_, a, b) | Expr::And(a, b) | Expr::Or(a, b) => {
            expr(a, f);
            expr(b, f);
        }
        Expr::Array(xs) | Expr::Builtin(_, xs) => xs.iter_mut().for_each(|x| expr(x, f)),
        Expr::Const(_)
        | Expr::Bool(_)
        | Expr::Null
        | Expr::Any
        | Expr::World
        | Expr::Param(_)
        | Expr::Rank
        | Expr::Size
        | Expr::Wtime => {}
    }
}

fn msg(a: &mut MsgArgs, f: &mut impl FnMut(&mut Slot, Role)) {
    expr(&mut a.peer, f);
    expr(&mut a.tag, f);
    expr(&mut a.bytes, f);
    if let Some(c) = &mut a.comm {
        expr(c, f);
    }
}

/// Calls `f` once on every slot occurrence in `s`, saying whether it is
/// read, written, or both (`a[i] = e` reads and writes `a`; a `wait`,
/// `waitall`, `waitany` or `test` reads its request variables and may set
/// them to null). Every read of a statement happens before its writes.
fn stmt(s: &mut Stmt, f: &mut impl FnMut(&mut Slot, Role)) {
    match s {
        Stmt::Assign { dst, value, .. } => {
            expr(value, f);
            f(dst, Role::Def);
        }
        Stmt::AssignIndex {
            dst, index, value, ..
        } => {
            expr(index, f);
            expr(value, f);
            f(dst, Role::UseDef);
        }
        Stmt::Compute { args, .. } => args.iter_mut().for_each(|a| expr(a, f)),
        Stmt::Copy { bytes, .. } | Stmt::Heap { bytes, .. } => expr(bytes, f),
        Stmt::Print { args, .. } => {
            for a in args {
                if let PrintArg::Expr(e) = a {
                    expr(e, f);
                }
            }
        }
        Stmt::Call { args, dst, .. } => {
            args.iter_mut().for_each(|a| expr(a, f));
            if let Some(d) = dst {
                f(d, Role::Def);
            }
        }
        Stmt::Comm { op, dst, .. } => {
            match op {
                CommOp::Send(a, _)
                | CommOp::Recv(a)
                | CommOp::Isend(a, _)
                | CommOp::Irecv(a)
                | CommOp::Probe(a)
                | CommOp::Iprobe(a) => msg(a, f),
                CommOp::Sendrecv { send, recv } => {
                    msg(send, f);
                    msg(recv, f);
                }
                CommOp::Wait(r) | CommOp::Test(r) => f(r, Role::UseDef),
                CommOp::Waitall(rs) | CommOp::Waitany(rs) => {
                    rs.iter_mut().for_each(|r| f(r, Role::UseDef));
                }
                CommOp::Collective(c) => {
                    for e in c.exprs_mut() {
                        expr(e, f);
                    }
                }
                CommOp::CommSplit { comm, color, key } => {
                    if let Some(c) = comm {
                        expr(c, f);
                    }
                    expr(color, f);
                    expr(key, f);
                }
                CommOp::CommDup(c) => expr(c, f),
            }
            if let Some(d) = dst {
                f(d, Role::Def);
            }
        }
    }
}

fn terminator(t: &mut Terminator, f: &mut impl FnMut(&mut Slot, Role)) {
    match t {
        Terminator::Branch { cond, .. } => expr(cond, f),
        Terminator::Return { value: Some(e), .. } => expr(e, f),
        Terminator::Return { value: None, .. } | Terminator::Goto(_) => {}
    }
}

fn successors(t: &Terminator) -> impl Iterator<Item = NodeIndex<u32>> {
    let (a, b) = match t {
        Terminator::Goto(b) => (Some(*b), None),
        Terminator::Branch { then_, else_, .. } => (Some(*then_), Some(*else_)),
        Terminator::Return { .. } => (None, None),
    };
    a.into_iter().chain(b)
}

/// The slots `s` reads and writes.
fn touches(s: &mut Stmt) -> (Vec<Slot>, Vec<Slot>) {
    let (mut uses, mut defs) = (Vec::new(), Vec::new());
    stmt(s, &mut |x, role| match role {
        Role::Use => uses.push(*x),
        Role::Def => defs.push(*x),
        Role::UseDef => {
            uses.push(*x);
            defs.push(*x);
        }
    });
    (uses, defs)
}

/// The slots one block touches: each statement's (reads, writes), in
/// order, and its terminator's reads.
#[derive(Clone, Default)]
struct BlockSlots {
    stmts: Vec<(Vec<Slot>, Vec<Slot>)>,
    term: Vec<Slot>,
}

fn compact_function(func: &mut Function) {
    let n = func.num_locals as usize;
    let params = func.params.len().min(n);
    if n <= params + 1 {
        return;
    }
    let blocks: Vec<NodeIndex<u32>> = func.cfg.node_indices().collect();
    let slot_of = |s: Slot| s as usize;
    // Per block (by index), once for both passes below.
    let mut touched = vec![BlockSlots::default(); func.cfg.node_count()];
    for &b in &blocks {
        let block = &mut func.cfg[b];
        let t = &mut touched[b.index()];
        t.stmts.extend(block.stmts.iter_mut().map(touches));
        terminator(&mut block.term, &mut |x, _| t.term.push(*x));
    }
    // Per block: the variables it reads before writing them, and writes.
    let mut gen_ = vec![FixedBitSet::with_capacity(n); func.cfg.node_count()];
    let mut kill = vec![FixedBitSet::with_capacity(n); func.cfg.node_count()];
    for &b in &blocks {
        let (g, k) = (&mut gen_[b.index()], &mut kill[b.index()]);
        let BlockSlots { stmts, term } = &touched[b.index()];
        for (uses, defs) in stmts {
            for &u in uses {
                if !k.contains(slot_of(u)) {
                    g.insert(slot_of(u));
                }
            }
            for &d in defs {
                k.insert(slot_of(d));
            }
        }
        for &u in term {
            if !k.contains(slot_of(u)) {
                g.insert(slot_of(u));
            }
        }
    }
    // Live on entry to and exit from each block: the least fixed point of
    // in = gen ∪ (out − kill), out = ∪ in(successors), by rounds over the
    // blocks in reverse order until nothing changes.
    let mut live_in = gen_.clone();
    let mut live_out = vec![FixedBitSet::with_capacity(n); func.cfg.node_count()];
    let mut changed = true;
    while changed {
        changed = false;
        for &b in blocks.iter().rev() {
            let mut out = FixedBitSet::with_capacity(n);
            for s in successors(&func.cfg[b].term) {
                out.union_with(&live_in[s.index()]);
            }
            let mut inn = out.clone();
            inn.difference_with(&kill[b.index()]);
            inn.union_with(&gen_[b.index()]);
            if inn != live_in[b.index()] {
                live_in[b.index()] = inn;
                changed = true;
            }
            live_out[b.index()] = out;
        }
    }
    // Interference: a variable written interferes with every other one
    // live after the write; at the entry, the parameters and the variables
    // live there (read before any write: null) all hold values at once.
    let mut edges = vec![FixedBitSet::with_capacity(n); n];
    let mut interfere = |a: usize, b: usize| {
        if a != b {
            edges[a].insert(b);
            edges[b].insert(a);
        }
    };
    for &b in &blocks {
        let mut live = live_out[b.index()].clone();
        let BlockSlots { stmts, term } = &touched[b.index()];
        for &u in term {
            live.insert(slot_of(u));
        }
        for (uses, defs) in stmts.iter().rev() {
            for &d in defs {
                for l in live.ones() {
                    interfere(slot_of(d), l);
                }
            }
            // Two variables written by one statement (`waitall(a, b)`)
            // hold values at once after it.
            for (i, &d) in defs.iter().enumerate() {
                for &e in &defs[i + 1..] {
                    interfere(slot_of(d), slot_of(e));
                }
            }
            for &d in defs {
                live.set(slot_of(d), false);
            }
            for &u in uses {
                live.insert(slot_of(u));
            }
        }
    }
    let mut at_entry = live_in[func.entry.index()].clone();
    at_entry.insert_range(0..params);
    let entry: Vec<usize> = at_entry.ones().collect();
    for (i, &a) in entry.iter().enumerate() {
        for &b in &entry[i + 1..] {
            interfere(a, b);
        }
    }
    // Greedy colouring, parameters first in their own slots.
    let mut colour: Vec<Option<u32>> = vec![None; n];
    for (p, c) in colour.iter_mut().enumerate().take(params) {
        *c = Some(p as u32);
    }
    let mut taken = FixedBitSet::with_capacity(n);
    for v in params..n {
        taken.clear();
        for w in edges[v].ones() {
            if let Some(c) = colour[w] {
                taken.insert(c as usize);
            }
        }
        // Invariant: v has at most n - 1 neighbours, so a colour < n is free.
        let c = (0..n).find(|&c| !taken.contains(c)).unwrap_or(v);
        colour[v] = Some(c as u32);
    }
    let map: Vec<u32> = colour
        .iter()
        .enumerate()
        .map(|(v, c)| c.unwrap_or(v as u32))
        .collect();
    let count = map.iter().map(|&c| c as usize + 1).max().unwrap_or(0);
    if count >= n {
        return;
    }
    for &b in &blocks {
        let block = &mut func.cfg[b];
        let mut rename = |x: &mut Slot, _: Role| *x = map[*x as usize];
        for s in &mut block.stmts {
            stmt(s, &mut rename);
        }
        terminator(&mut block.term, &mut rename);
    }
    let mut names = vec![String::new(); count];
    for (v, &c) in map.iter().enumerate() {
        let name = &mut names[c as usize];
        if !name.is_empty() {
            name.push('/');
        }
        name.push_str(&func.local_names[v]);
    }
    func.local_names = names;
    func.num_locals = count as u32;
}
