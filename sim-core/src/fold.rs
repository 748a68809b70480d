//! Specialisation of a program for one run: params and `size` are constants
//! of the run, so they are substituted and constant subexpressions folded
//! before the simulation starts. Folding uses the evaluator itself, so the
//! result is exactly what run-time evaluation would give; an expression
//! whose evaluation fails (e.g. `1 / 0`) is left alone so that the error
//! is still reported at run time with its rank and source line.

use crate::ir::{CommOp, Constant, Expr, MsgArgs, PrintArg, Program, Stmt, Terminator};
use crate::value::{EvalCx, Value, WorldOnly, eval};

/// Substitutes `params` and `size` into every expression and folds constants.
pub fn specialize(program: &mut Program, params: &[Value], size: u32) {
    let cx = Folder { params, size };
    for k in &mut program.kernels {
        if let Some(c) = &mut k.cost {
            cx.fold(c);
        }
    }
    for f in &mut program.functions {
        for b in f.cfg.node_weights_mut() {
            for s in &mut b.stmts {
                cx.stmt(s);
            }
            match &mut b.term {
                Terminator::Branch { cond, .. } => cx.fold(cond),
                Terminator::Return { value: Some(e), .. } => cx.fold(e),
                Terminator::Return { value: None, .. } | Terminator::Goto(_) => {}
            }
        }
    }
}

struct Folder<'a> {
    params: &'a [Value],
    size: u32,
}

fn constant(v: Value) -> Option<Expr> {
    match v {
        Value::Int(i) => Some(Expr::Const(Constant::Int(i))),
        Value::Float(f) => Some(Expr::Const(Constant::Float(f))),
        Value::Bool(b) => Some(Expr::Bool(b)),
        Value::Null => Some(Expr::Null),
        Value::Any => Some(Expr::Any),
        Value::Req(_)
        | Value::Status(_)
        | Value::BigStatus(_)
        | Value::Comm(_)
        | Value::Array(_) => None,
    }
}

fn is_const(e: &Expr) -> bool {
    matches!(e, Expr::Const(_) | Expr::Bool(_) | Expr::Null | Expr::Any)
}

impl Folder<'_> {
    fn msg(&self, a: &mut MsgArgs) {
        self.fold(&mut a.peer);
        self.fold(&mut a.tag);
        self.fold(&mut a.bytes);
        if let Some(c) = &mut a.comm {
            self.fold(c);
        }
    }

    fn stmt(&self, s: &mut Stmt) {
        match s {
            Stmt::Assign { value, .. } => self.fold(value),
            Stmt::AssignIndex { index, value, .. } => {
                self.fold(index);
                self.fold(value);
            }
            Stmt::Compute { args, .. } | Stmt::Call { args, .. } => {
                args.iter_mut().for_each(|a| self.fold(a))
            }
            Stmt::Copy { bytes, .. } | Stmt::Heap { bytes, .. } => self.fold(bytes),
            Stmt::Print { args, .. } => {
                for a in args {
                    if let PrintArg::Expr(e) = a {
                        self.fold(e);
                    }
                }
            }
            Stmt::Comm { op, .. } => match op {
                CommOp::Send(a, _)
                | CommOp::Recv(a)
                | CommOp::Isend(a, _)
                | CommOp::Irecv(a)
                | CommOp::Probe(a)
                | CommOp::Iprobe(a) => self.msg(a),
                CommOp::Sendrecv { send, recv } => {
                    self.msg(send);
                    self.msg(recv);
                }
                CommOp::Collective(c) => {
                    for e in c.exprs_mut() {
                        self.fold(e);
                    }
                }
                CommOp::CommSplit { comm, color, key } => {
                    if let Some(c) = comm {
                        self.fold(c);
                    }
                    self.fold(color);
                    self.fold(key);
                }
                CommOp::CommDup(c) => self.fold(c),
                CommOp::Wait(_) | CommOp::Waitall(_) | CommOp::Waitany(_) | CommOp::Test(_) => {}
            },
        }
    }

    fn fold(&self, e: &mut Expr) {
        let all_const = match e {
            Expr::Param(p) => {
                if let Some(c) = self.params.get(*p as usize).cloned().and_then(constant) {
                    *e = c;
                }
                return;
            }
            Expr::Size => {
                *e = Expr::Const(Constant::Int(i64::from(self.size)));
                return;
            }
            Expr::Unary(_, a) | Expr::Field(a, _) => {
                self.fold(a);
                is_const(a)
            }
            Expr::Binary(_, a, b) | Expr::And(a, b) | Expr::Or(a, b) => {
                self.fold(a);
                self.fold(b);
                is_const(a) && is_const(b)
            }
            Expr::Builtin(_, args) | Expr::Array(args) => {
                args.iter_mut().for_each(|a| self.fold(a));
                args.iter().all(is_const)
            }
            Expr::Index(a, i) => {
                self.fold(a);
                self.fold(i);
                false
            }
            // Rank-dependent (or, for `size_in` of a split, run-dependent).
            Expr::RankIn(c) | Expr::SizeIn(c) => {
                self.fold(c);
                false
            }
            _ => false,
        };
        if all_const {
            let cx = EvalCx {
                locals: &[],
                params: self.params,
                rank: 0,
                size: self.size,
                clock: 0.0,
                comms: &WorldOnly(self.size),
            };
            if let Some(c) = eval(e, &cx).ok().and_then(constant) {
                *e = c;
            }
        }
    }
}
