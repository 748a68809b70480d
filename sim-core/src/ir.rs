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
    /// `a[i] = e`: replaces one element of the array in `dst` (arrays are
    /// values: other variables holding the same array do not change).
    AssignIndex {
        dst: Slot,
        index: Expr,
        value: Expr,
        span: Span,
    },
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

/// Arguments of one message: `to:`/`from:` peer, `tag:`, `bytes:`, `comm:`.
/// For receives and probes, `peer` and `tag` may evaluate to
/// [`crate::value::Value::Any`]. Ranks are relative to the communicator.
#[derive(Debug, Clone)]
pub struct MsgArgs {
    pub peer: Expr,
    pub tag: Expr,
    pub bytes: Expr,
    /// `comm:`; `None` is the world.
    pub comm: Option<Expr>,
}

/// Send modes (MPI 3.1 section 3.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendMode {
    /// `send`/`isend`: eager below the machine's eager limit, else rendezvous.
    Standard,
    /// `ssend`/`issend`: completes only once the matching receive has started
    /// (always rendezvous).
    Synchronous,
    /// `bsend`/`ibsend`: always eager (buffered), whatever the size.
    Buffered,
}

/// The collective operations (MPI 3.1 chapter 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CollKind {
    Barrier,
    Bcast,
    Reduce,
    Allreduce,
    Gather,
    Gatherv,
    Scatter,
    Scatterv,
    Allgather,
    Allgatherv,
    Alltoall,
    Alltoallv,
    ReduceScatter,
    Scan,
    Exscan,
}

impl CollKind {
    pub const ALL: [CollKind; 15] = [
        CollKind::Barrier,
        CollKind::Bcast,
        CollKind::Reduce,
        CollKind::Allreduce,
        CollKind::Gather,
        CollKind::Gatherv,
        CollKind::Scatter,
        CollKind::Scatterv,
        CollKind::Allgather,
        CollKind::Allgatherv,
        CollKind::Alltoall,
        CollKind::Alltoallv,
        CollKind::ReduceScatter,
        CollKind::Scan,
        CollKind::Exscan,
    ];

    /// The language name (`reduce_scatter`, ...).
    pub fn name(self) -> &'static str {
        match self {
            CollKind::Barrier => "barrier",
            CollKind::Bcast => "bcast",
            CollKind::Reduce => "reduce",
            CollKind::Allreduce => "allreduce",
            CollKind::Gather => "gather",
            CollKind::Gatherv => "gatherv",
            CollKind::Scatter => "scatter",
            CollKind::Scatterv => "scatterv",
            CollKind::Allgather => "allgather",
            CollKind::Allgatherv => "allgatherv",
            CollKind::Alltoall => "alltoall",
            CollKind::Alltoallv => "alltoallv",
            CollKind::ReduceScatter => "reduce_scatter",
            CollKind::Scan => "scan",
            CollKind::Exscan => "exscan",
        }
    }

    /// Whether the operation has a `root:` argument.
    pub fn rooted(self) -> bool {
        matches!(
            self,
            CollKind::Bcast
                | CollKind::Reduce
                | CollKind::Gather
                | CollKind::Gatherv
                | CollKind::Scatter
                | CollKind::Scatterv
        )
    }

    /// Whether the operation has a `bytes:` argument (all but barrier).
    pub fn has_bytes(self) -> bool {
        self != CollKind::Barrier
    }
}

/// Arguments of a collective call.
///
/// `bytes` is, as MPI counts it: the whole buffer for bcast, reduce,
/// allreduce, scan and exscan; the block each rank contributes (gather,
/// allgather, reduce_scatter's per-rank result) or receives (scatter); the
/// block sent to *each* peer for alltoall. For the v-variants it may be an
/// array of per-rank counts (`scatterv` at the root, `allgatherv`,
/// `alltoallv`: per destination; `reduce_scatter`: per rank) or, for
/// `gatherv` and `scatterv`, this rank's own count.
#[derive(Debug, Clone)]
pub struct CollArgs {
    pub kind: CollKind,
    /// `root:` (rooted operations only).
    pub root: Option<Expr>,
    /// `bytes:` (`None` for barrier).
    pub bytes: Option<Expr>,
    /// `comm:`; `None` is the world.
    pub comm: Option<Expr>,
    /// `value:`: a value the collective carries, so that ranks can combine
    /// real numbers (a convergence test, IMB's t_min/t_max/t_avg). The call
    /// then returns: bcast, the root's value; reduce (at the root) and
    /// allreduce, the values combined by `op`; gather (at the root) and
    /// allgather, the array of every rank's value in communicator order;
    /// scatter, element `rank` of the root's array; alltoall, the array of
    /// element `rank` of every rank's array; scan, the combination over
    /// ranks `0 ..= rank`, exscan over `0 .. rank` (null at rank 0). Other
    /// ranks, other collectives and calls without `value:` return null.
    pub value: Option<Expr>,
    /// `op:` for reduce, allreduce, scan, exscan (default sum).
    pub op: ReduceOp,
}

/// How values are combined (MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX, MPI_LAND, MPI_LOR).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReduceOp {
    #[default]
    Sum,
    Prod,
    Min,
    Max,
    Land,
    Lor,
}

impl ReduceOp {
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Prod => "prod",
            ReduceOp::Min => "min",
            ReduceOp::Max => "max",
            ReduceOp::Land => "land",
            ReduceOp::Lor => "lor",
        }
    }

    pub fn from_name(name: &str) -> Option<ReduceOp> {
        [
            ReduceOp::Sum,
            ReduceOp::Prod,
            ReduceOp::Min,
            ReduceOp::Max,
            ReduceOp::Land,
            ReduceOp::Lor,
        ]
        .into_iter()
        .find(|op| op.name() == name)
    }
}

#[derive(Debug, Clone)]
pub enum CommOp {
    /// `send`, `ssend`, `bsend`.
    Send(MsgArgs, SendMode),
    Recv(MsgArgs),
    /// `isend`, `issend`, `ibsend`: return a request.
    Isend(MsgArgs, SendMode),
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
    /// `waitany(r1, r2, ...)`: waits until one is complete (the first in the
    /// list among those completing at the same time), sets that variable to
    /// null and returns its 0-based index; with no live request returns -1
    /// (MPI_UNDEFINED).
    Waitany(Vec<Slot>),
    /// `test(r)`: true (and `r` becomes null) once complete, else false.
    Test(Slot),
    /// `probe(from:, tag:, comm:)`: blocks until a matching message can be
    /// received and returns its status without receiving it. `bytes` of the
    /// args is unused (`Expr::Null`).
    Probe(MsgArgs),
    /// `iprobe(...)`: the status of a matching message if one has arrived,
    /// else null.
    Iprobe(MsgArgs),
    /// A collective operation; `comm_split`/`comm_dup` are below.
    Collective(CollArgs),
    /// `comm_split(color:, key:, comm:)`: returns the new communicator (null
    /// for a negative color, MPI_UNDEFINED). Collective over `comm`.
    CommSplit {
        comm: Option<Expr>,
        color: Expr,
        key: Expr,
    },
    /// `comm_dup(c)`: a new communicator with the same group. Collective.
    CommDup(Expr),
}

/// Pure expressions, evaluated per rank with real values.
#[derive(Debug, Clone)]
pub enum Expr {
    Const(Constant),
    Bool(bool),
    Null,
    /// The `any` wildcard (`from: any`, `tag: any`).
    Any,
    /// The `world` communicator.
    World,
    /// `rank_in(c)`: this rank's rank in communicator `c` (-1 if not a member).
    RankIn(Box<Expr>),
    /// `size_in(c)`: the size of communicator `c`.
    SizeIn(Box<Expr>),
    /// `[a, b, c]`: an array value.
    Array(Vec<Expr>),
    /// `a[i]`: an element of an array (0-based).
    Index(Box<Expr>, Box<Expr>),
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
    /// `array(n, v)`: an array of `n` copies of `v`.
    ArrayOf,
    /// `len(a)`: the number of elements of an array.
    Len,
    /// `sum(a)`: the sum of an array's numbers.
    Sum,
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
            Builtin::ArrayOf => "array",
            Builtin::Len => "len",
            Builtin::Sum => "sum",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusField {
    Source,
    Tag,
    Bytes,
}

impl Stmt {
    /// The statement's source span.
    pub fn span(&self) -> Span {
        match self {
            Stmt::Assign { span, .. }
            | Stmt::AssignIndex { span, .. }
            | Stmt::Compute { span, .. }
            | Stmt::Copy { span, .. }
            | Stmt::Print { span, .. }
            | Stmt::Call { span, .. }
            | Stmt::Comm { span, .. } => *span,
        }
    }
}

impl Program {
    pub fn function(&self, id: FuncId) -> &Function {
        &self.functions[id as usize]
    }
}
