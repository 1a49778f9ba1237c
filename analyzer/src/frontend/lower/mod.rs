//! Lowering of CUDA syntax to the IR.
//!
//! Expressions evaluate to [`Val`]s: symbolic integers, pointers into a
//! memory object, places (lvalues in memory, loaded or stored only when
//! used), `dim3` triples and cooperative groups. Variables are substituted through their
//! assignments (branches merge into selects; loops turn reassigned
//! variables into loop-carried ones), so each access sees the value a
//! variable has at that point of the program.
//!
//! This file holds the [`Lowerer`] (its state: scopes, guards, frames),
//! the value types and the entry point for a kernel ([`Lowerer::lower_kernel`]);
//! each concern of the walk lives in its own room, all `impl Lowerer`:
//!
//! - `expr`: expressions (names, operators, fields, assignments);
//! - `memory`: places in memory: loads, subscripts, the `Access` records;
//! - `call`: calls: builtins, atomics, `__device__` functions (inlined by `inline`);
//! - `groups`: cooperative groups and their members;
//! - `stmt`: statements: blocks, `if`, `switch`, `return`/`break`/`continue`;
//! - `loops`: loops and their loop-carried variables;
//! - `decl`: types, declarators and local declarations;
//! - `templates`: template arguments and static members of struct templates;
//! - `objects`: struct objects held in registers: members, constructors, methods;
//! - `macros`: a macro expanded at its use by parsing its text;
//! - `launch`: host functions walked for kernel launch sites.

mod assign;
mod call;
mod decl;
mod expr;
mod flags;
mod groups;
pub(crate) mod host_calls;
mod inline;
mod launch;
mod launch_api;
mod loops;
mod macros;
mod memory;
pub(crate) mod objects;
mod predicate;
mod shuffle;
mod stmt;
mod templates;
mod wmma;

use std::collections::HashMap;

use tree_sitter::Node;

use super::fields::Fields;
use super::source::Source;
use super::tu::{FuncDef, LaunchSite, TArg, TParam, Tu};
use super::types::{self, size_of, Ty};
use crate::budget;
use crate::finding::{Budget, Cut, NoteKind, Origin};
use crate::ir::{Atom, BinOp, Expr, Guard, Kernel, Note, Param, Space, Span, UnOp};
pub(crate) use call::function_params;

/// The text a node belongs to, and the span to report for everything in
/// it when it comes from a macro expansion.
#[derive(Clone, Copy)]
pub(crate) struct Src<'s> {
    pub bytes: &'s [u8],
    pub at: Option<Span>,
    /// The file the node's offsets are in (for lines and columns).
    pub map: &'s Source,
}

impl<'s> Src<'s> {
    /// The text of a whole file.
    pub fn of(source: &'s Source) -> Src<'s> {
        Src {
            bytes: &source.text,
            at: None,
            map: source,
        }
    }
    pub fn text(&self, n: Node) -> String {
        let r = n.byte_range();
        match self.bytes.get(r) {
            Some(b) => String::from_utf8_lossy(b).into_owned(),
            None => String::new(),
        }
    }
    pub(crate) fn span(&self, n: Node) -> Span {
        self.at
            .unwrap_or_else(|| self.map.span(n.start_byte(), n.end_byte()))
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Ptr {
    pub obj: usize,
    pub off: Expr,
    pub pointee: Ty,
}

#[derive(Clone, Debug)]
pub(crate) struct Place {
    pub obj: usize,
    pub off: Expr,
    pub ty: Ty,
}

#[derive(Clone, Debug)]
pub(crate) enum Val {
    Int(Expr),
    Ptr(Ptr),
    Place(Place),
    Dim3([Expr; 3]),
    Group(groups::Group),
    /// One of two pointers (or places) in different objects, which no
    /// one select can hold: `(w < 4) ? A + i : B + j`. `.0` nonzero picks
    /// `.1`, else `.2`. What is done through it is done on each, under its
    /// side of the condition ([`Lowerer::on_each`]): an access records
    /// one access per object, each guarded.
    Either(Box<(Expr, Val, Val)>),
    Void,
}

impl Val {
    /// How many objects a value may be in: 1, or each side's of a
    /// [`Val::Either`].
    pub(super) fn choices(&self) -> usize {
        match self {
            Val::Either(e) => e.1.choices() + e.2.choices(),
            _ => 1,
        }
    }

    /// The null pointer (`0`, `NULL`, `nullptr`): a side of a pointer
    /// choice through which nothing is accessed.
    pub(super) fn is_null(&self) -> bool {
        matches!(self, Val::Int(z) if z.as_const() == Some(0))
    }

    /// Whether two values are the same (a branch that left a variable as
    /// it was: no merge, so a pointer choice is not wrapped in another).
    pub(super) fn same(&self, other: &Val) -> bool {
        match (self, other) {
            (Val::Int(a), Val::Int(b)) => a.same(b),
            (Val::Ptr(a), Val::Ptr(b)) => a.obj == b.obj && a.off.same(&b.off),
            (Val::Place(a), Val::Place(b)) => a.obj == b.obj && a.off.same(&b.off),
            (Val::Dim3(a), Val::Dim3(b)) => a.iter().zip(b).all(|(x, y)| x.same(y)),
            (Val::Either(a), Val::Either(b)) => a.0.same(&b.0) && a.1.same(&b.1) && a.2.same(&b.2),
            (Val::Void, Val::Void) => true,
            _ => false,
        }
    }
}

/// What a pointer the lowering cannot follow is ([`Lowerer::pointee_object`]):
/// a field of a by-value struct parameter, or a load of an object at an
/// offset; not how it is written (`rows[i]` before and after `i = i + 1`
/// are two).
pub(super) enum PointeeKey {
    Field(String),
    Load(usize, Expr),
    /// A pointer whose space is not known ([`Lowerer::generic_pointer`]),
    /// by its text.
    Generic(String),
}

impl PointeeKey {
    fn same(&self, other: &PointeeKey) -> bool {
        match (self, other) {
            (PointeeKey::Field(a), PointeeKey::Field(b)) => a == b,
            (PointeeKey::Load(o, a), PointeeKey::Load(p, b)) => o == p && a.same(b),
            (PointeeKey::Generic(a), PointeeKey::Generic(b)) => a == b,
            _ => false,
        }
    }
}

#[derive(Clone, Debug)]
struct Binding {
    val: Val,
}

#[derive(Default)]
struct LoopCtx {
    /// `usize::MAX` for a `switch` (a `break` there leaves the switch).
    id: usize,
    skip: Vec<Guard>,
    returned: bool,
}

#[derive(Default)]
struct Frame {
    dead: Vec<Guard>,
    loops: Vec<LoopCtx>,
    returns: Vec<(Expr, Val)>,
    terminated: bool,
    guard_base: usize,
}

type Scope = HashMap<String, Binding>;

pub(crate) struct Lowerer<'a, 't> {
    tu: &'a Tu<'t>,
    pub k: Kernel,
    pub notes: Vec<Note>,
    scopes: Vec<Scope>,
    tscopes: Vec<HashMap<String, Ty>>,
    guards: Vec<Guard>,
    frames: Vec<Frame>,
    open_loops: Vec<usize>,
    globals_map: HashMap<String, usize>,
    /// The kernel's by-value struct parameters, by name, with their types:
    /// a pointer field of one (`p.data`) is one value for the whole launch
    /// ([`Lowerer::pointee_object`]).
    struct_params: HashMap<String, (Ty, Expr)>,
    /// The objects [`Lowerer::pointee_object`] made in this kernel, by what
    /// the pointer is (a struct parameter's field, a load's object and
    /// offset), not by how it is written.
    pointees: Vec<(PointeeKey, usize)>,
    /// The structs (and template arguments) whose static member is being
    /// evaluated: a sibling member's name resolves there.
    member_scopes: Vec<(String, Vec<TArg>)>,
    /// Static members evaluated so far (a chain of members that each use
    /// the one before twice is evaluated once per member, not 2^n times).
    member_values: HashMap<String, Option<i64>>,
    /// Budgets that ran out in this kernel and were noted (once each).
    budgets_noted: Vec<&'static str>,
    /// Macro uses expanded in this kernel (`budget::MAX_MACRO_EXPANSIONS`).
    expansions: u32,
    depth: u32,
    inline_depth: u32,
    /// The call being inlined, innermost ([`crate::ir::Access::inlined_at`]).
    call_site: Option<crate::ir::Inlined>,
    /// IEEE floating-point divisions lowered so far: each calls a slow
    /// path in SASS, and a loop holding one is not merged into vector
    /// accesses ([`crate::ir::Loop::splits_regions`]; measured:
    /// `fixtures/groundtruth/sm_90/unrolled_loads.cu`).
    slow_paths: u32,
    /// Barriers, fences and calls the engine cannot see (which may write
    /// memory) lowered so far ([`crate::ir::Loop::fenced`]).
    fences: u32,
    /// The sides of the kernel's `if`s, in the order their lowering
    /// finished, for [`predicate::mark`].
    if_sides: Vec<predicate::Side>,
    /// Calls whose code branches (a math function of `fuse::SPLITS`) and
    /// floating-point divisions (a slow path; not by a power of two, which
    /// is a multiplication) lowered so far: work nvcc branches around in
    /// an `if` (`stmt.rs`, `has_work`).
    branchy_calls: u32,
    /// Warp-synchronising intrinsics lowered so far (`call.rs`,
    /// `warp_sync`; `asm` with `shfl.sync`, `vote.sync`, …): with `fences`,
    /// an access's [`crate::ir::Access::epoch`].
    warp_syncs: u32,
    /// Names declared with a floating-point type (an approximation of
    /// scope: the last declaration of a name wins).
    float_vars: std::collections::HashSet<String>,
    /// Names declared with an opaque library type (a `wmma::fragment`, not
    /// in memory: its value is not known), with the type; the same
    /// approximation of scope (`wmma.rs` reads a fragment's type here).
    opaque_vars: HashMap<String, Ty>,
    /// Names declared with a struct type the file defines, by name and
    /// the depth of the scope that declares them, with the struct's name
    /// and template arguments (`SharedMemory<T> smem;`), for a call of its
    /// methods (`smem.getPointer()`). An inlined function starts without
    /// them (its parameters are not known to be structs).
    struct_vars: HashMap<(String, usize), (String, Vec<TArg>)>,
    /// Per function being inlined, innermost last, the struct whose method
    /// it is (`None`: not a method): its object's members are the
    /// outermost scope (`objects.rs`).
    methods: Vec<Option<(String, Vec<TArg>)>>,
    /// Functions being inlined (a recursive call is not followed).
    inlining: Vec<String>,
    /// Calls inlined so far in this kernel.
    inlined: u32,
    expanding: Vec<String>,
    launches: Option<Vec<LaunchSite>>,
    /// The host function walked for launches and calls
    /// (`host_calls.rs`).
    host_fn: Option<host_calls::HostFn>,
    /// The calls of launching functions the host walks made.
    pub host_calls: Vec<crate::ir::HostCall>,
    /// In a host walk, the variables holding a kernel (`launch_api.rs`).
    kernel_vars: HashMap<String, (String, Vec<TArg>)>,
    /// In a host walk, the `gridDim` and `blockDim` assigned to each
    /// launch configuration variable (`config.blockDim = nthrs;`), for
    /// `cudaLaunchKernelEx(&config, …)`.
    launch_cfgs: HashMap<String, (Option<Val>, Option<Val>)>,
    /// `using K = Name<args>;` in the function being lowered, innermost
    /// last (see `scope_struct`).
    local_aliases: Vec<HashMap<String, (String, Vec<TArg>)>>,
    /// The representative type (spelled, and resolved) that a type
    /// parameter with no argument is bound to, and the parameters bound
    /// to it so far (`Kernel::representative`).
    representative: Option<(String, Ty)>,
    represented: Vec<String>,
    /// The value template parameters the last `bind_template_args` gave
    /// no value (no argument, no default), and whether each is a `bool`:
    /// a kernel analyses them as integer parameters over representative
    /// values.
    unbound_values: Vec<(String, bool)>,
    /// Inside an `if constexpr` whose condition is not known (it reads a
    /// value that is not, innermost last): which branch nvcc compiles is
    /// not known, so an access there is unknown, for this reason.
    constexpr_undecided: Vec<Origin>,
    /// In the walk of a host function template that nothing instantiates,
    /// its type parameters: a launch passing one gives no known type.
    open_type_params: Vec<String>,
    /// Struct template instances that template parameters are bound to,
    /// by the type's text (see `instance`).
    instances: HashMap<String, (String, Vec<TArg>)>,
    /// Struct template instances laid out in this lowering, by their
    /// spelling (`templates.rs`, `struct_template_instance`).
    instance_types: HashMap<String, Ty>,
    /// Names the current launching function sets to moved pointers, by
    /// the function body's byte range (see `offset_pointer`).
    moved: Option<((usize, usize), std::collections::HashSet<String>)>,
    /// [`Access::region`] of the next access.
    region: u32,
    /// [`Access::undecided`] of the next access.
    undecided: u32,
    /// Block-uniform loads made inputs so far, by object and offset, with
    /// their parameter (`memory.rs`, `block_uniform_load`); a store to the
    /// object forgets its entries.
    uniform_loads: Vec<(usize, Expr, u32)>,
    /// Per shared object, whether the last store to it lowered stored a
    /// value the analysis knows (a constant, a parameter): a load of it is
    /// then not made an input (`memory.rs`).
    last_store_known: HashMap<usize, bool>,
    /// Integers this thread stored and may read back (`memory.rs`,
    /// `own_store`): cleared by any other store, a barrier, a call the
    /// analysis cannot see, and at a loop's start and end.
    own_stores: Vec<memory::OwnStore>,
}

fn and(a: Expr, b: Expr) -> Expr {
    Expr::bin(BinOp::LAnd, a, b)
}

/// Whether a statement of a body may emit an instruction: not a comment,
/// not a `__shared__` (or `static`) declaration, not a declaration
/// without an initializer.
fn emits_code(s: Node, src: &Src) -> bool {
    match s.node_kind() {
        "comment" | "empty_statement" => false,
        "declaration" => {
            let text = src.text(s);
            let storage = ["__shared__", "static", "extern"]
                .iter()
                .any(|q| text.split_whitespace().any(|w| w == *q));
            let initialised = s
                .kids()
                .into_iter()
                .any(|d| d.node_kind() == "init_declarator");
            !storage && initialised
        }
        _ => true,
    }
}

fn guard_expr(g: &Guard) -> Expr {
    if g.expect {
        Expr::bin(BinOp::Ne, g.cond.clone(), Expr::konst(0))
    } else {
        Expr::un(UnOp::Not, g.cond.clone())
    }
}

pub(crate) fn parse_int(text: &str) -> Option<i64> {
    let t: String = text.chars().filter(|c| *c != '\'').collect();
    let t = t.trim_end_matches(['u', 'U', 'l', 'L']);
    if t.is_empty() {
        return None;
    }
    let (digits, radix) = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        (h, 16)
    } else if let Some(b) = t.strip_prefix("0b").or_else(|| t.strip_prefix("0B")) {
        (b, 2)
    } else if t.len() > 1 && t.starts_with('0') {
        (&t[1..], 8)
    } else {
        (t, 10)
    };
    u64::from_str_radix(digits, radix).ok().map(|v| v as i64)
}

impl<'a, 't> Lowerer<'a, 't> {
    pub fn new(tu: &'a Tu<'t>) -> Self {
        Lowerer {
            tu,
            k: Kernel::default(),
            notes: Vec::new(),
            scopes: vec![Scope::new()],
            tscopes: vec![HashMap::new()],
            guards: Vec::new(),
            frames: vec![Frame::default()],
            open_loops: Vec::new(),
            globals_map: HashMap::new(),
            struct_params: HashMap::new(),
            pointees: Vec::new(),
            depth: 0,
            inline_depth: 0,
            call_site: None,
            slow_paths: 0,
            fences: 0,
            if_sides: Vec::new(),
            branchy_calls: 0,
            warp_syncs: 0,
            float_vars: Default::default(),
            opaque_vars: HashMap::new(),
            struct_vars: HashMap::new(),
            methods: Vec::new(),
            inlining: Vec::new(),
            inlined: 0,
            expanding: Vec::new(),
            member_scopes: Vec::new(),
            member_values: HashMap::new(),
            budgets_noted: Vec::new(),
            expansions: 0,
            launches: None,
            host_fn: None,
            host_calls: Vec::new(),
            kernel_vars: HashMap::new(),
            launch_cfgs: HashMap::new(),
            local_aliases: vec![HashMap::new()],
            instances: HashMap::new(),
            instance_types: HashMap::new(),
            representative: None,
            represented: Vec::new(),
            unbound_values: Vec::new(),
            constexpr_undecided: Vec::new(),
            open_type_params: Vec::new(),
            moved: None,
            region: 0,
            undecided: 0,
            uniform_loads: Vec::new(),
            last_store_known: HashMap::new(),
            own_stores: Vec::new(),
        }
    }

    fn structs(&self) -> &[types::StructDef] {
        &self.tu.structs
    }

    fn span(&self, n: Node, src: &Src) -> Span {
        src.span(n)
    }

    fn note(&mut self, n: Node, src: &Src, kind: NoteKind) {
        let span = self.span(n, src);
        if !self.notes.iter().any(|x| x.span == span && x.kind == kind) {
            self.notes.push(Note { span, kind });
        }
    }

    fn unknown(&mut self, origin: Origin, witness: Option<Expr>) -> Expr {
        self.k.add_unknown(origin, witness)
    }

    fn unknown_val(&mut self, origin: Origin) -> Val {
        Val::Int(self.unknown(origin, None))
    }

    /// A budget ran out at `n`: an unknown value, `what` past the budget,
    /// and (once per kernel and budget) a note there.
    fn budget_unknown(&mut self, n: Node, src: &Src, budget: Budget, what: Origin) -> Val {
        let origin = Origin::OutOfBudget {
            what: Box::new(what),
            budget,
        };
        if self.first_time(budget) {
            let kind = NoteKind::ValueOutOfBudget {
                origin: origin.clone(),
            };
            self.note(n, src, kind);
        }
        self.unknown_val(origin)
    }

    /// A budget ran out at `n`: (once per kernel and budget) a note there
    /// saying `what` was cut short.
    fn budget_note(&mut self, n: Node, src: &Src, budget: Budget, what: Cut) {
        if self.first_time(budget) {
            self.note(n, src, NoteKind::OutOfBudget { what, budget });
        }
    }

    /// Whether `budget` runs out for the first time in this kernel.
    fn first_time(&mut self, budget: Budget) -> bool {
        if self.budgets_noted.contains(&budget.name) {
            return false;
        }
        self.budgets_noted.push(budget.name);
        true
    }

    /// A struct's alignment: its `alignas(expr)` read here (template
    /// arguments bound where the struct is an instance), else `blanked`
    /// (an `__align__(n)` the source reader kept).
    pub(crate) fn struct_alignment(
        &mut self,
        n: Node,
        src: &Src,
        blanked: Option<u64>,
    ) -> Option<u64> {
        let mut force = blanked;
        for ch in n.kids() {
            if ch.node_kind() == "alignas_qualifier" {
                if let Some(v) = ch.named(0) {
                    force = self.const_int(v, src).map(|v| v.max(1) as u64).or(force);
                }
            }
        }
        force
    }

    pub fn const_int(&mut self, n: Node, src: &Src) -> Option<i64> {
        self.int(n, src).as_const()
    }

    /// The children of the first branch of a `#if`/`#ifdef`/`#elif`/`#else`.
    ///
    /// `preprocess` resolves and blanks every conditional directive before
    /// parsing, so the grammar meets one only where a line it could not
    /// read as a directive is one after all; the first branch is then
    /// analysed, as for a condition that cannot be evaluated.
    pub fn preproc_branch<'n>(n: Node<'n>) -> Vec<Node<'n>> {
        let skip: Vec<usize> = ["condition", "name", "alternative"]
            .iter()
            .filter_map(|f| n.field(f).map(|c| c.id()))
            .collect();
        n.kids()
            .into_iter()
            .filter(|k| !skip.contains(&k.id()))
            .collect()
    }

    pub(crate) fn int(&mut self, n: Node, src: &Src) -> Expr {
        let v = self.rv(n, src);
        self.as_int(v)
    }

    /// `f` of `v`; of each side of a [`Val::Either`], under that side's
    /// condition (an access `f` records is guarded by it), the results
    /// chosen by the same condition again. A null side stays null: nothing
    /// is done through it.
    pub(super) fn on_each(&mut self, v: Val, f: &mut dyn FnMut(&mut Self, Val) -> Val) -> Val {
        let Val::Either(e) = v else {
            return f(self, v);
        };
        let (cond, a, b) = *e;
        let mut side = |s: &mut Self, v: Val, expect: bool| {
            if v.is_null() {
                return v;
            }
            s.guards.push(Guard {
                cond: cond.clone(),
                expect,
                site: None,
                exits: false,
            });
            let r = s.on_each(v, f);
            s.guards.pop();
            r
        };
        let ra = side(self, a, true);
        let rb = side(self, b, false);
        self.merge_vals(cond, ra, rb)
    }

    fn as_int(&mut self, v: Val) -> Expr {
        match v {
            Val::Int(e) => e,
            Val::Ptr(p) => self.unknown(
                Origin::PointerAsInteger,
                Some(Expr::plus(p.off, Expr::konst(p.obj as i64 * (1 << 40)))),
            ),
            _ => self.unknown(Origin::NotAnInteger, None),
        }
    }

    fn rv(&mut self, n: Node, src: &Src) -> Val {
        let v = self.expr(n, src);
        self.rvalue_of(v, n, src)
    }

    fn lookup(&self, name: &str) -> Option<&Binding> {
        self.scopes.iter().rev().find_map(|s| s.get(name))
    }

    fn lookup_mut(&mut self, name: &str) -> Option<&mut Binding> {
        self.scopes.iter_mut().rev().find_map(|s| s.get_mut(name))
    }

    fn bind(&mut self, name: String, val: Val) {
        if let Some(s) = self.scopes.last_mut() {
            s.insert(name, Binding { val });
        }
    }

    /// `v` bound to a variable or parameter declared with type `ty`
    /// (`declared`: the declaration's text): a pointer takes the declared
    /// pointee, and one declared `volatile` bound to the start of an object
    /// marks it ([`crate::ir::MemObject::volatile`]); any other value as it
    /// is.
    fn as_declared(&mut self, ty: &Ty, v: Val, declared: &str) -> Val {
        match (ty, v) {
            (Ty::Ptr(t), Val::Ptr(p)) => {
                if declared.contains("volatile") {
                    if let Some(o) = self.k.objects.get_mut(p.obj) {
                        o.volatile |= p.off.as_const() == Some(0);
                        o.volatile_view = true;
                    }
                }
                Val::Ptr(Ptr {
                    obj: p.obj,
                    off: p.off,
                    pointee: (**t).clone(),
                })
            }
            (_, v) => v,
        }
    }

    /// A barrier or fence: it orders memory (nothing merges across it, no
    /// load is hoisted out of a loop holding it).
    fn fence(&mut self) {
        self.region += 1;
        self.fences += 1;
        // Another thread may have written any shared value before it.
        self.forget_memory();
    }

    fn frame(&mut self) -> &mut Frame {
        if self.frames.is_empty() {
            self.frames.push(Frame::default());
        }
        let i = self.frames.len() - 1;
        &mut self.frames[i]
    }

    fn current_guards(&self) -> Vec<Guard> {
        let mut g = self.guards.clone();
        for f in &self.frames {
            g.extend(f.dead.iter().cloned());
            for l in &f.loops {
                g.extend(l.skip.iter().cloned());
            }
        }
        g
    }

    fn current_cond(&self) -> Expr {
        self.current_guards()
            .iter()
            .fold(Expr::konst(1), |acc, g| and(acc, guard_expr(g)))
    }

    fn elem_size(&self, ty: &Ty) -> Option<u64> {
        size_of(ty, self.structs())
    }

    /// Binds `def`'s template parameters to `targs` (a missing one to its
    /// default; one with neither to an unknown, dependent value or an
    /// unknown type) in a new type scope, and returns each argument as the
    /// instantiation's name shows it.
    pub(crate) fn bind_template_args(
        &mut self,
        def: &FuncDef<'t>,
        targs: &[TArg],
        main: &Src,
    ) -> Vec<String> {
        let mut shown = Vec::new();
        let mut tscope = HashMap::new();
        self.unbound_values.clear();
        for (i, p) in def.tparams.iter().enumerate() {
            // A missing argument takes the parameter's default, if any.
            let defaulted = match (p, targs.get(i), def.tdefaults.get(i).copied().flatten()) {
                (TParam::Value(_), None, Some(d)) => self.const_int(d, main).map(TArg::Value),
                (TParam::Type(_), None, Some(d)) => {
                    Some(TArg::Type(if d.node_kind() == "type_descriptor" {
                        self.type_descriptor(d, main)
                    } else {
                        self.resolve_type(d, main)
                    }))
                }
                _ => None,
            };
            match (p, targs.get(i).or(defaulted.as_ref())) {
                (TParam::Value(name), Some(TArg::Value(v))) => {
                    shown.push(v.to_string());
                    self.bind(name.clone(), Val::Int(Expr::konst(*v)));
                }
                (TParam::Type(name), Some(a @ (TArg::Type(t) | TArg::Instance(t, ..)))) => {
                    shown.push(types::spell(t, self.structs()));
                    tscope.insert(name.clone(), t.clone());
                    self.instance(a);
                }
                (TParam::Value(name), _) => {
                    shown.push(name.clone());
                    let is_bool = def
                        .node
                        .parent()
                        .filter(|t| t.node_kind() == "template_declaration")
                        .is_some_and(|t| {
                            crate::frontend::tu::template_param_is_bool(t, name, main)
                        });
                    self.unbound_values.push((name.clone(), is_bool));
                    let u = self.k.add_dependent(
                        Origin::TemplateParam {
                            name: name.clone(),
                            kernel: def.name.clone(),
                        },
                        Some(Expr::konst(0)),
                    );
                    self.bind(name.clone(), Val::Int(u));
                }
                // No argument, or one not known here (a launch from a
                // host template, with the host's own parameter).
                (TParam::Type(name), _) => {
                    let unknown = Ty::Unknown(name.clone());
                    shown.push(name.clone());
                    let ty = match &self.representative {
                        Some((_, t)) if !names_members(&main.text(def.node), name) => {
                            self.represented.push(name.clone());
                            t.clone()
                        }
                        _ => unknown,
                    };
                    tscope.insert(name.clone(), ty);
                }
            }
        }
        self.tscopes.push(tscope);
        shown
    }

    /// Lowers an instantiation with the representative type `ty` (spelled)
    /// for each type parameter it gives no known type and whose members
    /// the kernel does not name.
    pub fn lower_kernel_representing(
        &mut self,
        def: &FuncDef<'t>,
        targs: &[TArg],
        ty: &str,
    ) -> Kernel {
        self.representative = types::representative(ty).map(|t| (ty.to_string(), t));
        let mut k = self.lower_kernel(def, targs);
        let params = std::mem::take(&mut self.represented);
        if let (false, Some((ty, _))) = (params.is_empty(), self.representative.take()) {
            k.representative = Some(crate::ir::Representative { params, ty });
        }
        k
    }

    /// Lowers one instantiation of a kernel.
    pub fn lower_kernel(&mut self, def: &FuncDef<'t>, targs: &[TArg]) -> Kernel {
        let main = Src::of(def.src);
        let n = def.node;
        self.forget_memory();
        self.if_sides.clear();
        self.last_store_known.clear();
        self.struct_params.clear();
        self.pointees.clear();
        let mut k = Kernel {
            name: def.name.clone(),
            ..Kernel::default()
        };
        let shown = self.bind_template_args(def, targs, &main);
        let unbound = std::mem::take(&mut self.unbound_values);
        k.display_name = if def.tparams.is_empty() {
            def.name.clone()
        } else {
            format!("{}<{}>", def.name, shown.join(", "))
        };
        let mut c = n.walk();
        for ch in n.children(&mut c) {
            if ch.node_kind() == "launch_bounds" {
                if let Some(v) = ch.named(0) {
                    k.launch_bounds = self
                        .const_int(v, &main)
                        .filter(|v| *v > 0 && *v as u64 <= budget::MAX_THREADS_PER_BLOCK)
                        .map(|v| v as u64);
                }
            }
        }
        if let Some(d) = n.field("declarator") {
            k.span = def.src.span(d.start_byte(), d.end_byte());
        }
        k.extent = def.src.span(n.start_byte(), n.end_byte());
        k.entry = n
            .field("body")
            .and_then(|b| b.kids().into_iter().find(|s| emits_code(*s, &main)))
            .map(|s| def.src.span(s.start_byte(), s.end_byte()));
        // Unknowns created while binding template parameters belong to this kernel.
        k.unknowns = std::mem::take(&mut self.k.unknowns);
        self.k = k;
        for p in function_params(n) {
            let Some(tn) = p.field("type") else {
                continue;
            };
            let base = self.resolve_type(tn, &main);
            let elem_text = main.text(tn);
            let Some(d) = p.field("declarator") else {
                continue;
            };
            let (name, ty, _, _) = self.declarator_ref(base, d, &main, 0);
            let idx = self.k.params.len() as u32;
            match ty {
                Ty::Ptr(pointee) | Ty::Array(pointee, _) => {
                    let span = def.src.span(p.start_byte(), p.end_byte());
                    let arr = Ty::Array(pointee.clone(), None);
                    let obj =
                        self.new_object(&name, Space::Global, &arr, elem_text, span, main.text(p));
                    // Compared with `NULL`, the parameter's value is 0 for a
                    // null pointer, 1 for another: a launch passing `NULL`
                    // gives 0, one that does not give it is tried with both.
                    self.k.params.push(Param {
                        name: name.clone(),
                        object: Some(obj),
                        is_integer: false,
                        values: Some(vec![0, 1]),
                        template: false,
                        loaded: None,
                        compared: false,
                    });
                    self.bind(
                        name,
                        Val::Ptr(Ptr {
                            obj,
                            off: Expr::konst(0),
                            pointee: *pointee,
                        }),
                    );
                }
                Ty::Int { .. } => {
                    self.k.params.push(Param {
                        name: name.clone(),
                        object: None,
                        is_integer: true,
                        values: (elem_text.trim() == "bool").then(|| vec![0, 1]),
                        template: false,
                        loaded: None,
                        compared: false,
                    });
                    self.bind(name, Val::Int(Expr::atom(Atom::Param(idx))));
                }
                _ => {
                    self.k.params.push(Param {
                        name: name.clone(),
                        object: None,
                        is_integer: false,
                        values: None,
                        template: false,
                        loaded: None,
                        compared: false,
                    });
                    let u = self.unknown(
                        Origin::Parameter { name: name.clone() },
                        Some(Expr::konst(0)),
                    );
                    if matches!(ty, Ty::Struct(_) | Ty::Instance(_)) {
                        self.struct_params
                            .insert(name.clone(), (ty.clone(), u.clone()));
                    }
                    self.bind(name, Val::Int(u));
                }
            }
        }
        // A value template parameter no instantiation gives is analysed
        // like an integer parameter no launch gives: over representative
        // values (after the function's parameters: launches give those by
        // position).
        for (name, is_bool) in unbound {
            let idx = self.k.params.len() as u32;
            self.k.params.push(Param {
                name: name.clone(),
                object: None,
                is_integer: true,
                values: is_bool.then(|| vec![0, 1]),
                template: true,
                loaded: None,
                compared: false,
            });
            self.bind(name, Val::Int(Expr::atom(Atom::Param(idx))));
        }
        if let Some(body) = n.field("body") {
            self.frames = vec![Frame::default()];
            self.stmt(body, &main);
        }
        self.mark_repeated_calls();
        let sides = std::mem::take(&mut self.if_sides);
        predicate::mark(&mut self.k, &sides, self.fences);
        flags::mark_compared(&mut self.k);
        std::mem::take(&mut self.k)
    }

    /// A function the kernel calls from more than one place has each
    /// access's copy marked [`crate::ir::Inlined::repeated`].
    fn mark_repeated_calls(&mut self) {
        let mut sites: HashMap<&str, Vec<Span>> = HashMap::new();
        for a in &self.k.accesses {
            if let Some(i) = &a.inlined_at {
                let v = sites.entry(i.callee.as_str()).or_default();
                if !v.contains(&i.call) {
                    v.push(i.call);
                }
            }
        }
        let several: Vec<String> = sites
            .into_iter()
            .filter(|(_, v)| v.len() > 1)
            .map(|(c, _)| c.to_string())
            .collect();
        for a in &mut self.k.accesses {
            if let Some(i) = &mut a.inlined_at {
                i.repeated |= several.contains(&i.callee);
            }
        }
    }
}

/// Whether `text` names a member of `name` (`name::x`, `typename
/// name::type`): such a parameter stands for a traits or policy type, not
/// an element type a representative could stand for.
fn names_members(text: &str, name: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(name).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = &text[i + name.len()..];
        !before.is_some_and(ident) && after.trim_start().starts_with("::")
    })
}
