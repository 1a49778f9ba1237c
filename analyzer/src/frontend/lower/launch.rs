//! Host functions walked for kernel launch sites (`k<<<grid, block>>>(...)`):
//! each integer parameter is one unknown value, a launch dimension fixed
//! by an enclosing `case K:` or `if (x == K)` takes `K`, and an argument
//! that is a pointer moved off its allocation is marked.

use std::collections::HashSet;

use tree_sitter::Node;

use super::call::function_params;
use super::macros::{parse_snippet, substitute};
use super::{Lowerer, Src, Val};
use crate::budget;
use crate::finding::{Cut, NoteKind, Origin};
use crate::frontend::fields::Fields;
use crate::frontend::source::Source;
use crate::frontend::tu::{LaunchSite, TArg};
use crate::frontend::types::Ty;
use crate::ir::{BinOp, Expr};

/// A launch's grid and block, each where known.
pub(super) type LaunchConfig = (Option<[u64; 3]>, Option<[u64; 3]>);

/// A launch argument's value.
pub(super) enum LaunchArg {
    Const(i64),
    /// An integer that is not a constant here.
    Over(Expr),
    /// Not an integer, or not known.
    Unknown,
}

/// CUDA's largest launch dimension (a grid's `x`); a larger one, or one
/// below 1, is not a launch the analysis takes.
const MAX_LAUNCH_DIM: i64 = 1 << 31;

/// Whether an expression is a pointer moved off its allocation: `buf +
/// k` or `&buf[k]` (through parentheses and casts; the walk goes down the
/// tree, so it ends).
fn moved_pointer(e: Node, src: &Src) -> bool {
    let mut e = e;
    loop {
        let inner = match e.node_kind() {
            "parenthesized_expression" => e.named(0),
            "cast_expression" => e.field("value"),
            _ => break,
        };
        match inner {
            Some(i) => e = i,
            None => return false,
        }
    }
    match e.node_kind() {
        "binary_expression" => e
            .field("operator")
            .is_some_and(|o| matches!(o.node_kind(), "+" | "-")),
        "pointer_expression" => {
            src.text(e).trim_start().starts_with('&')
                && e.field("argument")
                    .is_some_and(|a| a.node_kind() == "subscript_expression")
        }
        _ => false,
    }
}

/// The names a function body initialises or assigns with a moved pointer
/// (`float *src = bufferIn + padding;`), found in one walk, and whether
/// the walk ran out of `budget::MAX_SCAN_NODES` before the end.
fn moved_names(body: Node, src: &Src) -> (HashSet<String>, bool) {
    let mut out = HashSet::new();
    let mut stack = vec![body];
    let mut seen = 0;
    while let Some(x) = stack.pop() {
        seen += 1;
        if seen > budget::MAX_SCAN_NODES {
            return (out, true);
        }
        let named = match x.node_kind() {
            "init_declarator" => x.field("declarator").zip(x.field("value")),
            "assignment_expression" => x.field("left").zip(x.field("right")),
            _ => None,
        };
        if let Some((name, value)) = named {
            if moved_pointer(value, src) {
                out.insert(src.text(name).trim_start_matches('*').trim().to_string());
            }
        }
        stack.extend(x.kids());
    }
    (out, false)
}

impl<'a, 't> Lowerer<'a, 't> {
    pub(super) fn launch_site(
        &mut self,
        n: Node,
        f: Node,
        cfg: Node,
        args: &[Node],
        src: &Src,
    ) -> Val {
        let (name, targs) = match self.kernel_var(f, src) {
            Some(k) => k,
            None => match f.node_kind() {
                "template_function" => (
                    f.field("name").map(|x| src.text(x)).unwrap_or_default(),
                    f.field("arguments")
                        .map(|a| self.template_args(a, src))
                        .unwrap_or_default(),
                ),
                _ => (src.text(f), Vec::new()),
            },
        };
        let name = name.rsplit("::").next().unwrap_or(&name).to_string();
        let parts = cfg.kids();
        let config = self.launch_config(n, parts.first().copied(), parts.get(1).copied(), src);
        let vals = self.launch_args(args, src);
        let offset_args = args.iter().map(|a| self.offset_pointer(*a, src)).collect();
        self.push_site(n, (name, targs), config, vals, offset_args, src);
        Val::Void
    }

    /// A launch's grid and block from their expressions, each where known
    /// (a block of more threads than a block may have is noted, not taken).
    pub(super) fn launch_config(
        &mut self,
        n: Node,
        grid: Option<Node>,
        block: Option<Node>,
        src: &Src,
    ) -> LaunchConfig {
        let grid = grid.map(|g| self.rv(g, src));
        let block = block.map(|b| self.rv(b, src));
        self.launch_config_of(n, grid, block, src)
    }

    /// [`Self::launch_config`] of the grid's and block's values.
    pub(super) fn launch_config_of(
        &mut self,
        n: Node,
        grid: Option<Val>,
        block: Option<Val>,
        src: &Src,
    ) -> LaunchConfig {
        let grid = grid.and_then(|v| self.dim3(v));
        let block = block.and_then(|v| {
            let v = self.known_by_guards(v);
            self.dim3(v)
        });
        let block = match block {
            Some(b)
                if b.iter().fold(1u64, |a, x| a.saturating_mul(*x))
                    <= budget::MAX_THREADS_PER_BLOCK =>
            {
                Some(b)
            }
            Some(b) => {
                let kind = NoteKind::BlockTooLarge {
                    block: b,
                    max: budget::MAX_THREADS_PER_BLOCK,
                };
                self.note(n, src, kind);
                None
            }
            None => None,
        };
        (grid, block)
    }

    /// Each launch argument's value: a constant, or one that the
    /// enclosing conditions fix (`topk` under `if (topk == 8)`), else
    /// what it is over (`host_calls.rs`).
    pub(super) fn launch_args(&mut self, args: &[Node], src: &Src) -> Vec<LaunchArg> {
        args.iter()
            .map(|a| {
                let v = self.rv(*a, src);
                match self.known_by_guards(v) {
                    Val::Int(e) => match e.as_const() {
                        Some(c) => LaunchArg::Const(c),
                        None => LaunchArg::Over(e),
                    },
                    _ => LaunchArg::Unknown,
                }
            })
            .collect()
    }

    /// Records a launch site of `kernel` (name, template arguments): an
    /// argument that is a parameter of the host function walked is marked
    /// as one, one over the variables of the loops around the launch
    /// waits for them to be lowered.
    pub(super) fn push_site(
        &mut self,
        n: Node,
        kernel: (String, Vec<TArg>),
        (grid, block): LaunchConfig,
        args: Vec<LaunchArg>,
        offset_args: Vec<bool>,
        src: &Src,
    ) {
        let span = self.span(n, src);
        let Some(index) = self.launches.as_ref().map(Vec::len) else {
            return;
        };
        let params: Vec<Option<crate::ir::HostExpr>> = args
            .iter()
            .map(|a| match a {
                LaunchArg::Over(e) => self.host_expr(e),
                _ => None,
            })
            .collect();
        let host = match &self.host_fn {
            Some(h) if params.iter().any(Option::is_some) => Some(crate::ir::HostArgs {
                function: h.name.clone(),
                params,
                values: Vec::new(),
                bounds: self.host_bounds(),
                sampled: Vec::new(),
            }),
            _ => None,
        };
        for (i, a) in args.iter().enumerate() {
            if let LaunchArg::Over(e) = a {
                self.launch_arg_over_loops(index, i, e);
            }
        }
        let args = args
            .iter()
            .map(|a| match a {
                LaunchArg::Const(c) => Some(*c),
                _ => None,
            })
            .collect();
        if let Some(l) = self.launches.as_mut() {
            l.push(LaunchSite {
                kernel: kernel.0,
                targs: kernel.1,
                grid,
                block,
                args,
                offset_args,
                span,
                host,
            });
        }
    }

    /// Whether a launch argument is a pointer moved off its allocation:
    /// `buf + k`, `&buf[k]`, or a name the launching function initialises
    /// or assigns with one (`float *src = bufferIn + padding;`). The names
    /// are found once per launching function.
    fn offset_pointer(&mut self, arg: Node, src: &Src) -> bool {
        if moved_pointer(arg, src) {
            return true;
        }
        if arg.node_kind() != "identifier" {
            return false;
        }
        let mut host = arg.parent();
        while let Some(h) = host {
            if h.node_kind() == "function_definition" {
                break;
            }
            host = h.parent();
        }
        let Some(body) = host.and_then(|h| h.field("body")) else {
            return false;
        };
        let key = (body.start_byte(), body.end_byte());
        if self.moved.as_ref().is_none_or(|(k, _)| *k != key) {
            let (names, cut) = moved_names(body, src);
            if cut {
                self.budget_note(body, src, budget::SCAN_NODES, Cut::LaunchScan);
            }
            self.moved = Some((key, names));
        }
        let name = src.text(arg);
        self.moved
            .as_ref()
            .is_some_and(|(_, names)| names.contains(&name))
    }

    /// `v` with each dimension that the enclosing conditions fix replaced
    /// by its value: in `case 64:` of `switch (threads)` (entered only
    /// for 64: the case before it does not fall through), or under `if
    /// (threads == 64)`, `dim3 block(threads)` is 64 threads.
    fn known_by_guards(&self, v: Val) -> Val {
        // Each guard `x == K` (or conjunction of them) replaces `x`
        // wherever it occurs (`K / 8` under `case 64:` of `switch (K)` is
        // 8), innermost first.
        let fixed = |mut e: Expr| -> Expr {
            for g in self.guards.iter().rev() {
                if e.as_const().is_some() {
                    break;
                }
                if !g.expect {
                    continue;
                }
                // `x == K`, alone or in a conjunction (`n == 256 && k == 8`).
                let mut parts = vec![&g.cond];
                while let Some(c) = parts.pop() {
                    match c.kind() {
                        crate::ir::ExprKind::Bin(BinOp::LAnd, x, y) => parts.extend([x, y]),
                        crate::ir::ExprKind::Bin(BinOp::Eq, a, b) => {
                            match (a.as_const(), b.as_const()) {
                                (None, Some(k)) => e = e.replaced(a, &Expr::konst(k)),
                                (Some(k), None) => e = e.replaced(b, &Expr::konst(k)),
                                _ => {}
                            }
                        }
                        _ => {}
                    }
                }
            }
            e
        };
        match v {
            Val::Int(e) => Val::Int(fixed(e)),
            Val::Dim3([x, y, z]) => Val::Dim3([fixed(x), fixed(y), fixed(z)]),
            other => other,
        }
    }

    fn dim3(&self, v: Val) -> Option<[u64; 3]> {
        let d = match v {
            Val::Int(e) => [e.as_const()?, 1, 1],
            Val::Dim3(d) => [d[0].as_const()?, d[1].as_const()?, d[2].as_const()?],
            _ => return None,
        };
        if d.iter().any(|x| *x < 1 || *x > MAX_LAUNCH_DIM) {
            return None;
        }
        Some([d[0] as u64, d[1] as u64, d[2] as u64])
    }

    /// Walks a host function and returns its kernel launches.
    pub fn host_launches(&mut self, f: Node, source: &Source) -> Vec<LaunchSite> {
        let src = Src::of(source);
        // A host function template walked as written: its own type
        // parameters are no known type.
        if let Some(t) = f
            .parent()
            .filter(|p| p.node_kind() == "template_declaration")
        {
            self.open_type_params = crate::frontend::tu::template_params(t, &src)
                .into_iter()
                .filter_map(|p| match p {
                    crate::frontend::tu::TParam::Type(name) => Some(name),
                    crate::frontend::tu::TParam::Value(_) => None,
                })
                .collect();
        }
        let out = self.host_launches_in(f, &src);
        self.open_type_params.clear();
        out
    }

    /// Walks a host function template under one instantiation's template
    /// arguments (`template void reduce<float>(…);`): its launches'
    /// template arguments and configurations see them bound.
    pub fn host_template_launches(
        &mut self,
        def: &crate::frontend::tu::FuncDef<'t>,
        targs: &[TArg],
    ) -> Vec<LaunchSite> {
        let main = Src::of(def.src);
        self.bind_template_args(def, targs, &main);
        let out = self.host_launches_in(def.node, &main);
        self.tscopes.pop();
        out
    }

    /// The launches of the host functions that a file-scope use of the
    /// function-like macro `name` defines (`BIND(f32, float)` expanding to
    /// a function that launches `k_##tag`): the expansion is parsed as
    /// declarations and its launches are reported at the use (`at`).
    pub fn macro_host_launches(
        &mut self,
        name: &str,
        args: &[String],
        at: crate::ir::Span,
        source: &Source,
    ) -> Vec<LaunchSite> {
        let Some((params, body)) = self.tu.macros.get(name).and_then(|m| m.function()) else {
            return Vec::new();
        };
        // The body's continuation lines were joined when it was defined.
        let mut text = substitute(body, params, args);
        while let Some(joined) = crate::frontend::tu::joined_chevrons(&text) {
            text = joined;
        }
        let Some(tree) = parse_snippet(&text) else {
            return Vec::new();
        };
        let snip = Src {
            bytes: text.as_bytes(),
            at: Some(at),
            map: source,
        };
        let root = tree.root_node();
        let fns: Vec<Node> = root
            .kids()
            .into_iter()
            .filter(|f| f.node_kind() == "function_definition")
            .collect();
        let mut out = Vec::new();
        for f in fns {
            out.extend(self.host_launches_in(f, &snip));
        }
        out
    }

    /// [`Self::host_launches`] of a function whose text is `main`; the
    /// calls of launching functions it makes are left in `host_calls`.
    fn host_launches_in(&mut self, f: Node, main: &Src) -> Vec<LaunchSite> {
        let main = *main;
        self.launches = Some(Vec::new());
        let name = f
            .field("declarator")
            .and_then(|d| crate::frontend::tu::function_name(d, &main).ok().flatten())
            .unwrap_or_default();
        self.host_fn = Some(super::host_calls::HostFn::new(name));
        // An integer parameter is one unknown value throughout, so that
        // `dim3 block(threads)` under `case 64:` of `switch (threads)` is
        // known (see `known_by_guards`).
        for (pos, p) in function_params(f).into_iter().enumerate() {
            let (Some(tn), Some(d)) = (p.field("type"), p.field("declarator")) else {
                continue;
            };
            let base = self.resolve_type(tn, &main);
            let (name, ty, _) = self.declarator(base, d, &main);
            if matches!(ty, Ty::Int { .. }) {
                let u = self.unknown(Origin::Parameter { name: name.clone() }, None);
                self.host_param(&u, pos as u32);
                self.bind(name, Val::Int(u));
            }
        }
        if let Some(body) = f.field("body") {
            self.stmt(body, &main);
        }
        let calls = self.finish_host_fn();
        self.host_calls.extend(calls);
        self.launches.take().unwrap_or_default()
    }
}
