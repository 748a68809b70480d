//! Graphviz DOT rendering of a [`crate::ir::Program`] (`parsim graph`), and
//! a source-like pretty-printer for IR expressions and statements (used by
//! DOT, golden files and error messages).
//!
//! Printing never panics, even on an IR that breaks its invariants: an
//! out-of-range slot, param, kernel or function prints as `?local3` etc.

use std::fmt::Write as _;

use petgraph::visit::EdgeRef;

use crate::ir::{
    BinOp, Block, CollArgs, CommOp, Constant, EdgeKind, Expr, Function, MsgArgs, PrintArg, Program,
    ReduceOp, SendMode, StatusField, Stmt, Terminator, UnOp,
};

/// Binding strength, lowest first (as in the language's grammar).
const P_OR: u8 = 1;
const P_AND: u8 = 2;
const P_CMP: u8 = 3;
const P_ADD: u8 = 4;
const P_MUL: u8 = 5;
const P_UNARY: u8 = 6;
const P_POSTFIX: u8 = 7;

fn binop(op: BinOp) -> (&'static str, u8) {
    match op {
        BinOp::Add => ("+", P_ADD),
        BinOp::Sub => ("-", P_ADD),
        BinOp::Mul => ("*", P_MUL),
        BinOp::Div => ("/", P_MUL),
        BinOp::Rem => ("%", P_MUL),
        BinOp::Eq => ("==", P_CMP),
        BinOp::Ne => ("!=", P_CMP),
        BinOp::Lt => ("<", P_CMP),
        BinOp::Le => ("<=", P_CMP),
        BinOp::Gt => (">", P_CMP),
        BinOp::Ge => (">=", P_CMP),
    }
}

/// Resolves the names an expression refers to.
struct Names<'a> {
    program: &'a Program,
    locals: &'a [String],
}

impl Names<'_> {
    fn local(&self, slot: u32) -> String {
        match self.locals.get(slot as usize) {
            Some(name) => {
                // Shadowing and loops can give several slots one name.
                if self.locals.iter().filter(|n| *n == name).count() > 1 {
                    format!("{name}#{slot}")
                } else {
                    name.clone()
                }
            }
            None => format!("?local{slot}"),
        }
    }

    fn param(&self, i: u32) -> String {
        self.program
            .params
            .get(i as usize)
            .map_or_else(|| format!("?param{i}"), |p| p.name.clone())
    }
}

fn constant(c: Constant) -> String {
    match c {
        Constant::Int(v) => v.to_string(),
        // `{:?}` keeps a `.0` or an exponent, so the text reads back as a float.
        Constant::Float(v) => format!("{v:?}"),
    }
}

fn write_expr(out: &mut String, e: &Expr, names: &Names<'_>, min_prec: u8) {
    let prec = match e {
        Expr::Unary(..) => P_UNARY,
        Expr::Binary(op, ..) => binop(*op).1,
        Expr::And(..) => P_AND,
        Expr::Or(..) => P_OR,
        Expr::Const(Constant::Int(v)) if *v < 0 => P_UNARY,
        Expr::Const(Constant::Float(v)) if v.is_sign_negative() => P_UNARY,
        _ => P_POSTFIX + 1,
    };
    let paren = prec < min_prec;
    if paren {
        out.push('(');
    }
    match e {
        Expr::Const(c) => out.push_str(&constant(*c)),
        Expr::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Expr::Null => out.push_str("null"),
        Expr::Any => out.push_str("any"),
        Expr::World => out.push_str("world"),
        Expr::RankIn(c) | Expr::SizeIn(c) => {
            out.push_str(if matches!(e, Expr::RankIn(_)) {
                "rank_in("
            } else {
                "size_in("
            });
            write_expr(out, c, names, 0);
            out.push(')');
        }
        Expr::Array(items) => {
            out.push('[');
            write_list(out, items, names);
            out.push(']');
        }
        Expr::Index(a, i) => {
            write_expr(out, a, names, P_POSTFIX);
            out.push('[');
            write_expr(out, i, names, 0);
            out.push(']');
        }
        Expr::Local(s) => out.push_str(&names.local(*s)),
        Expr::Param(i) => out.push_str(&names.param(*i)),
        Expr::Rank => out.push_str("rank"),
        Expr::Size => out.push_str("size"),
        Expr::Wtime => out.push_str("wtime()"),
        Expr::Unary(op, x) => {
            out.push_str(match op {
                UnOp::Neg => "-",
                UnOp::Not => "!",
            });
            write_expr(out, x, names, P_UNARY);
        }
        Expr::Binary(op, l, r) => {
            let (sym, p) = binop(*op);
            // Left-associative; comparisons do not associate at all.
            let left_min = if p == P_CMP { p + 1 } else { p };
            write_expr(out, l, names, left_min);
            let _ = write!(out, " {sym} ");
            write_expr(out, r, names, p + 1);
        }
        Expr::And(l, r) | Expr::Or(l, r) => {
            let (sym, p) = if matches!(e, Expr::And(..)) {
                ("&&", P_AND)
            } else {
                ("||", P_OR)
            };
            write_expr(out, l, names, p);
            let _ = write!(out, " {sym} ");
            write_expr(out, r, names, p + 1);
        }
        Expr::Builtin(b, args) => {
            out.push_str(b.name());
            write_args(out, args, names);
        }
        Expr::Field(x, f) => {
            write_expr(out, x, names, P_POSTFIX);
            out.push_str(match f {
                StatusField::Source => ".source",
                StatusField::Tag => ".tag",
                StatusField::Bytes => ".bytes",
            });
        }
    }
    if paren {
        out.push(')');
    }
}

/// `a, b, c`
fn write_list(out: &mut String, items: &[Expr], names: &Names<'_>) {
    for (i, a) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_expr(out, a, names, 0);
    }
}

fn write_args(out: &mut String, args: &[Expr], names: &Names<'_>) {
    out.push('(');
    write_list(out, args, names);
    out.push(')');
}

/// Source-like text of `e`, with the fewest parentheses that keep its
/// meaning. Locals are named from `func` (a name that several slots share
/// gets `#slot`), params from `program`.
pub fn expr_to_string(e: &Expr, program: &Program, func: &Function) -> String {
    let names = Names {
        program,
        locals: &func.local_names,
    };
    let mut out = String::new();
    write_expr(&mut out, e, &names, 0);
    out
}

/// Escapes a string as a language string literal (with quotes).
fn string_literal(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `, name: e`
fn named(out: &mut String, name: &str, e: &Expr, names: &Names<'_>) {
    let _ = write!(out, ", {name}: ");
    write_expr(out, e, names, 0);
}

/// `, comm: c` when a communicator other than the default is given.
fn comm_arg(out: &mut String, comm: Option<&Expr>, names: &Names<'_>) {
    if let Some(c) = comm {
        named(out, "comm", c, names);
    }
}

/// `op(peer: p, bytes: b, tag: t[, comm: c])`; probes have no `bytes:`.
fn msg_op(out: &mut String, op: &str, peer: &str, m: &MsgArgs, names: &Names<'_>) {
    let _ = write!(out, "{op}({peer}: ");
    write_expr(out, &m.peer, names, 0);
    if !matches!(op, "probe" | "iprobe") {
        named(out, "bytes", &m.bytes, names);
    }
    named(out, "tag", &m.tag, names);
    comm_arg(out, m.comm.as_ref(), names);
    out.push(')');
}

fn send_name(mode: SendMode, nonblocking: bool) -> &'static str {
    match (mode, nonblocking) {
        (SendMode::Standard, false) => "send",
        (SendMode::Synchronous, false) => "ssend",
        (SendMode::Buffered, false) => "bsend",
        (SendMode::Standard, true) => "isend",
        (SendMode::Synchronous, true) => "issend",
        (SendMode::Buffered, true) => "ibsend",
    }
}

/// `bcast(root: r, bytes: b[, value: v][, op: o][, comm: c])`, `barrier()`,
/// ...; `op:` only when it is not the default (sum).
fn collective(out: &mut String, c: &CollArgs, names: &Names<'_>) {
    let arg = |name: &str, e: &Expr| {
        let mut s = format!("{name}: ");
        write_expr(&mut s, e, names, 0);
        s
    };
    let mut parts: Vec<String> = Vec::new();
    parts.extend(c.root.as_ref().map(|e| arg("root", e)));
    parts.extend(c.bytes.as_ref().map(|e| arg("bytes", e)));
    parts.extend(c.elem.as_ref().map(|e| arg("elem", e)));
    parts.extend(c.value.as_ref().map(|e| arg("value", e)));
    if c.op != ReduceOp::default() {
        parts.push(format!("op: {}", c.op.name()));
    }
    parts.extend(c.comm.as_ref().map(|e| arg("comm", e)));
    let _ = write!(out, "{}({})", c.kind.name(), parts.join(", "));
}

fn slot_list(out: &mut String, op: &str, slots: &[u32], names: &Names<'_>) {
    let list: Vec<String> = slots.iter().map(|s| names.local(*s)).collect();
    let _ = write!(out, "{op}({})", list.join(", "));
}

fn write_stmt(out: &mut String, s: &Stmt, names: &Names<'_>) {
    let dst = |out: &mut String, d: &Option<u32>| {
        if let Some(d) = d {
            let _ = write!(out, "{} = ", names.local(*d));
        }
    };
    match s {
        Stmt::Assign { dst: d, value, .. } => {
            let _ = write!(out, "{} = ", names.local(*d));
            write_expr(out, value, names, 0);
        }
        Stmt::AssignIndex {
            dst: d,
            index,
            value,
            ..
        } => {
            let _ = write!(out, "{}[", names.local(*d));
            write_expr(out, index, names, 0);
            out.push_str("] = ");
            write_expr(out, value, names, 0);
        }
        Stmt::Compute { kernel, args, .. } => {
            let name = names
                .program
                .kernels
                .get(*kernel as usize)
                .map_or_else(|| format!("?kernel{kernel}"), |k| k.name.clone());
            let _ = write!(out, "compute {name}");
            write_args(out, args, names);
        }
        Stmt::Copy { bytes, .. } => {
            out.push_str("copy(bytes: ");
            write_expr(out, bytes, names, 0);
            out.push(')');
        }
        Stmt::Heap { op, bytes, .. } => {
            out.push_str(op.name());
            out.push_str("(bytes: ");
            write_expr(out, bytes, names, 0);
            out.push(')');
        }
        Stmt::Print { args, abort, .. } => {
            out.push_str(if *abort { "abort(" } else { "print(" });
            for (i, a) in args.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                match a {
                    PrintArg::Str(s) => out.push_str(&string_literal(s)),
                    PrintArg::Expr(e) => write_expr(out, e, names, 0),
                }
            }
            out.push(')');
        }
        Stmt::Call {
            func, args, dst: d, ..
        } => {
            dst(out, d);
            let name = names
                .program
                .functions
                .get(*func as usize)
                .map_or_else(|| format!("?fn{func}"), |f| f.name.clone());
            out.push_str(&name);
            write_args(out, args, names);
        }
        Stmt::Comm { op, dst: d, .. } => {
            dst(out, d);
            match op {
                CommOp::Send(m, mode) => msg_op(out, send_name(*mode, false), "to", m, names),
                CommOp::Isend(m, mode) => msg_op(out, send_name(*mode, true), "to", m, names),
                CommOp::Recv(m) => msg_op(out, "recv", "from", m, names),
                CommOp::Irecv(m) => msg_op(out, "irecv", "from", m, names),
                CommOp::Probe(m) => msg_op(out, "probe", "from", m, names),
                CommOp::Iprobe(m) => msg_op(out, "iprobe", "from", m, names),
                CommOp::Sendrecv { send, recv } => {
                    out.push_str("sendrecv(to: ");
                    write_expr(out, &send.peer, names, 0);
                    named(out, "from", &recv.peer, names);
                    named(out, "bytes", &send.bytes, names);
                    named(out, "tag", &send.tag, names);
                    named(out, "recv_bytes", &recv.bytes, names);
                    named(out, "recv_tag", &recv.tag, names);
                    comm_arg(out, send.comm.as_ref(), names);
                    out.push(')');
                }
                CommOp::Wait(slot) => slot_list(out, "wait", &[*slot], names),
                CommOp::Waitall(slots) => slot_list(out, "waitall", slots, names),
                CommOp::Waitany(slots) => slot_list(out, "waitany", slots, names),
                CommOp::Test(slot) => slot_list(out, "test", &[*slot], names),
                CommOp::Collective(c) => collective(out, c, names),
                CommOp::CommSplit { comm, color, key } => {
                    out.push_str("comm_split(color: ");
                    write_expr(out, color, names, 0);
                    named(out, "key", key, names);
                    comm_arg(out, comm.as_ref(), names);
                    out.push(')');
                }
                CommOp::CommDup(c) => {
                    out.push_str("comm_dup(");
                    write_expr(out, c, names, 0);
                    out.push(')');
                }
            }
        }
    }
}

/// Source-like text of one statement (without its line number).
pub fn stmt_to_string(s: &Stmt, program: &Program, func: &Function) -> String {
    let names = Names {
        program,
        locals: &func.local_names,
    };
    let mut out = String::new();
    write_stmt(&mut out, s, &names);
    out
}

/// Escapes text for a double-quoted DOT string.
fn dot_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => {}
            c => out.push(c),
        }
    }
    out
}

fn block_label(program: &Program, func: &Function, index: usize, block: &Block) -> String {
    let names = Names {
        program,
        locals: &func.local_names,
    };
    // `\l` ends a left-justified line in a DOT label.
    let mut label = format!("bb{index} (line {})\\l", block.span.line);
    for s in &block.stmts {
        let mut text = String::new();
        write_stmt(&mut text, s, &names);
        let _ = write!(label, "{}: {}\\l", s.span().line, dot_escape(&text));
    }
    match &block.term {
        Terminator::Goto(_) => {}
        Terminator::Branch { cond, span, .. } => {
            let mut text = String::from("if ");
            write_expr(&mut text, cond, &names, 0);
            let _ = write!(label, "{}: {}\\l", span.line, dot_escape(&text));
        }
        Terminator::Return { value, span } => {
            let mut text = String::from("return");
            if let Some(v) = value {
                text.push(' ');
                write_expr(&mut text, v, &names, 0);
            }
            if value.is_some() {
                let _ = write!(label, "{}: {}\\l", span.line, dot_escape(&text));
            } else {
                let _ = write!(label, "{}\\l", dot_escape(&text));
            }
        }
    }
    label
}

/// The whole program as a Graphviz digraph: one cluster per function, one
/// box per basic block listing its statements with their line numbers,
/// branch edges labelled `T` and `F`. Params and kernels are listed in a
/// note. The output is deterministic.
pub fn to_dot(program: &Program) -> String {
    let mut out = String::new();
    out.push_str("digraph program {\n");
    let _ = writeln!(out, "  label=\"{}\";", dot_escape(&program.file));
    out.push_str("  node [shape=box, fontname=\"monospace\"];\n");
    out.push_str("  edge [fontname=\"monospace\"];\n");
    if !program.params.is_empty() || !program.kernels.is_empty() {
        let none = Names {
            program,
            locals: &[],
        };
        let mut label = String::new();
        for p in &program.params {
            let mut text = format!("param {} = ", p.name);
            write_expr(&mut text, &p.default, &none, 0);
            let _ = write!(label, "{}: {}\\l", p.span.line, dot_escape(&text));
        }
        for k in &program.kernels {
            let names = Names {
                program,
                locals: &k.params,
            };
            let mut text = format!("kernel {}({})", k.name, k.params.join(", "));
            if let Some(cost) = &k.cost {
                text.push_str(" cost ");
                write_expr(&mut text, cost, &names, 0);
            }
            let _ = write!(label, "{}: {}\\l", k.span.line, dot_escape(&text));
        }
        let _ = writeln!(out, "  decls [shape=note, label=\"{label}\"];");
    }
    for (fi, func) in program.functions.iter().enumerate() {
        let _ = writeln!(out, "  subgraph cluster_f{fi} {{");
        let title = if fi == program.main as usize {
            func.name.clone()
        } else {
            format!("fn {}({})", func.name, func.params.join(", "))
        };
        let _ = writeln!(out, "    label=\"{}\";", dot_escape(&title));
        for idx in func.cfg.node_indices() {
            let i = idx.index();
            let label = block_label(program, func, i, &func.cfg[idx]);
            let extra = if idx == func.entry {
                ", style=bold"
            } else {
                ""
            };
            let _ = writeln!(out, "    f{fi}_b{i} [label=\"{label}\"{extra}];");
        }
        for e in func.cfg.edge_references() {
            let (a, b) = (e.source().index(), e.target().index());
            let attr = match e.weight() {
                EdgeKind::Goto => String::new(),
                EdgeKind::True => " [label=\"T\"]".to_string(),
                EdgeKind::False => " [label=\"F\"]".to_string(),
            };
            let _ = writeln!(out, "    f{fi}_b{a} -> f{fi}_b{b}{attr};");
        }
        out.push_str("  }\n");
    }
    out.push_str("}\n");
    out
}
