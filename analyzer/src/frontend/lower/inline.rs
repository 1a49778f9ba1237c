//! Inlining a `__device__` function (or a method, with its object) at a
//! call: template arguments bound (explicit, defaults, deduced from
//! pointer arguments), parameters bound to the arguments' values in a
//! fresh scope, the body lowered, and what it leaves: its result (the
//! returns merged), the caller's variables passed by reference, and the
//! members of objects held in registers (`objects.rs`). Bounded by
//! `budget::MAX_INLINE_DEPTH` and `budget::MAX_INLINED_CALLS`; a
//! recursive call is not followed.

use std::collections::HashMap;

use tree_sitter::Node;

use super::call::function_params;
use super::objects::This;
use super::{Binding, Frame, Lowerer, Scope, Src, Val};
use crate::budget;
use crate::finding::Origin;
use crate::frontend::fields::Fields;
use crate::frontend::tu::{FuncDef, TArg, TParam};
use crate::frontend::types::Ty;
use crate::ir::Expr;

/// Whether every path through an inlined `body` reaches its end (no
/// `return` before it): the values its variables hold at the end are the
/// ones it leaves.
fn straight(body: Node, frame: &Frame) -> bool {
    let last_returns = body
        .kids()
        .last()
        .is_some_and(|s| s.node_kind() == "return_statement");
    frame.returns.is_empty() || (frame.returns.len() == 1 && last_returns)
}

/// The arguments of an inlined call as its parameters take them
/// ([`Lowerer::pass_args`]).
struct Passed<'t> {
    /// Each parameter with the value it takes.
    converted: Vec<(Node<'t>, Val)>,
    /// Reference parameters whose argument names a caller's variable: the
    /// parameter's index and the variable.
    outs: Vec<(usize, String)>,
    /// Arguments that are objects held in registers: index, variable,
    /// struct.
    objects: Vec<(usize, String, (String, Vec<TArg>))>,
    /// Whether each parameter is a reference.
    refs: Vec<bool>,
}

impl<'a, 't> Lowerer<'a, 't> {
    pub(super) fn inline_call(
        &mut self,
        def: &FuncDef<'t>,
        vals: Vec<Val>,
        arg_nodes: Vec<Node>,
        n: Node,
        src: &Src,
    ) -> Val {
        self.inline_with(def, vals, arg_nodes, n, src, None).0
    }

    /// `def` inlined for the call `n` with arguments `vals` (written
    /// `arg_nodes`); a method with its object `this` (`objects.rs`), whose
    /// names after the body come back with the result (`None`: not known,
    /// the body returned before its end, or no object).
    pub(super) fn inline_with(
        &mut self,
        def: &FuncDef<'t>,
        vals: Vec<Val>,
        arg_nodes: Vec<Node>,
        n: Node,
        src: &Src,
        this: Option<This>,
    ) -> (Val, Option<Scope>) {
        if let Some(v) = self.not_inlined(def, &vals, &arg_nodes, n, src) {
            return (v, None);
        }
        self.inlined += 1;
        let main = Src::of(def.src);
        let Some(body) = def.node.field("body") else {
            return (Val::Void, None);
        };
        let params = function_params(def.node);
        let mut scope = Scope::new();
        let mut tscope = HashMap::new();
        // A method's struct's type parameters, bound to its object's type.
        if let Some(t) = &this {
            if let Some((tparams, _, _)) = self.struct_instance(&t.strukt.0, &t.strukt.1) {
                let mut unused = Scope::new();
                self.bind_targs(&tparams, &t.strukt.1, &mut tscope, &mut unused);
            }
        }
        // Explicit template arguments (`put<Cfg<8>, 4>(s)`), read in the
        // caller's scope; a type not given is deduced below.
        let explicit = n
            .field("function")
            .filter(|f| f.node_kind() == "template_function")
            .and_then(|f| f.field("arguments"))
            .map(|list| self.template_args(list, src))
            .unwrap_or_default();
        self.bind_targs(&def.tparams, &explicit, &mut tscope, &mut scope);
        self.value_defaults(def, explicit.len(), &mut scope, &main);
        let Passed {
            converted,
            outs,
            objects,
            refs,
        } = self.pass_args(def, &params, vals, (&arg_nodes, n, src), &mut tscope);
        self.tscopes.push(tscope);
        // The callee's names of opaque types are its own (a fragment
        // parameter `c` is not the caller's `c`).
        let saved_opaque = std::mem::take(&mut self.opaque_vars);
        let saved_structs = std::mem::take(&mut self.struct_vars);
        let pnames = self.bind_params(converted, &mut scope, &main);
        let object_members = self.objects_into(objects, &refs, &pnames, &mut scope, this.is_some());
        let method = this.as_ref().map(|t| t.strukt.clone());
        let new_scopes = match this {
            Some(t) => vec![t.names, scope],
            None => vec![scope],
        };
        let saved_scopes = std::mem::replace(&mut self.scopes, new_scopes);
        if let Some(m) = &method {
            self.member_scopes.push(m.clone());
        }
        self.methods.push(method.clone());
        self.frames.push(Frame {
            guard_base: self.guards.len(),
            ..Frame::default()
        });
        self.inline_depth += 1;
        self.inlining.push(def.name.clone());
        let call = crate::ir::Inlined {
            call: self.span(n, src),
            callee: def.name.clone(),
            repeated: !self.open_loops.is_empty(),
        };
        let outer = self.call_site.replace(call);
        if let Some(init) = def
            .node
            .kids()
            .into_iter()
            .find(|k| k.node_kind() == "field_initializer_list")
        {
            self.member_initializers(init, &main);
        }
        self.stmt(body, &main);
        self.call_site = outer;
        self.inlining.pop();
        self.inline_depth -= 1;
        self.methods.pop();
        if method.is_some() {
            self.member_scopes.pop();
        }
        let frame = self.frames.pop().unwrap_or_default();
        let straight = straight(body, &frame);
        let outs = if straight {
            self.out_values(outs, &pnames)
        } else {
            Vec::new()
        };
        let after = (straight && method.is_some())
            .then(|| self.scopes.first().cloned())
            .flatten();
        let written = self.objects_left(object_members, straight);
        self.scopes = saved_scopes;
        self.opaque_vars = saved_opaque;
        self.struct_vars = saved_structs;
        for (name, v) in outs {
            if let Some(b) = self.lookup_mut(&name) {
                b.val = v;
            }
        }
        self.write_objects(written);
        self.tscopes.pop();
        let mut rets = frame.returns;
        let Some((_, last)) = rets.pop() else {
            return (Val::Void, after);
        };
        let v = rets
            .into_iter()
            .rev()
            .fold(last, |v, (c, val)| self.merge_vals(c, val, v));
        (v, after)
    }

    /// A constructor's member initializers (`: buf(buf), idx(t)`), each
    /// assigned to the member (the outermost name) in the constructor's
    /// scope.
    fn member_initializers(&mut self, list: Node, src: &Src) {
        for fi in list.kids() {
            if fi.node_kind() != "field_initializer" {
                continue;
            }
            let kids = fi.kids();
            let (Some(name), Some(value)) = (kids.first(), kids.get(1)) else {
                continue;
            };
            let name = src.text(*name);
            let v = match value
                .kids()
                .into_iter()
                .find(|x| x.node_kind() != "comment")
            {
                Some(e) => self.rv(e, src),
                None => Val::Int(Expr::konst(0)),
            };
            if let Some(b) = self.scopes.first_mut().and_then(|s| s.get_mut(&name)) {
                b.val = v;
            }
        }
    }

    /// A value template parameter the call does not give (`explicit`
    /// given) takes its default (`template <int width = WARP_SIZE>`), read
    /// in the callee's scope: its earlier parameters and the file's names,
    /// not the caller's variables.
    fn value_defaults(
        &mut self,
        def: &FuncDef<'t>,
        explicit: usize,
        scope: &mut Scope,
        main: &Src,
    ) {
        for (i, p) in def.tparams.iter().enumerate().skip(explicit) {
            let (TParam::Value(name), Some(Some(d))) = (p, def.tdefaults.get(i)) else {
                continue;
            };
            let saved = std::mem::replace(&mut self.scopes, vec![scope.clone()]);
            let v = self.const_int(*d, main);
            self.scopes = saved;
            if let Some(v) = v {
                let val = Val::Int(Expr::konst(v));
                scope.insert(name.clone(), Binding { val });
            }
        }
    }

    /// The caller's variable a reference parameter's argument names (`x`
    /// in `udivmod(i, DX / 2, x)` with `uint &rem`): what the callee
    /// assigns to the parameter, the caller's variable holds after the
    /// call. Not a place in memory (that is a reference into the array).
    fn out_arg(&self, arg: Option<Node>, src: &Src) -> Option<String> {
        let arg = arg.filter(|a| a.node_kind() == "identifier")?;
        let name = src.text(arg);
        let b = self.lookup(&name)?;
        (!matches!(b.val, Val::Place(_))).then_some(name)
    }

    /// The values the callee left in its reference parameters `outs`, for
    /// the caller's variables they name, read at the end of its body
    /// (called only when every path reaches the end: a `return` before it
    /// would leave another value, so none is written back then, and the
    /// caller's variables keep theirs).
    fn out_values(&self, outs: Vec<(usize, String)>, pnames: &[String]) -> Vec<(String, Val)> {
        outs.into_iter()
            .filter_map(|(i, caller)| {
                let v = self.lookup(pnames.get(i)?)?.val.clone();
                Some((caller, v))
            })
            .collect()
    }

    /// Binds each parameter `p` of an inlined function to its argument's
    /// value (as declared) in `scope`; returns the parameters' names.
    fn bind_params(
        &mut self,
        converted: Vec<(Node, Val)>,
        scope: &mut Scope,
        main: &Src,
    ) -> Vec<String> {
        let mut pnames = vec![String::new(); converted.len()];
        for (i, (p, v)) in converted.into_iter().enumerate() {
            let Some(tn) = p.field("type") else {
                continue;
            };
            let base = self.resolve_type(tn, main);
            let Some(d) = p.field("declarator") else {
                continue;
            };
            let (pname, ty, _, _) = self.declarator_ref(base, d, main, 0);
            pnames[i] = pname.clone();
            if matches!(ty, Ty::Float { .. }) {
                self.float_vars.insert(pname.clone());
            }
            if matches!(ty, Ty::Opaque { .. }) {
                self.opaque_vars.insert(pname.clone(), ty.clone());
            }
            let v = self.as_declared(&ty, v, &main.text(p));
            scope.insert(pname, Binding { val: v });
        }
        pnames
    }

    /// The result of a call of `def` that is not inlined: a recursive
    /// call (its arguments' loads still recorded), or one past the
    /// inlining budgets. `None`: inline it.
    fn not_inlined(
        &mut self,
        def: &FuncDef<'t>,
        vals: &[Val],
        arg_nodes: &[Node],
        n: Node,
        src: &Src,
    ) -> Option<Val> {
        if self.inlining.contains(&def.name) {
            for (i, v) in vals.iter().enumerate() {
                let an = arg_nodes.get(i).copied().unwrap_or(n);
                self.rvalue_of(v.clone(), an, src);
            }
            let v = self.unknown_val(Origin::RecursiveCall {
                function: def.name.clone(),
            });
            return Some(v);
        }
        if self.inline_depth >= budget::MAX_INLINE_DEPTH
            || self.inlined >= budget::MAX_INLINED_CALLS
        {
            let b = if self.inline_depth >= budget::MAX_INLINE_DEPTH {
                budget::INLINE_DEPTH
            } else {
                budget::INLINED_CALLS
            };
            let what = Origin::CallResult {
                callee: def.name.clone(),
            };
            return Some(self.budget_unknown(n, src, b, what));
        }
        None
    }

    /// The arguments `vals` (written `arg_nodes` at call `n`) as `def`'s
    /// parameters `params` take them, evaluated in the caller's scope: by
    /// value (loaded) or by reference (the caller's variable noted to
    /// receive what the callee leaves), objects held in registers noted,
    /// and `T` deduced from a `T *` parameter's argument into `tscope`.
    fn pass_args(
        &mut self,
        def: &FuncDef<'t>,
        params: &[Node<'t>],
        vals: Vec<Val>,
        (arg_nodes, n, src): (&[Node], Node, &Src),
        tscope: &mut HashMap<String, Ty>,
    ) -> Passed<'t> {
        let main = Src::of(def.src);
        let tnames: Vec<String> = def
            .tparams
            .iter()
            .filter_map(|p| match p {
                TParam::Type(n) => Some(n.clone()),
                TParam::Value(_) => None,
            })
            .collect();
        let mut out = Passed {
            converted: Vec::new(),
            outs: Vec::new(),
            objects: Vec::new(),
            refs: Vec::new(),
        };
        for (i, (p, v)) in params.iter().zip(vals).enumerate() {
            let tn = p.field("type");
            let is_ref = p
                .field("declarator")
                .map(|d| d.node_kind() == "reference_declarator")
                .unwrap_or(false);
            // An object held in registers: the callee's parameter holds
            // its members (the caller's, by reference).
            let object = arg_nodes
                .get(i)
                .filter(|a| a.node_kind() == "identifier")
                .map(|a| src.text(*a))
                .and_then(|a| self.object_struct(&a).map(|s| (a, s)));
            if let Some((a, s)) = object {
                out.objects.push((i, a, s));
            }
            out.refs.push(is_ref);
            let v = if is_ref {
                if let Some(name) = self.out_arg(arg_nodes.get(i).copied(), src) {
                    out.outs.push((i, name));
                }
                v
            } else {
                let an = arg_nodes.get(i).copied().unwrap_or(n);
                self.rvalue_of(v, an, src)
            };
            // Deduce `T` from `T *` arguments (an array argument as the
            // pointer it decays to).
            let pointer_param = p.field("declarator").is_some_and(|d| {
                matches!(d.node_kind(), "pointer_declarator" | "array_declarator")
            });
            if let (Some(tn), Val::Ptr(ptr), true) = (tn, &v, pointer_param) {
                let tname = main.text(tn);
                if tnames.contains(&tname) && !tscope.contains_key(&tname) {
                    tscope.insert(tname, ptr.pointee.clone());
                }
            }
            out.converted.push((*p, v));
        }
        out
    }
}
