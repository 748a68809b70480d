//! Checks of the IR invariants written at the top of `sim_core::ir`.

use petgraph::visit::EdgeRef;
use sim_core::ir::{
    CommOp, EdgeKind, Expr, Function, MsgArgs, PrintArg, Program, Stmt, Terminator,
};

fn check_expr(e: &Expr, p: &Program, f: &Function) {
    match e {
        Expr::Local(s) => assert!(*s < f.num_locals, "slot {s} out of range in {}", f.name),
        Expr::Param(i) => assert!((*i as usize) < p.params.len(), "param {i} out of range"),
        Expr::Unary(_, x) | Expr::Field(x, _) | Expr::RankIn(x) | Expr::SizeIn(x) => {
            check_expr(x, p, f)
        }
        Expr::Binary(_, l, r) | Expr::And(l, r) | Expr::Or(l, r) | Expr::Index(l, r) => {
            check_expr(l, p, f);
            check_expr(r, p, f);
        }
        Expr::Builtin(_, args) | Expr::Array(args) => args.iter().for_each(|a| check_expr(a, p, f)),
        Expr::Const(_)
        | Expr::Bool(_)
        | Expr::Null
        | Expr::Any
        | Expr::World
        | Expr::Rank
        | Expr::Size
        | Expr::Wtime => {}
    }
}

fn check_msg(m: &MsgArgs, p: &Program, f: &Function) {
    for e in [&m.peer, &m.tag, &m.bytes].into_iter().chain(&m.comm) {
        check_expr(e, p, f);
    }
}

pub fn check_invariants(p: &Program) {
    assert!((p.main as usize) < p.functions.len());
    for (i, param) in p.params.iter().enumerate() {
        // Defaults use earlier params only (no locals at all).
        let empty = Function {
            name: String::new(),
            params: Vec::new(),
            local_names: Vec::new(),
            num_locals: 0,
            cfg: Default::default(),
            entry: Default::default(),
            span: Default::default(),
        };
        check_expr(&param.default, p, &empty);
        fn max_param(e: &Expr) -> Option<u32> {
            match e {
                Expr::Param(i) => Some(*i),
                Expr::Unary(_, x) | Expr::Field(x, _) | Expr::RankIn(x) | Expr::SizeIn(x) => {
                    max_param(x)
                }
                Expr::Binary(_, l, r) | Expr::And(l, r) | Expr::Or(l, r) | Expr::Index(l, r) => {
                    max_param(l).max(max_param(r))
                }
                Expr::Builtin(_, a) | Expr::Array(a) => a.iter().filter_map(max_param).max(),
                _ => None,
            }
        }
        assert!(max_param(&param.default).is_none_or(|m| (m as usize) < i));
    }
    for f in &p.functions {
        assert_eq!(f.local_names.len(), f.num_locals as usize);
        assert!(f.params.len() <= f.num_locals as usize);
        assert!(f.cfg.node_weight(f.entry).is_some());
        let mut edges = 0;
        for b in f.cfg.node_indices() {
            let block = &f.cfg[b];
            for s in &block.stmts {
                match s {
                    Stmt::Assign { dst, value, .. } => {
                        assert!(*dst < f.num_locals);
                        check_expr(value, p, f);
                    }
                    Stmt::AssignIndex {
                        dst, index, value, ..
                    } => {
                        assert!(*dst < f.num_locals);
                        check_expr(index, p, f);
                        check_expr(value, p, f);
                    }
                    Stmt::Compute { kernel, args, .. } => {
                        let k = &p.kernels[*kernel as usize];
                        assert_eq!(k.params.len(), args.len());
                        args.iter().for_each(|a| check_expr(a, p, f));
                    }
                    Stmt::Copy { bytes, .. } => check_expr(bytes, p, f),
                    Stmt::Print { args, .. } => args.iter().for_each(|a| {
                        if let PrintArg::Expr(e) = a {
                            check_expr(e, p, f);
                        }
                    }),
                    Stmt::Call {
                        func, args, dst, ..
                    } => {
                        let callee = &p.functions[*func as usize];
                        assert_eq!(callee.params.len(), args.len());
                        assert!(dst.is_none_or(|d| d < f.num_locals));
                        args.iter().for_each(|a| check_expr(a, p, f));
                    }
                    Stmt::Comm { op, dst, .. } => {
                        assert!(dst.is_none_or(|d| d < f.num_locals));
                        match op {
                            CommOp::Send(m, _)
                            | CommOp::Isend(m, _)
                            | CommOp::Recv(m)
                            | CommOp::Irecv(m) => check_msg(m, p, f),
                            CommOp::Probe(m) | CommOp::Iprobe(m) => {
                                assert!(matches!(m.bytes, Expr::Null));
                                check_msg(m, p, f);
                            }
                            CommOp::Sendrecv { send, recv } => {
                                check_msg(send, p, f);
                                check_msg(recv, p, f);
                            }
                            CommOp::Wait(s) | CommOp::Test(s) => assert!(*s < f.num_locals),
                            CommOp::Waitall(ss) => assert!(ss.iter().all(|s| *s < f.num_locals)),
                            CommOp::Waitany(ss) => {
                                assert!(!ss.is_empty());
                                assert!(ss.iter().all(|s| *s < f.num_locals));
                            }
                            CommOp::Collective(c) => {
                                assert_eq!(c.root.is_some(), c.kind.rooted(), "{:?}", c.kind);
                                assert_eq!(c.bytes.is_some(), c.kind.has_bytes(), "{:?}", c.kind);
                                for e in
                                    c.root.iter().chain(&c.bytes).chain(&c.value).chain(&c.comm)
                                {
                                    check_expr(e, p, f);
                                }
                            }
                            CommOp::CommSplit { comm, color, key } => {
                                for e in [color, key].into_iter().chain(comm) {
                                    check_expr(e, p, f);
                                }
                            }
                            CommOp::CommDup(c) => check_expr(c, p, f),
                        }
                    }
                }
            }
            let out: Vec<(EdgeKind, _)> =
                f.cfg.edges(b).map(|e| (*e.weight(), e.target())).collect();
            edges += out.len();
            match &block.term {
                Terminator::Goto(t) => assert_eq!(out, vec![(EdgeKind::Goto, *t)]),
                Terminator::Branch {
                    cond, then_, else_, ..
                } => {
                    check_expr(cond, p, f);
                    assert_eq!(out.len(), 2);
                    assert!(out.contains(&(EdgeKind::True, *then_)));
                    assert!(out.contains(&(EdgeKind::False, *else_)));
                }
                Terminator::Return { value: v, .. } => {
                    assert!(out.is_empty());
                    if let Some(v) = v {
                        check_expr(v, p, f);
                    }
                }
            }
        }
        assert_eq!(edges, f.cfg.edge_count());
    }
    for k in &p.kernels {
        if let Some(c) = &k.cost {
            let f = Function {
                name: k.name.clone(),
                params: k.params.clone(),
                local_names: k.params.clone(),
                num_locals: u32::try_from(k.params.len()).unwrap_or(u32::MAX),
                cfg: Default::default(),
                entry: Default::default(),
                span: Default::default(),
            };
            check_expr(c, p, &f);
        }
    }
}
