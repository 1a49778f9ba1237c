//! Calls: launches (handed to `launch`), cooperative groups (to `groups`),
//! casts and functional casts, the
//! integer builtins the analysis understands (`min`, `ceil` of a division,
//! `__mul24`, `dim3`), barriers and fences (which end a straight-line
//! region), atomics and cache-hinted loads/stores (accesses), function-like
//! macros, and `__device__` functions defined in the file, inlined with
//! their template arguments bound (bounded by `budget::MAX_INLINE_DEPTH`
//! and `budget::MAX_INLINED_CALLS`). Anything else is an unknown result.

use tree_sitter::Node;

use super::{Lowerer, Place, Src, Val};
use crate::finding::Origin;
use crate::frontend::fields::Fields;
use crate::frontend::fuse;
use crate::frontend::tu::{FuncDef, TArg};
use crate::frontend::types::{builtin, Ty};
use crate::ir::{BinOp, Expr, Op, UnOp};

const ATOMICS: &[&str] = &[
    "atomicAdd",
    "atomicSub",
    "atomicExch",
    "atomicMin",
    "atomicMax",
    "atomicInc",
    "atomicDec",
    "atomicCAS",
    "atomicAnd",
    "atomicOr",
    "atomicXor",
];

fn param_count(f: Node) -> Option<usize> {
    Some(function_params(f).len())
}

pub(crate) fn function_params(f: Node) -> Vec<Node> {
    let mut d = f.field("declarator");
    while let Some(x) = d {
        if x.node_kind() == "function_declarator" {
            let Some(pl) = x.field("parameters") else {
                return Vec::new();
            };
            return pl
                .kids()
                .into_iter()
                .filter(|p| {
                    matches!(
                        p.node_kind(),
                        "parameter_declaration" | "optional_parameter_declaration"
                    )
                })
                .collect();
        }
        d = x.field("declarator");
    }
    Vec::new()
}

impl<'a, 't> Lowerer<'a, 't> {
    pub(super) fn call(&mut self, n: Node, src: &Src) -> Val {
        let Some(f) = n.field("function") else {
            return Val::Void;
        };
        let args_node = n.field("arguments");
        let args: Vec<Node> = match args_node {
            Some(a) => a
                .kids()
                .into_iter()
                .filter(|x| x.node_kind() != "comment")
                .collect(),
            None => Vec::new(),
        };
        let mut c = n.walk();
        let launch = n
            .children(&mut c)
            .find(|k| k.node_kind() == "kernel_call_syntax");
        if let Some(cfg) = launch {
            return self.launch_site(n, f, cfg, &args, src);
        }
        if let Some(v) = self.functional_cast(f, &args, src) {
            return v;
        }
        if let Some(v) = self.group_call(n, f, &args, src) {
            return v;
        }
        if let Some(v) = self.api_launch(n, f, &args, src) {
            return v;
        }
        let (name, targs_node) = match f.node_kind() {
            "identifier" => (src.text(f), None),
            "template_function" => (
                f.field("name").map(|x| src.text(x)).unwrap_or_default(),
                f.field("arguments"),
            ),
            "qualified_identifier" => (
                f.field("name")
                    .map(|x| src.text(x))
                    .unwrap_or_else(|| src.text(f)),
                None,
            ),
            _ => return self.unknown_method(f, &args, src),
        };
        let short = name.rsplit("::").next().unwrap_or(&name).to_string();
        // Function-like macros first: that is what the preprocessor does.
        if let Some(m) = self.tu.macros.get(&short) {
            if m.params.is_some() && !self.expanding.contains(&short) {
                let texts: Vec<String> = args.iter().map(|a| src.text(*a)).collect();
                return self.expand_function_macro(&short, &texts, n, src, false);
            }
        }
        if let Some(v) = self.builtin_call(&short, targs_node, &args, n, src) {
            return v;
        }
        if let Some(v) = self.atomic(&short, &args, n, src) {
            return v;
        }
        if let Some(v) = self.hinted_access(&short, &args, n, src) {
            return v;
        }
        if let Some(v) = self.wmma_call(&short, &args, n, src) {
            return v;
        }
        if let Some(v) = self.shuffle_call(&short, &args, src) {
            self.warp_sync(&short);
            return v;
        }
        if let Some(v) = self.struct_conversion(&short, targs_node, &args, n, src) {
            return v;
        }
        if f.node_kind() == "identifier" {
            if let Some(v) = self.this_call(&short, &args, n, src) {
                return v;
            }
        }
        if let Some(v) = self.device_call(&short, &args, n, src) {
            return v;
        }
        let v = self.opaque_call(&short, f, &args, src);
        self.warp_sync(&short);
        v
    }

    /// After a call of a warp-synchronising intrinsic (`__shfl_*_sync`,
    /// `__ballot_sync`, `__any_sync`, `__match_any_sync`, `__reduce_*_sync`,
    /// …): the lanes named in its mask have all reached it, a new epoch
    /// for `symbolic/races.rs` (as `__syncwarp()` is).
    fn warp_sync(&mut self, short: &str) {
        if short.starts_with("__") && short.ends_with("_sync") {
            self.warp_syncs += 1;
        }
    }

    /// The struct the file defines that type node `tn` names, with its
    /// template arguments (`SharedMemory<T>`, `Acc`).
    pub(super) fn struct_named(&mut self, tn: Node, src: &Src) -> Option<(String, Vec<TArg>)> {
        let (name, targs) = match tn.node_kind() {
            "type_identifier" => (src.text(tn), Vec::new()),
            "template_type" => (
                src.text(tn.field("name")?),
                tn.field("arguments")
                    .map(|a| self.template_args(a, src))
                    .unwrap_or_default(),
            ),
            _ => return None,
        };
        self.tu
            .struct_nodes
            .contains_key(&name)
            .then_some((name, targs))
    }

    /// `v.m(args)` on a variable of a struct type the file defines
    /// (`smem.getPointer()` of cuda-samples' `SharedMemory<T>`,
    /// `result.push(x)`): its method `m` (of the specialisation the type's
    /// arguments pick, with as many parameters as arguments) inlined on
    /// the object (`objects.rs`), whose members it leaves are written back.
    /// `None` for any other call.
    fn struct_method(&mut self, f: Node, args: &[Node], src: &Src) -> Option<Val> {
        if f.node_kind() != "field_expression" {
            return None;
        }
        let var = f
            .field("argument")
            .filter(|a| a.node_kind() == "identifier")?;
        let method = src.text(f.field("field")?);
        // The struct declared in the innermost scope that binds the name
        // (an inner `B s;` shadows an outer `A s;` only inside its block).
        let var = src.text(var);
        let strukt = self.object_struct(&var)?;
        let def = self.method_def(&strukt, &method, args.len())?;
        let this = self.this_of(&var, &strukt, f, src)?;
        let members = this.members.clone();
        let vals: Vec<Val> = args.iter().map(|a| self.expr(*a, src)).collect();
        let (v, after) = self.inline_with(&def, vals, args.to_vec(), f, src, Some(this));
        self.write_back(&var, &members, after);
        Some(v)
    }

    /// `S<T>()`, a temporary of a struct the file defines, with no
    /// arguments, whose use is its conversion to a pointer (cuda-samples'
    /// `T *sdata = SharedMemory<T>();`): its conversion operator to a
    /// pointer (`operator T *()`, of the specialisation the arguments
    /// pick) inlined. `None` for any other call.
    fn struct_conversion(
        &mut self,
        short: &str,
        targs_node: Option<Node>,
        args: &[Node],
        n: Node,
        src: &Src,
    ) -> Option<Val> {
        if !args.is_empty() || !self.tu.struct_nodes.contains_key(short) {
            return None;
        }
        let targs = targs_node
            .map(|t| self.template_args(t, src))
            .unwrap_or_default();
        let (tparams, node, ssrc) = self.struct_instance(short, &targs)?;
        let to_pointer = |f: &Node| {
            f.node_kind() == "function_definition"
                && f.field("declarator").is_some_and(|d| {
                    d.node_kind() == "operator_cast"
                        && d.field("declarator")
                            .is_some_and(|x| x.node_kind() == "abstract_pointer_declarator")
                })
        };
        let op = node.field("body")?.kids().into_iter().find(to_pointer)?;
        let def = FuncDef {
            node: op,
            src: ssrc,
            name: format!("{short}::operator*"),
            tdefaults: vec![None; tparams.len()],
            tparams,
            is_kernel: false,
        };
        Some(self.inline_call(&def, Vec::new(), Vec::new(), n, src))
    }

    /// `obj.f(args)` or another call through an expression the analysis
    /// does not follow: the arguments are evaluated and the result is
    /// unknown.
    pub(super) fn unknown_method(&mut self, f: Node, args: &[Node], src: &Src) -> Val {
        if let Some(v) = self.struct_method(f, args, src) {
            return v;
        }
        for a in args {
            self.rv(*a, src);
        }
        // It may synchronise the lanes (a barrier's `arrive_and_wait()`, a
        // pipeline's `consumer_wait()`, a tile's `shfl_xor`): a new epoch
        // for `symbolic/races.rs`.
        self.warp_syncs += 1;
        self.unknown_val(Origin::CallResult {
            callee: src.text(f),
        })
    }

    /// A functional cast to a scalar type: `int(x)`, `uint32_t(x)`.
    fn functional_cast(&mut self, f: Node, args: &[Node], src: &Src) -> Option<Val> {
        if args.len() != 1 || !matches!(f.node_kind(), "primitive_type" | "identifier") {
            return None;
        }
        let name = src.text(f);
        let ty = match f.node_kind() {
            "primitive_type" => builtin(&name),
            _ if self.lookup(&name).is_none() => Some(self.named_type(&name)),
            _ => None,
        };
        if let Some(ty @ (Ty::Int { .. } | Ty::Float { .. })) = ty {
            let v = self.rv(args[0], src);
            return Some(self.cast(ty, v));
        }
        None
    }

    /// The calls the analysis knows by name: C++ casts, integer `min`/`max`,
    /// `ceil`/`floor` of a division, `__mul24`, `abs`, `dim3`, and barriers,
    /// fences, `assert` and `printf` (which end a straight-line region).
    fn builtin_call(
        &mut self,
        short: &str,
        targs_node: Option<Node>,
        args: &[Node],
        n: Node,
        src: &Src,
    ) -> Option<Val> {
        Some(match short {
            "reinterpret_cast" | "static_cast" | "const_cast" | "dynamic_cast" => {
                let ty = targs_node
                    .and_then(|t| t.named(0))
                    .map(|t| {
                        if t.node_kind() == "type_descriptor" {
                            self.type_descriptor(t, src)
                        } else {
                            Ty::Unknown(src.text(t))
                        }
                    })
                    .unwrap_or(Ty::Unknown(String::new()));
                let v = match (args.first(), &ty) {
                    (Some(a), Ty::Ptr(t)) => {
                        let v = self.rv(*a, src);
                        self.pointer_from(t, v, *a, src)
                    }
                    (Some(a), _) => self.rv(*a, src),
                    (None, _) => Val::Void,
                };
                self.cast(ty, v)
            }
            "min" | "max" | "umin" | "umax" | "llmin" | "llmax" | "ullmin" | "ullmax"
                if args.len() == 2 =>
            {
                let a = self.int(args[0], src);
                let b = self.int(args[1], src);
                let op = if short.ends_with("min") {
                    BinOp::Min
                } else {
                    BinOp::Max
                };
                Val::Int(Expr::bin(op, a, b))
            }
            "ceil" | "ceilf" | "floor" | "floorf" if args.len() == 1 => {
                self.rounded_division(short, args[0], src)
            }
            "__popc" | "__popcll" | "__clz" | "__clzll" | "__ffs" | "__ffsll"
                if args.len() == 1 =>
            {
                let bits = if short.ends_with("ll") { 64 } else { 32 };
                let op = match &short[..5] {
                    "__pop" => UnOp::Popc(bits),
                    "__clz" => UnOp::Clz(bits),
                    _ => UnOp::Ffs(bits),
                };
                let a = self.int(args[0], src);
                Val::Int(Expr::un(op, a))
            }
            "__mul24" | "__umul24" if args.len() == 2 => {
                let a = self.int(args[0], src);
                let b = self.int(args[1], src);
                Val::Int(Expr::times(a, b))
            }
            "abs" | "llabs" | "labs" if args.len() == 1 => {
                let a = self.int(args[0], src);
                Val::Int(Expr::bin(BinOp::Max, a.clone(), Expr::un(UnOp::Neg, a)))
            }
            "dim3" => {
                let mut d = [Expr::konst(1), Expr::konst(1), Expr::konst(1)];
                for (i, a) in args.iter().take(3).enumerate() {
                    d[i] = self.int(*a, src);
                }
                Val::Dim3(d)
            }
            "__syncthreads" | "__syncthreads_count" | "__syncthreads_and" | "__syncthreads_or" => {
                for a in args {
                    self.rv(*a, src);
                }
                self.barrier(n, src);
                // Each thread gets a count or predicate of the block's.
                if short == "__syncthreads" {
                    Val::Void
                } else {
                    self.unknown_val(Origin::CallResult {
                        callee: short.to_string(),
                    })
                }
            }
            "__syncwarp"
            | "__threadfence"
            | "__threadfence_block"
            | "__threadfence_system"
            | "assert"
            | "printf" => {
                for a in args {
                    self.rv(*a, src);
                }
                // A barrier or fence orders memory: nothing merges across it.
                self.fence();
                Val::Void
            }
            _ => return None,
        })
    }

    /// `ceil((float)n / (float)b)` (or `floor`) of constants: the usual
    /// grid-size idiom, worked out; anything else is an unknown result.
    fn rounded_division(&mut self, short: &str, arg: Node, src: &Src) -> Val {
        let mut inner = arg;
        while inner.node_kind() == "parenthesized_expression" {
            match inner.named(0) {
                Some(i) => inner = i,
                None => break,
            }
        }
        let div = inner.node_kind() == "binary_expression"
            && inner.field("operator").map(|o| o.node_kind()) == Some("/");
        if let (true, Some(l), Some(r)) = (div, inner.field("left"), inner.field("right")) {
            let a = self.int(l, src);
            let b = self.int(r, src);
            if let (Some(x), Some(y)) = (a.as_const(), b.as_const()) {
                if y > 0 && x >= 0 {
                    let v = if short.starts_with("ceil") {
                        (x + y - 1) / y
                    } else {
                        x / y
                    };
                    return Val::Int(Expr::konst(v));
                }
            }
        }
        self.rv(arg, src);
        self.unknown_val(Origin::CallResult {
            callee: format!("{short}()"),
        })
    }

    /// `atomicAdd(p, v)` and the other atomics (`_block`/`_system` too): an
    /// atomic access to the place `p` points to; the result is unknown.
    fn atomic(&mut self, short: &str, args: &[Node], n: Node, src: &Src) -> Option<Val> {
        let base = short.trim_end_matches("_block").trim_end_matches("_system");
        if !ATOMICS.contains(&base) {
            return None;
        }
        let first = args.first()?;
        Some(match self.rv(*first, src) {
            Val::Ptr(p) => {
                for a in &args[1..] {
                    self.rv(*a, src);
                }
                let place = Place {
                    obj: p.obj,
                    off: p.off,
                    ty: p.pointee,
                };
                self.access(&place, Op::Atomic, n, src);
                let w = place.off.clone();
                let origin = Origin::CallResult {
                    callee: short.into(),
                };
                Val::Int(self.unknown(origin, Some(w)))
            }
            _ => {
                for a in &args[1..] {
                    self.rv(*a, src);
                }
                self.unknown_val(Origin::CallResult {
                    callee: short.into(),
                })
            }
        })
    }

    /// `__ldg(p)` and the other cache-hinted loads, `__stcs(p, v)` and the
    /// other cache-hinted stores, through a known pointer: a load or store
    /// of the place it points to.
    fn hinted_access(&mut self, short: &str, args: &[Node], n: Node, src: &Src) -> Option<Val> {
        let is_load = matches!(
            short,
            "__ldg" | "__ldcs" | "__ldca" | "__ldcg" | "__ldlu" | "__ldcv"
        );
        let is_store = matches!(short, "__stcs" | "__stcg" | "__stwb" | "__stwt");
        if !(is_load || is_store) || args.is_empty() {
            return None;
        }
        let Val::Ptr(p) = self.rv(args[0], src) else {
            return None;
        };
        let place = Place {
            obj: p.obj,
            off: p.off,
            ty: p.pointee,
        };
        let first = self.k.accesses.len();
        let v = if is_load {
            self.rvalue_of(Val::Place(place), n, src)
        } else {
            for a in &args[1..] {
                self.rv(*a, src);
            }
            self.access(&place, Op::Store, n, src);
            Val::Void
        };
        for a in &mut self.k.accesses[first..] {
            a.hinted = true;
        }
        Some(v)
    }

    /// A function defined (with a body) in the file: inlined, the overload
    /// with as many parameters as arguments first.
    fn device_call(&mut self, short: &str, args: &[Node], n: Node, src: &Src) -> Option<Val> {
        let defs = self.tu.functions.get(short)?;
        let def = defs
            .iter()
            .rev()
            .find(|d| !d.is_kernel && param_count(d.node) == Some(args.len()))
            .or_else(|| defs.iter().rev().find(|d| !d.is_kernel))
            .cloned()?;
        def.node.field("body")?;
        let vals: Vec<Val> = args.iter().map(|a| self.expr(*a, src)).collect();
        if self.records_calls_of(short) {
            let span = self.span(n, src);
            self.record_host_call(short, &vals, span);
        }
        let v = self.inline_call(&def, vals, args.to_vec(), n, src);
        self.forget_written(short, args, src);
        Some(v)
    }

    /// What a call the analysis cannot see does to the state: its result
    /// is not known to be branch-free (undecided), and it may write memory
    /// (a fence for the nvcc models, and a shared value loaded before may
    /// differ after it).
    pub(super) fn unseen_call(&mut self) {
        self.undecided += 1;
        self.fences += 1;
        self.forget_memory();
    }

    /// A block-wide barrier at call `n`: recorded with the conditions and
    /// loops the thread reaches it under (unless which branch of an `if
    /// constexpr` is compiled is not known), then a fence.
    pub(super) fn barrier(&mut self, n: Node, src: &Src) {
        if self.constexpr_undecided.is_empty() {
            let span = self.span(n, src);
            self.k.barriers.push(crate::ir::Barrier {
                span,
                text: src.text(n),
                guards: self.current_guards(),
                loops: self.open_loops.clone(),
                inlined_at: self.call_site.clone(),
            });
        }
        self.fence();
    }

    /// A call the analysis cannot see into: its arguments are evaluated
    /// (their loads recorded) and its result is unknown. A math function
    /// that branches starts a new straight-line region; one not known to
    /// be branch-free counts as undecided.
    fn opaque_call(&mut self, short: &str, f: Node, args: &[Node], src: &Src) -> Val {
        let vals: Vec<Val> = args.iter().map(|a| self.rv(*a, src)).collect();
        if self.records_calls_of(short) {
            let span = self.span(f, src);
            self.record_host_call(short, &vals, span);
        }
        self.forget_written(short, args, src);
        let first = vals.into_iter().next();
        if fuse::SPLITS.contains(&short) {
            self.region += 1;
            self.branchy_calls += 1;
        } else if !fuse::MERGES.contains(&short) && !fuse::vector_constructor(short) {
            self.unseen_call();
        }
        let witness = match (args.len(), first) {
            (1, Some(Val::Int(e))) => Some(e),
            (0, _) => Some(Expr::konst(0)),
            _ => None,
        };
        let callee = format!("{short}()");
        // `elemPerCopy<T>()`, defined in the file, with a template
        // parameter that no launch instantiates.
        let dependent = if self.tu.functions.contains_key(short) {
            let callee = callee.clone();
            self.dependent_unknown(&src.text(f), witness.clone(), |param| {
                Origin::CallThroughTemplateParam { callee, param }
            })
        } else {
            None
        };
        dependent.unwrap_or_else(|| Val::Int(self.unknown(Origin::CallResult { callee }, witness)))
    }
}
