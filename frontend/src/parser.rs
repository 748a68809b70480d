//! The recursive-descent parser: tokens to [`ast::Module`].
//!
//! It never panics and never loops without consuming a token. After an
//! error it skips to the end of the statement (a newline or `;` outside
//! braces, or the `}` closing the current block) and goes on, so that one
//! run reports several errors. Nesting is bounded ([`MAX_NESTING`],
//! [`MAX_EXPR_NODES`]) so that later recursive passes cannot overflow the
//! stack.

use sim_core::ir::{BinOp, Span, StatusField, UnOp};

use crate::ast::{Arg, Block, Expr, ExprKind, Ident, Item, Module, Stmt, StmtKind};
use crate::diag::Diagnostic;
use crate::lexer::{Token, TokenKind};
use crate::span::join;

/// The deepest nesting of blocks and of parentheses (each counted apart).
pub const MAX_NESTING: usize = 64;
/// The most operators and calls in one expression.
pub const MAX_EXPR_NODES: usize = 256;
/// Parsing stops after this many errors.
const MAX_ERRORS: usize = 100;

/// The error was recorded; the caller should resynchronise.
struct Stop;

type PResult<T> = Result<T, Stop>;

pub fn parse(tokens: &[Token], errors: &mut Vec<Diagnostic>) -> Module {
    let eof = Token {
        kind: TokenKind::Eof,
        span: Span::default(),
    };
    let mut parser = Parser {
        toks: tokens,
        pos: 0,
        eof,
        errors,
        block_depth: 0,
        paren_depth: 0,
        expr_nodes: 0,
        prev_end: Span::default(),
        unclosed_reported: false,
    };
    parser.module()
}

struct Parser<'t, 'e> {
    toks: &'t [Token],
    pos: usize,
    /// Returned past the end of `toks` (which normally ends with `Eof`).
    eof: Token,
    errors: &'e mut Vec<Diagnostic>,
    block_depth: usize,
    paren_depth: usize,
    expr_nodes: usize,
    /// Span of the last consumed token.
    prev_end: Span,
    /// An unclosed block at the end of the file was reported.
    unclosed_reported: bool,
}

fn is_stmt_end(kind: &TokenKind) -> bool {
    matches!(
        kind,
        TokenKind::Newline | TokenKind::Semi | TokenKind::RBrace | TokenKind::Eof
    )
}

impl Parser<'_, '_> {
    // ---- token helpers -------------------------------------------------

    /// Index of the next token; newlines are skipped inside parentheses.
    fn next_index(&self, from: usize) -> usize {
        let mut i = from;
        if self.paren_depth > 0 {
            while self
                .toks
                .get(i)
                .is_some_and(|t| t.kind == TokenKind::Newline)
            {
                i += 1;
            }
        }
        i
    }

    fn tok(&self) -> &Token {
        self.toks
            .get(self.next_index(self.pos))
            .unwrap_or(&self.eof)
    }

    fn peek(&self) -> &TokenKind {
        &self.tok().kind
    }

    fn peek_nth(&self, n: usize) -> &TokenKind {
        let mut i = self.next_index(self.pos);
        for _ in 0..n {
            i = self.next_index(i + 1);
        }
        self.toks.get(i).map_or(&self.eof.kind, |t| &t.kind)
    }

    fn span(&self) -> Span {
        let t = self.tok();
        if t.kind == TokenKind::Eof && t.span == Span::default() {
            self.prev_end
        } else {
            t.span
        }
    }

    fn at(&self, kind: &TokenKind) -> bool {
        self.peek() == kind
    }

    fn bump(&mut self) -> Token {
        let t = self.tok().clone();
        let i = self.next_index(self.pos);
        if i < self.toks.len() {
            self.pos = i + 1;
        }
        self.prev_end = t.span;
        t
    }

    fn eat(&mut self, kind: &TokenKind) -> bool {
        if self.at(kind) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn skip_newlines(&mut self) {
        while self.at(&TokenKind::Newline) {
            self.bump();
        }
    }

    /// The span from `start` to the end of the last consumed token.
    fn since(&self, start: Span) -> Span {
        join(start, self.prev_end)
    }

    fn report(&mut self, d: Diagnostic) {
        if self.errors.len() < MAX_ERRORS {
            self.errors.push(d);
        }
    }

    fn expected(&mut self, what: &str) -> Stop {
        let mut found = self.peek().to_string();
        let mut span = self.span();
        // After a line break skipped as a continuation (`a +` at the end of
        // a line), the line break is what is wrong.
        if self.paren_depth == 0
            && let Some(prev) = self.pos.checked_sub(1).and_then(|i| self.toks.get(i))
            && prev.kind == TokenKind::Newline
            && !matches!(self.peek(), TokenKind::Error)
        {
            found = TokenKind::Newline.to_string();
            span = prev.span;
        }
        // Already reported by the lexer.
        if *self.peek() != TokenKind::Error {
            self.report(
                Diagnostic::new(format!("expected {what}, found {found}"), span)
                    .with_label(format!("expected {what}")),
            );
        }
        Stop
    }

    fn expect(&mut self, kind: &TokenKind, what: &str) -> PResult<Span> {
        if self.at(kind) {
            Ok(self.bump().span)
        } else {
            Err(self.expected(what))
        }
    }

    fn ident(&mut self, what: &str) -> PResult<Ident> {
        if let TokenKind::Ident(name) = self.peek() {
            let name = name.clone();
            let span = self.bump().span;
            Ok(Ident { name, span })
        } else {
            Err(self.expected(what))
        }
    }

    /// Skips to the end of the current statement: past a newline or `;`
    /// outside braces, or up to (not past) a `}` closing the current block.
    fn sync(&mut self) {
        // An error at the first token of a line: that line is the next
        // statement (e.g. after an unclosed `(` on the line before).
        if self.pos > 0
            && self
                .toks
                .get(self.pos - 1)
                .is_some_and(|t| t.kind == TokenKind::Newline)
        {
            return;
        }
        let mut depth = 0usize;
        loop {
            match self.peek() {
                TokenKind::Eof => return,
                TokenKind::Newline | TokenKind::Semi if depth == 0 => {
                    self.bump();
                    return;
                }
                TokenKind::LBrace => depth += 1,
                TokenKind::RBrace => {
                    if depth == 0 {
                        return;
                    }
                    depth -= 1;
                }
                _ => {}
            }
            self.bump();
        }
    }

    /// After a statement: a newline, `;`, `}` or the end of the file.
    fn stmt_end(&mut self) -> PResult<()> {
        if is_stmt_end(self.peek()) {
            Ok(())
        } else {
            Err(self.expected("a newline or `;` after the statement"))
        }
    }

    // ---- items and statements -----------------------------------------

    fn module(&mut self) -> Module {
        let mut items = Vec::new();
        loop {
            while matches!(self.peek(), TokenKind::Newline | TokenKind::Semi) {
                self.bump();
            }
            if self.at(&TokenKind::Eof) || self.errors.len() >= MAX_ERRORS {
                break;
            }
            let before = self.pos;
            if self.at(&TokenKind::RBrace) {
                let span = self.bump().span;
                self.report(
                    Diagnostic::new("unexpected `}`", span).with_label("no block to close here"),
                );
                continue;
            }
            let item = match self.peek() {
                TokenKind::Param => self.param_decl(),
                TokenKind::Kernel => self.kernel_decl(),
                TokenKind::Fn => self.fn_decl(),
                _ => self.stmt().map(Item::Stmt),
            };
            match item.and_then(|item| self.stmt_end().map(|()| item)) {
                Ok(item) => items.push(item),
                Err(Stop) => self.sync(),
            }
            if self.pos == before {
                self.bump();
            }
        }
        Module { items }
    }

    fn param_decl(&mut self) -> PResult<Item> {
        let start = self.bump().span;
        let name = self.ident("a param name")?;
        self.expect(&TokenKind::Assign, "`=` and the param's default value")?;
        let value = self.expr()?;
        Ok(Item::Param {
            name,
            value,
            span: self.since(start),
        })
    }

    fn name_list(&mut self, what: &str) -> PResult<Vec<Ident>> {
        self.expect(&TokenKind::LParen, "`(` and the parameter list")?;
        let mut names = Vec::new();
        while !self.at(&TokenKind::RParen) {
            names.push(self.ident(what)?);
            if !self.eat(&TokenKind::Comma) {
                break;
            }
        }
        self.expect(&TokenKind::RParen, "`,` or `)` in the parameter list")?;
        Ok(names)
    }

    fn kernel_decl(&mut self) -> PResult<Item> {
        let start = self.bump().span;
        let name = self.ident("a kernel name")?;
        let params = self.name_list("a parameter name")?;
        let cost = match self.peek() {
            TokenKind::Ident(w) if w == "cost" => {
                self.bump();
                Some(self.expr()?)
            }
            k if is_stmt_end(k) => None,
            _ => return Err(self.expected("`cost` or the end of the declaration")),
        };
        Ok(Item::Kernel {
            name,
            params,
            cost,
            span: self.since(start),
        })
    }

    fn fn_decl(&mut self) -> PResult<Item> {
        let start = self.bump().span;
        let name = self.ident("a function name")?;
        let params = self.name_list("a parameter name")?;
        let head = self.since(start);
        let body = self.block()?;
        Ok(Item::Fn {
            name,
            params,
            body,
            span: head,
        })
    }

    fn block(&mut self) -> PResult<Block> {
        let open = self.expect(&TokenKind::LBrace, "`{`")?;
        if self.block_depth >= MAX_NESTING {
            self.report(
                Diagnostic::new("blocks are nested too deeply", open)
                    .with_label(format!("more than {MAX_NESTING} levels")),
            );
            // Skip to the matching `}`.
            let mut depth = 1usize;
            while depth > 0 && !self.at(&TokenKind::Eof) {
                match self.bump().kind {
                    TokenKind::LBrace => depth += 1,
                    TokenKind::RBrace => depth -= 1,
                    _ => {}
                }
            }
            return Err(Stop);
        }
        self.block_depth += 1;
        let mut stmts = Vec::new();
        loop {
            while matches!(self.peek(), TokenKind::Newline | TokenKind::Semi) {
                self.bump();
            }
            if self.eat(&TokenKind::RBrace) {
                break;
            }
            if self.at(&TokenKind::Eof) || self.errors.len() >= MAX_ERRORS {
                if std::mem::replace(&mut self.unclosed_reported, true) {
                    // Only the innermost unclosed block is worth reporting.
                    break;
                }
                let span = self.span();
                self.report(
                    Diagnostic::new("expected `}`, found end of file", span)
                        .with_label("expected `}`")
                        .with_secondary(open, "this block is never closed"),
                );
                break;
            }
            let before = self.pos;
            match self.stmt().and_then(|s| self.stmt_end().map(|()| s)) {
                Ok(s) => stmts.push(s),
                Err(Stop) => self.sync(),
            }
            if self.pos == before {
                self.bump();
            }
        }
        self.block_depth -= 1;
        Ok(Block { stmts })
    }

    fn stmt(&mut self) -> PResult<Stmt> {
        let start = self.span();
        let kind = match self.peek().clone() {
            TokenKind::Param | TokenKind::Kernel | TokenKind::Fn => {
                let what = self.peek().to_string();
                self.report(
                    Diagnostic::new(
                        format!("{what} declarations are only allowed at the top level"),
                        start,
                    )
                    .with_label("inside a block"),
                );
                // Parse it anyway to skip it cleanly.
                let _ = match self.peek() {
                    TokenKind::Param => self.param_decl(),
                    TokenKind::Kernel => self.kernel_decl(),
                    _ => self.fn_decl(),
                }?;
                StmtKind::Misplaced
            }
            TokenKind::Let => {
                self.bump();
                let name = self.ident("a variable name after `let`")?;
                self.expect(&TokenKind::Assign, "`=` after the variable name")?;
                let value = self.expr()?;
                StmtKind::Let { name, value }
            }
            TokenKind::Ident(_) if self.assign_op(self.peek_nth(1)).is_some() => {
                let name = self.ident("a variable name")?;
                let op = self.assign_op(self.peek()).flatten();
                self.bump();
                let value = self.expr()?;
                StmtKind::Assign { name, op, value }
            }
            TokenKind::If => return self.if_stmt(),
            TokenKind::For => {
                self.bump();
                let var = self.ident("a loop variable after `for`")?;
                self.expect(&TokenKind::In, "`in` after the loop variable")?;
                let start_e = self.expr()?;
                self.expect(&TokenKind::DotDot, "`..` between the loop bounds")?;
                let end = self.expr()?;
                let step = match self.peek() {
                    TokenKind::Ident(w) if w == "step" => {
                        self.bump();
                        Some(self.expr()?)
                    }
                    _ => None,
                };
                if !self.at(&TokenKind::LBrace) {
                    return Err(self.expected("`step` or `{` after the loop bounds"));
                }
                let body = self.block()?;
                StmtKind::For {
                    var,
                    start: start_e,
                    end,
                    step,
                    body,
                }
            }
            TokenKind::While => {
                self.bump();
                let cond = self.expr()?;
                let body = self.block()?;
                StmtKind::While { cond, body }
            }
            TokenKind::Break => {
                self.bump();
                StmtKind::Break
            }
            TokenKind::Continue => {
                self.bump();
                StmtKind::Continue
            }
            TokenKind::Return => {
                self.bump();
                if is_stmt_end(self.peek()) {
                    StmtKind::Return(None)
                } else {
                    StmtKind::Return(Some(self.expr()?))
                }
            }
            TokenKind::Compute => {
                self.bump();
                let kernel = self.ident("a kernel name after `compute`")?;
                if !self.at(&TokenKind::LParen) {
                    return Err(self.expected("`(` and the kernel's arguments"));
                }
                let args = self.args()?;
                StmtKind::Compute { kernel, args }
            }
            _ => {
                let e = self.expr()?;
                match self.assign_op(self.peek()) {
                    Some(op) => self.assign_index(e, op)?,
                    None => StmtKind::Expr(e),
                }
            }
        };
        Ok(Stmt {
            kind,
            span: self.since(start),
        })
    }

    /// `target op= value` at the assignment operator, where `target` is
    /// not a plain name: it must be an element `a[i]` (or `a[i][j]`, ...).
    fn assign_index(&mut self, target: Expr, op: Option<BinOp>) -> PResult<StmtKind> {
        let Some((name, indices)) = index_target(&target) else {
            self.report(
                Diagnostic::new("cannot assign to this expression", target.span)
                    .with_label("not a variable or an array element")
                    .with_note("help: assign a variable (`x = e`) or an element of an array variable (`a[i] = e`)"),
            );
            return Err(Stop);
        };
        self.bump();
        let value = self.expr()?;
        Ok(StmtKind::AssignIndex {
            name,
            indices,
            op,
            value,
        })
    }

    /// `Some(op)` if `kind` is an assignment operator (`Some(None)` for `=`).
    fn assign_op(&self, kind: &TokenKind) -> Option<Option<BinOp>> {
        Some(match kind {
            TokenKind::Assign => None,
            TokenKind::PlusAssign => Some(BinOp::Add),
            TokenKind::MinusAssign => Some(BinOp::Sub),
            TokenKind::StarAssign => Some(BinOp::Mul),
            TokenKind::SlashAssign => Some(BinOp::Div),
            _ => return None,
        })
    }

    fn if_stmt(&mut self) -> PResult<Stmt> {
        let start = self.bump().span;
        let cond = self.expr()?;
        let then_ = self.block()?;
        // `else` may follow on the next line.
        let mut n = 0;
        while self.peek_nth(n) == &TokenKind::Newline {
            n += 1;
        }
        let else_ = if self.peek_nth(n) == &TokenKind::Else {
            self.skip_newlines();
            self.bump();
            if self.at(&TokenKind::If) {
                let nested = self.if_stmt()?;
                Some(Block {
                    stmts: vec![nested],
                })
            } else if self.at(&TokenKind::LBrace) {
                Some(self.block()?)
            } else {
                return Err(self.expected("`{` or `if` after `else`"));
            }
        } else {
            None
        };
        Ok(Stmt {
            kind: StmtKind::If { cond, then_, else_ },
            span: self.since(start),
        })
    }

    // ---- expressions ---------------------------------------------------

    fn expr(&mut self) -> PResult<Expr> {
        let outermost = self.paren_depth == 0;
        if outermost {
            self.expr_nodes = 0;
        }
        self.or_expr()
    }

    fn node(&mut self, span: Span) -> PResult<()> {
        self.expr_nodes += 1;
        if self.expr_nodes == MAX_EXPR_NODES + 1 {
            self.report(
                Diagnostic::new("expression is too long", span)
                    .with_label(format!("more than {MAX_EXPR_NODES} operators and calls")),
            );
        }
        if self.expr_nodes > MAX_EXPR_NODES {
            Err(Stop)
        } else {
            Ok(())
        }
    }

    fn binary(&mut self, op: BinOp, l: Expr, r: Expr) -> PResult<Expr> {
        let span = join(l.span, r.span);
        self.node(span)?;
        Ok(Expr {
            kind: ExprKind::Binary(op, Box::new(l), Box::new(r)),
            span,
        })
    }

    fn or_expr(&mut self) -> PResult<Expr> {
        let mut l = self.and_expr()?;
        while self.eat(&TokenKind::OrOr) {
            self.skip_newlines();
            let r = self.and_expr()?;
            let span = join(l.span, r.span);
            self.node(span)?;
            l = Expr {
                kind: ExprKind::Or(Box::new(l), Box::new(r)),
                span,
            };
        }
        Ok(l)
    }

    fn and_expr(&mut self) -> PResult<Expr> {
        let mut l = self.cmp_expr()?;
        while self.eat(&TokenKind::AndAnd) {
            self.skip_newlines();
            let r = self.cmp_expr()?;
            let span = join(l.span, r.span);
            self.node(span)?;
            l = Expr {
                kind: ExprKind::And(Box::new(l), Box::new(r)),
                span,
            };
        }
        Ok(l)
    }

    fn cmp_op(&self) -> Option<BinOp> {
        Some(match self.peek() {
            TokenKind::EqEq => BinOp::Eq,
            TokenKind::NotEq => BinOp::Ne,
            TokenKind::Lt => BinOp::Lt,
            TokenKind::Le => BinOp::Le,
            TokenKind::Gt => BinOp::Gt,
            TokenKind::Ge => BinOp::Ge,
            _ => return None,
        })
    }

    fn cmp_expr(&mut self) -> PResult<Expr> {
        let l = self.add_expr()?;
        let Some(op) = self.cmp_op() else {
            return Ok(l);
        };
        self.bump();
        self.skip_newlines();
        let r = self.add_expr()?;
        let e = self.binary(op, l, r)?;
        if self.cmp_op().is_some() {
            let span = self.span();
            self.report(
                Diagnostic::new("comparison operators cannot be chained", span)
                    .with_label("second comparison")
                    .with_secondary(e.span, "first comparison")
                    .with_note("help: use `&&`, e.g. `a < b && b < c`, or parentheses"),
            );
            return Err(Stop);
        }
        Ok(e)
    }

    fn add_expr(&mut self) -> PResult<Expr> {
        let mut l = self.mul_expr()?;
        loop {
            let op = match self.peek() {
                TokenKind::Plus => BinOp::Add,
                TokenKind::Minus => BinOp::Sub,
                _ => return Ok(l),
            };
            self.bump();
            self.skip_newlines();
            let r = self.mul_expr()?;
            l = self.binary(op, l, r)?;
        }
    }

    fn mul_expr(&mut self) -> PResult<Expr> {
        let mut l = self.unary_expr()?;
        loop {
            let op = match self.peek() {
                TokenKind::Star => BinOp::Mul,
                TokenKind::Slash => BinOp::Div,
                TokenKind::Percent => BinOp::Rem,
                _ => return Ok(l),
            };
            self.bump();
            self.skip_newlines();
            let r = self.unary_expr()?;
            l = self.binary(op, l, r)?;
        }
    }

    fn unary_expr(&mut self) -> PResult<Expr> {
        let op = match self.peek() {
            TokenKind::Minus => UnOp::Neg,
            TokenKind::Bang => UnOp::Not,
            _ => return self.postfix_expr(),
        };
        let start = self.bump().span;
        self.node(start)?;
        let operand = self.unary_expr()?;
        Ok(Expr {
            span: join(start, operand.span),
            kind: ExprKind::Unary(op, Box::new(operand)),
        })
    }

    fn postfix_expr(&mut self) -> PResult<Expr> {
        let mut e = self.primary()?;
        loop {
            match self.peek() {
                TokenKind::Dot => e = self.field(e)?,
                TokenKind::LBracket => {
                    self.bump();
                    self.enter_paren()?;
                    let index = self.or_expr();
                    self.paren_depth -= 1;
                    let index = index?;
                    self.expect(&TokenKind::RBracket, "`]` after the index")?;
                    let span = self.since(e.span);
                    self.node(span)?;
                    e = Expr {
                        kind: ExprKind::Index(Box::new(e), Box::new(index)),
                        span,
                    };
                }
                _ => break,
            }
        }
        if self.at(&TokenKind::LParen) {
            let span = self.span();
            self.report(
                Diagnostic::new("only functions can be called by name", span)
                    .with_label("unexpected `(`")
                    .with_secondary(e.span, "this is not a function name"),
            );
            return Err(Stop);
        }
        Ok(e)
    }

    /// `e.source`, `e.tag`, `e.bytes`, at the `.`.
    fn field(&mut self, e: Expr) -> PResult<Expr> {
        self.bump();
        let field = match self.peek() {
            TokenKind::Ident(w) if w == "source" => StatusField::Source,
            TokenKind::Ident(w) if w == "tag" => StatusField::Tag,
            TokenKind::Ident(w) if w == "bytes" => StatusField::Bytes,
            TokenKind::Ident(w) => {
                let w = w.clone();
                let span = self.span();
                self.report(
                    Diagnostic::new(format!("unknown status field `{w}`"), span)
                        .with_label("expected `source`, `tag` or `bytes`"),
                );
                return Err(Stop);
            }
            _ => return Err(self.expected("a status field (`source`, `tag` or `bytes`)")),
        };
        self.bump();
        let span = self.since(e.span);
        self.node(span)?;
        Ok(Expr {
            kind: ExprKind::Field(Box::new(e), field),
            span,
        })
    }

    fn enter_paren(&mut self) -> PResult<()> {
        if self.paren_depth >= MAX_NESTING {
            let span = self.span();
            self.report(
                Diagnostic::new("expression is nested too deeply", span)
                    .with_label(format!("more than {MAX_NESTING} levels of parentheses")),
            );
            return Err(Stop);
        }
        self.paren_depth += 1;
        Ok(())
    }

    fn primary(&mut self) -> PResult<Expr> {
        let span = self.span();
        let kind = match self.peek().clone() {
            TokenKind::Int(v) => ExprKind::Int(v),
            TokenKind::Float(v) => ExprKind::Float(v),
            TokenKind::Str(s) => ExprKind::Str(s),
            TokenKind::True => ExprKind::Bool(true),
            TokenKind::False => ExprKind::Bool(false),
            TokenKind::Null => ExprKind::Null,
            TokenKind::Any => ExprKind::Any,
            TokenKind::Rank => ExprKind::Rank,
            TokenKind::Size => ExprKind::Size,
            TokenKind::World => ExprKind::World,
            TokenKind::LBracket => {
                self.node(span)?;
                self.bump();
                self.enter_paren()?;
                let items = self.array_items();
                self.paren_depth -= 1;
                return Ok(Expr {
                    kind: ExprKind::Array(items?),
                    span: self.since(span),
                });
            }
            TokenKind::Ident(name) => {
                self.bump();
                if self.at(&TokenKind::LParen) {
                    let ident = Ident { name, span };
                    self.node(span)?;
                    let args = self.args()?;
                    return Ok(Expr {
                        kind: ExprKind::Call { name: ident, args },
                        span: self.since(span),
                    });
                }
                return Ok(Expr {
                    kind: ExprKind::Name(name),
                    span,
                });
            }
            TokenKind::LParen => {
                self.bump();
                self.enter_paren()?;
                let inner = self.or_expr();
                self.paren_depth -= 1;
                let inner = inner?;
                self.expect(&TokenKind::RParen, "`)`")?;
                return Ok(Expr {
                    kind: inner.kind,
                    span: self.since(span),
                });
            }
            _ => return Err(self.expected("an expression")),
        };
        self.bump();
        Ok(Expr { kind, span })
    }

    /// `( [arg {, arg} [,]] )` where `arg` is `name: expr` or `expr`.
    fn args(&mut self) -> PResult<Vec<Arg>> {
        self.bump(); // `(`
        self.enter_paren()?;
        let result = self.args_inner();
        self.paren_depth -= 1;
        result
    }

    fn args_inner(&mut self) -> PResult<Vec<Arg>> {
        let mut args = Vec::new();
        while !self.at(&TokenKind::RParen) {
            let start = self.span();
            let label = match (self.peek(), self.peek_nth(1)) {
                (TokenKind::Ident(_), TokenKind::Colon) => {
                    let label = self.ident("an argument name")?;
                    self.bump(); // `:`
                    Some(label)
                }
                _ => None,
            };
            let value = self.or_expr()?;
            args.push(Arg {
                label,
                value,
                span: self.since(start),
            });
            if !self.eat(&TokenKind::Comma) {
                break;
            }
        }
        self.expect(&TokenKind::RParen, "`,` or `)` after the argument")?;
        Ok(args)
    }

    /// The elements of an array literal, after the `[`, up to and with the `]`.
    fn array_items(&mut self) -> PResult<Vec<Expr>> {
        let mut items = Vec::new();
        while !self.at(&TokenKind::RBracket) {
            items.push(self.or_expr()?);
            if !self.eat(&TokenKind::Comma) {
                break;
            }
        }
        self.expect(&TokenKind::RBracket, "`,` or `]` after the array element")?;
        Ok(items)
    }
}

/// `a[i][j]` as an assignment target: the variable and the indices, outermost
/// first; `None` for anything else.
fn index_target(e: &Expr) -> Option<(Ident, Vec<Expr>)> {
    let mut indices = Vec::new();
    let mut cur = e;
    loop {
        match &cur.kind {
            ExprKind::Index(base, index) => {
                indices.push((**index).clone());
                cur = base;
            }
            ExprKind::Name(name) if !indices.is_empty() => {
                indices.reverse();
                let name = Ident {
                    name: name.clone(),
                    span: cur.span,
                };
                return Some((name, indices));
            }
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexer::lex;
    use crate::span::LineIndex;

    fn parse_src(src: &str) -> (Module, Vec<Diagnostic>) {
        let index = LineIndex::new(src);
        let mut errors = Vec::new();
        let toks = lex(src, &index, &mut errors);
        let m = parse(&toks, &mut errors);
        (m, errors)
    }

    /// Fully parenthesised rendering of an expression.
    fn show(e: &Expr) -> String {
        match &e.kind {
            ExprKind::Int(v) => v.to_string(),
            ExprKind::Float(v) => format!("{v:?}"),
            ExprKind::Str(s) => format!("{s:?}"),
            ExprKind::Bool(b) => b.to_string(),
            ExprKind::Null => "null".into(),
            ExprKind::Any => "any".into(),
            ExprKind::Rank => "rank".into(),
            ExprKind::Size => "size".into(),
            ExprKind::World => "world".into(),
            ExprKind::Name(n) => n.clone(),
            ExprKind::Array(items) => {
                let items: Vec<String> = items.iter().map(show).collect();
                format!("[{}]", items.join(", "))
            }
            ExprKind::Index(a, i) => format!("{}[{}]", show(a), show(i)),
            ExprKind::Unary(op, x) => {
                format!("({}{})", if *op == UnOp::Neg { "-" } else { "!" }, show(x))
            }
            ExprKind::Binary(op, l, r) => format!("({} {op:?} {})", show(l), show(r)),
            ExprKind::And(l, r) => format!("({} && {})", show(l), show(r)),
            ExprKind::Or(l, r) => format!("({} || {})", show(l), show(r)),
            ExprKind::Call { name, args } => {
                let args: Vec<String> = args
                    .iter()
                    .map(|a| match &a.label {
                        Some(l) => format!("{}: {}", l.name, show(&a.value)),
                        None => show(&a.value),
                    })
                    .collect();
                format!("{}({})", name.name, args.join(", "))
            }
            ExprKind::Field(x, f) => format!("{}.{f:?}", show(x)),
        }
    }

    fn expr(src: &str) -> String {
        let (m, errors) = parse_src(src);
        assert!(errors.is_empty(), "{errors:?}");
        match &m.items[..] {
            [
                Item::Stmt(Stmt {
                    kind: StmtKind::Expr(e),
                    ..
                }),
            ] => show(e),
            other => panic!("not one expression: {other:?}"),
        }
    }

    #[test]
    fn precedence() {
        assert_eq!(expr("f(1 + 2 * 3)"), "f((1 Add (2 Mul 3)))");
        assert_eq!(expr("f(1 - 2 - 3)"), "f(((1 Sub 2) Sub 3))");
        assert_eq!(expr("f(a / b % c * d)"), "f((((a Div b) Rem c) Mul d))");
        assert_eq!(expr("f(-a * b)"), "f(((-a) Mul b))");
        assert_eq!(expr("f(!a && b || c && d)"), "f((((!a) && b) || (c && d)))");
    }

    #[test]
    fn precedence_comparisons() {
        assert_eq!(expr("f(a + 1 < b * 2)"), "f(((a Add 1) Lt (b Mul 2)))");
        assert_eq!(expr("f(a < b && b <= c)"), "f(((a Lt b) && (b Le c)))");
        assert_eq!(expr("f((a < b) == c)"), "f(((a Lt b) Eq c))");
        assert_eq!(expr("f(- - a)"), "f((-(-a)))");
        assert_eq!(
            expr("f(recv(from: any, bytes: 8).source + 1)"),
            "f((recv(from: any, bytes: 8).Source Add 1))"
        );
        assert_eq!(expr("f(a,\n b)"), "f(a, b)");
        assert_eq!(expr("f(a +\n b)"), "f((a Add b))");
        assert_eq!(expr("f((1 + 2) * 3)"), "f(((1 Add 2) Mul 3))");
    }

    #[test]
    fn arrays_and_indexing() {
        assert_eq!(expr("f([])"), "f([])");
        assert_eq!(expr("f([1, a + 2,])"), "f([1, (a Add 2)])");
        assert_eq!(expr("f(-a[i + 1] * 2)"), "f(((-a[(i Add 1)]) Mul 2))");
        assert_eq!(expr("f(a[0][1].source)"), "f(a[0][1].Source)");
        assert_eq!(
            expr("f(g(x)[0], [[1], [2]][1][0])"),
            "f(g(x)[0], [[1], [2]][1][0])"
        );
        assert_eq!(expr("f([1,\n 2][0], world)"), "f([1, 2][0], world)");
        let (m, errors) = parse_src("a[i] += 1\na[0][j] = [2]\n(a)[0] = 3\n");
        assert!(errors.is_empty(), "{errors:?}");
        let shapes: Vec<(String, usize, bool)> = m
            .items
            .iter()
            .map(|item| match item {
                Item::Stmt(Stmt {
                    kind:
                        StmtKind::AssignIndex {
                            name, indices, op, ..
                        },
                    ..
                }) => (name.name.clone(), indices.len(), op.is_some()),
                other => panic!("not an element assignment: {other:?}"),
            })
            .collect();
        assert_eq!(
            shapes,
            [
                ("a".to_string(), 1, true),
                ("a".to_string(), 2, false),
                ("a".to_string(), 1, false)
            ]
        );
        for bad in [
            "f(x)[0] = 1",
            "s.tag = 1",
            "a[0 = 1",
            "let x = [1, 2",
            "a[] = 1",
        ] {
            let (_, errors) = parse_src(bad);
            assert_eq!(errors.len(), 1, "{bad}: {errors:?}");
        }
    }

    #[test]
    fn chained_comparison_is_an_error() {
        let (_, errors) = parse_src("let x = a < b < c\nlet y = 1");
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].message, "comparison operators cannot be chained");
    }

    #[test]
    fn recovers_at_statement_boundaries() {
        let (m, errors) = parse_src("let = 1\nlet y = (2\nlet z = 3\nif x { let = } \nlet w = 4");
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert_eq!(m.items.len(), 3);
    }

    #[test]
    fn deep_nesting_is_bounded() {
        let src = format!("let x = {}1{}", "(".repeat(10_000), ")".repeat(10_000));
        let (_, errors) = parse_src(&src);
        assert!(!errors.is_empty());
        let src = format!("let x = 1{}", " + 1".repeat(10_000));
        let (_, errors) = parse_src(&src);
        assert_eq!(errors.len(), 1);
        let src = format!("{}{}", "if x {".repeat(10_000), "}".repeat(10_000));
        let (_, errors) = parse_src(&src);
        assert!(!errors.is_empty());
        let src = "-".repeat(100_000);
        let (_, errors) = parse_src(&src);
        assert!(!errors.is_empty());
    }
}
