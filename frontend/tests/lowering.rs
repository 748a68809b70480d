//! What the lowering produces: hoisting order, short-circuits, loops,
//! scoping, defaults; and `--param` overrides.

use frontend::{OverrideError, apply_param_overrides, compile};
use sim_core::dot::{expr_to_string, stmt_to_string};
use sim_core::ir::{
    CollKind, CommOp, Constant, Expr, Function, Program, ReduceOp, SendMode, Stmt, Terminator,
};

mod common;

fn ok(src: &str) -> Program {
    match compile("t.mpl", src) {
        Ok(p) => {
            common::check_invariants(&p);
            p
        }
        Err(d) => panic!("{}", d.render("t.mpl", src)),
    }
}

fn err(src: &str) -> Vec<String> {
    match compile("t.mpl", src) {
        Ok(_) => panic!("expected errors for {src:?}"),
        Err(d) => d.iter().map(|d| d.message.clone()).collect(),
    }
}

fn func<'p>(p: &'p Program, name: &str) -> &'p Function {
    p.functions
        .iter()
        .find(|f| f.name == name)
        .expect("function exists")
}

/// Every statement and terminator of `f`, in block order, as text.
fn listing(p: &Program, f: &Function) -> Vec<String> {
    let mut out = Vec::new();
    for b in f.cfg.node_indices() {
        let block = &f.cfg[b];
        out.extend(block.stmts.iter().map(|s| stmt_to_string(s, p, f)));
        match &block.term {
            Terminator::Goto(t) => out.push(format!("goto bb{}", t.index())),
            Terminator::Branch {
                cond, then_, else_, ..
            } => out.push(format!(
                "if {} bb{} bb{}",
                expr_to_string(cond, p, f),
                then_.index(),
                else_.index()
            )),
            Terminator::Return { value: v, .. } => out.push(match v {
                Some(v) => format!("return {}", expr_to_string(v, p, f)),
                None => "return".to_string(),
            }),
        }
    }
    out
}

fn main_listing(src: &str) -> Vec<String> {
    let p = ok(src);
    let f = func(&p, "main");
    listing(&p, f)
}

#[test]
fn calls_are_hoisted_left_to_right() {
    let p =
        ok("fn fib(n) {\n if n < 2 { return n }\n let x = fib(n - 1) + fib(n - 2)\n return x\n}\n");
    let l = listing(&p, func(&p, "fib"));
    assert_eq!(
        l,
        [
            "if n < 2 bb1 bb2",
            "return n",
            "%1 = fib(n - 1)",
            "%2 = fib(n - 2)",
            "x = %1 + %2",
            "return x",
        ]
    );
}

#[test]
fn clock_is_read_before_a_later_call() {
    let l = main_listing("fn f() { return 1 }\nlet t = wtime() - f()\n");
    assert_eq!(l, ["%1 = wtime()", "%2 = f()", "t = %1 - %2", "return"]);
    // Nothing to save when the call comes first.
    let l = main_listing("fn f() { return 1 }\nlet t = f() - wtime()\n");
    assert_eq!(l, ["%1 = f()", "t = %1 - wtime()", "return"]);
}

#[test]
fn variables_nulled_by_wait_are_read_first() {
    let l = main_listing("let r = isend(to: 1, bytes: 8)\nprint(r, wait(r).bytes)\n");
    assert_eq!(
        l,
        [
            "r = isend(to: 1, bytes: 8, tag: 0)",
            "%1 = r",
            "%2 = wait(r)",
            "print(%1, %2.bytes)",
            "return"
        ]
    );
}

#[test]
fn short_circuit_with_a_call_branches() {
    let l = main_listing("fn f(x) { return x }\nif rank > 0 && f(rank) { print(1) }\n");
    assert_eq!(
        l,
        [
            "%1 = false",
            "if rank > 0 bb1 bb2",
            "%2 = f(rank)",
            "%1 = true && %2",
            "goto bb2",
            "if %1 bb3 bb4",
            "print(1)",
            "goto bb4",
            "return"
        ]
    );
    let l = main_listing("fn f(x) { return x }\nlet y = rank == 0 || f(rank)\n");
    assert_eq!(
        l,
        [
            "%1 = true",
            "if rank == 0 bb2 bb1",
            "%2 = f(rank)",
            "%1 = false || %2",
            "goto bb2",
            "y = %1",
            "return"
        ]
    );
    // Pure operands stay an expression.
    let l = main_listing("let y = rank == 0 || size > 2\n");
    assert_eq!(l, ["y = rank == 0 || size > 2", "return"]);
}

#[test]
fn for_loops() {
    let l = main_listing("param n = 4\nfor i in 0 .. n { print(i) }\n");
    assert_eq!(
        l,
        [
            "i = 0",
            "goto bb1",
            "if i < n bb2 bb4",
            "print(i)",
            "goto bb3",
            "i = i + 1",
            "goto bb1",
            "return"
        ]
    );
    // Bounds and step that may change are evaluated once, in order.
    let l = main_listing("let a = 1\nlet b = 9\nlet s = 2\nfor i in a .. b step s { b = 0 }\n");
    assert_eq!(
        l,
        [
            "a = 1",
            "b = 9",
            "s = 2",
            "i.end = b",
            "i.step = s",
            "i = a",
            "goto bb1",
            "if i.step > 0 && i < i.end || i.step < 0 && i > i.end bb2 bb4",
            "b = 0",
            "goto bb3",
            "i = i + i.step",
            "goto bb1",
            "return"
        ]
    );
    let l = main_listing("for i in 10 .. 0 step -2 { }\n");
    assert_eq!(l[2], "if i > 0 bb2 bb4");
    assert_eq!(l[4], "i = i + -2");
}

#[test]
fn break_and_continue() {
    let l = main_listing("let i = 0\nwhile true {\n i += 1\n if i > 5 { break }\n continue\n}\n");
    assert_eq!(
        l,
        [
            "i = 0",
            "goto bb1",
            "if true bb2 bb3",
            "i = i + 1",
            "if i > 5 bb4 bb5",
            "return",
            "goto bb3",
            "goto bb1",
        ]
    );
}

#[test]
fn scoping_and_shadowing() {
    let p = ok("let x = 1\nif x > 0 { let x = x + 1\n print(x) }\nprint(x)\n");
    let f = func(&p, "main");
    assert_eq!(f.local_names, ["x", "x"]);
    let l = listing(&p, f);
    assert!(l.contains(&"x#1 = x#0 + 1".to_string()), "{l:?}");
    assert!(l.contains(&"print(x#1)".to_string()), "{l:?}");
    assert!(l.contains(&"print(x#0)".to_string()), "{l:?}");
    // A block's variables end with the block; the loop variable with the loop.
    assert_eq!(
        err("if true { let y = 1 }\nprint(y)\n"),
        ["unknown variable `y`"]
    );
    assert_eq!(
        err("for i in 0 .. 3 { }\nprint(i)\n"),
        ["unknown variable `i`"]
    );
}

#[test]
fn functions_see_params_rank_size_but_not_main_locals() {
    let p = ok("param n = 3\nfn f(a) { let b = a * n + rank + size\n return b }\nlet r = f(1)\n");
    let f = func(&p, "f");
    assert_eq!(f.params, ["a"]);
    assert_eq!(f.num_locals, 2);
    assert_eq!(listing(&p, f), ["b = a * n + rank + size", "return b"]);
    assert!(matches!(
        f.cfg[f.entry].stmts[0],
        Stmt::Assign {
            value: Expr::Binary(..),
            ..
        }
    ));
    assert_eq!(
        err("let x = 1\nfn f() { return x }\n"),
        ["unknown variable `x`"]
    );
    // Declared after use, recursion, and no `return e` returns null.
    let p = ok("g(2)\nfn g(k) { if k > 0 { g(k - 1) } }\n");
    let g = func(&p, "g");
    assert!(listing(&p, g).iter().all(|s| !s.starts_with("return ")));
}

#[test]
fn sendrecv_defaults_and_wildcards() {
    let p = ok("let s = sendrecv(to: 1, from: any, bytes: 8, tag: 3)\nprint(s.source)\n");
    let f = func(&p, "main");
    let Stmt::Comm {
        op: CommOp::Sendrecv { send, recv },
        dst: Some(_),
        ..
    } = &f.cfg[f.entry].stmts[0]
    else {
        panic!("not a sendrecv");
    };
    assert!(matches!(send.tag, Expr::Const(Constant::Int(3))));
    assert!(matches!(recv.tag, Expr::Const(Constant::Int(3))));
    assert!(matches!(recv.bytes, Expr::Const(Constant::Int(8))));
    assert!(matches!(recv.peer, Expr::Any));
    let l = main_listing("recv(from: any, bytes: 8, tag: any)\n");
    assert_eq!(l[0], "recv(from: any, bytes: 8, tag: any)");
    assert_eq!(
        err("send(to: any, bytes: 8)\n"),
        ["`any` is only allowed as a receive's source or tag"]
    );
}

#[test]
fn waits_take_variables() {
    let l = main_listing(
        "let a = irecv(from: 0, bytes: 8)\nlet b = isend(to: 0, bytes: 8)\nwaitall(a, b)\nwaitall()\nlet s = wait(a)\n",
    );
    assert_eq!(&l[2..5], ["waitall(a, b)", "waitall()", "s = wait(a)"]);
    assert_eq!(
        err("param p = 1\nwait(p)\n"),
        ["`wait` needs a variable holding a request"]
    );
}

/// The first `Comm` statement of `main`.
fn first_comm(p: &Program) -> &CommOp {
    let f = func(p, "main");
    f.cfg
        .node_indices()
        .flat_map(|b| f.cfg[b].stmts.iter())
        .find_map(|s| match s {
            Stmt::Comm { op, .. } => Some(op),
            _ => None,
        })
        .expect("a communication statement")
}

#[test]
fn send_modes() {
    for (op, mode, nonblocking) in [
        ("send", SendMode::Standard, false),
        ("ssend", SendMode::Synchronous, false),
        ("bsend", SendMode::Buffered, false),
        ("isend", SendMode::Standard, true),
        ("issend", SendMode::Synchronous, true),
        ("ibsend", SendMode::Buffered, true),
    ] {
        let src = format!("let r = {op}(to: 1, bytes: 8, comm: world)\n");
        let p = ok(&src);
        match (first_comm(&p), nonblocking) {
            (CommOp::Send(m, got), false) | (CommOp::Isend(m, got), true) => {
                assert_eq!(*got, mode, "{op}");
                assert!(matches!(m.comm, Some(Expr::World)), "{op}");
            }
            (other, _) => panic!("{op} lowered to {other:?}"),
        }
        assert_eq!(
            main_listing(&src)[0],
            format!("r = {op}(to: 1, bytes: 8, tag: 0, comm: world)")
        );
    }
    // Without `comm:`, the world (`None`).
    let p = ok("send(to: 1, bytes: 8)\n");
    assert!(matches!(first_comm(&p), CommOp::Send(m, SendMode::Standard) if m.comm.is_none()));
}

#[test]
fn probes_waitany_and_test() {
    let p = ok("let s = probe(from: any, tag: any)\n");
    let CommOp::Probe(m) = first_comm(&p) else {
        panic!("not a probe");
    };
    assert!(matches!(
        (&m.peer, &m.tag, &m.bytes),
        (Expr::Any, Expr::Any, Expr::Null)
    ));
    let l = main_listing("let c = world\nlet s = iprobe(from: 3, comm: c)\nprint(s == null)\n");
    assert_eq!(l[1], "s = iprobe(from: 3, tag: 0, comm: c)");
    let l = main_listing(
        "let a = irecv(from: 0, bytes: 8)\nlet b = irecv(from: 1, bytes: 8)\nlet i = waitany(a, b) + 1\nwhile !test(b) { }\n",
    );
    assert_eq!(&l[2..5], ["%1 = waitany(a, b)", "i = %1 + 1", "goto bb1"]);
    assert_eq!(l[5], "%2 = test(b)");
    // `test` and `waitany` set their variables to null: read them first.
    let l = main_listing("let r = isend(to: 1, bytes: 8)\nprint(r, test(r), r, waitany(r))\n");
    assert_eq!(
        &l[1..6],
        [
            "%1 = r",
            "%2 = test(r)",
            "%3 = r",
            "%4 = waitany(r)",
            "print(%1, %2, %3, %4)"
        ]
    );
}

#[test]
fn collectives_and_communicators() {
    let p = ok("bcast(bytes: 8)\n");
    let CommOp::Collective(c) = first_comm(&p) else {
        panic!("not a collective");
    };
    assert_eq!(c.kind, CollKind::Bcast);
    assert!(matches!(c.root, Some(Expr::Const(Constant::Int(0)))));
    assert!(c.comm.is_none());
    for kind in CollKind::ALL {
        let name = kind.name();
        let root = if kind.rooted() { "root: 1, " } else { "" };
        let bytes = if kind.has_bytes() { "bytes: 8, " } else { "" };
        let src = format!("let c = comm_dup(world)\n{name}({root}{bytes}comm: c)\n");
        let l = main_listing(&src);
        assert_eq!(l[1], format!("{name}({root}{bytes}comm: c)"));
        // The printed form compiles to the same thing.
        assert_eq!(
            main_listing(&format!("let c = comm_dup(world)\n{}\n", l[1]))[1],
            l[1]
        );
    }
    // Communication in expressions is hoisted left to right.
    let l = main_listing(
        "let x = rank_in(comm_split(color: rank % 2)) + size_in(comm_dup(world)) + 0 * len([allreduce(bytes: 8)])\n",
    );
    assert_eq!(
        l,
        [
            "%1 = comm_split(color: rank % 2, key: rank)",
            "%2 = comm_dup(world)",
            "%3 = allreduce(bytes: 8)",
            "x = rank_in(%1) + size_in(%2) + 0 * len([%3])",
            "return"
        ]
    );
    // The default key is the rank in the parent communicator.
    let l = main_listing("let c = comm_dup(world)\nlet d = comm_split(color: 1, comm: c)\n");
    assert_eq!(l[1], "d = comm_split(color: 1, key: rank_in(c), comm: c)");
    assert_eq!(
        err(
            "allreduce(root: 0, bytes: 8)\nbcast(root: 0)\nbarrier(bytes: 8)\nscan(bytes: 8, comm: world, bytes: 4)\n"
        ),
        [
            "`allreduce` takes no `root:` argument",
            "missing argument `bytes:` in call of `bcast`",
            "unknown argument `bytes` for `barrier`",
            "argument `bytes` is given twice",
        ]
    );
    assert_eq!(
        err("bcast(bytes: [1, 2])\nallgatherv(bytes: [1, 2])\n"),
        ["`bytes:` of `bcast` cannot be an array"]
    );
    assert_eq!(
        err("param p = rank_in(world)\nkernel k() cost barrier()\n"),
        [
            "`rank_in` cannot be used in a param default",
            "communication cannot be used in a kernel cost",
        ]
    );
    // Sizes and communicators may be used in kernel costs.
    ok("kernel k(c, a) cost 1e-9 * size_in(c) * sum(a)\ncompute k(world, [1, 2])\n");
}

#[test]
fn collectives_carry_values() {
    // `let x = allreduce(...)` stores the result straight into `x`.
    let p = ok("let t = 2.5\nlet tmax = allreduce(bytes: 8, value: t, op: max)\n");
    let f = func(&p, "main");
    let stmts = &f.cfg[f.entry].stmts;
    let Some(Stmt::Comm {
        op: CommOp::Collective(c),
        dst: Some(dst),
        ..
    }) = stmts.get(1)
    else {
        panic!("not a collective with a result: {stmts:?}");
    };
    assert_eq!(f.local_names[*dst as usize], "tmax");
    assert_eq!(c.kind, CollKind::Allreduce);
    assert_eq!(c.op, ReduceOp::Max);
    assert!(matches!(c.value, Some(Expr::Local(0))));
    // Every operation by name; `sum` is the default and is not printed.
    for kind in [
        CollKind::Reduce,
        CollKind::Allreduce,
        CollKind::Scan,
        CollKind::Exscan,
    ] {
        for op in ["sum", "prod", "min", "max", "land", "lor"] {
            let name = kind.name();
            let root = if kind.rooted() { "root: 0, " } else { "" };
            let l = main_listing(&format!(
                "let v = {name}(bytes: 8, value: rank, op: {op})\n"
            ));
            let shown = if op == "sum" {
                String::new()
            } else {
                format!(", op: {op}")
            };
            assert_eq!(
                l[0],
                format!("v = {name}({root}bytes: 8, value: rank{shown})")
            );
            // The printed form compiles to the same thing.
            assert_eq!(
                main_listing(&format!("{}\n", l[0].replacen("v =", "let v =", 1)))[0],
                l[0]
            );
        }
    }
    // `value:` on every collective that takes one, with a communicator.
    for kind in CollKind::ALL {
        let name = kind.name();
        let root = if kind.rooted() { "root: 1, " } else { "" };
        let src =
            format!("let c = comm_dup(world)\n{name}({root}bytes: 8, value: [rank], comm: c)\n");
        let takes = matches!(
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
        );
        if takes {
            assert_eq!(
                main_listing(&src)[1],
                format!("{name}({root}bytes: 8, value: [rank], comm: c)")
            );
        } else if kind.has_bytes() {
            assert_eq!(err(&src), [format!("`{name}` takes no `value:` argument")]);
        }
    }
    // Without `value:`, nothing is carried.
    let p = ok("allreduce(bytes: 8)\n");
    let CommOp::Collective(c) = first_comm(&p) else {
        panic!("not a collective");
    };
    assert!(c.value.is_none());
    assert_eq!(c.op, ReduceOp::Sum);
    // `op:` names an operation even where a variable or builtin has that name;
    // the value is lowered (and hoisted) like any argument.
    let l = main_listing(
        "let max = 3\nlet m = max(allreduce(bytes: 8, value: recv(from: 0, bytes: 8).tag + max, op: max), 0)\n",
    );
    assert_eq!(
        &l[1..4],
        [
            "%1 = recv(from: 0, bytes: 8, tag: 0)",
            "%2 = allreduce(bytes: 8, value: %1.tag + max, op: max)",
            "m = max(%2, 0)",
        ]
    );
    // Errors: one each, and no follow-up `unknown variable` for the op's name.
    assert_eq!(
        err(
            "bcast(bytes: 8, value: 1, op: max)\nbarrier(value: 1)\nallreduce(bytes: 8, value: 1, op: maximum)\nscan(bytes: 8, value: 1, op: 2)\nreduce(bytes: 8, op: min, op: max)\n"
        ),
        [
            "`bcast` takes no `op:` argument",
            "`barrier` takes no `value:` argument",
            "unknown reduction operation `maximum`",
            "`op:` of `scan` must name a reduction operation",
            "argument `op` is given twice",
        ]
    );
}

#[test]
fn arrays() {
    let l = main_listing(
        "let a = [1, 2, 3]\na[0] = 5\na[1] += a[0]\nlet g = [a, []]\ng[0][2] -= 1\nprint(len(g[1]), sum(a))\n",
    );
    assert_eq!(
        l,
        [
            "a = [1, 2, 3]",
            "a[0] = 5",
            "a[1] = a[1] + a[0]",
            "g = [a, []]",
            "%1 = g[0]",
            "%1[2] = %1[2] - 1",
            "g[0] = %1",
            "print(len(g[1]), sum(a))",
            "return"
        ]
    );
    // Calls in indices and values are hoisted in source order; an outer
    // index that is used twice is evaluated once.
    let l =
        main_listing("fn f() { return 0 }\nlet m = array(2, array(2, 0))\nm[f() + 1][f()] = f()\n");
    assert_eq!(
        &l[1..9],
        [
            "%1 = f()",
            "%2 = f()",
            "%3 = f()",
            "%4 = %1 + 1",
            "%5 = m[%4]",
            "%5[%2] = %3",
            "m[%4] = %5",
            "return"
        ]
    );
    assert_eq!(
        err("param p = [1]\np[0] = 2\nq[0] = 1\nlet x = array(1)\nlet y = len(1, 2)\n"),
        [
            "cannot assign to an element of param `p`",
            "cannot assign to undeclared variable `q`",
            "builtin `array` takes 2 arguments but 1 was given",
            "builtin `len` takes 1 argument but 2 were given",
        ]
    );
    assert_eq!(
        err("let a = [1]\nlen(a)\nrank_in(world)\nsize_in(world)\n[1, 2]\na[0]\n"),
        ["this expression's value is not used"; 5]
    );
    assert_eq!(
        err("let s = recv(from: 0, bytes: 8)\ns.tag = 1\n"),
        ["cannot assign to this expression"]
    );
}

#[test]
fn kernels_and_params() {
    let p = ok(
        "param n = 10\nparam m = n * 2 + 1\nkernel k(a, b) cost 1e-9 * a * b + m\nkernel free(x)\ncompute k(n, 2)\ncompute free(1)\n",
    );
    assert_eq!(p.kernels.len(), 2);
    assert!(p.kernels[1].cost.is_none());
    let cost = p.kernels[0].cost.as_ref().expect("k has a cost");
    let kf = Function {
        name: "k".into(),
        params: p.kernels[0].params.clone(),
        local_names: p.kernels[0].params.clone(),
        num_locals: 2,
        cfg: Default::default(),
        entry: Default::default(),
        span: Default::default(),
    };
    assert_eq!(expr_to_string(cost, &p, &kf), "1e-9 * a * b + m");
    assert!(matches!(p.params[1].default, Expr::Binary(..)));
    assert_eq!(p.params[1].span.line, 2);
    // Top-level `return` ends the rank.
    ok("if rank > 3 { return }\nprint(rank)\n");
}

#[test]
fn semantic_errors_are_all_reported() {
    let msgs = err("let a = b\nc = 1\ncompute nope(1)\nsend(to: 1)\ncontinue\nf(1)\n");
    assert_eq!(
        msgs,
        [
            "unknown variable `b`",
            "cannot assign to undeclared variable `c`",
            "unknown kernel `nope`",
            "missing argument `bytes:` in call of `send`",
            "`continue` outside of a loop",
            "unknown function `f`",
        ]
    );
    assert_eq!(
        err(
            "param n = 1\nparam n = 2\nfn f() {}\nfn f() {}\nkernel k()\nkernel k()\nfn send() {}\n"
        ),
        [
            "param `n` is declared twice",
            "function `f` is declared twice",
            "kernel `k` is declared twice",
            "`send` is a built-in operation and cannot be redefined",
        ]
    );
    assert_eq!(
        err("send(to: 1, bytes: 8, to: 2)\n"),
        ["argument `to` is given twice"]
    );
    assert_eq!(
        err("send(1, 8)\n"),
        [
            "arguments of `send` must be named",
            "arguments of `send` must be named"
        ]
    );
    assert_eq!(
        err("let x = print(1)\n"),
        ["`print` can only be used as a statement"]
    );
    assert_eq!(
        err("kernel k(a) cost wtime()\n"),
        ["`wtime()` cannot be used in a kernel cost"]
    );
    assert_eq!(
        err("fn f() { return 1 }\nparam p = f()\n"),
        ["function calls cannot be used in a param default"]
    );
}

#[test]
fn render_format() {
    let src = "param n = 3\nlet x = nn + 1\n";
    let d = compile("prog.mpl", src).expect_err("unknown variable");
    let text = d.render("prog.mpl", src);
    assert_eq!(
        text,
        "error: unknown variable `nn`\n  --> prog.mpl:2:9\n  |\n2 | let x = nn + 1\n  |         ^^ not declared\n  |\n  = help: did you mean `n`?\n\n"
    );
    assert_eq!(d.to_string(), "2:9: unknown variable `nn`");
    let span = d.diagnostics[0].span;
    assert_eq!((span.start, span.end, span.line, span.col), (20, 22, 2, 9));
}

#[test]
fn param_overrides() {
    let mut p = ok("param n = 3\nparam eps = 0.5\nparam m = n * 2\n");
    apply_param_overrides(
        &mut p,
        &[("n".into(), "10".into()), ("eps".into(), "1e-3".into())],
    )
    .expect("valid overrides");
    assert!(matches!(
        p.params[0].default,
        Expr::Const(Constant::Int(10))
    ));
    assert!(matches!(p.params[1].default, Expr::Const(Constant::Float(v)) if v == 1e-3));
    // A float where the default was an int is fine; so is a negative value.
    apply_param_overrides(&mut p, &[("n".into(), "-2.5".into())]).expect("float");
    assert!(matches!(p.params[0].default, Expr::Const(Constant::Float(v)) if v == -2.5));

    let e = apply_param_overrides(&mut p, &[("n".into(), "abc".into())]).expect_err("not a number");
    assert_eq!(
        e.to_string(),
        "param `n` must be a number or the name of an earlier param, got `abc`"
    );
    for bad in ["", "inf", "NaN", "1e999", "0x10", "1_000"] {
        let e = apply_param_overrides(&mut p, &[("n".into(), bad.into())]).expect_err(bad);
        assert!(matches!(e, OverrideError::NotANumber { .. }), "{bad}");
    }
    // An integer that i64 cannot hold is refused, not rounded into a float.
    for big in [
        "99999999999999999999",
        "-9223372036854775809",
        "+18446744073709551616",
    ] {
        let e = apply_param_overrides(&mut p, &[("n".into(), big.into())]).expect_err(big);
        assert!(
            matches!(e, OverrideError::IntegerOutOfRange { .. }),
            "{big}"
        );
    }
    apply_param_overrides(&mut p, &[("n".into(), "9223372036854775807".into())]).expect("i64::MAX");
    apply_param_overrides(&mut p, &[("n".into(), "1e20".into())]).expect("a float");
    let e = apply_param_overrides(&mut p, &[("nn".into(), "1".into())]).expect_err("unknown");
    assert_eq!(e.to_string(), "unknown param `nn`; did you mean `n`?");
    let e = apply_param_overrides(&mut p, &[("zzz".into(), "1".into())]).expect_err("unknown");
    assert_eq!(
        e.to_string(),
        "unknown param `zzz`; the program declares `n`, `eps`, `m`"
    );
}

/// `--param class=A`: an override may name a param declared before it
/// (a symbolic choice), not one declared after.
#[test]
fn param_overrides_name_earlier_params() {
    let mut p = ok("param S = 0\nparam A = 2\nparam class = S\nparam later = 5\n");
    apply_param_overrides(&mut p, &[("class".into(), "A".into())]).expect("an earlier param");
    assert!(matches!(p.params[2].default, Expr::Param(1)));
    let e = apply_param_overrides(&mut p, &[("class".into(), "later".into())])
        .expect_err("a later param");
    assert_eq!(
        e.to_string(),
        "param `class`: `later` is declared after `class`; an override may only name a param declared before it"
    );
    let e = apply_param_overrides(&mut p, &[("class".into(), "class".into())]).expect_err("itself");
    assert!(matches!(e, OverrideError::NamesLaterParam { .. }));
    // Unknown names are still not numbers.
    let e = apply_param_overrides(&mut p, &[("class".into(), "Q".into())]).expect_err("unknown");
    assert!(matches!(e, OverrideError::NotANumber { .. }));
}

/// Random expressions: printing the lowered IR and compiling the text again
/// gives the same text (a fixpoint) and the same value, so the printer's
/// parentheses keep the meaning and the parser's precedence is what the
/// printer assumes.
#[test]
fn printed_expressions_read_back_with_the_same_meaning() {
    use sim_core::value::{EvalCx, Value, WorldOnly, eval};

    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }
    fn random_expr(rng: &mut Rng, depth: u32) -> String {
        if depth == 0 || rng.below(4) == 0 {
            return match rng.below(6) {
                0 => "a".to_string(),
                1 => "b".to_string(),
                2 => "rank".to_string(),
                3 => format!("{}.5", rng.below(4)),
                _ => rng.below(7).to_string(),
            };
        }
        let ops = ["+", "-", "*", "/", "%", "<", "==", "&&", "||", ">="];
        match rng.below(9) {
            5 => format!(
                "[{}, {}][{}]",
                random_expr(rng, depth - 1),
                random_expr(rng, depth - 1),
                rng.below(2)
            ),
            6 => format!(
                "sum([{}, {}])",
                random_expr(rng, depth - 1),
                random_expr(rng, depth - 1)
            ),
            7 => format!("[{}, rank_in(world)]", random_expr(rng, depth - 1)),
            8 => format!("({})[0]", random_expr(rng, depth - 1)),
            0 => format!("-{}", random_expr(rng, depth - 1)),
            1 => format!("!{}", random_expr(rng, depth - 1)),
            2 => format!(
                "max({}, {})",
                random_expr(rng, depth - 1),
                random_expr(rng, depth - 1)
            ),
            _ => {
                let op = ops[rng.below(ops.len() as u64) as usize];
                format!(
                    "({} {op} {})",
                    random_expr(rng, depth - 1),
                    random_expr(rng, depth - 1)
                )
            }
        }
    }
    /// The value of `x` in `let a = 3; let b = -2; let x = EXPR`, and its text.
    fn lower(expr: &str) -> Option<(String, Result<Value, String>)> {
        let src = format!("let a = 3\nlet b = -2\nlet x = {expr}\n");
        // Chained comparisons are rejected; skip those.
        let p = compile("t.mpl", &src).ok()?;
        let f = func(&p, "main");
        let Stmt::Assign { value, .. } = &f.cfg[f.entry].stmts[2] else {
            panic!("not an assignment");
        };
        let locals = [Value::Int(3), Value::Int(-2), Value::Null];
        let cx = EvalCx {
            locals: &locals,
            params: &[],
            rank: 5,
            size: 8,
            clock: 0.0,
            comms: &WorldOnly(8),
        };
        Some((expr_to_string(value, &p, f), eval(value, &cx)))
    }
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let mut checked = 0;
    for _ in 0..3000 {
        let src = random_expr(&mut rng, 4);
        let Some((text, value)) = lower(&src) else {
            continue;
        };
        let (again, value2) = lower(&text).unwrap_or_else(|| panic!("{text} does not compile"));
        assert_eq!(text, again, "from {src}");
        match (&value, &value2) {
            (Ok(Value::Float(x)), Ok(Value::Float(y))) if x.is_nan() && y.is_nan() => {}
            _ => assert_eq!(value, value2, "{src} printed as {text}"),
        }
        checked += 1;
    }
    assert!(checked > 1000);
}
