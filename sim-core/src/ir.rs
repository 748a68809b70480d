//! The program IR: one basic-block graph per function.
//!
//! The frontend builds it, the engine interprets it. Nothing here knows about
//! text: source positions are plain [`Span`]s that the binary renders.
//!
//! Invariants (the frontend upholds them, the engine relies on them):
//! - Every `Local(slot)` used in a function satisfies `slot < num_locals`;
//!   parameters occupy slots `0..params.len()`.
//! - Every block's [`Terminator`] names blocks of the same function, and the
//!   graph has exactly one edge per terminator target (two for `Branch`, even
//!   when both targets coincide), so the DOT output shows the real control flow.
//! - Expressions are pure: user function calls and communication never occur
//!   inside an [`Expr`]; the frontend hoists them into [`Stmt::Call`] and
//!   [`Stmt::Comm`] (lowering `&&`/`||` with such operands into branches).
//! - `Param(i)` indexes [`Program::params`]; `kernel` ids index
//!   [`Program::kernels`]; `func` ids index [`Program::functions`].

use petgraph::graph::{DiGraph, NodeIndex};

/// A byte range in the (single) source file, with its 1-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Span {
    pub start: u32,
    pub end: u32,
    pub line: u32,
    pub col: u32,
}

pub type BlockId = NodeIndex<u32>;
pub type FuncId = u32;
pub type KernelId = u32;
pub type Slot = u32;

/// A whole skeleton program, ready to simulate.
#[derive(Debug, Clone)]
pub struct Program {
    /// File name used in diagnostics.
    pub file: String,
    pub params: Vec<ParamDecl>,
    pub kernels: Vec<Kernel>,
    pub functions: Vec<Function>,
    /// The top-level statements, as a function with no parameters.
    pub main: FuncId,
}

#[derive(Debug, Clone)]
pub struct ParamDecl {
    pub name: String,
    /// Default value: a pure expression over literals and *earlier* params
    /// only (no `rank`, `size`, locals or `wtime()`). A `--param` override
    /// replaces it; later params that use this one see the override.
    pub default: Expr,
    pub span: Span,
}

/// A compile-time constant (param values, literals).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Constant {
    Int(i64),
    Float(f64),
}

#[derive(Debug, Clone)]
pub struct Kernel {
    pub name: String,
    pub params: Vec<String>,
    /// Seconds on the reference CPU; `Local(i)` is the kernel's i-th
    /// parameter. `None`: no cost given, a calibrated time is required.
    pub cost: Option<Expr>,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct Function {
    pub name: String,
    pub params: Vec<String>,
    /// Names of all slots (params first), for diagnostics and DOT output.
    pub local_names: Vec<String>,
    pub num_locals: u32,
    pub cfg: DiGraph<Block, EdgeKind, u32>,
    pub entry: BlockId,
    pub span: Span,
}

/// Label of a control-flow edge (for DOT output and analyses).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EdgeKind {
    Goto,
    True,
    False,
}

#[derive(Debug, Clone)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub term: Terminator,
    /// Span of the source construct that opened this block (for DOT labels).
    pub span: Span,
}

#[derive(Debug, Clone)]
pub enum Terminator {
    Goto(BlockId),
    Branch {
        cond: Expr,
        then_: BlockId,
        else_: BlockId,
        span: Span,
    },
    /// Return from the function (`None` returns null). At the end of `main`
    /// the rank finishes. `span` is the `return` statement, or the function
    /// for the implicit return at its end.
    Return {
        value: Option<Expr>,
        span: Span,
    },
}

#[derive(Debug, Clone)]
pub enum Stmt {
    /// `let x = e` and `x = e`.
    Assign { dst: Slot, value: Expr, span: Span },
    /// `compute k(args)`: charged by the kernel's cost and the node model.
    Compute {
        kernel: KernelId,
        args: Vec<Expr>,
        span: Span,
    },
    /// `copy(bytes: n)`: a memory copy charged by the node model.
    Copy { bytes: Expr, span: Span },
    /// `print(...)`: a line of output prefixed by the rank.
    Print { args: Vec<PrintArg>, span: Span },
    /// A call of a user function; the result (or null) goes to `dst`.
    Call {
        func: FuncId,
        args: Vec<Expr>,
        dst: Option<Slot>,
        span: Span,
    },
    /// A communication operation; its result (status, request) goes to `dst`.
    Comm {
        op: CommOp,
        dst: Option<Slot>,
        span: Span,
    },
}

#[derive(Debug, Clone)]
pub enum PrintArg {
    Str(String),
    Expr(Expr),
}

/// Arguments of one message: `to:`/`from:` peer, `tag:`, `bytes:`.
/// For receives, `peer` and `tag` may evaluate to [`crate::value::Value::Any`].
#[derive(Debug, Clone)]
pub struct MsgArgs {
    pub peer: Expr,
    pub tag: Expr,
    pub bytes: Expr,
}

#[derive(Debug, Clone)]
pub enum CommOp {
    Send(MsgArgs),
    Recv(MsgArgs),
    Isend(MsgArgs),
    Irecv(MsgArgs),
    /// `sendrecv(to:, from:, bytes:, tag:, recv_bytes:, recv_tag:)`; returns the receive status.
    Sendrecv {
        send: MsgArgs,
        recv: MsgArgs,
    },
    /// `wait(r)`: `r` must be a variable; it becomes null. Returns the status.
    Wait(Slot),
    /// `waitall(r1, r2, ...)`; an empty list waits for every pending request
    /// of the rank. Each named variable becomes null.
    Waitall(Vec<Slot>),
}

/// Pure expressions, evaluated per rank with real values.
#[derive(Debug, Clone)]
pub enum Expr {
    Const(Constant),
    Bool(bool),
    Null,
    /// The `any` wildcard (`from: any`, `tag: any`).
    Any,
    Local(Slot),
    Param(u32),
    Rank,
    Size,
    /// The rank's model clock in seconds (`wtime()`).
    Wtime,
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// Short-circuit `&&` (both operands pure).
    And(Box<Expr>, Box<Expr>),
    /// Short-circuit `||` (both operands pure).
    Or(Box<Expr>, Box<Expr>),
    Builtin(Builtin, Vec<Expr>),
    /// `e.source`, `e.tag`, `e.bytes` of a status.
    Field(Box<Expr>, StatusField),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Not,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builtin {
    Min,
    Max,
    Abs,
    Floor,
    Ceil,
    Sqrt,
    Log2,
}

impl Builtin {
    /// The language name of the builtin.
    pub fn name(self) -> &'static str {
        match self {
            Builtin::Min => "min",
            Builtin::Max => "max",
            Builtin::Abs => "abs",
            Builtin::Floor => "floor",
            Builtin::Ceil => "ceil",
            Builtin::Sqrt => "sqrt",
            Builtin::Log2 => "log2",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusField {
    Source,
    Tag,
    Bytes,
}

impl Program {
    pub fn function(&self, id: FuncId) -> &Function {
        &self.functions[id as usize]
    }
}
