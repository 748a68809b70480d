//! Run-time values of the skeleton language and the pure expression evaluator.
//!
//! Semantics (docs/language.md is the user-facing statement of them):
//! 64-bit integers and f64 floats; a float operand makes the result float;
//! `/` on two integers truncates toward zero and `%` takes the sign of the
//! dividend, as in C; integer overflow and integer division by zero are
//! errors; comparisons yield bools; conditions accept bools and numbers
//! (nonzero is true).

use std::fmt;
use std::rc::Rc;

use crate::ir::{BinOp, Builtin, Constant, Expr, StatusField, UnOp};

/// A handle to a request; the generation makes stale copies harmless
/// (a completed request reads as null).
///
/// One `u64` (the id in the low half, the generation in the high one), not
/// two `u32` fields: `post_recv` and `post_send` return it through memory,
/// and two 4-byte stores read back as one 8-byte load stall the store
/// forwarding at every isend and irecv (`perf annotate` of W2: a fifth of
/// `exec_stmt`'s samples on that load).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ReqRef(u64);

impl ReqRef {
    #[inline(always)]
    pub fn new(id: u32, generation: u32) -> ReqRef {
        ReqRef(u64::from(id) | u64::from(generation) << 32)
    }

    /// The request's slot.
    #[inline(always)]
    pub fn id(self) -> u32 {
        self.0 as u32
    }

    /// The slot's generation when the handle was made.
    #[inline(always)]
    pub fn generation(self) -> u32 {
        (self.0 >> 32) as u32
    }
}

impl fmt::Debug for ReqRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReqRef")
            .field("id", &self.id())
            .field("generation", &self.generation())
            .finish()
    }
}

/// What `recv` and `wait` return.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MsgStatus {
    pub source: u32,
    pub tag: i32,
    pub bytes: u64,
}

/// A status whose byte count fits in 32 bits, as [`Value::Status`] holds
/// it: 12 bytes, so that a `Value` is 16 bytes rather than 24 (with a
/// 16-byte `MsgStatus` inline it was 24). Built only by [`Value::status`],
/// which keeps every status in one canonical variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SmallStatus {
    source: u32,
    tag: i32,
    bytes: u32,
}

/// A value. Arrays are values too: `Rc` sharing with copy-on-write, so
/// assigning an array and then changing an element leaves the other copy
/// alone.
///
/// 16 bytes: frames hold their variables inline (`engine::state::Locals`),
/// and W2's 16 variables per rank were ~400 B per rank at 24 bytes each.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Value {
    #[default]
    Null,
    Int(i64),
    Float(f64),
    Bool(bool),
    /// The `any` wildcard.
    Any,
    Req(ReqRef),
    /// A status of a message below 4 GiB (see [`Value::status`]).
    Status(SmallStatus),
    /// A status of a message of 4 GiB or more, boxed: rare, and it would
    /// make every value 8 bytes larger inline.
    BigStatus(Box<MsgStatus>),
    /// A communicator (0 is the world).
    Comm(u32),
    Array(Rc<Vec<Value>>),
}

impl Value {
    /// A status as a value: [`Value::Status`] when its byte count fits in
    /// 32 bits, else [`Value::BigStatus`] (so each status has one form, and
    /// the derived equality is the statuses').
    pub fn status(s: MsgStatus) -> Value {
        match u32::try_from(s.bytes) {
            Ok(bytes) => Value::Status(SmallStatus {
                source: s.source,
                tag: s.tag,
                bytes,
            }),
            Err(_) => Value::BigStatus(Box::new(s)),
        }
    }

    /// The status this value holds, if it is one.
    pub fn as_status(&self) -> Option<MsgStatus> {
        match self {
            Value::Status(s) => Some(MsgStatus {
                source: s.source,
                tag: s.tag,
                bytes: u64::from(s.bytes),
            }),
            Value::BigStatus(s) => Some(**s),
            _ => None,
        }
    }

    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::Bool(_) => "bool",
            Value::Any => "any",
            Value::Req(_) => "request",
            Value::Status(_) | Value::BigStatus(_) => "status",
            Value::Comm(_) => "communicator",
            Value::Array(_) => "array",
        }
    }

    pub fn truthy(&self) -> Result<bool, String> {
        match self {
            Value::Bool(b) => Ok(*b),
            Value::Int(i) => Ok(*i != 0),
            Value::Float(f) => Ok(*f != 0.0),
            other => Err(format!(
                "a condition must be a bool or a number, got {}",
                other.type_name()
            )),
        }
    }

    /// The value as f64, if it is a number.
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::Int(i) => Some(i as f64),
            Value::Float(f) => Some(f),
            _ => None,
        }
    }
}

impl From<Constant> for Value {
    fn from(c: Constant) -> Value {
        match c {
            Constant::Int(i) => Value::Int(i),
            Constant::Float(f) => Value::Float(f),
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("null"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => f.write_str(&format_float(*x)),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Any => f.write_str("any"),
            Value::Req(r) => write!(f, "request#{}", r.id()),
            Value::Comm(0) => f.write_str("world"),
            Value::Comm(c) => write!(f, "comm#{c}"),
            Value::Array(a) => {
                f.write_str("[")?;
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str("]")
            }
            Value::Status(s) => write!(
                f,
                "status(source: {}, tag: {}, bytes: {})",
                s.source, s.tag, s.bytes
            ),
            Value::BigStatus(s) => write!(
                f,
                "status(source: {}, tag: {}, bytes: {})",
                s.source, s.tag, s.bytes
            ),
        }
    }
}

/// A float as `print` shows it: at most 12 significant digits, so that
/// binary rounding noise (`0.40239999999999154`) does not show, but no
/// information a model time needs at microsecond scale is lost.
pub fn format_float(x: f64) -> String {
    let plain = format!("{x}");
    if !x.is_finite() || x == 0.0 || plain.len() <= 13 {
        return plain;
    }
    let mag = x.abs().log10().floor() as i32;
    let trimmed = |s: String| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_owned()
        } else {
            s
        }
    };
    if (-5..15).contains(&mag) {
        let decimals = (11 - mag).max(0) as usize;
        trimmed(format!("{x:.decimals$}"))
    } else {
        let e = format!("{x:.11e}");
        match e.split_once('e') {
            Some((m, exp)) => format!("{}e{exp}", trimmed(m.to_owned())),
            None => e,
        }
    }
}

/// Everything an expression can read.
pub struct EvalCx<'a> {
    pub locals: &'a [Value],
    pub params: &'a [Value],
    pub rank: u32,
    pub size: u32,
    pub clock: f64,
    /// Communicators, for `rank_in` and `size_in`.
    pub comms: &'a dyn CommView,
}

/// What expressions may ask about communicators.
pub trait CommView {
    /// `world_rank`'s rank in communicator `comm`; `None` if it is not a member.
    fn rank_in(&self, comm: u32, world_rank: u32) -> Option<u32>;
    /// The size of communicator `comm`; `None` if there is no such communicator.
    fn size_of(&self, comm: u32) -> Option<u32>;
}

/// Only the world exists (param defaults, constant folding).
pub struct WorldOnly(pub u32);

impl CommView for WorldOnly {
    fn rank_in(&self, comm: u32, world_rank: u32) -> Option<u32> {
        (comm == 0 && world_rank < self.0).then_some(world_rank)
    }

    fn size_of(&self, comm: u32) -> Option<u32> {
        (comm == 0).then_some(self.0)
    }
}

fn comm_id(v: &Value, what: &str) -> Result<u32, String> {
    match v {
        Value::Comm(c) => Ok(*c),
        other => Err(format!(
            "`{what}` needs a communicator, got {}",
            other.type_name()
        )),
    }
}

/// An array index as usize, checked against the length.
pub fn array_index(len: usize, i: &Value) -> Result<usize, String> {
    match i {
        Value::Int(k) if *k >= 0 && (*k as u64) < len as u64 => Ok(*k as usize),
        Value::Int(k) => Err(format!(
            "index {k} is out of bounds for an array of length {len}"
        )),
        other => Err(format!(
            "an array index must be an int, got {}",
            other.type_name()
        )),
    }
}

pub type EvalResult = Result<Value, String>;

/// A number or a bool: the values most expressions compute, `Copy`, with
/// no drop glue.
#[derive(Clone, Copy)]
pub enum Scalar {
    Int(i64),
    Float(f64),
    Bool(bool),
}

impl Scalar {
    #[inline]
    fn of(v: &Value) -> Option<Scalar> {
        match *v {
            Value::Int(i) => Some(Scalar::Int(i)),
            Value::Float(f) => Some(Scalar::Float(f)),
            Value::Bool(b) => Some(Scalar::Bool(b)),
            _ => None,
        }
    }

    #[inline]
    fn value(self) -> Value {
        match self {
            Scalar::Int(i) => Value::Int(i),
            Scalar::Float(f) => Value::Float(f),
            Scalar::Bool(b) => Value::Bool(b),
        }
    }

    /// Stores this value into `dst`, in place, field by field: a whole
    /// `Value` built first and then copied was read back 16 bytes wide from
    /// the pieces just written (a store-forwarding stall per assignment,
    /// `perf annotate` of a loop of integer arithmetic).
    #[inline(always)]
    pub fn store(self, dst: &mut Value) {
        match (self, dst) {
            (Scalar::Int(i), Value::Int(x)) => *x = i,
            (Scalar::Float(f), Value::Float(x)) => *x = f,
            (Scalar::Bool(b), Value::Bool(x)) => *x = b,
            (s, dst) => *dst = s.value(),
        }
    }

    #[inline]
    fn truthy(self) -> bool {
        match self {
            Scalar::Int(i) => i != 0,
            Scalar::Float(f) => f != 0.0,
            Scalar::Bool(b) => b,
        }
    }
}

/// `binary` on two scalars, the same semantics without building values:
/// `None` where `binary` gives an error (overflow, an integer division by
/// zero) or where a bool is an operand (only `==`/`!=` accept one, and
/// `eval` answers those).
#[inline]
fn scalar_binary(op: BinOp, x: Scalar, y: Scalar) -> Option<Scalar> {
    use BinOp::*;
    Some(match (x, y) {
        (Scalar::Int(i), Scalar::Int(j)) => match op {
            Add => Scalar::Int(i.checked_add(j)?),
            Sub => Scalar::Int(i.checked_sub(j)?),
            Mul => Scalar::Int(i.checked_mul(j)?),
            // C semantics (truncation); a zero divisor and MIN / -1 give
            // `None`.
            Div => Scalar::Int(i.checked_div(j)?),
            Rem => Scalar::Int(i.checked_rem(j)?),
            Eq => Scalar::Bool(i == j),
            Ne => Scalar::Bool(i != j),
            Lt => Scalar::Bool(i < j),
            Le => Scalar::Bool(i <= j),
            Gt => Scalar::Bool(i > j),
            Ge => Scalar::Bool(i >= j),
        },
        (Scalar::Bool(_), _) | (_, Scalar::Bool(_)) => return None,
        _ => {
            // A float and a number: both as f64, as `binary` does
            // (`Value::as_f64`).
            let f = |s| match s {
                Scalar::Int(i) => i as f64,
                Scalar::Float(f) => f,
                Scalar::Bool(_) => 0.0,
            };
            let (a, b) = (f(x), f(y));
            match op {
                Add => Scalar::Float(a + b),
                Sub => Scalar::Float(a - b),
                Mul => Scalar::Float(a * b),
                Div => Scalar::Float(a / b),
                Rem => Scalar::Float(a % b),
                Eq => Scalar::Bool(a == b),
                Ne => Scalar::Bool(a != b),
                Lt => Scalar::Bool(a < b),
                Le => Scalar::Bool(a <= b),
                Gt => Scalar::Bool(a > b),
                Ge => Scalar::Bool(a >= b),
            }
        }
    })
}

/// The fast evaluator's value of `e` (see `eval_scalar`): exactly what
/// [`eval`] returns when `Some` (as a [`Scalar`], which a caller stores
/// with [`Scalar::store`]); `None` when `eval` must be asked (a value that
/// is not a number or a bool, or an error to report).
#[inline(always)]
pub fn eval_fast_scalar(e: &Expr, cx: &EvalCx<'_>) -> Option<Scalar> {
    eval_scalar(e, cx)
}

/// Whether the condition `e` holds, by the fast evaluator: exactly
/// `eval(e)?.truthy()` when `Some`; `None` when `eval` must be asked.
#[inline]
pub fn cond_fast(e: &Expr, cx: &EvalCx<'_>) -> Option<bool> {
    eval_scalar(e, cx).map(Scalar::truthy)
}

/// The fast evaluator: numbers and bools only, exactly the semantics of
/// `eval` (it uses the same operations), `None` for anything else (other
/// value types, and every error, which `eval` then reports). Measured: the
/// interpreter's arithmetic is ~1.4x faster than through `Value`.
#[inline(always)]
fn eval_scalar(e: &Expr, cx: &EvalCx<'_>) -> Option<Scalar> {
    eval_packed(e, cx).unpack()
}

/// An `Option<Scalar>` as two registers: the kind (`PACKED_NONE`: none)
/// and the payload's bits. `eval_scalar`'s recursive calls return this
/// rather than the enum, which the calling convention returns through
/// memory, written piecewise and read back whole: a store-forwarding stall
/// at every call (`perf annotate`, a loop of integer arithmetic: half the
/// interpreter's time). A struct of two integers comes back in registers.
#[derive(Clone, Copy)]
struct Packed {
    kind: u8,
    bits: u64,
}

const PACKED_INT: u8 = 0;
const PACKED_FLOAT: u8 = 1;
const PACKED_BOOL: u8 = 2;
const PACKED_NONE: u8 = 3;

impl Packed {
    #[inline(always)]
    fn pack(s: Option<Scalar>) -> Packed {
        let (kind, bits) = match s {
            Some(Scalar::Int(i)) => (PACKED_INT, i as u64),
            Some(Scalar::Float(f)) => (PACKED_FLOAT, f.to_bits()),
            Some(Scalar::Bool(b)) => (PACKED_BOOL, u64::from(b)),
            None => (PACKED_NONE, 0),
        };
        Packed { kind, bits }
    }

    #[inline(always)]
    fn unpack(self) -> Option<Scalar> {
        match self.kind {
            PACKED_INT => Some(Scalar::Int(self.bits as i64)),
            PACKED_FLOAT => Some(Scalar::Float(f64::from_bits(self.bits))),
            PACKED_BOOL => Some(Scalar::Bool(self.bits != 0)),
            _ => None,
        }
    }
}

#[inline(never)]
fn eval_packed(e: &Expr, cx: &EvalCx<'_>) -> Packed {
    Packed::pack(eval_scalar_in(e, cx))
}

#[inline(always)]
fn eval_scalar_in(e: &Expr, cx: &EvalCx<'_>) -> Option<Scalar> {
    Some(match e {
        Expr::Const(Constant::Int(i)) => Scalar::Int(*i),
        Expr::Const(Constant::Float(f)) => Scalar::Float(*f),
        Expr::Bool(b) => Scalar::Bool(*b),
        Expr::Local(s) => Scalar::of(&cx.locals[*s as usize])?,
        Expr::Param(p) => Scalar::of(&cx.params[*p as usize])?,
        Expr::Rank => Scalar::Int(i64::from(cx.rank)),
        Expr::Size => Scalar::Int(i64::from(cx.size)),
        Expr::Wtime => Scalar::Float(cx.clock),
        // Zero divisors and overflow give `None`, and `eval` reports them.
        Expr::Binary(op, a, b) => scalar_binary(*op, operand(a, cx)?, operand(b, cx)?)?,
        Expr::Unary(op, a) => match (op, operand(a, cx)?) {
            (UnOp::Neg, Scalar::Int(i)) => Scalar::Int(i.checked_neg()?),
            (UnOp::Neg, Scalar::Float(f)) => Scalar::Float(-f),
            (UnOp::Not, x) => Scalar::Bool(!x.truthy()),
            _ => return None,
        },
        Expr::And(a, b) => Scalar::Bool(operand(a, cx)?.truthy() && operand(b, cx)?.truthy()),
        Expr::Or(a, b) => Scalar::Bool(operand(a, cx)?.truthy() || operand(b, cx)?.truthy()),
        Expr::Index(..) => Scalar::of(place(e, cx)?)?,
        _ => return None,
    })
}

/// `eval_scalar` of an operand, with the leaves (constants, variables,
/// `rank`, `size`) inline: most operands are leaves, and a call returns
/// its `Option<Scalar>` through memory, which the caller then reads back
/// wider than it was written (a store-forwarding stall per call,
/// measured with `perf annotate` on a loop of integer arithmetic).
#[inline(always)]
fn operand(e: &Expr, cx: &EvalCx<'_>) -> Option<Scalar> {
    match e {
        Expr::Const(Constant::Int(i)) => Some(Scalar::Int(*i)),
        Expr::Const(Constant::Float(f)) => Some(Scalar::Float(*f)),
        // Invariant (ir.rs): slots are < num_locals, params index Program::params.
        Expr::Local(s) => Scalar::of(&cx.locals[*s as usize]),
        Expr::Param(p) => Scalar::of(&cx.params[*p as usize]),
        Expr::Rank => Some(Scalar::Int(i64::from(cx.rank))),
        Expr::Size => Some(Scalar::Int(i64::from(cx.size))),
        _ => eval_scalar(e, cx),
    }
}

/// The value an expression names without computing it: a local, a param,
/// or an element of one (`st[5]`, `stages[s][0]`), borrowed, so reading an
/// array element clones neither the array nor (for numbers) the element.
/// `None` for anything else and for every error (a non-array indexed, an
/// index that is not an in-bounds int), which `eval` then reports: the
/// same semantics as `eval`'s `Expr::Index`. Measured on the BT skeleton
/// (256 ranks, class B), whose sweeps read their cell tables this way.
#[inline]
fn place<'a>(e: &Expr, cx: &'a EvalCx<'_>) -> Option<&'a Value> {
    match e {
        // Invariant (ir.rs): slots are < num_locals, params index Program::params.
        Expr::Local(s) => Some(&cx.locals[*s as usize]),
        Expr::Param(p) => Some(&cx.params[*p as usize]),
        Expr::Index(a, i) => {
            let Value::Array(arr) = place(a, cx)? else {
                return None;
            };
            let Scalar::Int(k) = operand(i, cx)? else {
                return None;
            };
            arr.get(usize::try_from(k).ok()?)
        }
        _ => None,
    }
}

pub fn eval(e: &Expr, cx: &EvalCx<'_>) -> EvalResult {
    if let Some(s) = eval_scalar(e, cx) {
        return Ok(s.value());
    }
    eval_slow(e, cx)
}

fn eval_slow(e: &Expr, cx: &EvalCx<'_>) -> EvalResult {
    // The hot cases stay in this small function; the rest (arrays,
    // communicators, builtins, status fields) is out of line, which keeps
    // this frame small (measured: ~7% more events/s on heat.mpl).
    Ok(match e {
        Expr::Const(c) => Value::from(*c),
        Expr::Bool(b) => Value::Bool(*b),
        // Invariant (ir.rs): slots are < num_locals, params index Program::params.
        Expr::Local(s) => cx.locals[*s as usize].clone(),
        Expr::Param(p) => cx.params[*p as usize].clone(),
        Expr::Rank => Value::Int(i64::from(cx.rank)),
        Expr::Size => Value::Int(i64::from(cx.size)),
        Expr::Wtime => Value::Float(cx.clock),
        Expr::Binary(op, a, b) => binary(*op, eval(a, cx)?, eval(b, cx)?)?,
        Expr::And(a, b) => Value::Bool(eval(a, cx)?.truthy()? && eval(b, cx)?.truthy()?),
        Expr::Or(a, b) => Value::Bool(eval(a, cx)?.truthy()? || eval(b, cx)?.truthy()?),
        _ => return eval_rare(e, cx),
    })
}

#[inline(never)]
fn eval_rare(e: &Expr, cx: &EvalCx<'_>) -> EvalResult {
    Ok(match e {
        Expr::Null => Value::Null,
        Expr::Any => Value::Any,
        Expr::World => Value::Comm(0),
        Expr::RankIn(c) => {
            let c = comm_id(&eval(c, cx)?, "rank_in")?;
            match cx.comms.size_of(c) {
                None => return Err(format!("communicator #{c} does not exist")),
                Some(_) => Value::Int(cx.comms.rank_in(c, cx.rank).map_or(-1, i64::from)),
            }
        }
        Expr::SizeIn(c) => {
            let c = comm_id(&eval(c, cx)?, "size_in")?;
            match cx.comms.size_of(c) {
                None => return Err(format!("communicator #{c} does not exist")),
                Some(n) => Value::Int(i64::from(n)),
            }
        }
        Expr::Array(items) => {
            let mut v = Vec::with_capacity(items.len());
            for e in items {
                v.push(eval(e, cx)?);
            }
            Value::Array(Rc::new(v))
        }
        Expr::Index(..) if let Some(v) = place(e, cx) => v.clone(),
        Expr::Index(a, i) => match eval(a, cx)? {
            Value::Array(arr) => {
                let k = array_index(arr.len(), &eval(i, cx)?)?;
                arr[k].clone()
            }
            other => return Err(format!("cannot index {}", other.type_name())),
        },
        Expr::Unary(op, a) => unary(*op, eval(a, cx)?)?,
        Expr::Builtin(f, args) => {
            let mut small = [Value::Null, Value::Null, Value::Null, Value::Null];
            if args.len() <= small.len() {
                for (slot, a) in small.iter_mut().zip(args) {
                    *slot = eval(a, cx)?;
                }
                builtin(*f, &small[..args.len()])?
            } else {
                let vals = args
                    .iter()
                    .map(|a| eval(a, cx))
                    .collect::<Result<Vec<_>, _>>()?;
                builtin(*f, &vals)?
            }
        }
        Expr::Field(a, field) => {
            let v = eval(a, cx)?;
            let Some(s) = v.as_status() else {
                return Err(format!(
                    "`.{}` needs a status (from recv or wait), got {}",
                    field_name(*field),
                    v.type_name()
                ));
            };
            match field {
                StatusField::Source => Value::Int(i64::from(s.source)),
                StatusField::Tag => Value::Int(i64::from(s.tag)),
                StatusField::Bytes => Value::Int(i64::try_from(s.bytes).unwrap_or(i64::MAX)),
            }
        }
        // The hot cases, handled by `eval`.
        Expr::Const(_)
        | Expr::Bool(_)
        | Expr::Local(_)
        | Expr::Param(_)
        | Expr::Rank
        | Expr::Size
        | Expr::Wtime
        | Expr::Binary(..)
        | Expr::And(..)
        | Expr::Or(..) => return eval(e, cx),
    })
}

fn field_name(f: StatusField) -> &'static str {
    match f {
        StatusField::Source => "source",
        StatusField::Tag => "tag",
        StatusField::Bytes => "bytes",
    }
}

fn unary(op: UnOp, v: Value) -> EvalResult {
    match (op, v) {
        (UnOp::Neg, Value::Int(i)) => i
            .checked_neg()
            .map(Value::Int)
            .ok_or_else(|| "integer overflow in negation".to_owned()),
        (UnOp::Neg, Value::Float(f)) => Ok(Value::Float(-f)),
        (UnOp::Not, v) => Ok(Value::Bool(!v.truthy()?)),
        (UnOp::Neg, v) => Err(format!("cannot negate {}", v.type_name())),
    }
}

fn op_symbol(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mul => "*",
        BinOp::Div => "/",
        BinOp::Rem => "%",
        BinOp::Eq => "==",
        BinOp::Ne => "!=",
        BinOp::Lt => "<",
        BinOp::Le => "<=",
        BinOp::Gt => ">",
        BinOp::Ge => ">=",
    }
}

pub fn binary(op: BinOp, a: Value, b: Value) -> EvalResult {
    use BinOp::*;
    match (&a, &b) {
        // Numbers: `scalar_binary`'s arithmetic (C's truncating `/` and
        // `%` on integers, a float operand makes the result float); where
        // it has no answer for two numbers, the integer error to report.
        (Value::Int(_) | Value::Float(_), Value::Int(_) | Value::Float(_)) => {
            // Invariant: both are numbers, checked by the pattern.
            if let (Some(x), Some(y)) = (Scalar::of(&a), Scalar::of(&b))
                && let Some(v) = scalar_binary(op, x, y)
            {
                return Ok(v.value());
            }
            Err(match (op, &b) {
                (Div | Rem, Value::Int(0)) => {
                    format!("integer division by zero in {a} {} 0", op_symbol(op))
                }
                _ => format!("integer overflow in {a} {} {b}", op_symbol(op)),
            })
        }
        (a, b) if matches!(op, Eq | Ne) => {
            let same = match (a, b) {
                (Value::Null, Value::Null) | (Value::Any, Value::Any) => true,
                (Value::Bool(x), Value::Bool(y)) => x == y,
                (Value::Req(x), Value::Req(y)) => x == y,
                (Value::Status(x), Value::Status(y)) => x == y,
                (Value::BigStatus(x), Value::BigStatus(y)) => x == y,
                (Value::Comm(x), Value::Comm(y)) => x == y,
                (Value::Array(x), Value::Array(y)) => x == y,
                _ => false,
            };
            Ok(Value::Bool(if op == Eq { same } else { !same }))
        }
        (a, b) => Err(format!(
            "cannot apply `{}` to {} and {}",
            op_symbol(op),
            a.type_name(),
            b.type_name()
        )),
    }
}

fn number(f: Builtin, v: &Value) -> Result<f64, String> {
    v.as_f64()
        .ok_or_else(|| format!("`{}` needs numbers, got {}", f.name(), v.type_name()))
}

fn float_to_int(f: Builtin, x: f64) -> EvalResult {
    if x.is_finite() && x >= i64::MIN as f64 && x <= i64::MAX as f64 {
        Ok(Value::Int(x as i64))
    } else {
        Err(format!(
            "`{}` result {x} does not fit in an integer",
            f.name()
        ))
    }
}

pub fn builtin(f: Builtin, args: &[Value]) -> EvalResult {
    match f {
        Builtin::Min | Builtin::Max => {
            let Some((first, rest)) = args.split_first() else {
                return Err(format!("`{}` needs at least one argument", f.name()));
            };
            number(f, first)?;
            let mut best = first;
            let op = if f == Builtin::Min {
                BinOp::Lt
            } else {
                BinOp::Gt
            };
            for v in rest {
                number(f, v)?;
                if binary(op, v.clone(), best.clone())? == Value::Bool(true) {
                    best = v;
                }
            }
            // A float anywhere makes the result float.
            if args.iter().any(|v| matches!(v, Value::Float(_))) {
                Ok(Value::Float(number(f, best)?))
            } else {
                Ok(best.clone())
            }
        }
        Builtin::ArrayOf => match args {
            [Value::Int(n), v] if *n >= 0 && *n <= MAX_ARRAY_LEN => {
                Ok(Value::Array(Rc::new(vec![v.clone(); *n as usize])))
            }
            [n, _] => Err(format!(
                "`array(n, v)` needs 0 <= n <= {MAX_ARRAY_LEN}, got {n}"
            )),
            _ => Err(format!("`array` takes two arguments, got {}", args.len())),
        },
        _ => {
            let [v] = args else {
                return Err(format!(
                    "`{}` takes one argument, got {}",
                    f.name(),
                    args.len()
                ));
            };
            match (f, v) {
                (Builtin::Abs, Value::Int(i)) => i
                    .checked_abs()
                    .map(Value::Int)
                    .ok_or_else(|| "integer overflow in abs".to_owned()),
                (Builtin::Abs, v) => Ok(Value::Float(number(f, v)?.abs())),
                (Builtin::Floor | Builtin::Ceil, Value::Int(i)) => Ok(Value::Int(*i)),
                (Builtin::Floor, v) => float_to_int(f, number(f, v)?.floor()),
                (Builtin::Ceil, v) => float_to_int(f, number(f, v)?.ceil()),
                (Builtin::Sqrt, v) => Ok(Value::Float(number(f, v)?.sqrt())),
                (Builtin::Log2, v) => Ok(Value::Float(number(f, v)?.log2())),
                (Builtin::Len, Value::Array(a)) => Ok(Value::Int(a.len() as i64)),
                (Builtin::Sum, Value::Array(a)) => {
                    let mut acc = Value::Int(0);
                    for x in a.iter() {
                        number(f, x)?;
                        acc = binary(BinOp::Add, acc, x.clone())?;
                    }
                    Ok(acc)
                }
                (Builtin::Len | Builtin::Sum, other) => Err(format!(
                    "`{}` needs an array, got {}",
                    f.name(),
                    other.type_name()
                )),
                (Builtin::Min | Builtin::Max | Builtin::ArrayOf, _) => {
                    unreachable!("handled above")
                }
            }
        }
    }
}

/// The longest array `array(n, v)` makes (a guard against runaway memory:
/// 2^24 elements is 384 MiB of values).
pub const MAX_ARRAY_LEN: i64 = 1 << 24;

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast scalar evaluator agrees with the general one on random
    /// expressions: the same value, and `None` wherever `eval_slow` fails.
    #[test]
    fn scalar_fast_path_agrees_with_the_general_evaluator() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        fn random_expr(next: &mut dyn FnMut(u64) -> u64, depth: u32) -> Expr {
            let leaf = depth == 0 || next(3) == 0;
            if leaf {
                return match next(10) {
                    0 => Expr::Const(Constant::Int(next(7) as i64 - 3)),
                    1 => Expr::Const(Constant::Float((next(9) as f64 - 4.0) * 0.5)),
                    2 => Expr::Bool(next(2) == 0),
                    3 => Expr::Local(next(4) as u32),
                    4 => Expr::Rank,
                    5 => Expr::Size,
                    6 => Expr::Param(next(2) as u32),
                    7 => Expr::Const(Constant::Int(i64::MIN + next(2) as i64)),
                    // An element of the array in local 3 (in bounds or not).
                    8 => Expr::Index(
                        Box::new(Expr::Local(3)),
                        Box::new(Expr::Const(Constant::Int(next(5) as i64 - 1))),
                    ),
                    _ => Expr::Const(Constant::Int(i64::MAX - next(2) as i64)),
                };
            }
            if next(5) == 0 {
                let op = if next(2) == 0 { UnOp::Neg } else { UnOp::Not };
                return Expr::Unary(op, Box::new(random_expr(next, depth - 1)));
            }
            let ops = [
                BinOp::Add,
                BinOp::Sub,
                BinOp::Mul,
                BinOp::Div,
                BinOp::Rem,
                BinOp::Eq,
                BinOp::Ne,
                BinOp::Lt,
                BinOp::Le,
                BinOp::Gt,
                BinOp::Ge,
            ];
            let a = Box::new(random_expr(next, depth - 1));
            let b = Box::new(random_expr(next, depth - 1));
            match next(4) {
                0 => Expr::And(a, b),
                1 => Expr::Or(a, b),
                _ => Expr::Binary(ops[next(ops.len() as u64) as usize], a, b),
            }
        }
        let locals = [
            Value::Int(7),
            Value::Float(-2.5),
            Value::Null,
            Value::Array(Rc::new(vec![
                Value::Int(-4),
                Value::Float(0.5),
                Value::Bool(true),
            ])),
        ];
        let params = [Value::Int(12), Value::Float(1e-9)];
        let cx = EvalCx {
            locals: &locals,
            params: &params,
            rank: 3,
            size: 8,
            clock: 1.25,
            comms: &WorldOnly(8),
        };
        for _ in 0..20_000 {
            let e = random_expr(&mut next, 4);
            let slow = eval_slow(&e, &cx);
            // Without a fast result the general path decides (errors, null,
            // bool comparisons).
            if let Some(fast) = eval_scalar(&e, &cx) {
                match (fast.value(), &slow) {
                    (Value::Float(x), Ok(Value::Float(y))) if x.is_nan() => {
                        assert!(y.is_nan(), "{e:?}")
                    }
                    (v, _) => assert_eq!(Ok(v), slow, "{e:?}"),
                }
                // A condition and a store agree with the value's.
                let v = fast.value();
                assert_eq!(
                    cond_fast(&e, &cx),
                    Some(v.truthy().unwrap_or(false)),
                    "{e:?}"
                );
                for old in &locals {
                    let mut dst = old.clone();
                    fast.store(&mut dst);
                    match (&dst, &v) {
                        (Value::Float(x), Value::Float(y)) if x.is_nan() => assert!(y.is_nan()),
                        _ => assert_eq!(dst, v, "{e:?} stored over {old:?}"),
                    }
                }
            }
        }
    }

    #[test]
    fn c_division() {
        assert_eq!(
            binary(BinOp::Div, Value::Int(-7), Value::Int(2)),
            Ok(Value::Int(-3))
        );
        assert_eq!(
            binary(BinOp::Rem, Value::Int(-7), Value::Int(2)),
            Ok(Value::Int(-1))
        );
        assert_eq!(
            binary(BinOp::Div, Value::Int(7), Value::Float(2.0)),
            Ok(Value::Float(3.5))
        );
        assert!(binary(BinOp::Div, Value::Int(7), Value::Int(0)).is_err());
        assert!(binary(BinOp::Mul, Value::Int(i64::MAX), Value::Int(2)).is_err());
    }

    #[test]
    fn floats_print_without_rounding_noise() {
        assert_eq!(format_float(0.40239999999999154), "0.4024");
        assert_eq!(format_float(1.5), "1.5");
        assert_eq!(format_float(36.00520500000001), "36.005205");
        assert_eq!(format_float(1.0e-9), "0.000000001");
        assert_eq!(format_float(1.234567890123456e-7), "1.23456789012e-7");
        assert_eq!(format_float(3.0), "3");
    }

    #[test]
    fn builtins_keep_types() {
        assert_eq!(
            builtin(Builtin::Max, &[Value::Int(2), Value::Int(5)]),
            Ok(Value::Int(5))
        );
        assert_eq!(
            builtin(Builtin::Min, &[Value::Int(2), Value::Float(5.0)]),
            Ok(Value::Float(2.0))
        );
        assert_eq!(
            builtin(Builtin::Floor, &[Value::Float(-2.5)]),
            Ok(Value::Int(-3))
        );
        assert_eq!(
            builtin(Builtin::Ceil, &[Value::Float(2.1)]),
            Ok(Value::Int(3))
        );
        assert_eq!(
            builtin(Builtin::Log2, &[Value::Int(8)]),
            Ok(Value::Float(3.0))
        );
        assert_eq!(builtin(Builtin::Abs, &[Value::Int(-4)]), Ok(Value::Int(4)));
    }
}

#[cfg(test)]
mod size_tests {
    use super::*;

    /// The size the layout comment of [`Value`] is written for.
    #[test]
    fn value_is_16_bytes() {
        assert_eq!(std::mem::size_of::<Value>(), 16);
    }

    #[test]
    fn statuses_have_one_form() {
        let small = MsgStatus {
            source: 3,
            tag: -2,
            bytes: u64::from(u32::MAX),
        };
        let big = MsgStatus {
            source: 3,
            tag: -2,
            bytes: 1 << 32,
        };
        assert!(matches!(Value::status(small), Value::Status(_)));
        assert!(matches!(Value::status(big), Value::BigStatus(_)));
        assert_eq!(Value::status(small).as_status(), Some(small));
        assert_eq!(Value::status(big).as_status(), Some(big));
        assert_eq!(Value::status(big), Value::status(big));
        assert_ne!(Value::status(small), Value::status(big));
        assert_eq!(Value::Int(1).as_status(), None);
    }
}
