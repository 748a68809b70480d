//! Name resolution, semantic checks and lowering of the AST to the IR's
//! basic-block graphs.
//!
//! Checks and lowering are one pass: every error is recorded and lowering
//! goes on with a placeholder (`null`), so that one run reports all of them;
//! the caller discards the program when any error was found.
//!
//! Function ids: `main` (the top-level statements) is 0, then every `fn` in
//! declaration order.

use std::collections::HashMap;

use petgraph::graph::{DiGraph, NodeIndex};
use sim_core::ir::{
    self, BinOp, Builtin, CollArgs, CollKind, CommOp, Constant, EdgeKind, FuncId, KernelId,
    MsgArgs, PrintArg, ReduceOp, SendMode, Slot, Span, Terminator, UnOp,
};

use crate::ast::{self, Arg, ExprKind, Ident, Item, Module, StmtKind};
use crate::diag::{Diagnostic, suggest};
use crate::span::join;

/// Point-to-point communication and communicator operations (the
/// collectives are [`CollKind::ALL`]).
const COMM_OPS: [&str; 17] = [
    "send",
    "ssend",
    "bsend",
    "isend",
    "issend",
    "ibsend",
    "recv",
    "irecv",
    "sendrecv",
    "probe",
    "iprobe",
    "wait",
    "waitall",
    "waitany",
    "test",
    "comm_split",
    "comm_dup",
];
const STMT_OPS: [&str; 5] = ["print", "copy", "abort", "malloc", "free"];
/// Named arguments whose value is a name, not an expression: `named_args`
/// checks their labels but leaves their values to the caller.
const NAME_ARGS: [&str; 1] = ["op"];
/// Pure builtins that are not [`Builtin`]s.
const OTHER_BUILTINS: [&str; 3] = ["wtime", "rank_in", "size_in"];

fn builtin(name: &str) -> Option<Builtin> {
    Some(match name {
        "min" => Builtin::Min,
        "max" => Builtin::Max,
        "abs" => Builtin::Abs,
        "floor" => Builtin::Floor,
        "ceil" => Builtin::Ceil,
        "sqrt" => Builtin::Sqrt,
        "log2" => Builtin::Log2,
        "array" => Builtin::ArrayOf,
        "len" => Builtin::Len,
        "sum" => Builtin::Sum,
        _ => return None,
    })
}

/// The names of [`builtin`], for suggestions.
const BUILTIN_NAMES: [&str; 10] = [
    "min", "max", "abs", "floor", "ceil", "sqrt", "log2", "array", "len", "sum",
];

fn collective(name: &str) -> Option<CollKind> {
    CollKind::ALL.into_iter().find(|k| k.name() == name)
}

/// Collectives that take a `value:` (see [`CollArgs::value`]).
fn carries_value(kind: CollKind) -> bool {
    matches!(
        kind,
        CollKind::Bcast
            | CollKind::Reduce
            | CollKind::Allreduce
            | CollKind::Gather
            | CollKind::Allgather
            | CollKind::Scatter
            | CollKind::Alltoall
            | CollKind::Scan
            | CollKind::Exscan
    )
}

/// Collectives that combine their values with an `op:`.
fn combines(kind: CollKind) -> bool {
    matches!(
        kind,
        CollKind::Reduce | CollKind::Allreduce | CollKind::Scan | CollKind::Exscan
    )
}

const REDUCE_OPS: [ReduceOp; 6] = [
    ReduceOp::Sum,
    ReduceOp::Prod,
    ReduceOp::Min,
    ReduceOp::Max,
    ReduceOp::Land,
    ReduceOp::Lor,
];

/// "`a`, `b` and `c`".
fn name_list<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let names: Vec<String> = names.into_iter().map(|n| format!("`{n}`")).collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        Some((last, _)) => last.clone(),
        None => String::new(),
    }
}

/// The note that lists the reduction operations.
fn reduce_ops_note() -> String {
    format!(
        "note: `op:` is one of {}, written as a bare name (`op: max`)",
        name_list(REDUCE_OPS.map(ReduceOp::name))
    )
}

/// The reduction operation meant by an unknown `op:` name: a near miss
/// (`mx`), another spelling (`MAX`, `MPI_MAX`, `maximum`) or C's `&&`-like
/// words (`and`, `or`).
fn suggest_reduce_op(name: &str) -> Option<&'static str> {
    let lower = name.to_ascii_lowercase();
    let bare = lower.strip_prefix("mpi_").unwrap_or(&lower);
    if let Some(op) = ReduceOp::from_name(bare) {
        return Some(op.name());
    }
    let names = REDUCE_OPS.map(ReduceOp::name);
    let spelled = match bare {
        "and" | "logical_and" => Some("land"),
        "or" | "logical_or" => Some("lor"),
        "add" | "plus" | "total" => Some("sum"),
        "product" | "mul" | "times" => Some("prod"),
        // `maximum`, `minimum`, `summation`.
        _ => names.into_iter().find(|n| bare.starts_with(n)),
    };
    spelled.or_else(|| {
        let s = suggest(bare, names)?;
        names.into_iter().find(|n| *n == s)
    })
}

/// The error for `root:`, `value:` or `op:` on a collective that does not
/// take it: (message, label, note).
fn misplaced_coll_arg(kind: CollKind, label: &str) -> Option<(String, &'static str, String)> {
    let op = kind.name();
    let kinds = |pred: fn(CollKind) -> bool| {
        name_list(
            CollKind::ALL
                .into_iter()
                .filter(|k| pred(*k))
                .map(CollKind::name),
        )
    };
    match label {
        "root" => Some((
            format!("`{op}` takes no `root:` argument"),
            "not a rooted collective",
            format!("note: only {} have a root", kinds(CollKind::rooted)),
        )),
        "value" => Some((
            format!("`{op}` takes no `value:` argument"),
            "carries no value",
            format!("note: only {} carry a `value:`", kinds(carries_value)),
        )),
        "op" => Some((
            format!("`{op}` takes no `op:` argument"),
            "not a reduction that carries a value",
            format!(
                "note: only {} combine their `value:` with an `op:`",
                kinds(combines)
            ),
        )),
        _ => None,
    }
}

/// `send`, `ssend`, ...: the mode and whether it is nonblocking.
fn send_op(name: &str) -> Option<(SendMode, bool)> {
    Some(match name {
        "send" => (SendMode::Standard, false),
        "ssend" => (SendMode::Synchronous, false),
        "bsend" => (SendMode::Buffered, false),
        "isend" => (SendMode::Standard, true),
        "issend" => (SendMode::Synchronous, true),
        "ibsend" => (SendMode::Buffered, true),
        _ => return None,
    })
}

/// Communication: point-to-point, communicators and collectives.
fn is_comm_op(name: &str) -> bool {
    COMM_OPS.contains(&name) || collective(name).is_some()
}

/// Operations that set their request variables to null.
fn is_wait_op(name: &str) -> bool {
    matches!(name, "wait" | "waitall" | "waitany" | "test")
}

/// Names that cannot be declared as functions.
fn is_reserved_fn(name: &str) -> bool {
    builtin(name).is_some()
        || OTHER_BUILTINS.contains(&name)
        || is_comm_op(name)
        || STMT_OPS.contains(&name)
}

/// Every name that can be called, for suggestions.
fn operation_names() -> impl Iterator<Item = &'static str> {
    COMM_OPS
        .into_iter()
        .chain(CollKind::ALL.into_iter().map(CollKind::name))
        .chain(STMT_OPS)
        .chain(BUILTIN_NAMES)
        .chain(OTHER_BUILTINS)
}

/// A note for an argument that `op` does not take but other operations do.
fn misplaced_arg_note(op: &str, label: &str) -> Option<String> {
    match label {
        "bytes" if matches!(op, "probe" | "iprobe") => Some(format!(
            "note: `{op}` does not receive the message; its status tells the size: `{op}(...).bytes`"
        )),
        "bytes" if op == "barrier" => Some("note: `barrier` carries no data".to_string()),
        "to" if matches!(op, "recv" | "irecv" | "probe" | "iprobe") => {
            Some(format!("note: `{op}` names the sender with `from:`"))
        }
        "from" if send_op(op).is_some() => {
            Some(format!("note: `{op}` names the receiver with `to:`"))
        }
        _ => None,
    }
}

fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

fn was_were(n: usize) -> &'static str {
    if n == 1 { "was" } else { "were" }
}

struct FnSig {
    id: FuncId,
    arity: usize,
    span: Span,
}

struct KernelSig {
    id: KernelId,
    arity: usize,
    span: Span,
}

/// Program-wide declarations, collected before any body is lowered.
struct Globals {
    params: Vec<String>,
    param_index: HashMap<String, u32>,
    kernels: HashMap<String, KernelSig>,
    fns: HashMap<String, FnSig>,
}

impl Globals {
    fn is_impure_name(&self, name: &str) -> bool {
        self.fns.contains_key(name) || is_comm_op(name)
    }

    /// Does evaluating `e` call a user function or a communication op?
    fn is_impure(&self, e: &ast::Expr) -> bool {
        self.any_call(e, &|name| self.is_impure_name(name))
    }

    /// The variables that `wait(r)`/`waitall(r, ...)` calls in `e` set to null.
    fn waited_names<'a>(&self, e: &'a ast::Expr, out: &mut Vec<&'a str>) {
        match &e.kind {
            ExprKind::Unary(_, x) | ExprKind::Field(x, _) => self.waited_names(x, out),
            ExprKind::Binary(_, l, r)
            | ExprKind::And(l, r)
            | ExprKind::Or(l, r)
            | ExprKind::Index(l, r) => {
                self.waited_names(l, out);
                self.waited_names(r, out);
            }
            ExprKind::Array(items) => items.iter().for_each(|x| self.waited_names(x, out)),
            ExprKind::Call { name, args } => {
                let waits = is_wait_op(&name.name);
                for a in args {
                    match &a.value.kind {
                        ExprKind::Name(n) if waits => out.push(n),
                        _ => self.waited_names(&a.value, out),
                    }
                }
            }
            _ => {}
        }
    }

    fn any_call(&self, e: &ast::Expr, pred: &dyn Fn(&str) -> bool) -> bool {
        match &e.kind {
            ExprKind::Unary(_, x) | ExprKind::Field(x, _) => self.any_call(x, pred),
            ExprKind::Binary(_, l, r)
            | ExprKind::And(l, r)
            | ExprKind::Or(l, r)
            | ExprKind::Index(l, r) => self.any_call(l, pred) || self.any_call(r, pred),
            ExprKind::Array(items) => items.iter().any(|x| self.any_call(x, pred)),
            ExprKind::Call { name, args } => {
                pred(&name.name) || args.iter().any(|a| self.any_call(&a.value, pred))
            }
            _ => false,
        }
    }
}

pub fn lower(module: &Module, file: &str, errors: &mut Vec<Diagnostic>) -> ir::Program {
    let (
        g,
        Decls {
            param_items,
            kernel_items,
            fn_items,
            main_stmts,
        },
    ) = declarations(module, errors);

    // Param defaults: literals and earlier params only.
    let mut params = Vec::new();
    for (i, (name, value, span)) in param_items.into_iter().enumerate() {
        let mut cx = FnCx::new(&g, errors, Mode::ParamDefault(i), span);
        let default = cx.expr(value);
        params.push(ir::ParamDecl {
            name: name.name.clone(),
            default,
            span,
        });
    }

    // Kernel costs: the kernel's parameters are `Local(0..n)`.
    let mut kernels = Vec::new();
    for (name, kparams, cost, span) in kernel_items {
        let mut cx = FnCx::new(&g, errors, Mode::KernelCost, span);
        for p in kparams {
            cx.declare(&p.name);
        }
        let cost = cost.as_ref().map(|c| cx.expr(c));
        kernels.push(ir::Kernel {
            name: name.name.clone(),
            params: kparams.iter().map(|p| p.name.clone()).collect(),
            cost,
            span,
        });
    }

    // Function bodies, main first.
    let main_span = Span {
        start: 0,
        end: 0,
        line: 1,
        col: 1,
    };
    let mut functions = Vec::new();
    {
        let mut cx = FnCx::new(&g, errors, Mode::Main, main_span);
        for s in main_stmts {
            cx.stmt(s);
        }
        functions.push(cx.finish("main", Vec::new(), main_span));
    }
    for (name, fparams, body, span) in fn_items {
        let mut cx = FnCx::new(&g, errors, Mode::Fn, span);
        for p in fparams {
            cx.declare(&p.name);
        }
        cx.block(body);
        let names = fparams.iter().map(|p| p.name.clone()).collect();
        functions.push(cx.finish(&name.name, names, span));
    }

    let program = ir::Program {
        file: file.to_string(),
        params,
        kernels,
        functions,
        main: 0,
    };
    debug_assert!(
        !errors.is_empty() || program.validate().is_ok(),
        "lowering broke an IR invariant: {:?}",
        program.validate()
    );
    program
}

/// A module's declarations in source order, split by kind.
struct Decls<'m> {
    param_items: Vec<(&'m Ident, &'m ast::Expr, Span)>,
    kernel_items: Vec<(&'m Ident, &'m Vec<Ident>, &'m Option<ast::Expr>, Span)>,
    fn_items: Vec<(&'m Ident, &'m Vec<Ident>, &'m ast::Block, Span)>,
    main_stmts: Vec<&'m ast::Stmt>,
}

/// Collects the declarations (params, kernels, functions) and the
/// top-level statements; a name declared twice or a redefined built-in is
/// reported and the later declaration dropped.
fn declarations<'m>(module: &'m Module, errors: &mut Vec<Diagnostic>) -> (Globals, Decls<'m>) {
    let mut g = Globals {
        params: Vec::new(),
        param_index: HashMap::new(),
        kernels: HashMap::new(),
        fns: HashMap::new(),
    };
    let mut param_items = Vec::new();
    let mut kernel_items = Vec::new();
    let mut fn_items = Vec::new();
    let mut main_stmts = Vec::new();
    let mut param_spans: HashMap<String, Span> = HashMap::new();
    for item in &module.items {
        match item {
            Item::Param { name, value, span } => {
                if let Some(first) = param_spans.get(&name.name) {
                    errors.push(declared_twice("param", name, *first));
                    continue;
                }
                param_spans.insert(name.name.clone(), name.span);
                let idx = u32::try_from(g.params.len()).unwrap_or(u32::MAX);
                g.param_index.insert(name.name.clone(), idx);
                g.params.push(name.name.clone());
                param_items.push((name, value, *span));
            }
            Item::Kernel {
                name,
                params,
                cost,
                span,
            } => {
                if let Some(first) = g.kernels.get(&name.name) {
                    errors.push(declared_twice("kernel", name, first.span));
                    continue;
                }
                check_param_names(params, errors);
                let id = u32::try_from(kernel_items.len()).unwrap_or(u32::MAX);
                g.kernels.insert(
                    name.name.clone(),
                    KernelSig {
                        id,
                        arity: params.len(),
                        span: name.span,
                    },
                );
                kernel_items.push((name, params, cost, *span));
            }
            Item::Fn {
                name,
                params,
                body,
                span,
            } => {
                if is_reserved_fn(&name.name) {
                    errors.push(
                        Diagnostic::new(
                            format!(
                                "`{}` is a built-in operation and cannot be redefined",
                                name.name
                            ),
                            name.span,
                        )
                        .with_label("choose another name"),
                    );
                    continue;
                }
                if let Some(first) = g.fns.get(&name.name) {
                    errors.push(declared_twice("function", name, first.span));
                    continue;
                }
                check_param_names(params, errors);
                let id = u32::try_from(fn_items.len() + 1).unwrap_or(u32::MAX);
                g.fns.insert(
                    name.name.clone(),
                    FnSig {
                        id,
                        arity: params.len(),
                        span: name.span,
                    },
                );
                fn_items.push((name, params, body, *span));
            }
            Item::Stmt(s) => main_stmts.push(s),
        }
    }
    (
        g,
        Decls {
            param_items,
            kernel_items,
            fn_items,
            main_stmts,
        },
    )
}

/// "`what` `name` is declared twice", pointing at both declarations.
fn declared_twice(what: &str, name: &Ident, first: Span) -> Diagnostic {
    Diagnostic::new(
        format!("{what} `{}` is declared twice", name.name),
        name.span,
    )
    .with_label("declared again here")
    .with_secondary(first, "first declared here")
}

fn check_param_names(params: &[Ident], errors: &mut Vec<Diagnostic>) {
    for (i, p) in params.iter().enumerate() {
        if let Some(first) = params[..i].iter().find(|q| q.name == p.name) {
            errors.push(declared_twice("parameter", p, first.span));
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Main,
    Fn,
    /// The default of the i-th param.
    ParamDefault(usize),
    KernelCost,
}

/// A block under construction; targets are indices into `FnCx::blocks`.
struct BB {
    stmts: Vec<ir::Stmt>,
    term: Option<Term>,
    span: Span,
}

enum Term {
    Goto(usize),
    Branch {
        cond: ir::Expr,
        then_: usize,
        else_: usize,
        span: Span,
    },
    Return(Option<ir::Expr>, Span),
}

/// Where a call's result goes.
enum Dst<'a> {
    /// A fresh temporary.
    Temp,
    /// A fresh named local (for `let`), not yet in scope.
    Named(&'a str),
    /// An existing slot (for `x = f()`).
    Slot(Slot),
    /// Nowhere (an expression statement).
    Discard,
}

enum CallOut {
    /// A pure value (builtins, `wtime()`).
    Pure(ir::Expr),
    /// A call or communication op was emitted; its result is in this slot.
    Stored(Option<Slot>),
}

struct LoopCx {
    continue_to: usize,
    break_to: usize,
}

struct FnCx<'g, 'e> {
    g: &'g Globals,
    errors: &'e mut Vec<Diagnostic>,
    mode: Mode,
    blocks: Vec<BB>,
    cur: usize,
    local_names: Vec<String>,
    scopes: Vec<Vec<(String, Slot)>>,
    loops: Vec<LoopCx>,
    next_temp: usize,
}

/// Is the value of `e` unaffected by what later calls can do (time passes;
/// `wait` sets the variables in `waited` to null)?
fn is_stable(e: &ir::Expr, waited: &[Slot]) -> bool {
    match e {
        ir::Expr::Const(_)
        | ir::Expr::Bool(_)
        | ir::Expr::Null
        | ir::Expr::Any
        | ir::Expr::Param(_)
        | ir::Expr::Rank
        | ir::Expr::Size
        | ir::Expr::World => true,
        ir::Expr::Wtime => false,
        ir::Expr::Local(s) => !waited.contains(s),
        ir::Expr::Unary(_, x)
        | ir::Expr::Field(x, _)
        | ir::Expr::RankIn(x)
        | ir::Expr::SizeIn(x) => is_stable(x, waited),
        ir::Expr::Binary(_, l, r)
        | ir::Expr::And(l, r)
        | ir::Expr::Or(l, r)
        | ir::Expr::Index(l, r) => is_stable(l, waited) && is_stable(r, waited),
        ir::Expr::Builtin(_, args) | ir::Expr::Array(args) => {
            args.iter().all(|a| is_stable(a, waited))
        }
    }
}

/// Is `e` the same wherever and whenever it is evaluated on one rank?
fn is_constant(e: &ir::Expr) -> bool {
    match e {
        ir::Expr::Const(_)
        | ir::Expr::Bool(_)
        | ir::Expr::Null
        | ir::Expr::Param(_)
        | ir::Expr::Rank
        | ir::Expr::Size
        | ir::Expr::World => true,
        ir::Expr::Unary(_, x) => is_constant(x),
        ir::Expr::Binary(_, l, r) => is_constant(l) && is_constant(r),
        _ => false,
    }
}

fn int(v: i64) -> ir::Expr {
    ir::Expr::Const(Constant::Int(v))
}

fn bin(op: BinOp, l: ir::Expr, r: ir::Expr) -> ir::Expr {
    ir::Expr::Binary(op, Box::new(l), Box::new(r))
}

impl<'g, 'e> FnCx<'g, 'e> {
    fn new(g: &'g Globals, errors: &'e mut Vec<Diagnostic>, mode: Mode, span: Span) -> Self {
        FnCx {
            g,
            errors,
            mode,
            blocks: vec![BB {
                stmts: Vec::new(),
                term: None,
                span,
            }],
            cur: 0,
            local_names: Vec::new(),
            scopes: vec![Vec::new()],
            loops: Vec::new(),
            next_temp: 0,
        }
    }

    fn error(&mut self, d: Diagnostic) {
        self.errors.push(d);
    }

    // ---- slots and scopes ----------------------------------------------

    fn new_slot(&mut self, name: String) -> Slot {
        let slot = u32::try_from(self.local_names.len()).unwrap_or(u32::MAX);
        self.local_names.push(name);
        slot
    }

    fn temp(&mut self) -> Slot {
        self.next_temp += 1;
        self.new_slot(format!("%{}", self.next_temp))
    }

    /// A new slot for `name`, visible from now on in the innermost scope.
    fn declare(&mut self, name: &str) -> Slot {
        let slot = self.new_slot(name.to_string());
        self.bind(name, slot);
        slot
    }

    fn bind(&mut self, name: &str, slot: Slot) {
        if let Some(scope) = self.scopes.last_mut() {
            scope.push((name.to_string(), slot));
        }
    }

    fn lookup_local(&self, name: &str) -> Option<Slot> {
        self.scopes
            .iter()
            .rev()
            .flat_map(|s| s.iter().rev())
            .find(|(n, _)| n == name)
            .map(|&(_, slot)| slot)
    }

    fn visible_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .scopes
            .iter()
            .flat_map(|s| s.iter().map(|(n, _)| n.clone()))
            .collect();
        let params = match self.mode {
            Mode::ParamDefault(i) => &self.g.params[..i.min(self.g.params.len())],
            _ => &self.g.params[..],
        };
        names.extend(params.iter().cloned());
        names
    }

    // ---- blocks --------------------------------------------------------

    fn new_block(&mut self, span: Span) -> usize {
        self.blocks.push(BB {
            stmts: Vec::new(),
            term: None,
            span,
        });
        self.blocks.len() - 1
    }

    fn emit(&mut self, stmt: ir::Stmt) {
        self.blocks[self.cur].stmts.push(stmt);
    }

    fn terminate(&mut self, term: Term) {
        let b = &mut self.blocks[self.cur];
        if b.term.is_none() {
            b.term = Some(term);
        }
    }

    /// Ends the current block with `term` and continues in `next`.
    fn switch(&mut self, term: Term, next: usize) {
        self.terminate(term);
        self.cur = next;
    }

    fn finish(mut self, name: &str, params: Vec<String>, span: Span) -> ir::Function {
        self.terminate(Term::Return(None, span));
        // Keep the blocks reachable from the entry, in creation order.
        let n = self.blocks.len();
        let mut reachable = vec![false; n];
        let mut stack = vec![0usize];
        while let Some(b) = stack.pop() {
            if reachable[b] {
                continue;
            }
            reachable[b] = true;
            match &self.blocks[b].term {
                Some(Term::Goto(t)) => stack.push(*t),
                Some(Term::Branch { then_, else_, .. }) => {
                    stack.push(*then_);
                    stack.push(*else_);
                }
                Some(Term::Return(..)) | None => {}
            }
        }
        let mut cfg: DiGraph<ir::Block, EdgeKind, u32> = DiGraph::new();
        let mut new_id = vec![NodeIndex::end(); n];
        let mut terms = Vec::new();
        for (i, bb) in self.blocks.into_iter().enumerate() {
            if !reachable[i] {
                continue;
            }
            new_id[i] = cfg.add_node(ir::Block {
                stmts: bb.stmts,
                term: Terminator::Return {
                    value: None,
                    span: bb.span,
                },
                span: bb.span,
            });
            terms.push((new_id[i], bb.term));
        }
        for (id, term) in terms {
            let term = match term {
                Some(Term::Goto(t)) => {
                    cfg.add_edge(id, new_id[t], EdgeKind::Goto);
                    Terminator::Goto(new_id[t])
                }
                Some(Term::Branch {
                    cond,
                    then_,
                    else_,
                    span,
                }) => {
                    cfg.add_edge(id, new_id[then_], EdgeKind::True);
                    cfg.add_edge(id, new_id[else_], EdgeKind::False);
                    Terminator::Branch {
                        cond,
                        then_: new_id[then_],
                        else_: new_id[else_],
                        span,
                    }
                }
                Some(Term::Return(value, span)) => Terminator::Return { value, span },
                None => Terminator::Return {
                    value: None,
                    span: cfg[id].span,
                },
            };
            cfg[id].term = term;
        }
        ir::Function {
            name: name.to_string(),
            params,
            num_locals: u32::try_from(self.local_names.len()).unwrap_or(u32::MAX),
            local_names: self.local_names,
            cfg,
            entry: NodeIndex::new(0),
            span,
        }
    }

    // ---- statements ----------------------------------------------------

    fn block(&mut self, block: &ast::Block) {
        self.scopes.push(Vec::new());
        for s in &block.stmts {
            self.stmt(s);
        }
        self.scopes.pop();
    }

    fn stmt(&mut self, s: &ast::Stmt) {
        let span = s.span;
        match &s.kind {
            StmtKind::Let { name, value } => self.let_stmt(name, value, span),
            StmtKind::Assign { name, op, value } => self.assign(name, *op, value, span),
            StmtKind::AssignIndex {
                name,
                indices,
                op,
                value,
            } => self.assign_index(name, indices, *op, value, span),
            StmtKind::If { cond, then_, else_ } => {
                let c = self.cond(cond);
                let then_b = self.new_block(span);
                let join_b = self.new_block(span);
                let else_b = if else_.is_some() {
                    self.new_block(span)
                } else {
                    join_b
                };
                self.switch(
                    Term::Branch {
                        cond: c,
                        then_: then_b,
                        else_: else_b,
                        span: cond.span,
                    },
                    then_b,
                );
                self.block(then_);
                self.switch(Term::Goto(join_b), else_b);
                if let Some(else_) = else_ {
                    self.block(else_);
                    self.switch(Term::Goto(join_b), join_b);
                }
            }
            StmtKind::For {
                var,
                start,
                end,
                step,
                body,
            } => self.for_stmt(var, start, end, step.as_ref(), body, span),
            StmtKind::While { cond, body } => {
                let header = self.new_block(span);
                self.switch(Term::Goto(header), header);
                let c = self.cond(cond);
                let body_b = self.new_block(span);
                let exit = self.new_block(span);
                self.switch(
                    Term::Branch {
                        cond: c,
                        then_: body_b,
                        else_: exit,
                        span: cond.span,
                    },
                    body_b,
                );
                self.loops.push(LoopCx {
                    continue_to: header,
                    break_to: exit,
                });
                self.block(body);
                self.loops.pop();
                self.switch(Term::Goto(header), exit);
            }
            StmtKind::Break | StmtKind::Continue => {
                let is_break = matches!(s.kind, StmtKind::Break);
                let target = self
                    .loops
                    .last()
                    .map(|l| if is_break { l.break_to } else { l.continue_to });
                match target {
                    Some(t) => {
                        let next = self.new_block(span);
                        self.switch(Term::Goto(t), next);
                    }
                    None => {
                        let word = if is_break { "break" } else { "continue" };
                        self.error(
                            Diagnostic::new(format!("`{word}` outside of a loop"), span)
                                .with_label(format!(
                                    "`{word}` can only be used in `for` and `while` loops"
                                )),
                        );
                    }
                }
            }
            StmtKind::Return(value) => {
                let v = value.as_ref().map(|v| self.expr(v));
                let next = self.new_block(span);
                self.switch(Term::Return(v, span), next);
            }
            StmtKind::Compute { kernel, args } => self.compute(kernel, args, span),
            StmtKind::Misplaced => {}
            StmtKind::Expr(e) => self.expr_stmt(e),
        }
    }

    fn let_stmt(&mut self, name: &Ident, value: &ast::Expr, span: Span) {
        if let ExprKind::Call { name: f, args } = &value.kind
            && self.g.is_impure_name(&f.name)
        {
            match self.call(f, args, value.span, Dst::Named(&name.name)) {
                CallOut::Stored(Some(slot)) => self.bind(&name.name, slot),
                CallOut::Stored(None) | CallOut::Pure(_) => {
                    // Only after an error: declare anyway to avoid follow-up errors.
                    self.declare(&name.name);
                }
            }
            return;
        }
        let v = self.expr(value);
        let dst = self.declare(&name.name);
        self.emit(ir::Stmt::Assign {
            dst,
            value: v,
            span,
        });
    }

    /// "cannot assign to undeclared variable", with `help` and the closest
    /// visible name.
    fn undeclared_target(&self, name: &Ident, help: String) -> Diagnostic {
        let mut d = Diagnostic::new(
            format!("cannot assign to undeclared variable `{}`", name.name),
            name.span,
        )
        .with_label("not declared")
        .with_note(help);
        let candidates = self.visible_names();
        if let Some(s) = suggest(&name.name, candidates.iter().map(String::as_str)) {
            d = d.with_note(format!("help: did you mean `{s}`?"));
        }
        d
    }

    fn assign(&mut self, name: &Ident, op: Option<BinOp>, value: &ast::Expr, span: Span) {
        let Some(dst) = self.lookup_local(&name.name) else {
            let d = if self.g.param_index.contains_key(&name.name) {
                Diagnostic::new(format!("cannot assign to param `{}`", name.name), name.span)
                    .with_label("params are constants")
                    .with_note(format!(
                        "help: declare a variable with its value, e.g. `let my_{0} = {0}`, or override the param with `--param {0}=VALUE`",
                        name.name
                    ))
            } else {
                self.undeclared_target(
                    name,
                    format!("help: declare it with `let {} = ...`", name.name),
                )
            };
            self.error(d);
            // Still check the value.
            self.expr(value);
            return;
        };
        if op.is_none()
            && let ExprKind::Call { name: f, args } = &value.kind
            && self.g.is_impure_name(&f.name)
        {
            self.call(f, args, value.span, Dst::Slot(dst));
            return;
        }
        let v = self.expr(value);
        let v = match op {
            Some(op) => bin(op, ir::Expr::Local(dst), v),
            None => v,
        };
        self.emit(ir::Stmt::Assign {
            dst,
            value: v,
            span,
        });
    }

    /// `a[i] = e`, `a[i] op= e`, `a[i][j] = e`: replaces one element of the
    /// array in variable `a`. Nested indices go through temporaries
    /// (`t = a[i]; t[j] = e; a[i] = t`), as arrays are values.
    fn assign_index(
        &mut self,
        name: &Ident,
        indices: &[ast::Expr],
        op: Option<BinOp>,
        value: &ast::Expr,
        span: Span,
    ) {
        let mut items: Vec<(&ast::Expr, bool)> = indices.iter().map(|i| (i, false)).collect();
        items.push((value, false));
        let Some(dst) = self.lookup_local(&name.name) else {
            let d = if self.g.param_index.contains_key(&name.name) {
                Diagnostic::new(
                    format!("cannot assign to an element of param `{}`", name.name),
                    name.span,
                )
                .with_label("params are constants")
                .with_note(format!(
                    "help: copy it into a variable first: `let my_{0} = {0}`, then `my_{0}[i] = ...`",
                    name.name
                ))
            } else {
                self.undeclared_target(
                    name,
                    format!(
                        "help: declare it with `let {} = array(n, 0)` or `let {} = [...]`",
                        name.name, name.name
                    ),
                )
            };
            self.error(d);
            // Still check the indices and the value.
            self.expr_list(&items);
            return;
        };
        let mut vals = self.expr_list(&items);
        let v = vals.pop().unwrap_or(ir::Expr::Null);
        let Some(last) = vals.pop() else {
            // The parser gives at least one index; nothing to do otherwise.
            return;
        };
        // An outer index is used twice (read, then write back): keep
        // anything but a variable or a literal in a temporary.
        let mut outer = Vec::with_capacity(vals.len());
        for idx in vals {
            let idx = match idx {
                ir::Expr::Local(_) | ir::Expr::Const(_) | ir::Expr::Param(_) => idx,
                other => {
                    let t = self.temp();
                    self.emit(ir::Stmt::Assign {
                        dst: t,
                        value: other,
                        span,
                    });
                    ir::Expr::Local(t)
                }
            };
            outer.push(idx);
        }
        let mut slots = vec![dst];
        for idx in &outer {
            let container = *slots.last().unwrap_or(&dst);
            let t = self.temp();
            self.emit(ir::Stmt::Assign {
                dst: t,
                value: ir::Expr::Index(Box::new(ir::Expr::Local(container)), Box::new(idx.clone())),
                span,
            });
            slots.push(t);
        }
        let inner = *slots.last().unwrap_or(&dst);
        let value = match op {
            Some(op) => bin(
                op,
                ir::Expr::Index(Box::new(ir::Expr::Local(inner)), Box::new(last.clone())),
                v,
            ),
            None => v,
        };
        self.emit(ir::Stmt::AssignIndex {
            dst: inner,
            index: last,
            value,
            span,
        });
        // Write the changed inner arrays back, innermost first: `slots[k]`
        // holds `slots[k + 1]` at index `outer[k]`.
        let pairs: Vec<(Slot, Slot)> = slots.windows(2).map(|w| (w[0], w[1])).collect();
        for ((container, element), idx) in pairs.into_iter().zip(outer).rev() {
            self.emit(ir::Stmt::AssignIndex {
                dst: container,
                index: idx,
                value: ir::Expr::Local(element),
                span,
            });
        }
    }

    fn for_stmt(
        &mut self,
        var: &Ident,
        start: &ast::Expr,
        end: &ast::Expr,
        step: Option<&ast::Expr>,
        body: &ast::Block,
        span: Span,
    ) {
        let head_span = join(var.span, step.map_or(end.span, |s| s.span));
        let mut items = vec![(start, false), (end, false)];
        if let Some(s) = step {
            items.push((s, false));
        }
        let mut vals = self.expr_list(&items).into_iter();
        let a = vals.next().unwrap_or(ir::Expr::Null);
        let b = vals.next().unwrap_or(ir::Expr::Null);
        let s = vals.next().unwrap_or(int(1));
        if let (Some(step), ir::Expr::Const(c)) = (step, &s)
            && matches!(c, Constant::Int(0)) | matches!(c, Constant::Float(f) if *f == 0.0)
        {
            self.error(
                Diagnostic::new("the loop step must not be zero", step.span)
                    .with_label("a step of 0 never reaches the end"),
            );
        }
        // Evaluate the bounds once: keep non-constant ones in hidden slots.
        let hidden = |cx: &mut Self, e: ir::Expr, what: &str| -> ir::Expr {
            if is_constant(&e) {
                e
            } else {
                let slot = cx.new_slot(format!("{}.{what}", var.name));
                cx.emit(ir::Stmt::Assign {
                    dst: slot,
                    value: e,
                    span: head_span,
                });
                ir::Expr::Local(slot)
            }
        };
        self.scopes.push(Vec::new());
        // The bounds are evaluated before `i` exists (`for i in i .. n`).
        let b = hidden(self, b, "end");
        let s = hidden(self, s, "step");
        let i = self.declare(&var.name);
        self.emit(ir::Stmt::Assign {
            dst: i,
            value: a,
            span: head_span,
        });
        let li = || ir::Expr::Local(i);
        let cond = match &s {
            ir::Expr::Const(Constant::Int(k)) if *k > 0 => bin(BinOp::Lt, li(), b),
            ir::Expr::Const(Constant::Float(k)) if *k > 0.0 => bin(BinOp::Lt, li(), b),
            ir::Expr::Const(Constant::Int(k)) if *k < 0 => bin(BinOp::Gt, li(), b),
            ir::Expr::Const(Constant::Float(k)) if *k < 0.0 => bin(BinOp::Gt, li(), b),
            _ => ir::Expr::Or(
                Box::new(ir::Expr::And(
                    Box::new(bin(BinOp::Gt, s.clone(), int(0))),
                    Box::new(bin(BinOp::Lt, li(), b.clone())),
                )),
                Box::new(ir::Expr::And(
                    Box::new(bin(BinOp::Lt, s.clone(), int(0))),
                    Box::new(bin(BinOp::Gt, li(), b)),
                )),
            ),
        };
        let header = self.new_block(span);
        let body_b = self.new_block(span);
        let latch = self.new_block(span);
        let exit = self.new_block(span);
        self.switch(Term::Goto(header), header);
        self.switch(
            Term::Branch {
                cond,
                then_: body_b,
                else_: exit,
                span: head_span,
            },
            body_b,
        );
        self.loops.push(LoopCx {
            continue_to: latch,
            break_to: exit,
        });
        self.block(body);
        self.loops.pop();
        self.switch(Term::Goto(latch), latch);
        self.emit(ir::Stmt::Assign {
            dst: i,
            value: bin(BinOp::Add, li(), s),
            span: head_span,
        });
        self.switch(Term::Goto(header), exit);
        self.scopes.pop();
    }

    fn compute(&mut self, kernel: &Ident, args: &[Arg], span: Span) {
        self.no_labels(&kernel.name, args);
        let Some(sig) = self.g.kernels.get(&kernel.name) else {
            let mut d = Diagnostic::new(format!("unknown kernel `{}`", kernel.name), kernel.span)
                .with_label("no kernel of this name");
            let names: Vec<&str> = self.g.kernels.keys().map(String::as_str).collect();
            if let Some(s) = suggest(&kernel.name, names) {
                d = d.with_note(format!("help: did you mean `{s}`?"));
            } else {
                d = d.with_note(format!(
                    "help: declare it at the top level, e.g. `kernel {}(n) cost 1e-9 * n`",
                    kernel.name
                ));
            }
            self.error(d);
            self.args_values(args);
            return;
        };
        let (id, arity, decl) = (sig.id, sig.arity, sig.span);
        if args.len() != arity {
            self.error(
                Diagnostic::new(
                    format!(
                        "kernel `{}` takes {} but {} {} given",
                        kernel.name,
                        plural(arity, "argument"),
                        args.len(),
                        was_were(args.len())
                    ),
                    span,
                )
                .with_label(format!("expected {}", plural(arity, "argument")))
                .with_secondary(decl, "kernel declared here"),
            );
        }
        let args = self.args_values(args);
        self.emit(ir::Stmt::Compute {
            kernel: id,
            args,
            span,
        });
    }

    fn expr_stmt(&mut self, e: &ast::Expr) {
        if let ExprKind::Call { name, args } = &e.kind {
            match name.name.as_str() {
                "print" => return self.print(args, e.span, false),
                "abort" => return self.print(args, e.span, true),
                "copy" => {
                    let vals = self.named_args("copy", args, &["bytes"], &["bytes"], &[], e.span);
                    if let Some(mut vals) = vals {
                        let bytes = vals.remove("bytes").unwrap_or(ir::Expr::Null);
                        self.emit(ir::Stmt::Copy {
                            bytes,
                            span: e.span,
                        });
                    }
                    return;
                }
                op @ ("malloc" | "free") => {
                    let vals = self.named_args(op, args, &["bytes"], &["bytes"], &[], e.span);
                    if let Some(mut vals) = vals {
                        let bytes = vals.remove("bytes").unwrap_or(ir::Expr::Null);
                        let op = if op == "malloc" {
                            ir::HeapOp::Malloc
                        } else {
                            ir::HeapOp::Free
                        };
                        self.emit(ir::Stmt::Heap {
                            op,
                            bytes,
                            span: e.span,
                        });
                    }
                    return;
                }
                n if self.g.is_impure_name(n)
                    || (builtin(n).is_none() && !OTHER_BUILTINS.contains(&n)) =>
                {
                    self.call(name, args, e.span, Dst::Discard);
                    return;
                }
                _ => {}
            }
        }
        let _ = self.expr(e);
        self.error(
            Diagnostic::new("this expression's value is not used", e.span)
                .with_label("computed and thrown away")
                .with_note("only calls of functions and communication operations can stand alone as statements"),
        );
    }

    /// `print(...)`, or `abort(...)` with `abort`.
    fn print(&mut self, args: &[Arg], span: Span, abort: bool) {
        self.no_labels(if abort { "abort" } else { "print" }, args);
        let exprs: Vec<(&ast::Expr, bool)> = args
            .iter()
            .filter(|a| !matches!(a.value.kind, ExprKind::Str(_)))
            .map(|a| (&a.value, false))
            .collect();
        let mut vals = self.expr_list(&exprs).into_iter();
        let out = args
            .iter()
            .map(|a| match &a.value.kind {
                ExprKind::Str(s) => PrintArg::Str(s.clone()),
                _ => PrintArg::Expr(vals.next().unwrap_or(ir::Expr::Null)),
            })
            .collect();
        self.emit(ir::Stmt::Print {
            args: out,
            span,
            abort,
        });
    }

    // ---- expressions ---------------------------------------------------

    /// A condition: an expression (numbers and bools are accepted).
    fn cond(&mut self, e: &ast::Expr) -> ir::Expr {
        self.expr(e)
    }

    fn expr(&mut self, e: &ast::Expr) -> ir::Expr {
        self.expr_any(e, false)
    }

    /// Lowers `e`; `any_ok`: `e` may be the `any` wildcard.
    fn expr_any(&mut self, e: &ast::Expr, any_ok: bool) -> ir::Expr {
        match &e.kind {
            ExprKind::Int(v) => int(*v),
            ExprKind::Float(v) => ir::Expr::Const(Constant::Float(*v)),
            ExprKind::Str(_) => {
                self.error(
                    Diagnostic::new("a string can only be an argument of `print`", e.span)
                        .with_label("string not allowed here"),
                );
                ir::Expr::Null
            }
            ExprKind::Bool(b) => ir::Expr::Bool(*b),
            ExprKind::Null => ir::Expr::Null,
            ExprKind::Any => {
                if !any_ok {
                    self.error(
                        Diagnostic::new("`any` is only allowed as a receive's source or tag", e.span)
                            .with_label("wildcard not allowed here")
                            .with_note("use it as `from: any` or `tag: any` of `recv`, `irecv`, `probe` and `iprobe`, or `from: any`/`recv_tag: any` of `sendrecv`"),
                    );
                }
                ir::Expr::Any
            }
            ExprKind::Rank | ExprKind::Size => {
                let word = if matches!(e.kind, ExprKind::Rank) {
                    "rank"
                } else {
                    "size"
                };
                if let Mode::ParamDefault(_) = self.mode {
                    self.error(
                        Diagnostic::new(
                            format!("`{word}` cannot be used in a param default"),
                            e.span,
                        )
                        .with_label("differs between runs or ranks")
                        .with_note("a param default may use literals and earlier params only"),
                    );
                }
                if word == "rank" {
                    ir::Expr::Rank
                } else {
                    ir::Expr::Size
                }
            }
            ExprKind::Name(name) => self.name(name, e.span),
            ExprKind::World => ir::Expr::World,
            ExprKind::Array(items) => {
                let items: Vec<(&ast::Expr, bool)> = items.iter().map(|x| (x, false)).collect();
                ir::Expr::Array(self.expr_list(&items))
            }
            ExprKind::Index(a, i) => {
                let mut v = self.expr_list(&[(a, false), (i, false)]).into_iter();
                let a = v.next().unwrap_or(ir::Expr::Null);
                let i = v.next().unwrap_or(ir::Expr::Null);
                ir::Expr::Index(Box::new(a), Box::new(i))
            }
            ExprKind::Unary(op, x) => match (op, self.expr(x)) {
                // Fold `-literal` so that it prints and checks as a constant.
                (UnOp::Neg, ir::Expr::Const(Constant::Int(v))) if v != i64::MIN => int(-v),
                (UnOp::Neg, ir::Expr::Const(Constant::Float(v))) => {
                    ir::Expr::Const(Constant::Float(-v))
                }
                (op, v) => ir::Expr::Unary(*op, Box::new(v)),
            },
            ExprKind::Binary(op, l, r) => {
                let mut v = self.expr_list(&[(l, false), (r, false)]).into_iter();
                let l = v.next().unwrap_or(ir::Expr::Null);
                let r = v.next().unwrap_or(ir::Expr::Null);
                bin(*op, l, r)
            }
            ExprKind::And(l, r) | ExprKind::Or(l, r) => {
                let is_and = matches!(e.kind, ExprKind::And(..));
                if self.hoists() && self.g.is_impure(r) {
                    return self.short_circuit(is_and, l, r, e.span);
                }
                let l = self.expr(l);
                let r = self.expr(r);
                if is_and {
                    ir::Expr::And(Box::new(l), Box::new(r))
                } else {
                    ir::Expr::Or(Box::new(l), Box::new(r))
                }
            }
            ExprKind::Call { name, args } => match self.call(name, args, e.span, Dst::Temp) {
                CallOut::Pure(v) => v,
                CallOut::Stored(Some(slot)) => ir::Expr::Local(slot),
                CallOut::Stored(None) => ir::Expr::Null,
            },
            ExprKind::Field(x, f) => ir::Expr::Field(Box::new(self.expr(x)), *f),
        }
    }

    /// Can calls be hoisted into statements here (i.e. are we in a body)?
    fn hoists(&self) -> bool {
        matches!(self.mode, Mode::Main | Mode::Fn)
    }

    /// `l && r` / `l || r` where `r` calls something: evaluate `r` only when
    /// needed, in a branch, and leave the (bool) result in a temporary.
    fn short_circuit(
        &mut self,
        is_and: bool,
        l: &ast::Expr,
        r: &ast::Expr,
        span: Span,
    ) -> ir::Expr {
        let lv = self.expr(l);
        let t = self.temp();
        self.emit(ir::Stmt::Assign {
            dst: t,
            value: ir::Expr::Bool(!is_and),
            span,
        });
        let rhs = self.new_block(span);
        let join_b = self.new_block(span);
        let (then_, else_) = if is_and { (rhs, join_b) } else { (join_b, rhs) };
        self.switch(
            Term::Branch {
                cond: lv,
                then_,
                else_,
                span: l.span,
            },
            rhs,
        );
        let rv = self.expr(r);
        // `true && r` / `false || r` is the truth value of `r`, as a bool.
        let value = if is_and {
            ir::Expr::And(Box::new(ir::Expr::Bool(true)), Box::new(rv))
        } else {
            ir::Expr::Or(Box::new(ir::Expr::Bool(false)), Box::new(rv))
        };
        self.emit(ir::Stmt::Assign {
            dst: t,
            value,
            span: r.span,
        });
        self.switch(Term::Goto(join_b), join_b);
        ir::Expr::Local(t)
    }

    /// Lowers operands left to right. When a later operand calls something,
    /// earlier values that the call could change (`wtime()`, variables
    /// written by `wait`) are first saved in temporaries.
    fn expr_list(&mut self, items: &[(&ast::Expr, bool)]) -> Vec<ir::Expr> {
        let n = items.len();
        // Per item: does a later item call something, and which variables
        // do later `wait`s set to null?
        let mut impure_after = vec![false; n];
        let mut waited_after: Vec<Vec<Slot>> = vec![Vec::new(); n];
        if self.hoists() {
            for i in (0..n.saturating_sub(1)).rev() {
                let next = items[i + 1].0;
                impure_after[i] = impure_after[i + 1] || self.g.is_impure(next);
                let mut names = Vec::new();
                self.g.waited_names(next, &mut names);
                let mut slots = waited_after[i + 1].clone();
                slots.extend(names.iter().filter_map(|n| self.lookup_local(n)));
                waited_after[i] = slots;
            }
        }
        let mut out = Vec::with_capacity(n);
        for (i, (e, any_ok)) in items.iter().enumerate() {
            let v = self.expr_any(e, *any_ok);
            if impure_after[i] && !is_stable(&v, &waited_after[i]) {
                let t = self.temp();
                self.emit(ir::Stmt::Assign {
                    dst: t,
                    value: v,
                    span: e.span,
                });
                out.push(ir::Expr::Local(t));
            } else {
                out.push(v);
            }
        }
        out
    }

    fn args_values(&mut self, args: &[Arg]) -> Vec<ir::Expr> {
        let items: Vec<(&ast::Expr, bool)> = args.iter().map(|a| (&a.value, false)).collect();
        self.expr_list(&items)
    }

    fn name(&mut self, name: &str, span: Span) -> ir::Expr {
        if let Some(slot) = self.lookup_local(name) {
            return ir::Expr::Local(slot);
        }
        if let Some(&idx) = self.g.param_index.get(name) {
            if let Mode::ParamDefault(cur) = self.mode
                && idx as usize >= cur
            {
                let msg = if idx as usize == cur {
                    format!("param `{name}` is used in its own default")
                } else {
                    format!("param `{name}` is used before its declaration")
                };
                self.error(
                    Diagnostic::new(msg, span)
                        .with_label("not declared yet")
                        .with_note("a param default may use literals and earlier params only"),
                );
            }
            return ir::Expr::Param(idx);
        }
        let mut d =
            Diagnostic::new(format!("unknown variable `{name}`"), span).with_label("not declared");
        let candidates = self.visible_names();
        if let Some(s) = suggest(name, candidates.iter().map(String::as_str)) {
            d = d.with_note(format!("help: did you mean `{s}`?"));
        }
        if self.g.fns.contains_key(name)
            || builtin(name).is_some()
            || OTHER_BUILTINS.contains(&name)
            || is_comm_op(name)
        {
            d = d.with_note(format!(
                "note: `{name}` is a function; call it with `{name}(...)`"
            ));
        }
        if self.mode == Mode::Fn {
            d = d.with_note("note: functions see their parameters, their own variables, params, `rank` and `size`, not the variables of the top level");
        }
        self.error(d);
        ir::Expr::Null
    }

    fn no_labels(&mut self, what: &str, args: &[Arg]) {
        for a in args {
            if let Some(l) = &a.label {
                self.error(
                    Diagnostic::new(format!("`{what}` takes positional arguments"), l.span)
                        .with_label(format!("remove `{}:`", l.name)),
                );
            }
        }
    }

    fn arity(
        &mut self,
        what: &str,
        name: &Ident,
        args: &[Arg],
        span: Span,
        expected: usize,
        decl: Option<Span>,
    ) -> bool {
        if args.len() == expected {
            return true;
        }
        let mut d = Diagnostic::new(
            format!(
                "{what} `{}` takes {} but {} {} given",
                name.name,
                plural(expected, "argument"),
                args.len(),
                was_were(args.len())
            ),
            span,
        )
        .with_label(format!("expected {}", plural(expected, "argument")));
        if let Some(decl) = decl {
            d = d.with_secondary(decl, format!("{what} declared here"));
        }
        self.error(d);
        false
    }

    fn call(&mut self, name: &Ident, args: &[Arg], span: Span, dst: Dst<'_>) -> CallOut {
        let fname = name.name.as_str();
        if let Some(b) = builtin(fname) {
            self.no_labels(fname, args);
            let (min_args, variadic) = match b {
                Builtin::Min | Builtin::Max => (2, true),
                Builtin::ArrayOf => (2, false),
                _ => (1, false),
            };
            if variadic && args.len() < min_args {
                self.error(
                    Diagnostic::new(
                        format!(
                            "builtin `{fname}` takes at least 2 arguments but {} {} given",
                            args.len(),
                            was_were(args.len())
                        ),
                        span,
                    )
                    .with_label("expected 2 or more arguments"),
                );
            } else if !variadic {
                self.arity("builtin", name, args, span, min_args, None);
            }
            let vals = self.args_values(args);
            return CallOut::Pure(ir::Expr::Builtin(b, vals));
        }
        if matches!(fname, "rank_in" | "size_in") {
            self.no_labels(fname, args);
            self.arity("builtin", name, args, span, 1, None);
            if let Mode::ParamDefault(_) = self.mode {
                self.error(
                    Diagnostic::new(format!("`{fname}` cannot be used in a param default"), span)
                        .with_label("differs between runs or ranks")
                        .with_note("a param default may use literals and earlier params only"),
                );
            }
            let c = Box::new(
                self.args_values(args)
                    .into_iter()
                    .next()
                    .unwrap_or(ir::Expr::Null),
            );
            return CallOut::Pure(if fname == "rank_in" {
                ir::Expr::RankIn(c)
            } else {
                ir::Expr::SizeIn(c)
            });
        }
        if fname == "wtime" {
            self.arity("builtin", name, args, span, 0, None);
            self.args_values(args);
            match self.mode {
                Mode::ParamDefault(_) => self.error(
                    Diagnostic::new("`wtime()` cannot be used in a param default", span)
                        .with_label("differs between ranks")
                        .with_note("a param default may use literals and earlier params only"),
                ),
                Mode::KernelCost => self.error(
                    Diagnostic::new("`wtime()` cannot be used in a kernel cost", span)
                        .with_label("not allowed here"),
                ),
                Mode::Main | Mode::Fn => {}
            }
            return CallOut::Pure(ir::Expr::Wtime);
        }
        if STMT_OPS.contains(&fname) {
            self.error(
                Diagnostic::new(format!("`{fname}` can only be used as a statement"), span)
                    .with_label(format!("`{fname}` has no value")),
            );
            self.args_values(args);
            return CallOut::Stored(None);
        }
        let is_comm = is_comm_op(fname);
        let sig = self.g.fns.get(fname).map(|s| (s.id, s.arity, s.span));
        if !is_comm && sig.is_none() {
            let mut d = Diagnostic::new(format!("unknown function `{fname}`"), name.span)
                .with_label("no function of this name");
            let mut candidates: Vec<&str> = operation_names().collect();
            candidates.extend(self.g.fns.keys().map(String::as_str));
            if let Some(s) = suggest(fname, candidates) {
                d = d.with_note(format!("help: did you mean `{s}`?"));
            }
            if self.g.kernels.contains_key(fname) {
                d = d.with_note(format!(
                    "note: `{fname}` is a kernel; run it with `compute {fname}(...)`"
                ));
            }
            self.error(d);
            self.args_values(args);
            return CallOut::Stored(None);
        }
        if !self.hoists() {
            let place = if self.mode == Mode::KernelCost {
                "a kernel cost"
            } else {
                "a param default"
            };
            let what = if is_comm {
                "communication"
            } else {
                "function calls"
            };
            self.error(
                Diagnostic::new(format!("{what} cannot be used in {place}"), span)
                    .with_label("not allowed here"),
            );
            return CallOut::Pure(ir::Expr::Null);
        }
        let stmt = if let Some((id, arity, decl)) = sig {
            self.no_labels(fname, args);
            self.arity("function", name, args, span, arity, Some(decl));
            let args = self.args_values(args);
            Some((Some(id), args, None))
        } else {
            self.comm(fname, args, span)
                .map(|op| (None, Vec::new(), Some(op)))
        };
        let Some((func, call_args, op)) = stmt else {
            return CallOut::Stored(None);
        };
        let dst = match dst {
            Dst::Temp => Some(self.temp()),
            Dst::Named(n) => Some(self.new_slot(n.to_string())),
            Dst::Slot(s) => Some(s),
            Dst::Discard => None,
        };
        match (func, op) {
            (Some(func), _) => self.emit(ir::Stmt::Call {
                func,
                args: call_args,
                dst,
                span,
            }),
            (None, Some(op)) => self.emit(ir::Stmt::Comm { op, dst, span }),
            (None, None) => {}
        }
        CallOut::Stored(dst)
    }

    /// The slot of a variable holding a request (`wait(r)`, `waitall(r)`).
    fn request_var(&mut self, op: &str, arg: &Arg) -> Option<Slot> {
        if let Some(l) = &arg.label {
            self.error(
                Diagnostic::new(format!("`{op}` takes positional arguments"), l.span)
                    .with_label(format!("remove `{}:`", l.name)),
            );
        }
        if let ExprKind::Name(n) = &arg.value.kind {
            if let Some(slot) = self.lookup_local(n) {
                return Some(slot);
            }
            if !self.g.param_index.contains_key(n) {
                self.name(n, arg.value.span);
                return None;
            }
        }
        self.error(
            Diagnostic::new(
                format!("`{op}` needs a variable holding a request"),
                arg.value.span,
            )
            .with_label("not a variable")
            .with_note(format!(
                "help: keep the request in a variable: `let r = isend(...)` then `{op}(r)`"
            )),
        );
        None
    }

    fn comm(&mut self, op: &str, args: &[Arg], span: Span) -> Option<CommOp> {
        if let Some(kind) = collective(op) {
            return self.collective(kind, args, span);
        }
        if let Some((mode, nonblocking)) = send_op(op) {
            let mut v = self.named_args(
                op,
                args,
                &["to", "bytes", "tag", "comm"],
                &["to", "bytes"],
                &[],
                span,
            )?;
            let m = MsgArgs {
                peer: v.remove("to").unwrap_or(ir::Expr::Null),
                tag: v.remove("tag").unwrap_or(int(0)),
                bytes: v.remove("bytes").unwrap_or(ir::Expr::Null),
                comm: v.remove("comm"),
            };
            return Some(if nonblocking {
                CommOp::Isend(m, mode)
            } else {
                CommOp::Send(m, mode)
            });
        }
        match op {
            "wait" | "test" | "waitall" | "waitany" => self.request_op(op, args, span),
            "recv" | "irecv" => {
                let mut v = self.named_args(
                    op,
                    args,
                    &["from", "bytes", "tag", "comm"],
                    &["from", "bytes"],
                    &["from", "tag"],
                    span,
                )?;
                let m = MsgArgs {
                    peer: v.remove("from").unwrap_or(ir::Expr::Null),
                    tag: v.remove("tag").unwrap_or(int(0)),
                    bytes: v.remove("bytes").unwrap_or(ir::Expr::Null),
                    comm: v.remove("comm"),
                };
                Some(if op == "recv" {
                    CommOp::Recv(m)
                } else {
                    CommOp::Irecv(m)
                })
            }
            "probe" | "iprobe" => {
                let mut v = self.named_args(
                    op,
                    args,
                    &["from", "tag", "comm"],
                    &["from"],
                    &["from", "tag"],
                    span,
                )?;
                let m = MsgArgs {
                    peer: v.remove("from").unwrap_or(ir::Expr::Null),
                    tag: v.remove("tag").unwrap_or(int(0)),
                    bytes: ir::Expr::Null,
                    comm: v.remove("comm"),
                };
                Some(if op == "probe" {
                    CommOp::Probe(m)
                } else {
                    CommOp::Iprobe(m)
                })
            }
            "sendrecv" => self.sendrecv(args, span),
            "comm_split" => {
                let mut v =
                    self.named_args(op, args, &["color", "key", "comm"], &["color"], &[], span)?;
                let comm = v.remove("comm");
                // MPI orders the new ranks by key, then by rank in `comm`:
                // the default keeps the parent's order.
                let key = v.remove("key").unwrap_or_else(|| match &comm {
                    Some(c) => ir::Expr::RankIn(Box::new(c.clone())),
                    None => ir::Expr::Rank,
                });
                Some(CommOp::CommSplit {
                    comm,
                    color: v.remove("color").unwrap_or(ir::Expr::Null),
                    key,
                })
            }
            "comm_dup" => {
                self.no_labels(op, args);
                let name = Ident {
                    name: op.to_string(),
                    span,
                };
                let ok = self.arity("operation", &name, args, span, 1, None);
                let c = self.args_values(args).into_iter().next();
                c.filter(|_| ok).map(CommOp::CommDup)
            }
            _ => None,
        }
    }

    /// `wait`, `test` (one request variable), `waitall`, `waitany` (any
    /// number; `waitany` at least one).
    fn request_op(&mut self, op: &str, args: &[Arg], span: Span) -> Option<CommOp> {
        match op {
            "wait" | "test" => {
                let [arg] = args else {
                    let name = Ident {
                        name: op.to_string(),
                        span,
                    };
                    self.arity("operation", &name, args, span, 1, None);
                    return None;
                };
                let slot = self.request_var(op, arg)?;
                Some(if op == "wait" {
                    CommOp::Wait(slot)
                } else {
                    CommOp::Test(slot)
                })
            }
            "waitall" | "waitany" => {
                if op == "waitany" && args.is_empty() {
                    self.error(
                        Diagnostic::new("`waitany` needs at least one request", span)
                            .with_label("no requests given")
                            .with_note("help: name the request variables: `waitany(r1, r2)`"),
                    );
                    return None;
                }
                let slots: Vec<Option<Slot>> =
                    args.iter().map(|a| self.request_var(op, a)).collect();
                let slots = slots.into_iter().collect::<Option<Vec<_>>>()?;
                Some(if op == "waitall" {
                    CommOp::Waitall(slots)
                } else {
                    CommOp::Waitany(slots)
                })
            }
            _ => None,
        }
    }

    /// `sendrecv(to:, from:, bytes:, tag:, recv_bytes:, recv_tag:, comm:)`:
    /// the receive's size and tag default to the send's.
    fn sendrecv(&mut self, args: &[Arg], span: Span) -> Option<CommOp> {
        let op = "sendrecv";
        let mut v = self.named_args(
            op,
            args,
            &[
                "to",
                "from",
                "bytes",
                "tag",
                "recv_bytes",
                "recv_tag",
                "comm",
            ],
            &["to", "from", "bytes"],
            &["from", "recv_tag"],
            span,
        )?;
        let bytes = v.remove("bytes").unwrap_or(ir::Expr::Null);
        let tag = v.remove("tag").unwrap_or(int(0));
        let comm = v.remove("comm");
        let recv = MsgArgs {
            peer: v.remove("from").unwrap_or(ir::Expr::Null),
            tag: v.remove("recv_tag").unwrap_or_else(|| tag.clone()),
            bytes: v.remove("recv_bytes").unwrap_or_else(|| bytes.clone()),
            comm: comm.clone(),
        };
        let send = MsgArgs {
            peer: v.remove("to").unwrap_or(ir::Expr::Null),
            tag,
            bytes,
            comm,
        };
        Some(CommOp::Sendrecv { send, recv })
    }

    /// `bcast(root:, bytes:, value:, comm:)` and the other collectives.
    fn collective(&mut self, kind: CollKind, args: &[Arg], span: Span) -> Option<CommOp> {
        let mut allowed: Vec<&'static str> = Vec::with_capacity(5);
        if kind.rooted() {
            allowed.push("root");
        }
        if kind.has_bytes() {
            allowed.push("bytes");
            allowed.push("elem");
        }
        if carries_value(kind) {
            allowed.push("value");
        }
        if combines(kind) {
            allowed.push("op");
        }
        allowed.push("comm");
        // The first `op:` (`named_args` reports a second one).
        let op = args
            .iter()
            .find(|a| combines(kind) && a.label.as_ref().is_some_and(|l| l.name == "op"))
            .map_or(ReduceOp::Sum, |a| self.reduce_op(kind, a));
        let required: &[&str] = if kind.has_bytes() { &["bytes"] } else { &[] };
        let per_rank = matches!(
            kind,
            CollKind::Gatherv
                | CollKind::Scatterv
                | CollKind::Allgatherv
                | CollKind::Alltoallv
                | CollKind::ReduceScatter
        );
        // Without types, only a literal array is known to be one here.
        let literal_counts = args.iter().find(|a| {
            a.label.as_ref().is_some_and(|l| l.name == "bytes")
                && matches!(a.value.kind, ExprKind::Array(_))
        });
        if let Some(a) = literal_counts.filter(|_| kind.has_bytes() && !per_rank) {
            self.error(
                Diagnostic::new(
                    format!("`bytes:` of `{}` cannot be an array", kind.name()),
                    a.value.span,
                )
                .with_label("one size for every rank")
                .with_note("note: per-rank counts are for `gatherv`, `scatterv`, `allgatherv`, `alltoallv` and `reduce_scatter`"),
            );
        }
        let mut v = self.named_args(kind.name(), args, &allowed, required, &[], span)?;
        Some(CommOp::Collective(CollArgs {
            kind,
            root: kind.rooted().then(|| v.remove("root").unwrap_or(int(0))),
            bytes: if kind.has_bytes() {
                Some(v.remove("bytes").unwrap_or(ir::Expr::Null))
            } else {
                None
            },
            comm: v.remove("comm"),
            value: v.remove("value"),
            op,
            elem: v.remove("elem"),
        }))
    }

    /// The operation named by `op:` (`sum` after an error).
    fn reduce_op(&mut self, kind: CollKind, arg: &Arg) -> ReduceOp {
        let e = &arg.value;
        let d = match &e.kind {
            ExprKind::Name(name) => {
                if let Some(op) = ReduceOp::from_name(name) {
                    return op;
                }
                let mut d =
                    Diagnostic::new(format!("unknown reduction operation `{name}`"), e.span)
                        .with_label("not a reduction operation");
                if let Some(s) = suggest_reduce_op(name) {
                    d = d.with_note(format!("help: did you mean `{s}`?"));
                }
                if matches!(
                    name.to_ascii_lowercase().as_str(),
                    "avg" | "mean" | "average"
                ) {
                    d = d.with_note(format!(
                        "help: for the mean, divide the sum by the number of ranks: `{}(..., op: sum) / size`",
                        kind.name()
                    ));
                }
                d
            }
            other => {
                let mut d = Diagnostic::new(
                    format!("`op:` of `{}` must name a reduction operation", kind.name()),
                    e.span,
                )
                .with_label("not an operation name");
                if let ExprKind::Str(s) = other
                    && let Some(op) = suggest_reduce_op(s)
                {
                    d = d.with_note(format!("help: write the name without quotes: `op: {op}`"));
                }
                d
            }
        };
        self.error(d.with_note(reduce_ops_note()));
        ReduceOp::Sum
    }

    /// Checks and lowers named arguments (in source order). `None` after an
    /// error in the argument list itself.
    fn named_args(
        &mut self,
        op: &str,
        args: &[Arg],
        allowed: &[&'static str],
        required: &[&str],
        wildcards: &[&str],
        span: Span,
    ) -> Option<HashMap<&'static str, ir::Expr>> {
        let mut ok = true;
        let mut seen: Vec<(&str, Span)> = Vec::new();
        let mut items: Vec<(&ast::Expr, bool)> = Vec::new();
        let mut keys: Vec<&'static str> = Vec::new();
        let expected = allowed
            .iter()
            .map(|a| format!("`{a}:`"))
            .collect::<Vec<_>>()
            .join(", ");
        for a in args {
            let Some(label) = &a.label else {
                self.error(
                    Diagnostic::new(format!("arguments of `{op}` must be named"), a.span)
                        .with_label("positional argument")
                        .with_note(format!("`{op}` takes {expected}")),
                );
                ok = false;
                self.expr(&a.value);
                continue;
            };
            let Some(&key) = allowed.iter().find(|k| **k == label.name) else {
                let misplaced = collective(op).and_then(|k| misplaced_coll_arg(k, &label.name));
                let mut d = if let Some((message, what, note)) = misplaced {
                    Diagnostic::new(message, label.span)
                        .with_label(what)
                        .with_note(note)
                } else {
                    Diagnostic::new(
                        format!("unknown argument `{}` for `{op}`", label.name),
                        label.span,
                    )
                    .with_label("unknown argument")
                };
                if let Some(s) = suggest(&label.name, allowed.iter().copied()) {
                    d = d.with_note(format!("help: did you mean `{s}:`?"));
                }
                if let Some(note) = misplaced_arg_note(op, &label.name) {
                    d = d.with_note(note);
                }
                d = d.with_note(format!("`{op}` takes {expected}"));
                self.error(d);
                ok = false;
                // `op: max` names an operation, not a variable.
                if !(NAME_ARGS.contains(&label.name.as_str())
                    && matches!(a.value.kind, ExprKind::Name(_)))
                {
                    self.expr(&a.value);
                }
                continue;
            };
            if let Some((_, first)) = seen.iter().find(|(k, _)| *k == key) {
                let first = *first;
                self.error(
                    Diagnostic::new(format!("argument `{key}` is given twice"), label.span)
                        .with_label("given again here")
                        .with_secondary(first, "first given here"),
                );
                ok = false;
                continue;
            }
            seen.push((key, label.span));
            if NAME_ARGS.contains(&key) {
                continue;
            }
            keys.push(key);
            items.push((&a.value, wildcards.contains(&key)));
        }
        // An unknown or positional argument is most likely a required one
        // written wrongly: do not report that one missing as well.
        let miswritten = args.iter().any(|a| {
            a.label
                .as_ref()
                .is_none_or(|l| !allowed.contains(&l.name.as_str()))
        });
        for r in required.iter().filter(|_| !miswritten) {
            if !seen.iter().any(|(k, _)| k == r) {
                self.error(
                    Diagnostic::new(format!("missing argument `{r}:` in call of `{op}`"), span)
                        .with_label(format!("`{op}` needs `{r}:`"))
                        .with_note(format!("`{op}` takes {expected}")),
                );
                ok = false;
            }
        }
        let vals = self.expr_list(&items);
        ok.then(|| keys.into_iter().zip(vals).collect())
    }
}
