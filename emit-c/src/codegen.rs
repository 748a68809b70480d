//! The IR as C: expressions in three-address form (every subexpression into
//! its own temporary, in the simulator's evaluation order, so that the
//! first error is the simulator's first error), statements in `{ }` blocks
//! that set the current source line, blocks as labels.

use std::collections::BTreeSet;
use std::fmt::Write;

use sim_core::ir::{
    BinOp, BlockId, Builtin, CollArgs, CollKind, CommOp, Constant, Expr, Function, MsgArgs,
    PrintArg, Program, ReduceOp, SendMode, Slot, StatusField, Stmt, Terminator, UnOp,
};

use crate::EmitError;

const RUNTIME: &str = include_str!("runtime.c");

/// The C text of `program`: one self-contained MPI program. `source_name`
/// is what its `PARSIM_RESULT` line calls the program; `native` names the
/// kernels with a native implementation (`parsim_kernel_NAME`, linked in
/// from a kernel library); every other kernel that `compute` runs must have
/// a cost, which the program then spends (spinning on `MPI_Wtime`).
pub fn emit(
    program: &Program,
    source_name: &str,
    native: &BTreeSet<String>,
) -> Result<String, EmitError> {
    let used = used_kernels(program, native)?;
    let mut out = String::with_capacity(RUNTIME.len() + 16 * 1024);
    let _ = writeln!(
        out,
        "/* {}: written by `parsim emit-c` from the skeleton {}.\n * Build: mpicc -O2 -o prog THIS.c [kernels.c -I<dir of parsim_kernel.h>] -lm\n * Run:   mpirun -np N ./prog [param=value ...]\n */",
        comment_text(source_name),
        comment_text(&program.file)
    );
    out.push_str(RUNTIME);
    out.push('\n');

    // Native kernels (include/parsim_kernel.h's entry point type).
    for &k in &used {
        let kernel = &program.kernels[k];
        if native.contains(&kernel.name) {
            let _ = writeln!(
                out,
                "void parsim_kernel_{}(const int64_t *arg, int32_t nargs);",
                kernel.name
            );
        }
    }
    // Param names, for command-line overrides.
    out.push_str("static const char *const ps_names[] = {");
    for p in &program.params {
        let _ = write!(out, "{}, ", c_string(&p.name));
    }
    out.push_str("NULL};\n");
    // Function prototypes.
    for (i, f) in program.functions.iter().enumerate() {
        let _ = writeln!(
            out,
            "PS_FN PsVal ps_f{i}(PsVal *arg); /* {} */",
            comment_text(&f.name)
        );
    }
    out.push('\n');

    // Kernel costs (kernels without a native implementation).
    for &k in &used {
        let kernel = &program.kernels[k];
        if native.contains(&kernel.name) {
            continue;
        }
        let Some(cost) = &kernel.cost else { continue };
        let mut g = Gen::new(program, native, Some("arg"));
        let _ = writeln!(
            g.out,
            "/* cost of kernel {} (line {}) */\nPS_FN PsVal ps_cost{k}(PsVal *arg) {{\n    (void)arg;",
            kernel.name, kernel.span.line
        );
        g.depth = 1;
        let t = g.expr(cost)?;
        g.w(&format!("return {t};"));
        g.out.push_str("}\n\n");
        out.push_str(&g.out);
    }

    // Params: defaults in order, unless given on the command line.
    let mut g = Gen::new(program, native, None);
    g.out
        .push_str("static void ps_eval_params(void) {\n    ps_in_params = 1;\n");
    g.depth = 1;
    for (i, p) in program.params.iter().enumerate() {
        g.w(&format!(
            "if (ps_param_from[{i}] >= 0) {{ ps_set(&ps_param[{i}], ps_ref(ps_param[ps_param_from[{i}]])); }}"
        ));
        g.w(&format!(
            "else if (!ps_param_set[{i}]) {{ /* param {} */",
            p.name
        ));
        g.depth += 1;
        g.w(&format!(
            "ps_line = {}; ps_ctx = {};",
            p.span.line,
            c_string(&format!("param `{}`", p.name))
        ));
        let t = g.expr(&p.default)?;
        g.w(&format!("ps_set(&ps_param[{i}], {t});"));
        g.depth -= 1;
        g.w("}");
    }
    g.out
        .push_str("    ps_ctx = NULL;\n    ps_in_params = 0;\n}\n\n");
    out.push_str(&g.out);

    for (i, f) in program.functions.iter().enumerate() {
        let mut g = Gen::new(program, native, Some("loc"));
        g.function(i, f)?;
        out.push_str(&g.out);
    }

    let _ = write!(
        out,
        "int main(int argc, char **argv) {{\n    ps_init(&argc, &argv, {}, ps_names);\n    ps_eval_params();\n    ps_start();\n    ps_drop(ps_f{}(NULL));\n    return ps_finish({});\n}}\n",
        program.params.len(),
        program.main,
        c_string(&json_escape(source_name))
    );
    Ok(out)
}

/// The kernels that `compute` statements run (ids), checked: each has a
/// native implementation or a cost.
fn used_kernels(program: &Program, native: &BTreeSet<String>) -> Result<Vec<usize>, EmitError> {
    let mut used = BTreeSet::new();
    for f in &program.functions {
        for b in f.cfg.node_weights() {
            for s in &b.stmts {
                if let Stmt::Compute { kernel, span, .. } = s {
                    let Some(k) = program.kernels.get(*kernel as usize) else {
                        return Err(EmitError::Internal(format!(
                            "line {}: kernel #{kernel} does not exist",
                            span.line
                        )));
                    };
                    if k.cost.is_none() && !native.contains(&k.name) {
                        return Err(EmitError::NoImplementation {
                            kernel: k.name.clone(),
                            line: span.line,
                        });
                    }
                    used.insert(*kernel as usize);
                }
            }
        }
    }
    Ok(used.into_iter().collect())
}

/// The blocks reachable from the entry, entry first (the others are never
/// run, and their labels would be unused).
fn reachable(f: &Function) -> Vec<BlockId> {
    let mut seen = vec![false; f.cfg.node_count()];
    let mut order = Vec::new();
    let mut stack = vec![f.entry];
    while let Some(b) = stack.pop() {
        match seen.get_mut(b.index()) {
            Some(s) if !*s => *s = true,
            _ => continue,
        }
        order.push(b);
        match &f.cfg[b].term {
            Terminator::Goto(t) => stack.push(*t),
            Terminator::Branch { then_, else_, .. } => {
                stack.push(*else_);
                stack.push(*then_);
            }
            Terminator::Return { .. } => {}
        }
    }
    order
}

/// Text safe inside a C comment.
fn comment_text(s: &str) -> String {
    s.replace("*/", "* /")
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// A C string literal with the bytes of `s`.
pub(crate) fn c_string(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for b in s.bytes() {
        match b {
            b'"' => o.push_str("\\\""),
            b'\\' => o.push_str("\\\\"),
            b'\n' => o.push_str("\\n"),
            b'\t' => o.push_str("\\t"),
            // `?` escaped: no trigraphs.
            b'?' => o.push_str("\\?"),
            0x20..=0x7e => o.push(char::from(b)),
            _ => {
                let _ = write!(o, "\\{b:03o}");
            }
        }
    }
    o.push('"');
    o
}

/// `s` as the inside of a JSON string.
fn json_escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", u32::from(c));
            }
            c => o.push(c),
        }
    }
    o
}

fn int_lit(i: i64) -> String {
    if i == i64::MIN {
        "(-INT64_C(9223372036854775807) - 1)".to_owned()
    } else {
        format!("INT64_C({i})")
    }
}

fn float_lit(f: f64) -> String {
    if f.is_nan() {
        "NAN".to_owned()
    } else if f.is_infinite() {
        if f > 0.0 { "HUGE_VAL" } else { "(-HUGE_VAL)" }.to_owned()
    } else {
        // Shortest digits that read back exactly; C compilers round
        // decimal literals correctly.
        format!("({f:e})")
    }
}

fn bin_op(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "PS_ADD",
        BinOp::Sub => "PS_SUB",
        BinOp::Mul => "PS_MUL",
        BinOp::Div => "PS_DIV",
        BinOp::Rem => "PS_REM",
        BinOp::Eq => "PS_EQ",
        BinOp::Ne => "PS_NE",
        BinOp::Lt => "PS_LT",
        BinOp::Le => "PS_LE",
        BinOp::Gt => "PS_GT",
        BinOp::Ge => "PS_GE",
    }
}

fn coll_kind(k: CollKind) -> &'static str {
    match k {
        CollKind::Barrier => "PS_BARRIER",
        CollKind::Bcast => "PS_BCAST",
        CollKind::Reduce => "PS_REDUCE",
        CollKind::Allreduce => "PS_ALLREDUCE",
        CollKind::Gather => "PS_GATHER",
        CollKind::Gatherv => "PS_GATHERV",
        CollKind::Scatter => "PS_SCATTER",
        CollKind::Scatterv => "PS_SCATTERV",
        CollKind::Allgather => "PS_ALLGATHER",
        CollKind::Allgatherv => "PS_ALLGATHERV",
        CollKind::Alltoall => "PS_ALLTOALL",
        CollKind::Alltoallv => "PS_ALLTOALLV",
        CollKind::ReduceScatter => "PS_REDUCE_SCATTER",
        CollKind::Scan => "PS_SCAN",
        CollKind::Exscan => "PS_EXSCAN",
    }
}

fn reduce_op(op: ReduceOp) -> &'static str {
    match op {
        ReduceOp::Sum => "PS_OP_SUM",
        ReduceOp::Prod => "PS_OP_PROD",
        ReduceOp::Min => "PS_OP_MIN",
        ReduceOp::Max => "PS_OP_MAX",
        ReduceOp::Land => "PS_OP_LAND",
        ReduceOp::Lor => "PS_OP_LOR",
    }
}

fn send_mode(m: SendMode) -> &'static str {
    match m {
        SendMode::Standard => "PS_STANDARD",
        SendMode::Synchronous => "PS_SYNCHRONOUS",
        SendMode::Buffered => "PS_BUFFERED",
    }
}

/// The C names of one message's evaluated arguments.
struct Msg {
    comm: String,
    peer: String,
    tag: String,
    bytes: String,
}

/// The C code of one function (or kernel cost, or the params).
struct Gen<'p> {
    program: &'p Program,
    native: &'p BTreeSet<String>,
    out: String,
    next: u32,
    /// The C array of the `Local` slots; `None` where there are none (params).
    locals: Option<&'static str>,
    /// Number of slots of `loc` (functions).
    slots: usize,
    depth: usize,
}

impl<'p> Gen<'p> {
    fn new(
        program: &'p Program,
        native: &'p BTreeSet<String>,
        locals: Option<&'static str>,
    ) -> Gen<'p> {
        Gen {
            program,
            native,
            out: String::new(),
            next: 0,
            locals,
            slots: 0,
            depth: 0,
        }
    }

    fn fresh(&mut self, prefix: &str) -> String {
        self.next += 1;
        format!("{prefix}{}", self.next)
    }

    /// One line of C at the current indentation.
    fn w(&mut self, line: &str) {
        for _ in 0..self.depth {
            self.out.push_str("    ");
        }
        self.out.push_str(line);
        self.out.push('\n');
    }

    fn local(&self, slot: Slot) -> Result<String, EmitError> {
        match self.locals {
            Some(arr) => Ok(format!("{arr}[{slot}]")),
            None => Err(EmitError::Internal(format!(
                "variable slot {slot} where there are no variables"
            ))),
        }
    }

    /// Emits the evaluation of `e` and returns the temporary holding it
    /// (an owned `PsVal`).
    fn expr(&mut self, e: &Expr) -> Result<String, EmitError> {
        let line = match e {
            Expr::Const(Constant::Int(i)) => format!("ps_int({})", int_lit(*i)),
            Expr::Const(Constant::Float(f)) => format!("ps_float({})", float_lit(*f)),
            Expr::Bool(b) => format!("ps_bool({})", u8::from(*b)),
            Expr::Null => "ps_null()".to_owned(),
            Expr::Any => "ps_any()".to_owned(),
            Expr::World => "ps_comm_val(0)".to_owned(),
            Expr::RankIn(c) => format!("ps_rank_in({})", self.expr(c)?),
            Expr::SizeIn(c) => format!("ps_size_in({})", self.expr(c)?),
            Expr::Array(items) => {
                let ts = items
                    .iter()
                    .map(|i| self.expr(i))
                    .collect::<Result<Vec<_>, _>>()?;
                if ts.is_empty() {
                    "ps_arr_from(NULL, 0)".to_owned()
                } else {
                    let arr = self.fresh("items");
                    self.w(&format!(
                        "PsVal {arr}[{}] = {{{}}};",
                        ts.len(),
                        ts.join(", ")
                    ));
                    format!("ps_arr_from({arr}, {})", ts.len())
                }
            }
            Expr::Index(a, i) => {
                let ta = self.expr(a)?;
                self.w(&format!("ps_check_indexable({ta});"));
                let ti = self.expr(i)?;
                format!("ps_index({ta}, {ti})")
            }
            Expr::Local(s) => format!("ps_ref({})", self.local(*s)?),
            Expr::Param(p) => format!("ps_ref(ps_param[{p}])"),
            Expr::Rank => "ps_int(ps_rank)".to_owned(),
            Expr::Size => "ps_int(ps_size)".to_owned(),
            Expr::Wtime => "ps_wtime()".to_owned(),
            Expr::Unary(UnOp::Neg, a) => format!("ps_neg({})", self.expr(a)?),
            Expr::Unary(UnOp::Not, a) => format!("ps_not({})", self.expr(a)?),
            Expr::Binary(op, a, b) => {
                let ta = self.expr(a)?;
                let tb = self.expr(b)?;
                format!("ps_bin({}, {ta}, {tb})", bin_op(*op))
            }
            Expr::And(a, b) | Expr::Or(a, b) => {
                let and = matches!(e, Expr::And(..));
                let t = self.fresh("t");
                self.w(&format!("PsVal {t} = ps_bool({});", u8::from(!and)));
                let ta = self.expr(a)?;
                self.w(&format!(
                    "if ({}ps_truth({ta})) {{",
                    if and { "" } else { "!" }
                ));
                self.depth += 1;
                let tb = self.expr(b)?;
                self.w(&format!("{t} = ps_bool(ps_truth({tb}));"));
                self.depth -= 1;
                self.w("}");
                return Ok(t);
            }
            Expr::Builtin(f, args) => {
                let ts = args
                    .iter()
                    .map(|a| self.expr(a))
                    .collect::<Result<Vec<_>, _>>()?;
                match (f, ts.as_slice()) {
                    (Builtin::Min | Builtin::Max, [_, ..]) => {
                        let arr = self.fresh("args");
                        self.w(&format!(
                            "PsVal {arr}[{}] = {{{}}};",
                            ts.len(),
                            ts.join(", ")
                        ));
                        format!(
                            "ps_minmax({}, {}, {arr})",
                            u8::from(*f == Builtin::Min),
                            ts.len()
                        )
                    }
                    (Builtin::ArrayOf, [n, v]) => format!("ps_b_array({n}, {v})"),
                    (Builtin::Abs, [a]) => format!("ps_b_abs({a})"),
                    (Builtin::Floor, [a]) => format!("ps_b_floor({a})"),
                    (Builtin::Ceil, [a]) => format!("ps_b_ceil({a})"),
                    (Builtin::Sqrt, [a]) => format!("ps_b_sqrt({a})"),
                    (Builtin::Log2, [a]) => format!("ps_b_log2({a})"),
                    (Builtin::Len, [a]) => format!("ps_b_len({a})"),
                    (Builtin::Sum, [a]) => format!("ps_b_sum({a})"),
                    _ => {
                        return Err(EmitError::Internal(format!(
                            "`{}` with {} arguments",
                            f.name(),
                            ts.len()
                        )));
                    }
                }
            }
            Expr::Field(a, field) => {
                let f = match field {
                    StatusField::Source => "PS_F_SOURCE",
                    StatusField::Tag => "PS_F_TAG",
                    StatusField::Bytes => "PS_F_BYTES",
                };
                format!("ps_field({}, {f})", self.expr(a)?)
            }
        };
        let t = self.fresh("t");
        self.w(&format!("PsVal {t} = {line};"));
        Ok(t)
    }

    fn function(&mut self, id: usize, f: &Function) -> Result<(), EmitError> {
        self.slots = (f.num_locals as usize).max(1);
        let _ = writeln!(
            self.out,
            "/* fn {} (line {}) */\nPS_FN PsVal ps_f{id}(PsVal *arg) {{",
            comment_text(&f.name),
            f.span.line
        );
        self.depth = 1;
        self.w(&format!("PsVal loc[{}];", self.slots));
        self.w(&format!(
            "for (int i = 0; i < {}; i++) loc[i] = ps_null();",
            self.slots
        ));
        for i in 0..f.params.len() {
            self.w(&format!("loc[{i}] = arg[{i}];"));
        }
        self.w("(void)arg;");
        self.w("ps_enter();");
        self.w(&format!("goto b{};", f.entry.index()));
        // Blocks reachable from the entry, entry first.
        for b in reachable(f) {
            let block = &f.cfg[b];
            self.depth = 0;
            self.w(&format!("b{}:;", b.index()));
            self.depth = 1;
            for s in &block.stmts {
                self.stmt(s)?;
            }
            self.terminator(&block.term)?;
        }
        self.out.push_str("}\n\n");
        Ok(())
    }

    fn terminator(&mut self, t: &Terminator) -> Result<(), EmitError> {
        match t {
            Terminator::Goto(b) => self.w(&format!("goto b{};", b.index())),
            Terminator::Branch {
                cond,
                then_,
                else_,
                span,
            } => {
                self.w(&format!("{{ ps_line = {};", span.line));
                self.depth += 1;
                let c = self.expr(cond)?;
                self.w(&format!(
                    "if (ps_truth({c})) goto b{}; else goto b{};",
                    then_.index(),
                    else_.index()
                ));
                self.depth -= 1;
                self.w("}");
            }
            Terminator::Return { value, span } => {
                self.w(&format!("{{ ps_line = {};", span.line));
                self.depth += 1;
                let r = match value {
                    Some(e) => self.expr(e)?,
                    None => "ps_null()".to_owned(),
                };
                self.w(&format!("PsVal ret = {r};"));
                self.w(&format!("ps_drop_all(loc, {});", self.slots));
                self.w("ps_depth--;");
                self.w("return ret;");
                self.depth -= 1;
                self.w("}");
            }
        }
        Ok(())
    }

    /// Stores an owned result into `dst`, or drops it.
    fn result(&mut self, dst: Option<Slot>, value: &str) -> Result<(), EmitError> {
        match dst {
            Some(d) => {
                let l = self.local(d)?;
                self.w(&format!("ps_set(&{l}, {value});"));
            }
            None => self.w(&format!("ps_drop({value});")),
        }
        Ok(())
    }

    fn stmt(&mut self, s: &Stmt) -> Result<(), EmitError> {
        self.w(&format!("{{ ps_line = {};", s.span().line));
        self.depth += 1;
        match s {
            Stmt::Assign { dst, value, .. } => {
                let t = self.expr(value)?;
                self.result(Some(*dst), &t)?;
            }
            Stmt::AssignIndex {
                dst, index, value, ..
            } => {
                let ti = self.expr(index)?;
                let tv = self.expr(value)?;
                let l = self.local(*dst)?;
                self.w(&format!("ps_assign_index(&{l}, {ti}, {tv});"));
            }
            Stmt::Compute { kernel, args, .. } => self.compute(*kernel as usize, args)?,
            Stmt::Copy { bytes, .. } => {
                let t = self.expr(bytes)?;
                self.w(&format!("ps_copy({t});"));
            }
            Stmt::Heap { op, bytes, .. } => {
                let t = self.expr(bytes)?;
                self.w(&format!("ps_{}({t});", op.name()));
            }
            Stmt::Print { args, abort, .. } => {
                let s = self.fresh("line");
                self.w(&format!("PsStr {s};"));
                self.w(&format!("ps_str_init(&{s});"));
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        self.w(&format!("ps_str_add(&{s}, \" \", 1);"));
                    }
                    match a {
                        PrintArg::Str(text) => {
                            self.w(&format!("ps_str_cstr(&{s}, {});", c_string(text)));
                        }
                        PrintArg::Expr(e) => {
                            let t = self.expr(e)?;
                            self.w(&format!("ps_print_val(&{s}, {t});"));
                        }
                    }
                }
                if *abort {
                    self.w(&format!("ps_abort_end(&{s});"));
                } else {
                    self.w(&format!("ps_print_end(&{s});"));
                }
            }
            Stmt::Call {
                func, args, dst, ..
            } => {
                let ts = args
                    .iter()
                    .map(|a| self.expr(a))
                    .collect::<Result<Vec<_>, _>>()?;
                let argv = if ts.is_empty() {
                    "NULL".to_owned()
                } else {
                    let arr = self.fresh("args");
                    self.w(&format!(
                        "PsVal {arr}[{}] = {{{}}};",
                        ts.len(),
                        ts.join(", ")
                    ));
                    arr
                };
                let r = self.fresh("r");
                self.w(&format!("PsVal {r} = ps_f{func}({argv});"));
                self.result(*dst, &r)?;
            }
            Stmt::Comm { op, dst, .. } => self.comm(op, *dst)?,
        }
        self.depth -= 1;
        self.w("}");
        Ok(())
    }

    fn compute(&mut self, kernel: usize, args: &[Expr]) -> Result<(), EmitError> {
        let program = self.program;
        let Some(k) = program.kernels.get(kernel) else {
            return Err(EmitError::Internal(format!(
                "kernel #{kernel} does not exist"
            )));
        };
        let ts = args
            .iter()
            .map(|a| self.expr(a))
            .collect::<Result<Vec<_>, _>>()?;
        let name = c_string(&k.name);
        if self.native.contains(&k.name) {
            let arr = if ts.is_empty() {
                "NULL".to_owned()
            } else {
                let arr = self.fresh("kargs");
                self.w(&format!("int64_t {arr}[{}];", ts.len()));
                for (i, t) in ts.iter().enumerate() {
                    self.w(&format!("{arr}[{i}] = ps_kernel_arg({t}, {name}, {i});"));
                }
                arr
            };
            // `calibrate blocks --in-program` builds with the kernels timed
            // (runtime.c, PARSIM_TIME_KERNELS); other builds compile the
            // call alone.
            let t0 = self.fresh("kt");
            self.w("#ifdef PARSIM_TIME_KERNELS");
            self.w(&format!("double {t0} = ps_kt_now();"));
            self.w("#endif");
            self.w(&format!("parsim_kernel_{}({arr}, {});", k.name, ts.len()));
            self.w("#ifdef PARSIM_TIME_KERNELS");
            self.w(&format!(
                "ps_kt_record({kernel}, {name}, {arr}, {}, {t0});",
                ts.len()
            ));
            self.w("#endif");
        } else {
            let argv = if ts.is_empty() {
                "NULL".to_owned()
            } else {
                let arr = self.fresh("kargs");
                self.w(&format!(
                    "PsVal {arr}[{}] = {{{}}};",
                    ts.len(),
                    ts.join(", ")
                ));
                arr
            };
            let c = self.fresh("cost");
            self.w(&format!(
                "ps_ctx = {};",
                c_string(&format!("cost of kernel `{}`", k.name))
            ));
            self.w(&format!("PsVal {c} = ps_cost{kernel}({argv});"));
            self.w("ps_ctx = NULL;");
            if !ts.is_empty() {
                self.w(&format!("ps_drop_all({argv}, {});", ts.len()));
            }
            self.w(&format!("ps_compute_cost({c}, {name});"));
        }
        Ok(())
    }

    /// `comm:` (the world when absent), checked.
    fn comm_arg(&mut self, comm: Option<&Expr>) -> Result<String, EmitError> {
        let c = self.fresh("comm");
        match comm {
            None => self.w(&format!("int {c} = 0;")),
            Some(e) => {
                let t = self.expr(e)?;
                self.w(&format!("int {c} = ps_comm_arg({t});"));
            }
        }
        Ok(c)
    }

    /// A message's arguments in the simulator's order (comm, peer, tag,
    /// bytes), each checked once evaluated. Probes have no `bytes:`.
    fn msg(&mut self, a: &MsgArgs, is_recv: bool, with_bytes: bool) -> Result<Msg, EmitError> {
        let comm = self.comm_arg(a.comm.as_ref())?;
        let t = self.expr(&a.peer)?;
        let peer = self.fresh("peer");
        self.w(&format!(
            "int {peer} = ps_peer_arg({t}, {comm}, {});",
            u8::from(is_recv)
        ));
        let t = self.expr(&a.tag)?;
        let tag = self.fresh("tag");
        self.w(&format!(
            "int {tag} = ps_tag_arg({t}, {});",
            u8::from(is_recv)
        ));
        let bytes = if with_bytes {
            let t = self.expr(&a.bytes)?;
            let b = self.fresh("bytes");
            self.w(&format!("int64_t {b} = ps_bytes_arg({t});"));
            b
        } else {
            String::new()
        };
        Ok(Msg {
            comm,
            peer,
            tag,
            bytes,
        })
    }

    /// `PsVal *name[] = {&loc[a], ...}` for the request variables of a wait.
    fn slot_list(&mut self, slots: &[Slot]) -> Result<String, EmitError> {
        let ptrs = slots
            .iter()
            .map(|s| self.local(*s).map(|l| format!("&{l}")))
            .collect::<Result<Vec<_>, _>>()?;
        let arr = self.fresh("reqs");
        self.w(&format!(
            "PsVal *{arr}[{}] = {{{}}};",
            ptrs.len(),
            ptrs.join(", ")
        ));
        Ok(arr)
    }

    fn comm(&mut self, op: &CommOp, dst: Option<Slot>) -> Result<(), EmitError> {
        let r = self.fresh("r");
        match op {
            CommOp::Send(a, mode) => {
                let m = self.msg(a, false, true)?;
                self.w(&format!(
                    "ps_send({}, {}, {}, {}, {});",
                    send_mode(*mode),
                    m.comm,
                    m.peer,
                    m.tag,
                    m.bytes
                ));
                self.w(&format!("PsVal {r} = ps_null();"));
            }
            CommOp::Recv(a) => {
                let m = self.msg(a, true, true)?;
                self.w(&format!(
                    "PsVal {r} = ps_recv({}, {}, {}, {});",
                    m.comm, m.peer, m.tag, m.bytes
                ));
            }
            CommOp::Isend(a, mode) => {
                let m = self.msg(a, false, true)?;
                self.w(&format!(
                    "PsVal {r} = ps_isend({}, {}, {}, {}, {});",
                    send_mode(*mode),
                    m.comm,
                    m.peer,
                    m.tag,
                    m.bytes
                ));
            }
            CommOp::Irecv(a) => {
                let m = self.msg(a, true, true)?;
                self.w(&format!(
                    "PsVal {r} = ps_irecv({}, {}, {}, {});",
                    m.comm, m.peer, m.tag, m.bytes
                ));
            }
            CommOp::Sendrecv { send, recv } => {
                let s = self.msg(send, false, true)?;
                let v = self.msg(recv, true, true)?;
                self.w(&format!(
                    "PsVal {r} = ps_sendrecv({}, {}, {}, {}, {}, {}, {}, {});",
                    s.comm, s.peer, s.tag, s.bytes, v.comm, v.peer, v.tag, v.bytes
                ));
            }
            CommOp::Wait(slot) => {
                let l = self.local(*slot)?;
                self.w(&format!("PsVal {r} = ps_wait(&{l});"));
            }
            CommOp::Waitall(slots) => {
                if slots.is_empty() {
                    self.w("ps_waitall_pending();");
                } else {
                    let arr = self.slot_list(slots)?;
                    self.w(&format!("ps_waitall({arr}, {});", slots.len()));
                }
                self.w(&format!("PsVal {r} = ps_null();"));
            }
            CommOp::Waitany(slots) => {
                let arr = self.slot_list(slots)?;
                self.w(&format!("PsVal {r} = ps_waitany({arr}, {});", slots.len()));
            }
            CommOp::Test(slot) => {
                let l = self.local(*slot)?;
                self.w(&format!("PsVal {r} = ps_test(&{l});"));
            }
            CommOp::Probe(a) | CommOp::Iprobe(a) => {
                let m = self.msg(a, true, false)?;
                self.w(&format!(
                    "PsVal {r} = ps_probe({}, {}, {}, {});",
                    m.comm,
                    m.peer,
                    m.tag,
                    u8::from(matches!(op, CommOp::Probe(_)))
                ));
            }
            CommOp::Collective(args) => self.collective(args, &r)?,
            CommOp::CommSplit { comm, color, key } => {
                let c = self.comm_arg(comm.as_ref())?;
                let t = self.expr(color)?;
                let color = self.fresh("color");
                self.w(&format!("int64_t {color} = ps_color_arg({t});"));
                let t = self.expr(key)?;
                let key = self.fresh("key");
                self.w(&format!("int64_t {key} = ps_key_arg({t});"));
                self.w(&format!("PsVal {r} = ps_comm_split({c}, {color}, {key});"));
            }
            CommOp::CommDup(e) => {
                let c = self.comm_arg(Some(e))?;
                self.w(&format!("PsVal {r} = ps_comm_dup({c});"));
            }
        }
        self.result(dst, &r)
    }

    /// A collective: comm, root, bytes, value, in the simulator's order.
    fn collective(&mut self, a: &CollArgs, r: &str) -> Result<(), EmitError> {
        let comm = self.comm_arg(a.comm.as_ref())?;
        let root = self.fresh("root");
        match &a.root {
            None => self.w(&format!("int {root} = 0;")),
            Some(e) => {
                let t = self.expr(e)?;
                self.w(&format!("int {root} = ps_root_arg({t}, {comm});"));
            }
        }
        let counts = self.fresh("counts");
        self.w(&format!("PsCounts {counts};"));
        match &a.bytes {
            None => self.w(&format!("ps_counts_none(&{counts});")),
            Some(e) => {
                let t = self.expr(e)?;
                self.w(&format!("ps_counts_arg(&{counts}, {t});"));
            }
        }
        let value = match &a.value {
            None => "ps_null()".to_owned(),
            Some(e) => self.expr(e)?,
        };
        let elem = match &a.elem {
            None => "0".to_owned(),
            Some(e) => {
                let t = self.expr(e)?;
                format!("ps_elem_arg({t})")
            }
        };
        self.w(&format!(
            "PsVal {r} = ps_coll({}, {comm}, {root}, &{counts}, {}, {value}, {}, {elem});",
            coll_kind(a.kind),
            u8::from(a.value.is_some()),
            reduce_op(a.op)
        ));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_strings_escape_what_c_needs() {
        assert_eq!(c_string("a\"b\\c\n?é"), "\"a\\\"b\\\\c\\n\\?\\303\\251\"");
    }

    #[test]
    fn literals_read_back_exactly() {
        assert_eq!(int_lit(-5), "INT64_C(-5)");
        assert_eq!(int_lit(i64::MIN), "(-INT64_C(9223372036854775807) - 1)");
        assert_eq!(float_lit(4.0e-9), "(4e-9)");
        assert_eq!(float_lit(0.1), "(1e-1)");
        assert_eq!(float_lit(-2.5), "(-2.5e0)");
    }

    #[test]
    fn kernels_without_cost_or_native_code_are_refused() {
        let p = frontend::compile("k.mpl", "kernel k(n)\ncompute k(3)\n").expect("valid program");
        let e = emit(&p, "k.mpl", &BTreeSet::new()).expect_err("no cost, no native code");
        assert!(
            matches!(&e, EmitError::NoImplementation { kernel, line: 2 } if kernel == "k"),
            "{e}"
        );
        let native: BTreeSet<String> = ["k".to_owned()].into();
        let c = emit(&p, "k.mpl", &native).expect("native kernel");
        assert!(c.contains("parsim_kernel_k(kargs"), "{c}");
        // Timed only in a build for `calibrate blocks --in-program`: the
        // clock reads and the record sit under PARSIM_TIME_KERNELS.
        let at = c.find("parsim_kernel_k(kargs").expect("the call");
        let before: Vec<&str> = c[..at]
            .lines()
            .rev()
            .skip(1)
            .take(3)
            .map(str::trim)
            .collect();
        assert_eq!(before[0], "#endif", "{c}");
        assert!(
            before[1].starts_with("double kt") && before[1].ends_with("= ps_kt_now();"),
            "{c}"
        );
        assert_eq!(before[2], "#ifdef PARSIM_TIME_KERNELS", "{c}");
        let after: Vec<&str> = c[at..].lines().skip(1).take(3).map(str::trim).collect();
        assert_eq!(after[0], "#ifdef PARSIM_TIME_KERNELS", "{c}");
        assert!(after[1].starts_with("ps_kt_record(0, \"k\", kargs"), "{c}");
        assert_eq!(after[2], "#endif", "{c}");
    }
}
