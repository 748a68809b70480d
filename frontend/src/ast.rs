//! The syntax tree the parser builds; names are not resolved yet.

use sim_core::ir::{BinOp, Span, StatusField, UnOp};

#[derive(Debug, Clone)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct Module {
    pub items: Vec<Item>,
}

#[derive(Debug, Clone)]
pub enum Item {
    Param {
        name: Ident,
        value: Expr,
        span: Span,
    },
    Kernel {
        name: Ident,
        params: Vec<Ident>,
        cost: Option<Expr>,
        span: Span,
    },
    Fn {
        name: Ident,
        params: Vec<Ident>,
        body: Block,
        span: Span,
    },
    Stmt(Stmt),
}

#[derive(Debug, Clone)]
pub struct Block {
    pub stmts: Vec<Stmt>,
}

#[derive(Debug, Clone)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub enum StmtKind {
    Let {
        name: Ident,
        value: Expr,
    },
    /// `x = e`, or `x op= e` with `op` set.
    Assign {
        name: Ident,
        op: Option<BinOp>,
        value: Expr,
    },
    If {
        cond: Expr,
        then_: Block,
        /// `else { }`; an `else if` is a block holding one `If` statement.
        else_: Option<Block>,
    },
    For {
        var: Ident,
        start: Expr,
        end: Expr,
        step: Option<Expr>,
        body: Block,
    },
    While {
        cond: Expr,
        body: Block,
    },
    Break,
    Continue,
    Return(Option<Expr>),
    Compute {
        kernel: Ident,
        args: Vec<Arg>,
    },
    /// `a[i] = e`, `a[i][j] += e`, ...: `indices` has at least one element.
    AssignIndex {
        name: Ident,
        indices: Vec<Expr>,
        op: Option<BinOp>,
        value: Expr,
    },
    /// A declaration (`param`, `kernel`, `fn`) where only statements may
    /// appear; already reported by the parser.
    Misplaced,
    Expr(Expr),
}

#[derive(Debug, Clone)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub enum ExprKind {
    Int(i64),
    Float(f64),
    Str(String),
    Bool(bool),
    Null,
    Any,
    Rank,
    Size,
    /// The `world` communicator.
    World,
    Name(String),
    /// `[a, b, c]`.
    Array(Vec<Expr>),
    /// `a[i]`.
    Index(Box<Expr>, Box<Expr>),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Call {
        name: Ident,
        args: Vec<Arg>,
    },
    Field(Box<Expr>, StatusField),
}

/// A call argument, positional or named (`bytes: 8 * n`).
#[derive(Debug, Clone)]
pub struct Arg {
    pub label: Option<Ident>,
    pub value: Expr,
    pub span: Span,
}
