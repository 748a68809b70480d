//! The program IR: one basic-block graph per function.
//!
//! The frontend builds it, the engine interprets it. Nothing here knows about
//! text: source positions are plain [`Span`]s that the binary renders.
//!
//! Invariants (the frontend upholds them, the engine relies on them;
//! [`Program::validate`] checks them, naming the one broken):
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
    /// `malloc(bytes: n)` / `free(bytes: n)`: the program's own heap
    /// allocation, written whole, or its release (the model's process heap,
    /// `Machine::heap_alloc` / `heap_free`).
    Heap { op: HeapOp, bytes: Expr, span: Span },
    /// `print(...)`: a line of output prefixed by the rank. `abort(...)`
    /// (`abort: true`): the same text ends the run with a run-time error
    /// of this rank at this line (a skeleton's MPI_Abort).
    Print {
        args: Vec<PrintArg>,
        span: Span,
        abort: bool,
    },
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

/// What a [`Stmt::Heap`] does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeapOp {
    /// `malloc(bytes: n)`.
    Malloc,
    /// `free(bytes: n)`: the latest live allocation of `n` bytes.
    Free,
}

impl HeapOp {
    /// The statement's name in the language.
    pub fn name(self) -> &'static str {
        match self {
            HeapOp::Malloc => "malloc",
            HeapOp::Free => "free",
        }
    }
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
    /// The kind the language calls `name` (`"allreduce"`, ...).
    pub fn from_name(name: &str) -> Option<CollKind> {
        CollKind::ALL.into_iter().find(|k| k.name() == name)
    }

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
    /// `elem:`: bytes per element of the call's datatype (`MPI_Type_size`;
    /// `None` is 1, `MPI_BYTE`). The libraries compare element counts in
    /// some selection rules and split vectors by elements.
    pub elem: Option<Expr>,
}

impl CollArgs {
    /// The expressions of the arguments given (`root:`, `bytes:`, `comm:`,
    /// `value:`, `elem:`), in one order for every walk of them.
    pub fn exprs(&self) -> impl Iterator<Item = &Expr> {
        [&self.root, &self.bytes, &self.comm, &self.value, &self.elem]
            .into_iter()
            .flatten()
    }

    /// [`CollArgs::exprs`], to rewrite them.
    pub fn exprs_mut(&mut self) -> impl Iterator<Item = &mut Expr> {
        [
            &mut self.root,
            &mut self.bytes,
            &mut self.comm,
            &mut self.value,
            &mut self.elem,
        ]
        .into_iter()
        .flatten()
    }
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

impl CommOp {
    /// The expressions the operation evaluates (arguments, not the
    /// request variables it waits for).
    pub fn exprs(&self) -> Vec<&Expr> {
        fn msg(a: &MsgArgs) -> impl Iterator<Item = &Expr> {
            [&a.peer, &a.tag, &a.bytes].into_iter().chain(&a.comm)
        }
        match self {
            CommOp::Send(a, _)
            | CommOp::Recv(a)
            | CommOp::Isend(a, _)
            | CommOp::Irecv(a)
            | CommOp::Probe(a)
            | CommOp::Iprobe(a) => msg(a).collect(),
            CommOp::Sendrecv { send, recv } => msg(send).chain(msg(recv)).collect(),
            CommOp::Wait(_) | CommOp::Waitall(_) | CommOp::Waitany(_) | CommOp::Test(_) => {
                Vec::new()
            }
            CommOp::Collective(c) => c.exprs().collect(),
            CommOp::CommSplit { comm, color, key } => {
                [color, key].into_iter().chain(comm).collect()
            }
            CommOp::CommDup(c) => vec![c],
        }
    }
}

impl Stmt {
    /// The expressions the statement evaluates (its own, not those of a
    /// function it calls; a print's expression arguments).
    pub fn exprs(&self) -> Vec<&Expr> {
        match self {
            Stmt::Assign { value, .. } => vec![value],
            Stmt::AssignIndex { index, value, .. } => vec![index, value],
            Stmt::Compute { args, .. } | Stmt::Call { args, .. } => args.iter().collect(),
            Stmt::Copy { bytes, .. } | Stmt::Heap { bytes, .. } => vec![bytes],
            Stmt::Print { args, .. } => args
                .iter()
                .filter_map(|a| match a {
                    PrintArg::Expr(e) => Some(e),
                    PrintArg::Str(_) => None,
                })
                .collect(),
            Stmt::Comm { op, .. } => op.exprs(),
        }
    }
}

impl Expr {
    /// The expression's direct sub-expressions, in order: the one walk over
    /// every variant that [`Expr::any`] and [`Expr::count`] share.
    fn children(&self) -> impl Iterator<Item = &Expr> {
        let (pair, items): ([Option<&Expr>; 2], &[Expr]) = match self {
            Expr::Const(_)
            | Expr::Bool(_)
            | Expr::Null
            | Expr::Any
            | Expr::World
            | Expr::Local(_)
            | Expr::Param(_)
            | Expr::Rank
            | Expr::Size
            | Expr::Wtime => ([None, None], &[]),
            Expr::RankIn(a) | Expr::SizeIn(a) | Expr::Unary(_, a) | Expr::Field(a, _) => {
                ([Some(a), None], &[])
            }
            Expr::Index(a, b) | Expr::Binary(_, a, b) | Expr::And(a, b) | Expr::Or(a, b) => {
                ([Some(a), Some(b)], &[])
            }
            Expr::Array(items) | Expr::Builtin(_, items) => ([None, None], items),
        };
        pair.into_iter().flatten().chain(items)
    }

    /// Whether this expression or a part of it satisfies `hit` (the walk
    /// over every variant, for the questions the engine asks of an
    /// expression: does it read the clock, a given variable).
    pub fn any(&self, hit: &dyn Fn(&Expr) -> bool) -> bool {
        hit(self) || self.children().any(|c| c.any(hit))
    }

    /// How many of the expression's nodes `hit` picks.
    pub fn count(&self, hit: &dyn Fn(&Expr) -> bool) -> u32 {
        u32::from(hit(self)) + self.children().map(|c| c.count(hit)).sum::<u32>()
    }
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
            | Stmt::Heap { span, .. }
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

/// An IR invariant (see the top of this module) that a [`Program`] breaks,
/// found by [`Program::validate`]. `func` names the function (or the
/// kernel, or `param NAME`) where it is broken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IrError {
    #[error("main is function {main} but there are {count} functions")]
    MainOutOfRange { main: FuncId, count: usize },
    #[error("in {func}: local slot {slot} is out of range ({num_locals} locals)")]
    SlotOutOfRange {
        func: String,
        slot: Slot,
        num_locals: u32,
    },
    #[error("in {func}: param {index} is out of range ({count} params)")]
    ParamOutOfRange {
        func: String,
        index: u32,
        count: usize,
    },
    #[error("the default of param `{param}` uses param {used}, which is not declared before it")]
    ParamNotEarlier { param: String, used: u32 },
    #[error("in {func}: kernel {kernel} is out of range ({count} kernels)")]
    KernelOutOfRange {
        func: String,
        kernel: KernelId,
        count: usize,
    },
    #[error("in {func}: function {callee} is out of range ({count} functions)")]
    FunctionOutOfRange {
        func: String,
        callee: FuncId,
        count: usize,
    },
    #[error("in {func}: `{callee}` takes {expected} arguments but is given {given}")]
    Arity {
        func: String,
        callee: String,
        expected: usize,
        given: usize,
    },
    #[error("in {func}: {names} local names for {num_locals} locals")]
    LocalNames {
        func: String,
        names: usize,
        num_locals: u32,
    },
    #[error("in {func}: {params} params but only {num_locals} locals")]
    ParamsExceedLocals {
        func: String,
        params: usize,
        num_locals: u32,
    },
    #[error("in {func}: the entry block is not in the graph")]
    MissingEntry { func: String },
    #[error("in {func}: the edges of block {block} do not match its terminator")]
    EdgesMismatchTerminator { func: String, block: u32 },
    #[error("in {func}: `{op}` {problem}")]
    BadOperands {
        func: String,
        op: &'static str,
        problem: &'static str,
    },
}

/// Where the checker is: the program and the function whose slots apply.
struct Checker<'p> {
    program: &'p Program,
    /// The function (or kernel, or param) being checked, for errors.
    func: &'p str,
    num_locals: u32,
}

impl Checker<'_> {
    fn slot(&self, slot: Slot) -> Result<(), IrError> {
        if slot < self.num_locals {
            Ok(())
        } else {
            Err(IrError::SlotOutOfRange {
                func: self.func.to_owned(),
                slot,
                num_locals: self.num_locals,
            })
        }
    }

    fn operands(&self, ok: bool, op: &'static str, problem: &'static str) -> Result<(), IrError> {
        if ok {
            Ok(())
        } else {
            Err(IrError::BadOperands {
                func: self.func.to_owned(),
                op,
                problem,
            })
        }
    }

    fn expr(&self, e: &Expr) -> Result<(), IrError> {
        match e {
            Expr::Local(s) => self.slot(*s),
            Expr::Param(i) if (*i as usize) < self.program.params.len() => Ok(()),
            Expr::Param(i) => Err(IrError::ParamOutOfRange {
                func: self.func.to_owned(),
                index: *i,
                count: self.program.params.len(),
            }),
            Expr::Unary(_, x) | Expr::Field(x, _) | Expr::RankIn(x) | Expr::SizeIn(x) => {
                self.expr(x)
            }
            Expr::Binary(_, l, r) | Expr::And(l, r) | Expr::Or(l, r) | Expr::Index(l, r) => {
                self.expr(l)?;
                self.expr(r)
            }
            Expr::Builtin(_, args) | Expr::Array(args) => {
                args.iter().try_for_each(|a| self.expr(a))
            }
            Expr::Const(_)
            | Expr::Bool(_)
            | Expr::Null
            | Expr::Any
            | Expr::World
            | Expr::Rank
            | Expr::Size
            | Expr::Wtime => Ok(()),
        }
    }

    fn msg(&self, m: &MsgArgs) -> Result<(), IrError> {
        [&m.peer, &m.tag, &m.bytes]
            .into_iter()
            .chain(&m.comm)
            .try_for_each(|e| self.expr(e))
    }

    fn call_arity(&self, callee: &str, expected: usize, given: usize) -> Result<(), IrError> {
        if expected == given {
            Ok(())
        } else {
            Err(IrError::Arity {
                func: self.func.to_owned(),
                callee: callee.to_owned(),
                expected,
                given,
            })
        }
    }

    fn stmt(&self, s: &Stmt) -> Result<(), IrError> {
        let p = self.program;
        match s {
            Stmt::Assign { dst, value, .. } => {
                self.slot(*dst)?;
                self.expr(value)
            }
            Stmt::AssignIndex {
                dst, index, value, ..
            } => {
                self.slot(*dst)?;
                self.expr(index)?;
                self.expr(value)
            }
            Stmt::Compute { kernel, args, .. } => {
                let k =
                    p.kernels
                        .get(*kernel as usize)
                        .ok_or_else(|| IrError::KernelOutOfRange {
                            func: self.func.to_owned(),
                            kernel: *kernel,
                            count: p.kernels.len(),
                        })?;
                self.call_arity(&k.name, k.params.len(), args.len())?;
                args.iter().try_for_each(|a| self.expr(a))
            }
            Stmt::Copy { bytes, .. } | Stmt::Heap { bytes, .. } => self.expr(bytes),
            Stmt::Print { args, .. } => args.iter().try_for_each(|a| match a {
                PrintArg::Expr(e) => self.expr(e),
                PrintArg::Str(_) => Ok(()),
            }),
            Stmt::Call {
                func, args, dst, ..
            } => {
                let callee =
                    p.functions
                        .get(*func as usize)
                        .ok_or_else(|| IrError::FunctionOutOfRange {
                            func: self.func.to_owned(),
                            callee: *func,
                            count: p.functions.len(),
                        })?;
                self.call_arity(&callee.name, callee.params.len(), args.len())?;
                if let Some(d) = dst {
                    self.slot(*d)?;
                }
                args.iter().try_for_each(|a| self.expr(a))
            }
            Stmt::Comm { op, dst, .. } => {
                if let Some(d) = dst {
                    self.slot(*d)?;
                }
                self.comm(op)
            }
        }
    }

    fn comm(&self, op: &CommOp) -> Result<(), IrError> {
        match op {
            CommOp::Send(m, _) | CommOp::Isend(m, _) | CommOp::Recv(m) | CommOp::Irecv(m) => {
                self.msg(m)
            }
            CommOp::Probe(m) | CommOp::Iprobe(m) => {
                self.operands(matches!(m.bytes, Expr::Null), "probe", "has a byte count")?;
                self.msg(m)
            }
            CommOp::Sendrecv { send, recv } => {
                self.msg(send)?;
                self.msg(recv)
            }
            CommOp::Wait(s) | CommOp::Test(s) => self.slot(*s),
            CommOp::Waitall(ss) => ss.iter().try_for_each(|s| self.slot(*s)),
            CommOp::Waitany(ss) => {
                self.operands(!ss.is_empty(), "waitany", "has no requests")?;
                ss.iter().try_for_each(|s| self.slot(*s))
            }
            CommOp::Collective(c) => {
                let name = c.kind.name();
                let root = if c.kind.rooted() {
                    "has no root"
                } else {
                    "has a root but is not rooted"
                };
                self.operands(c.root.is_some() == c.kind.rooted(), name, root)?;
                let bytes = if c.kind.has_bytes() {
                    "has no byte count"
                } else {
                    "has a byte count but moves no bytes"
                };
                self.operands(c.bytes.is_some() == c.kind.has_bytes(), name, bytes)?;
                c.exprs().try_for_each(|e| self.expr(e))
            }
            CommOp::CommSplit { comm, color, key } => [color, key]
                .into_iter()
                .chain(comm)
                .try_for_each(|e| self.expr(e)),
            CommOp::CommDup(c) => self.expr(c),
        }
    }

    /// The block's out-edges are exactly its terminator's targets.
    fn edges(&self, f: &Function, b: BlockId) -> Result<(), IrError> {
        use petgraph::visit::EdgeRef;
        let out: Vec<(EdgeKind, BlockId)> =
            f.cfg.edges(b).map(|e| (*e.weight(), e.target())).collect();
        let ok = match &f.cfg[b].term {
            Terminator::Goto(t) => out == [(EdgeKind::Goto, *t)],
            Terminator::Branch { then_, else_, .. } => {
                out.len() == 2
                    && out.contains(&(EdgeKind::True, *then_))
                    && out.contains(&(EdgeKind::False, *else_))
            }
            Terminator::Return { .. } => out.is_empty(),
        };
        if ok {
            Ok(())
        } else {
            Err(IrError::EdgesMismatchTerminator {
                func: f.name.clone(),
                block: b.index() as u32,
            })
        }
    }

    fn function(&self, f: &Function) -> Result<(), IrError> {
        if f.local_names.len() != f.num_locals as usize {
            return Err(IrError::LocalNames {
                func: f.name.clone(),
                names: f.local_names.len(),
                num_locals: f.num_locals,
            });
        }
        if f.params.len() > f.num_locals as usize {
            return Err(IrError::ParamsExceedLocals {
                func: f.name.clone(),
                params: f.params.len(),
                num_locals: f.num_locals,
            });
        }
        if f.cfg.node_weight(f.entry).is_none() {
            return Err(IrError::MissingEntry {
                func: f.name.clone(),
            });
        }
        // Every edge leaves some block, so checking each block's out-edges
        // against its terminator checks the whole edge set.
        for b in f.cfg.node_indices() {
            let block = &f.cfg[b];
            block.stmts.iter().try_for_each(|s| self.stmt(s))?;
            match &block.term {
                Terminator::Goto(_) | Terminator::Return { value: None, .. } => {}
                Terminator::Branch { cond: e, .. } | Terminator::Return { value: Some(e), .. } => {
                    self.expr(e)?
                }
            }
            self.edges(f, b)?;
        }
        Ok(())
    }
}

/// The highest param index `e` reads.
fn max_param(e: &Expr) -> Option<u32> {
    match e {
        Expr::Param(i) => Some(*i),
        Expr::Unary(_, x) | Expr::Field(x, _) | Expr::RankIn(x) | Expr::SizeIn(x) => max_param(x),
        Expr::Binary(_, l, r) | Expr::And(l, r) | Expr::Or(l, r) | Expr::Index(l, r) => {
            max_param(l).max(max_param(r))
        }
        Expr::Builtin(_, a) | Expr::Array(a) => a.iter().filter_map(max_param).max(),
        _ => None,
    }
}

impl Program {
    /// Checks the invariants written at the top of this module: slots,
    /// params, kernels and functions in range; call and kernel arities;
    /// param defaults that read no locals and only earlier params; kernel
    /// costs that read only the kernel's parameters; each block's edges
    /// exactly its terminator's targets; the operands each communication
    /// operation must (or must not) have. The frontend's lowering asserts
    /// it in debug builds; the engine relies on it.
    pub fn validate(&self) -> Result<(), IrError> {
        if self.main as usize >= self.functions.len() {
            return Err(IrError::MainOutOfRange {
                main: self.main,
                count: self.functions.len(),
            });
        }
        for (i, param) in self.params.iter().enumerate() {
            let func = format!("param `{}`", param.name);
            let cx = Checker {
                program: self,
                func: &func,
                num_locals: 0,
            };
            cx.expr(&param.default)?;
            if let Some(used) = max_param(&param.default).filter(|&m| m as usize >= i) {
                return Err(IrError::ParamNotEarlier {
                    param: param.name.clone(),
                    used,
                });
            }
        }
        for k in &self.kernels {
            if let Some(cost) = &k.cost {
                let func = format!("kernel `{}`", k.name);
                let cx = Checker {
                    program: self,
                    func: &func,
                    num_locals: u32::try_from(k.params.len()).unwrap_or(u32::MAX),
                };
                cx.expr(cost)?;
            }
        }
        for f in &self.functions {
            let cx = Checker {
                program: self,
                func: &f.name,
                num_locals: f.num_locals,
            };
            cx.function(f)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod validate_tests {
    use super::*;

    /// `main` with one local, `x = <value>` and a return.
    fn program(value: Expr) -> Program {
        let mut cfg = DiGraph::default();
        let entry = cfg.add_node(Block {
            stmts: vec![Stmt::Assign {
                dst: 0,
                value,
                span: Span::default(),
            }],
            term: Terminator::Return {
                value: None,
                span: Span::default(),
            },
            span: Span::default(),
        });
        Program {
            file: "t.mpl".to_owned(),
            params: Vec::new(),
            kernels: Vec::new(),
            functions: vec![Function {
                name: "main".to_owned(),
                params: Vec::new(),
                local_names: vec!["x".to_owned()],
                num_locals: 1,
                cfg,
                entry,
                span: Span::default(),
            }],
            main: 0,
        }
    }

    #[test]
    fn a_well_formed_program_passes() {
        assert_eq!(program(Expr::Local(0)).validate(), Ok(()));
    }

    #[test]
    fn names_the_broken_invariant() {
        let e = program(Expr::Local(3)).validate();
        assert!(
            matches!(e, Err(IrError::SlotOutOfRange { slot: 3, .. })),
            "{e:?}"
        );
        let e = program(Expr::Param(0)).validate();
        assert!(
            matches!(e, Err(IrError::ParamOutOfRange { index: 0, .. })),
            "{e:?}"
        );

        // A return with an out-edge.
        let mut p = program(Expr::Null);
        let f = &mut p.functions[0];
        let other = f.cfg.add_node(f.cfg[f.entry].clone());
        f.cfg.add_edge(f.entry, other, EdgeKind::Goto);
        let e = p.validate();
        assert!(
            matches!(e, Err(IrError::EdgesMismatchTerminator { block: 0, .. })),
            "{e:?}"
        );
        assert_eq!(
            e.map_err(|e| e.to_string()),
            Err("in main: the edges of block 0 do not match its terminator".to_owned())
        );

        let mut p = program(Expr::Null);
        p.main = 1;
        assert!(matches!(p.validate(), Err(IrError::MainOutOfRange { .. })));
    }
}
