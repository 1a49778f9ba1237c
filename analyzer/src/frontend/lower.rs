//! Lowering of CUDA syntax to the IR.
//!
//! Expressions evaluate to [`Val`]s: symbolic integers, pointers into a
//! memory object, places (lvalues in memory, loaded or stored only when
//! used) and `dim3` triples. Variables are substituted through their
//! assignments (branches merge into selects; loops turn reassigned
//! variables into loop-carried ones), so each access sees the value a
//! variable has at that point of the program.

use super::fields::Fields;
use std::collections::HashMap;

use tree_sitter::{Node, Parser};

use super::source::Source;
use super::tu::{qualifiers, FuncDef, LaunchSite, TArg, TParam, Tu};
use super::types::{align_of, builtin, field, size_of, Ty};
use crate::budget;
use crate::ir::{
    Access, Atom, BinOp, Builtin, Dim, Expr, Guard, Kernel, Loop, LoopVar, MemObject, Note, Op,
    Param, Space, Span, UnOp,
};

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
    fn span(&self, n: Node) -> Span {
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
    Void,
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
    /// Functions being inlined (a recursive call is not followed).
    inlining: Vec<String>,
    /// Calls inlined so far in this kernel.
    inlined: u32,
    expanding: Vec<String>,
    launches: Option<Vec<LaunchSite>>,
    /// `using K = Name<args>;` in the function being lowered, innermost
    /// last (see `scope_struct`).
    local_aliases: Vec<HashMap<String, (String, Vec<TArg>)>>,
    /// Struct template instances that template parameters are bound to,
    /// by the type's text (see `instance`).
    instances: HashMap<String, (String, Vec<TArg>)>,
    /// Names the current launching function sets to moved pointers, by
    /// the function body's byte range (see `offset_pointer`).
    moved: Option<((usize, usize), std::collections::HashSet<String>)>,
    /// [`Access::region`] of the next access.
    region: u32,
    /// [`Access::undecided`] of the next access.
    undecided: u32,
}

/// An `if` that nvcc turns into a select: it only assigns values (no
/// memory access, loop, jump or call other than a branch-free math
/// function) and is small. `if (d > 0) cnd = 1.0f - cnd;` in BlackScholes
/// leaves the field reads around it merged (measured).
fn if_converts(n: Node, src: &Src) -> bool {
    if n.node_kind() != "if_statement" {
        return false;
    }
    let mut stack = vec![n];
    let mut seen = 0;
    while let Some(x) = stack.pop() {
        seen += 1;
        if seen > 64 {
            return false;
        }
        let ok = match x.node_kind() {
            "subscript_expression"
            | "for_statement"
            | "while_statement"
            | "do_statement"
            | "switch_statement"
            | "return_statement"
            | "break_statement"
            | "continue_statement"
            | "goto_statement"
            | "labeled_statement"
            | "declaration"
            | "ERROR" => false,
            "pointer_expression" => src.text(x).trim_start().starts_with('&'),
            "field_expression" => !src.text(x).contains("->"),
            "call_expression" => x
                .field("function")
                .is_some_and(|f| super::fuse::MERGES.contains(&src.text(f).as_str())),
            _ => true,
        };
        if !ok {
            return false;
        }
        let mut c = x.walk();
        stack.extend(x.named_children(&mut c));
    }
    true
}

/// Whether a launch argument is a pointer moved off its allocation:
/// `buf + k`, `&buf[k]`, or a name the host function initialises or
/// assigns with one (`float *src = bufferIn + padding;`).
/// `buf + k` or `&buf[k]` (through parentheses and casts).
fn moved_pointer(e: Node, src: &Src) -> bool {
    let mut e = e;
    for _ in 0..8 {
        match e.node_kind() {
            "parenthesized_expression" => e = e.named_child(0).unwrap_or(e),
            "cast_expression" => match e.field("value") {
                Some(v) => e = v,
                None => return false,
            },
            _ => break,
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
/// (`float *src = bufferIn + padding;`), found in one walk.
fn moved_names(body: Node, src: &Src) -> std::collections::HashSet<String> {
    let mut out = std::collections::HashSet::new();
    let mut stack = vec![body];
    let mut seen = 0usize;
    while let Some(x) = stack.pop() {
        seen += 1;
        if seen > 200_000 {
            break;
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
        let mut c = x.walk();
        stack.extend(x.named_children(&mut c));
    }
    out
}

fn and(a: Expr, b: Expr) -> Expr {
    Expr::bin(BinOp::LAnd, a, b)
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

thread_local! {
    /// A parser for macro expansions and the trees of recent ones, by text:
    /// a macro used in a loop body, or a file re-analysed by the fix search,
    /// parses each distinct expansion once per thread.
    static SNIPPETS: std::cell::RefCell<Snippets> = std::cell::RefCell::new(Snippets::default());
}

#[derive(Default)]
struct Snippets {
    parser: Option<Parser>,
    trees: HashMap<String, std::rc::Rc<tree_sitter::Tree>>,
    bytes: usize,
}

fn parse_snippet(text: &str) -> Option<std::rc::Rc<tree_sitter::Tree>> {
    SNIPPETS.with(|cell| {
        let mut cell = cell.borrow_mut();
        let s = &mut *cell;
        if let Some(t) = s.trees.get(text) {
            return Some(std::rc::Rc::clone(t));
        }
        if s.parser.is_none() {
            let mut p = Parser::new();
            p.set_language(&tree_sitter_cuda::LANGUAGE.into()).ok()?;
            s.parser = Some(p);
        }
        let tree = std::rc::Rc::new(s.parser.as_mut()?.parse(text, None)?);
        if s.trees.len() >= budget::MAX_SNIPPET_TREES
            || s.bytes + text.len() > budget::MAX_SNIPPET_BYTES
        {
            s.trees.clear();
            s.bytes = 0;
        }
        s.bytes += text.len();
        s.trees.insert(text.to_string(), std::rc::Rc::clone(&tree));
        Some(tree)
    })
}

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
            depth: 0,
            inline_depth: 0,
            inlining: Vec::new(),
            inlined: 0,
            expanding: Vec::new(),
            member_scopes: Vec::new(),
            member_values: HashMap::new(),
            budgets_noted: Vec::new(),
            expansions: 0,
            launches: None,
            local_aliases: vec![HashMap::new()],
            instances: HashMap::new(),
            moved: None,
            region: 0,
            undecided: 0,
        }
    }

    fn structs(&self) -> &[super::types::StructDef] {
        &self.tu.structs
    }

    fn span(&self, n: Node, src: &Src) -> Span {
        src.span(n)
    }

    fn note(&mut self, n: Node, src: &Src, msg: impl Into<String>) {
        let span = self.span(n, src);
        let message = msg.into();
        if !self
            .notes
            .iter()
            .any(|x| x.span == span && x.message == message)
        {
            self.notes.push(Note { span, message });
        }
    }

    fn unknown(&mut self, reason: impl Into<String>, witness: Option<Expr>) -> Expr {
        self.k.add_unknown(reason, witness)
    }

    fn unknown_val(&mut self, reason: impl Into<String>) -> Val {
        Val::Int(self.unknown(reason, None))
    }

    /// A budget ran out at `n`: an unknown value saying `what` and naming
    /// the budget, and (once per kernel and budget) a note there.
    fn budget_unknown(
        &mut self,
        n: Node,
        src: &Src,
        (name, limit, unit): (&'static str, u32, &str),
        what: &str,
    ) -> Val {
        let reason = format!("{what} (the {} ran out)", budget::named(name, limit, unit));
        if !self.budgets_noted.contains(&name) {
            self.budgets_noted.push(name);
            self.note(n, src, format!("{reason}; what depends on it is unknown"));
        }
        self.unknown_val(reason)
    }

    // ----------------------------------------------------------------- types

    pub fn resolve_type(&mut self, n: Node, src: &Src) -> Ty {
        let text = src.text(n);
        match n.node_kind() {
            "primitive_type" | "sized_type_specifier" => {
                let folded = text.split_whitespace().collect::<Vec<_>>().join(" ");
                builtin(&folded).unwrap_or(Ty::Unknown(folded))
            }
            "type_identifier" | "qualified_type_identifier" => self.named_type(&text),
            "struct_specifier" | "class_specifier" | "union_specifier" => {
                let name = n.field("name").map(|x| src.text(x)).unwrap_or_default();
                match self.tu.struct_names.get(&name) {
                    Some(i) => Ty::Struct(*i),
                    None => Ty::Unknown(text),
                }
            }
            "enum_specifier" => Ty::Int { size: 4 },
            "template_type" => Ty::Unknown(text),
            _ => Ty::Unknown(text),
        }
    }

    fn named_type(&mut self, name: &str) -> Ty {
        let short = name.rsplit("::").next().unwrap_or(name).to_string();
        if let Some(t) = self.scoped_type(&short) {
            return t.clone();
        }
        if let Some(t) = self.tu.typedefs.get(&short) {
            return t.clone();
        }
        if let Some(t) = builtin(name).or_else(|| builtin(&short)) {
            return t;
        }
        if let Some(i) = self.tu.struct_names.get(&short) {
            return Ty::Struct(*i);
        }
        if let Some(m) = self.tu.macros.get(&short) {
            if m.params.is_none() && !self.expanding.contains(&short) {
                let body = m.body.trim().to_string();
                self.expanding.push(short.clone());
                let t = self.named_type(&body);
                self.expanding.pop();
                return t;
            }
        }
        Ty::Unknown(short)
    }

    pub fn type_descriptor(&mut self, n: Node, src: &Src) -> Ty {
        let base = match n.field("type") {
            Some(t) => self.resolve_type(t, src),
            None => return Ty::Unknown(src.text(n)),
        };
        match n.field("declarator") {
            Some(d) => self.abstract_declarator(base, d, src),
            None => base,
        }
    }

    fn abstract_declarator(&mut self, base: Ty, d: Node, src: &Src) -> Ty {
        let inner = d.field("declarator");
        let ty = match d.node_kind() {
            "abstract_pointer_declarator" => Ty::Ptr(Box::new(base)),
            "abstract_array_declarator" => {
                let size = d
                    .field("size")
                    .and_then(|s| self.const_int(s, src))
                    .map(|v| v.max(0) as u64);
                Ty::Array(Box::new(base), size)
            }
            "abstract_reference_declarator" => base,
            _ => base,
        };
        match inner {
            Some(i) => self.abstract_declarator(ty, i, src),
            None => ty,
        }
    }

    /// Applies a declarator to a base type: `(name, type, initializer, is_reference)`.
    pub fn declarator<'n>(
        &mut self,
        base: Ty,
        d: Node<'n>,
        src: &Src,
    ) -> (String, Ty, Option<Node<'n>>) {
        let (n, t, i, _) = self.declarator_ref(base, d, src, 0);
        (n, t, i)
    }

    fn declarator_ref<'n>(
        &mut self,
        base: Ty,
        d: Node<'n>,
        src: &Src,
        depth: u32,
    ) -> (String, Ty, Option<Node<'n>>, bool) {
        if depth > 64 {
            return (String::new(), Ty::Unknown("declarator".into()), None, false);
        }
        match d.node_kind() {
            "identifier" | "field_identifier" | "type_identifier" => {
                (src.text(d), base, None, false)
            }
            "qualified_identifier" => (
                d.field("name")
                    .map(|x| src.text(x))
                    .unwrap_or_else(|| src.text(d)),
                base,
                None,
                false,
            ),
            "pointer_declarator" => match d.field("declarator") {
                Some(inner) => self.declarator_ref(Ty::Ptr(Box::new(base)), inner, src, depth + 1),
                None => (String::new(), Ty::Ptr(Box::new(base)), None, false),
            },
            "reference_declarator" => {
                let inner = d.named_child(0);
                match inner {
                    Some(i) => {
                        let (n, t, init, _) = self.declarator_ref(base, i, src, depth + 1);
                        (n, t, init, true)
                    }
                    None => (String::new(), base, None, true),
                }
            }
            "array_declarator" => {
                let size = d.field("size").map(|s| {
                    let e = self.int(s, src);
                    let v = e.as_const().map(|v| v.max(0) as u64);
                    // A dimension that depends on the kernel's template
                    // arguments is understood; only its instantiation is
                    // missing, and the accesses say so.
                    if v.is_none() && !self.k.only_dependent(&e) {
                        let text = src.text(s);
                        self.note(
                            s,
                            src,
                            format!(
                                "array dimension `{text}` is not a known constant here \
                                 (in a header that was not found? give its folder with -I \
                                 or try --include-search project; or set it in \
                                 [analysis.defines])"
                            ),
                        );
                    }
                    v
                });
                let ty = Ty::Array(Box::new(base), size.flatten());
                match d.field("declarator") {
                    Some(inner) => self.declarator_ref(ty, inner, src, depth + 1),
                    None => (String::new(), ty, None, false),
                }
            }
            "init_declarator" => {
                let value = d.field("value");
                match d.field("declarator") {
                    Some(inner) => {
                        let (n, t, _, r) = self.declarator_ref(base, inner, src, depth + 1);
                        (n, t, value, r)
                    }
                    None => (String::new(), base, value, false),
                }
            }
            "parenthesized_declarator" | "attributed_declarator" => match d.named_child(0) {
                Some(inner) => self.declarator_ref(base, inner, src, depth + 1),
                None => (String::new(), base, None, false),
            },
            "function_declarator" => match d.field("declarator") {
                Some(inner) => self.declarator_ref(base, inner, src, depth + 1),
                None => (String::new(), base, None, false),
            },
            _ => (src.text(d), base, None, false),
        }
    }

    // ------------------------------------------------------------ constants

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
        let mut c = n.walk();
        n.named_children(&mut c)
            .filter(|k| !skip.contains(&k.id()))
            .collect()
    }

    // ----------------------------------------------------------- values

    pub(crate) fn int(&mut self, n: Node, src: &Src) -> Expr {
        let v = self.rv(n, src);
        self.as_int(v)
    }

    fn as_int(&mut self, v: Val) -> Expr {
        match v {
            Val::Int(e) => e,
            Val::Ptr(p) => self.unknown(
                "a pointer used as an integer",
                Some(Expr::plus(p.off, Expr::konst(p.obj as i64 * (1 << 40)))),
            ),
            _ => self.unknown("a value that is not an integer", None),
        }
    }

    fn rv(&mut self, n: Node, src: &Src) -> Val {
        let v = self.expr(n, src);
        self.rvalue_of(v, n, src)
    }

    fn rvalue_of(&mut self, v: Val, n: Node, src: &Src) -> Val {
        match v {
            Val::Place(p) => match &p.ty {
                Ty::Array(elem, _) => Val::Ptr(Ptr {
                    obj: p.obj,
                    off: p.off,
                    pointee: (**elem).clone(),
                }),
                _ => {
                    let witness = p.off.clone();
                    let name = self.k.objects[p.obj].name.clone();
                    self.access(&p, Op::Load, n, src);
                    Val::Int(self.unknown(format!("a value loaded from `{name}`"), Some(witness)))
                }
            },
            other => other,
        }
    }

    /// Records the memory access(es) of reading or writing a place.
    fn access(&mut self, p: &Place, op: Op, n: Node, src: &Src) {
        let obj = &self.k.objects[p.obj];
        let space = obj.space;
        if space == Space::Local && p.off.as_const().is_some() {
            return; // constant indices into local arrays live in registers
        }
        let size = size_of(&p.ty, self.structs());
        let align = align_of(&p.ty, self.structs()).unwrap_or(1).clamp(1, 16);
        let mut pieces: Vec<(u64, u32)> = Vec::new();
        let mut off = p.off.clone();
        match size {
            Some(s) if [1, 2, 4, 8, 16].contains(&s) && align >= s => pieces.push((0, s as u32)),
            Some(s) if s > 0 => {
                let mut chunk = align;
                while chunk > 1 && s % chunk != 0 {
                    chunk /= 2;
                }
                let count = (s / chunk).min(16);
                for i in 0..count {
                    pieces.push((i * chunk, chunk as u32));
                }
            }
            _ => {
                let ty = super::types::spell(&p.ty, self.structs());
                off = self.unknown(
                    format!("the size of `{ty}`, a type not defined in this file"),
                    None,
                );
                pieces.push((0, 4));
            }
        }
        let span = self.span(n, src);
        let text = src.text(n);
        let guards = self.current_guards();
        for (delta, width) in pieces {
            self.k.accesses.push(Access {
                obj: p.obj,
                op,
                width,
                offset: Expr::plus(off.clone(), Expr::konst(delta as i64)),
                guards: guards.clone(),
                loops: self.open_loops.clone(),
                span,
                text: text.clone(),
                region: self.region,
                undecided: self.undecided,
                unknown: None,
            });
        }
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

    fn index_place(&mut self, base: Val, idx: Expr, n: Node, src: &Src) -> Val {
        let ptr = match base {
            Val::Place(p) => match p.ty {
                Ty::Array(elem, _) => Ptr {
                    obj: p.obj,
                    off: p.off,
                    pointee: *elem,
                },
                Ty::Ptr(_) => {
                    // A pointer stored in memory: the load gives an unknown pointer.
                    let _ = self.rvalue_of(Val::Place(p), n, src);
                    return self.unknown_val("a pointer loaded from memory");
                }
                _ => return self.unknown_val("subscript of a non-array value"),
            },
            Val::Ptr(p) => p,
            Val::Int(_) | Val::Dim3(_) | Val::Void => {
                return self.unknown_val("subscript of a value that is not a known array")
            }
        };
        let off = match self.elem_size(&ptr.pointee) {
            Some(sz) => Expr::plus(ptr.off, Expr::times(idx, Expr::konst(sz as i64))),
            None => {
                let name = self.k.objects[ptr.obj].name.clone();
                let what = match &ptr.pointee {
                    Ty::Array(..) => format!(
                        "the layout of `{name}`, one of whose dimensions is not a known constant"
                    ),
                    t => format!(
                        "the size of `{}`, a type not defined in this file",
                        super::types::spell(t, self.structs())
                    ),
                };
                self.unknown(what, None)
            }
        };
        Val::Place(Place {
            obj: ptr.obj,
            off,
            ty: ptr.pointee,
        })
    }

    /// The template type parameter without an instantiation that `text` (a
    /// type, scope or call as written: `T`, `typename MT::KV`, `f<T>`)
    /// depends on, directly or through a local alias, if any.
    fn dependent_on(&self, text: &str) -> Option<String> {
        self.dependent_on_at(text, 0)
    }

    fn dependent_on_at(&self, text: &str, depth: u32) -> Option<String> {
        if depth > 4 {
            return None;
        }
        text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .find_map(|w| match self.scoped_type(w)? {
                Ty::Unknown(n) if n == w => Some(w.to_string()),
                Ty::Unknown(n) => self.dependent_on_at(n, depth + 1),
                _ => None,
            })
    }

    /// The type a template parameter or local alias `name` stands for.
    fn scoped_type(&self, name: &str) -> Option<&Ty> {
        self.tscopes.iter().rev().find_map(|t| t.get(name))
    }

    /// An unknown for `text` when it spells a template parameter without an
    /// instantiation (see [`Unknown::dependent`](crate::ir::Unknown)), with
    /// the reason `message(parameter)`; `None` when it does not.
    fn dependent_unknown(
        &mut self,
        text: &str,
        witness: Option<Expr>,
        message: impl FnOnce(&str) -> String,
    ) -> Option<Val> {
        let p = self.dependent_on(text)?;
        Some(Val::Int(self.k.add_dependent(message(&p), witness)))
    }

    /// `sizeof(...)` of a type not known here.
    fn sizeof_unknown(&mut self, n: Node, src: &Src) -> Val {
        let text = src.text(n);
        self.dependent_unknown(&text, Some(Expr::konst(0)), |p| {
            format!("`{text}`, which depends on template parameter `{p}`")
        })
        .unwrap_or_else(|| self.unknown_val(format!("`{text}`")))
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

    fn new_object(
        &mut self,
        name: &str,
        space: Space,
        ty: &Ty,
        elem_text: String,
        decl: Span,
        decl_text: String,
    ) -> usize {
        let mut dims = Vec::new();
        let mut t = ty.clone();
        while let Ty::Array(e, n) = t {
            dims.push(n);
            t = *e;
        }
        let elem_size = self.elem_size(&t).unwrap_or(0);
        let elem_align = align_of(&t, self.structs()).unwrap_or(1);
        self.k.objects.push(MemObject {
            name: name.to_string(),
            space,
            elem_type: elem_text,
            elem_size,
            elem_align,
            dims,
            decl,
            decl_text,
            inner_dim: None,
        });
        self.k.objects.len() - 1
    }

    fn ident(&mut self, name: &str, n: Node, src: &Src) -> Val {
        if let Some(b) = self.lookup(name) {
            return b.val.clone();
        }
        if let Some(m) = self.tu.macros.get(name) {
            if m.params.is_none() && !self.expanding.iter().any(|e| e == name) {
                let body = m.body.clone();
                return self.expand_text(name, &body, n, src, false);
            }
        }
        if let Some(v) = self.tu.consts.get(name) {
            return Val::Int(Expr::konst(*v));
        }
        // `NUM_WARPS = NUM_WARPGROUPS * 4` inside a struct: a sibling.
        if let Some((s, args)) = self.member_scopes.last().cloned() {
            if let Some(v) = self.member_value(&s, &args, name) {
                return Val::Int(Expr::konst(v));
            }
        }
        if let Some(&obj) = self.globals_map.get(name) {
            let ty = self.tu.globals[name].ty.clone();
            return Val::Place(Place {
                obj,
                off: Expr::konst(0),
                ty,
            });
        }
        if let Some(g) = self.tu.globals.get(name) {
            let g = g.clone();
            let obj = self.new_object(name, g.space, &g.ty, g.elem_text, g.span, g.text);
            self.globals_map.insert(name.to_string(), obj);
            return Val::Place(Place {
                obj,
                off: Expr::konst(0),
                ty: g.ty,
            });
        }
        match name {
            "warpSize" => Val::Int(Expr::konst(32)),
            "true" => Val::Int(Expr::konst(1)),
            "false" | "NULL" | "nullptr" => Val::Int(Expr::konst(0)),
            _ => {
                // `detail::STAGES_v<T>` with a template parameter that no
                // launch instantiates.
                let text = src.text(n);
                self.dependent_unknown(&text, None, |p| {
                    format!("`{text}`, which depends on template parameter `{p}`")
                })
                .unwrap_or_else(|| {
                    self.unknown_val(format!("`{name}`, which is not declared in this file"))
                })
            }
        }
    }

    /// Parses `body` (a macro's expansion) as an expression or, with
    /// `statement`, as statements, and lowers it; everything in it is
    /// reported at the macro's use.
    fn expand_text(&mut self, name: &str, body: &str, n: Node, src: &Src, statement: bool) -> Val {
        if self.expanding.len() as u32 >= budget::MAX_MACRO_DEPTH {
            let b = ("MAX_MACRO_DEPTH", budget::MAX_MACRO_DEPTH, "levels");
            return self.budget_unknown(
                n,
                src,
                b,
                &format!("macro `{name}`, which nests too deeply"),
            );
        }
        if self.expansions >= budget::MAX_MACRO_EXPANSIONS {
            let b = (
                "MAX_MACRO_EXPANSIONS",
                budget::MAX_MACRO_EXPANSIONS,
                "expansions per kernel",
            );
            return self.budget_unknown(n, src, b, &format!("macro `{name}`"));
        }
        self.expansions += 1;
        let at = Some(self.span(n, src));
        self.expanding.push(name.to_string());
        let result = (|| {
            if body.trim().is_empty() {
                return Val::Void;
            }
            if !statement {
                let text = format!("auto __warplint_expansion = ({body}\n);");
                if let Some(tree) = parse_snippet(&text) {
                    if !tree.root_node().has_error() {
                        let snip = Src {
                            bytes: text.as_bytes(),
                            at,
                            map: src.map,
                        };
                        let value = tree
                            .root_node()
                            .named_child(0)
                            .and_then(|d| d.field("declarator"))
                            .and_then(|d| d.field("value"));
                        if let Some(v) = value {
                            return self.expr(v, &snip);
                        }
                    }
                }
            }
            let text = format!("void __warplint_expansion() {{ {body}\n; }}");
            if let Some(tree) = parse_snippet(&text) {
                let snip = Src {
                    bytes: text.as_bytes(),
                    at,
                    map: src.map,
                };
                if let Some(b) = tree
                    .root_node()
                    .named_child(0)
                    .and_then(|f| f.field("body"))
                {
                    let mut c = b.walk();
                    let stmts: Vec<_> = b.named_children(&mut c).collect();
                    for s in stmts {
                        self.stmt(s, &snip);
                    }
                }
            }
            Val::Void
        })();
        self.expanding.pop();
        result
    }

    fn expand_function_macro(
        &mut self,
        name: &str,
        args: &[String],
        n: Node,
        src: &Src,
        statement: bool,
    ) -> Val {
        let Some(m) = self.tu.macros.get(name) else {
            return Val::Void;
        };
        let params = m.params.clone().unwrap_or_default();
        let body = substitute(&m.body, &params, args);
        self.expand_text(name, &body, n, src, statement)
    }

    pub(crate) fn expr(&mut self, n: Node, src: &Src) -> Val {
        if self.depth >= budget::MAX_SYNTAX_DEPTH {
            return self.budget_unknown(n, src, SYNTAX_DEPTH, "an expression nested too deeply");
        }
        self.depth += 1;
        let v = self.expr_inner(n, src);
        self.depth -= 1;
        v
    }

    fn expr_inner(&mut self, n: Node, src: &Src) -> Val {
        match n.node_kind() {
            "number_literal" => {
                let t = src.text(n);
                match parse_int(&t) {
                    Some(v) => Val::Int(Expr::konst(v)),
                    None => {
                        Val::Int(self.unknown("a floating-point constant", Some(Expr::konst(0))))
                    }
                }
            }
            "char_literal" => {
                let t = src.text(n);
                let inner = t.trim_matches('\'');
                let v = match inner {
                    "\\0" => 0,
                    "\\n" => 10,
                    "\\t" => 9,
                    _ => inner.chars().next().map(|c| c as i64).unwrap_or(0),
                };
                Val::Int(Expr::konst(v))
            }
            "true" => Val::Int(Expr::konst(1)),
            "false" | "null" | "nullptr" => Val::Int(Expr::konst(0)),
            "string_literal" | "concatenated_string" | "raw_string_literal" => Val::Void,
            "identifier" => {
                let name = src.text(n);
                self.ident(&name, n, src)
            }
            "qualified_identifier" => {
                let name = n
                    .field("name")
                    .map(|x| src.text(x))
                    .unwrap_or_else(|| src.text(n));
                let scope = n.field("scope");
                if let Some(v) = scope.and_then(|scope| self.static_member(scope, src, &name)) {
                    return Val::Int(Expr::konst(v));
                }
                if let Some(scope) = scope {
                    let text = src.text(n);
                    let member = self.dependent_unknown(&src.text(scope), None, |p| {
                        format!("`{text}`, a member of template parameter `{p}`, which no launch instantiates")
                    });
                    if let Some(v) = member {
                        return v;
                    }
                }
                self.ident(&name, n, src)
            }
            "preproc_defined" => {
                let name = n.named_child(0).map(|x| src.text(x)).unwrap_or_default();
                Val::Int(Expr::konst(self.tu.macros.contains_key(&name) as i64))
            }
            "parenthesized_expression" => match n.named_child(0) {
                Some(inner) => self.expr(inner, src),
                None => Val::Void,
            },
            "field_expression" => self.field_expr(n, src),
            "subscript_expression" => {
                let Some(arg) = n.field("argument") else {
                    return Val::Void;
                };
                let base = self.expr(arg, src);
                let idx_node = n
                    .field("indices")
                    .and_then(|i| {
                        if i.node_kind() == "subscript_argument_list" {
                            i.named_child(0)
                        } else {
                            Some(i)
                        }
                    })
                    .or_else(|| n.field("index"));
                let idx = match idx_node {
                    Some(i) => self.int(i, src),
                    None => self.unknown("an empty subscript", None),
                };
                self.index_place(base, idx, n, src)
            }
            "pointer_expression" => {
                let op = op_of(n);
                let Some(arg) = n.field("argument") else {
                    return Val::Void;
                };
                if op == "&" {
                    match self.expr(arg, src) {
                        Val::Place(p) => Val::Ptr(Ptr {
                            obj: p.obj,
                            off: p.off,
                            pointee: p.ty,
                        }),
                        _ => self.unknown_val("the address of a value that is not in memory"),
                    }
                } else {
                    match self.rv(arg, src) {
                        Val::Ptr(p) => Val::Place(Place {
                            obj: p.obj,
                            off: p.off,
                            ty: p.pointee,
                        }),
                        _ => self.unknown_val("a dereference of an unknown pointer"),
                    }
                }
            }
            "unary_expression" => {
                let op = op_of(n);
                let Some(arg) = n.field("argument") else {
                    return Val::Void;
                };
                let v = self.rv(arg, src);
                if op == "+" {
                    return v;
                }
                let e = self.as_int(v);
                let u = match op.as_str() {
                    "-" => UnOp::Neg,
                    "!" | "not" => UnOp::Not,
                    "~" | "compl" => UnOp::BitNot,
                    _ => return Val::Int(e),
                };
                Val::Int(Expr::un(u, e))
            }
            "binary_expression" => self.binary(n, src),
            "update_expression" => {
                let op = op_of(n);
                let Some(arg) = n.field("argument") else {
                    return Val::Void;
                };
                let bop = if op == "--" { BinOp::Sub } else { BinOp::Add };
                let prefix = n.child(0).map(|c| c.node_kind() == op).unwrap_or(false);
                let (old, new) = self.assign(arg, Some(bop), None, n, src);
                if prefix {
                    new
                } else {
                    old
                }
            }
            "assignment_expression" => {
                let op = op_of(n);
                let (Some(left), Some(right)) = (n.field("left"), n.field("right")) else {
                    return Val::Void;
                };
                let bop = match op.trim_end_matches('=') {
                    "" => None,
                    "+" => Some(BinOp::Add),
                    "-" => Some(BinOp::Sub),
                    "*" => Some(BinOp::Mul),
                    "/" => Some(BinOp::Div),
                    "%" => Some(BinOp::Rem),
                    "<<" => Some(BinOp::Shl),
                    ">>" => Some(BinOp::Shr),
                    "&" => Some(BinOp::And),
                    "|" => Some(BinOp::Or),
                    "^" => Some(BinOp::Xor),
                    _ => None,
                };
                let rhs = self.rv(right, src);
                self.assign(left, bop, Some(rhs), n, src).1
            }
            "conditional_expression" => {
                let (Some(c), Some(a), Some(b)) = (
                    n.field("condition"),
                    n.field("consequence"),
                    n.field("alternative"),
                ) else {
                    return Val::Void;
                };
                let cond = self.int(c, src);
                if let Some(v) = cond.as_const() {
                    return self.rv(if v != 0 { a } else { b }, src);
                }
                self.guards.push(Guard {
                    cond: cond.clone(),
                    expect: true,
                });
                let va = self.rv(a, src);
                self.guards.pop();
                self.guards.push(Guard {
                    cond: cond.clone(),
                    expect: false,
                });
                let vb = self.rv(b, src);
                self.guards.pop();
                self.merge_vals(cond, va, vb)
            }
            "cast_expression" => {
                // `(a & (b * c)) * d` parses as a cast to `a&` when the grammar
                // cannot tell `a` is a variable; we can: re-read it as arithmetic.
                if let Some(b) = n
                    .field("type")
                    .and_then(|t| t.field("type"))
                    .filter(|b| b.node_kind() == "type_identifier")
                {
                    let name = src.text(b);
                    if self.lookup(&name).is_some()
                        && matches!(self.named_type(&name), Ty::Unknown(_))
                    {
                        let r = n.byte_range();
                        let (s, e) = (b.start_byte() - r.start, b.end_byte() - r.start);
                        let whole = src.text(n);
                        if whole.is_char_boundary(s) && whole.is_char_boundary(e) {
                            let text = format!("{}({}){}", &whole[..s], name, &whole[e..]);
                            return self.expand_text(&name, &text, n, src, false);
                        }
                    }
                }
                let ty = n
                    .field("type")
                    .map(|t| self.type_descriptor(t, src))
                    .unwrap_or(Ty::Unknown(String::new()));
                let Some(v) = n.field("value") else {
                    return Val::Void;
                };
                let val = self.rv(v, src);
                self.cast(ty, val)
            }
            "sizeof_expression" => {
                if let Some(t) = n.field("type") {
                    let ty = self.type_descriptor(t, src);
                    return match self.elem_size(&ty) {
                        Some(s) => Val::Int(Expr::konst(s as i64)),
                        None => self.sizeof_unknown(n, src),
                    };
                }
                if let Some(v) = n.field("value") {
                    let inner = if v.node_kind() == "parenthesized_expression" {
                        v.named_child(0).unwrap_or(v)
                    } else {
                        v
                    };
                    // sizeof(T) where T parsed as an expression, or sizeof(var).
                    let text = src.text(inner);
                    let ty = self.named_type(text.trim());
                    if let Some(s) = self.elem_size(&ty) {
                        return Val::Int(Expr::konst(s as i64));
                    }
                    if let Some(Binding { val: Val::Place(p) }) = self.lookup(text.trim()) {
                        if let Some(s) = size_of(&p.ty, self.structs()) {
                            return Val::Int(Expr::konst(s as i64));
                        }
                    }
                }
                self.sizeof_unknown(n, src)
            }
            "alignof_expression" => {
                let ty = n
                    .field("type")
                    .map(|t| self.type_descriptor(t, src))
                    .unwrap_or(Ty::Unknown(String::new()));
                match align_of(&ty, self.structs()) {
                    Some(a) => Val::Int(Expr::konst(a as i64)),
                    None => self.unknown_val(format!("`{}`", src.text(n))),
                }
            }
            "comma_expression" => {
                if let Some(l) = n.field("left") {
                    self.expr(l, src);
                }
                match n.field("right") {
                    Some(r) => self.expr(r, src),
                    None => Val::Void,
                }
            }
            "call_expression" => self.call(n, src),
            "initializer_list" | "argument_list" => {
                let mut c = n.walk();
                let kids: Vec<_> = n.named_children(&mut c).collect();
                let mut vals: Vec<Expr> = kids.iter().map(|k| self.int(*k, src)).collect();
                if n.node_kind() == "initializer_list" && vals.len() == 1 {
                    // `constexpr int WARPGROUP_WARPS{4};` (a dim3 from
                    // `{32}` is made where the type says so).
                    return Val::Int(vals.remove(0));
                }
                if (1..=3).contains(&vals.len()) {
                    let mut d = [Expr::konst(1), Expr::konst(1), Expr::konst(1)];
                    for (i, v) in vals.into_iter().enumerate() {
                        d[i] = v;
                    }
                    Val::Dim3(d)
                } else {
                    Val::Void
                }
            }
            "ERROR" => self.unknown_val("code that could not be parsed"),
            other => {
                let kind = other.replace('_', " ");
                let text = src.text(n);
                // `cosize_v<Layout>` and the like with a template parameter
                // that no launch instantiates.
                self.dependent_unknown(&text, None, |p| {
                    format!("`{text}`, which depends on template parameter `{p}`")
                })
                .unwrap_or_else(|| self.unknown_val(format!("a {kind}")))
            }
        }
    }

    fn cast(&mut self, ty: Ty, val: Val) -> Val {
        match (ty, val) {
            (Ty::Ptr(t), Val::Ptr(p)) => Val::Ptr(Ptr {
                obj: p.obj,
                off: p.off,
                pointee: *t,
            }),
            (_, v) => v,
        }
    }

    fn merge_vals(&mut self, cond: Expr, a: Val, b: Val) -> Val {
        match (a, b) {
            (Val::Int(x), Val::Int(y)) => Val::Int(Expr::select(cond, x, y)),
            (Val::Ptr(p), Val::Ptr(q)) if p.obj == q.obj => Val::Ptr(Ptr {
                obj: p.obj,
                off: Expr::select(cond, p.off, q.off),
                pointee: p.pointee,
            }),
            (Val::Place(p), Val::Place(q)) if p.obj == q.obj && p.off.same(&q.off) => Val::Place(p),
            (Val::Dim3(x), Val::Dim3(y)) => {
                let [x0, x1, x2] = x;
                let [y0, y1, y2] = y;
                Val::Dim3([
                    Expr::select(cond.clone(), x0, y0),
                    Expr::select(cond.clone(), x1, y1),
                    Expr::select(cond, x2, y2),
                ])
            }
            (Val::Void, Val::Void) => Val::Void,
            _ => self.unknown_val("a value that depends on the branch taken"),
        }
    }

    fn field_expr(&mut self, n: Node, src: &Src) -> Val {
        let (Some(arg), Some(fname)) = (n.field("argument"), n.field("field")) else {
            return Val::Void;
        };
        let fname = src.text(fname);
        let arrow = n
            .field("operator")
            .map(|o| o.node_kind() == "->")
            .unwrap_or(false);
        if arg.node_kind() == "identifier" && !arrow {
            let base = src.text(arg);
            if self.lookup(&base).is_none() {
                let dim = match fname.as_str() {
                    "x" => Some(Dim::X),
                    "y" => Some(Dim::Y),
                    "z" => Some(Dim::Z),
                    _ => None,
                };
                if let Some(d) = dim {
                    let b = match base.as_str() {
                        "threadIdx" => Some(Builtin::ThreadIdx(d)),
                        "blockIdx" => Some(Builtin::BlockIdx(d)),
                        "blockDim" => Some(Builtin::BlockDim(d)),
                        "gridDim" => Some(Builtin::GridDim(d)),
                        _ => None,
                    };
                    if let Some(b) = b {
                        if let Builtin::ThreadIdx(d) = b {
                            self.k.uses_thread_dims[d.index()] = true;
                        }
                        return Val::Int(Expr::builtin(b));
                    }
                }
            }
        }
        let base = self.expr(arg, src);
        let place = match (base, arrow) {
            (Val::Dim3(d), false) => {
                return match fname.as_str() {
                    "x" => Val::Int(d[0].clone()),
                    "y" => Val::Int(d[1].clone()),
                    "z" => Val::Int(d[2].clone()),
                    _ => Val::Void,
                }
            }
            (Val::Place(p), false) => p,
            (Val::Ptr(p), true) => Place {
                obj: p.obj,
                off: p.off,
                ty: p.pointee,
            },
            (Val::Place(p), true) => match self.rvalue_of(Val::Place(p), arg, src) {
                Val::Ptr(q) => Place {
                    obj: q.obj,
                    off: q.off,
                    ty: q.pointee,
                },
                _ => return self.unknown_val(format!("field `{fname}` of an unknown value")),
            },
            _ => return self.unknown_val(format!("field `{fname}` of a value not in memory")),
        };
        match field(&place.ty, &fname, self.structs()) {
            Some((off, ty)) => Val::Place(Place {
                obj: place.obj,
                off: Expr::plus(place.off, Expr::konst(off as i64)),
                ty,
            }),
            None => {
                let ty = super::types::spell(&place.ty, self.structs());
                self.unknown_val(format!("field `{fname}` of `{ty}`"))
            }
        }
    }

    fn binary(&mut self, n: Node, src: &Src) -> Val {
        let op = op_of(n);
        let (Some(l), Some(r)) = (n.field("left"), n.field("right")) else {
            return Val::Void;
        };
        if op == "&&" || op == "||" || op == "and" || op == "or" {
            let a = self.int(l, src);
            let is_and = op == "&&" || op == "and";
            if let Some(v) = a.as_const() {
                if is_and && v == 0 {
                    return Val::Int(Expr::konst(0));
                }
                if !is_and && v != 0 {
                    return Val::Int(Expr::konst(1));
                }
            }
            self.guards.push(Guard {
                cond: a.clone(),
                expect: is_and,
            });
            let b = self.int(r, src);
            self.guards.pop();
            let bop = if is_and { BinOp::LAnd } else { BinOp::LOr };
            return Val::Int(Expr::bin(bop, a, b));
        }
        let a = self.rv(l, src);
        let b = self.rv(r, src);
        // Pointer arithmetic.
        match (&a, &b, op.as_str()) {
            (Val::Ptr(p), Val::Int(i), "+" | "-") | (Val::Int(i), Val::Ptr(p), "+") => {
                let Some(sz) = self.elem_size(&p.pointee) else {
                    return self.unknown_val("arithmetic on a pointer to an unsized type");
                };
                let scaled = Expr::times(i.clone(), Expr::konst(sz as i64));
                let off = if op == "-" {
                    Expr::minus(p.off.clone(), scaled)
                } else {
                    Expr::plus(p.off.clone(), scaled)
                };
                return Val::Ptr(Ptr {
                    obj: p.obj,
                    off,
                    pointee: p.pointee.clone(),
                });
            }
            (Val::Ptr(p), Val::Ptr(q), "-") if p.obj == q.obj => {
                let sz = self.elem_size(&p.pointee).unwrap_or(1).max(1);
                return Val::Int(Expr::bin(
                    BinOp::Div,
                    Expr::minus(p.off.clone(), q.off.clone()),
                    Expr::konst(sz as i64),
                ));
            }
            _ => {}
        }
        let bop = match op.as_str() {
            "+" => BinOp::Add,
            "-" => BinOp::Sub,
            "*" => BinOp::Mul,
            "/" => BinOp::Div,
            "%" => BinOp::Rem,
            "<<" => BinOp::Shl,
            ">>" => BinOp::Shr,
            "&" | "bitand" => BinOp::And,
            "|" | "bitor" => BinOp::Or,
            "^" | "xor" => BinOp::Xor,
            "<" => BinOp::Lt,
            "<=" => BinOp::Le,
            ">" => BinOp::Gt,
            ">=" => BinOp::Ge,
            "==" => BinOp::Eq,
            "!=" | "not_eq" => BinOp::Ne,
            _ => return self.unknown_val(format!("operator `{op}`")),
        };
        let x = self.as_int(a);
        let y = self.as_int(b);
        Val::Int(Expr::bin(bop, x, y))
    }

    /// Assigns to `target`: a variable (rebinds it) or a place in memory
    /// (a store; compound assignment also loads). Returns (old, new).
    fn assign(
        &mut self,
        target: Node,
        op: Option<BinOp>,
        rhs: Option<Val>,
        n: Node,
        src: &Src,
    ) -> (Val, Val) {
        let mut t = target;
        while t.node_kind() == "parenthesized_expression" {
            match t.named_child(0) {
                Some(i) => t = i,
                None => break,
            }
        }
        // `block.x = n` on a `dim3` variable.
        if t.node_kind() == "field_expression" {
            let base = t.field("argument");
            let field = t.field("field").map(|f| src.text(f));
            let dot = t.field("operator").is_none_or(|o| o.node_kind() == ".");
            if let (Some(base), Some(field), true) = (base, field, dot) {
                let i = match field.as_str() {
                    "x" => Some(0),
                    "y" => Some(1),
                    "z" => Some(2),
                    _ => None,
                };
                let name = src.text(base);
                if let (Some(i), Some(Val::Dim3(d))) =
                    (i, self.lookup(&name).map(|b| b.val.clone()))
                {
                    let old = d[i].clone();
                    let new = match (op, rhs) {
                        (None, Some(v)) => self.as_int(v),
                        (Some(o), r) => {
                            let r = self.as_int(r.unwrap_or(Val::Int(Expr::konst(1))));
                            Expr::bin(o, old.clone(), r)
                        }
                        (None, None) => old.clone(),
                    };
                    let mut d = d;
                    d[i] = new.clone();
                    if let Some(b) = self.lookup_mut(&name) {
                        b.val = Val::Dim3(d);
                    }
                    return (Val::Int(old), Val::Int(new));
                }
            }
        }
        if t.node_kind() == "identifier" {
            let name = src.text(t);
            if let Some(b) = self.lookup(&name).cloned() {
                if !matches!(b.val, Val::Place(_)) {
                    let old = b.val.clone();
                    let new = match (op, rhs) {
                        (None, Some(v)) => match (&old, v) {
                            (Val::Ptr(p), Val::Ptr(q)) => Val::Ptr(Ptr {
                                obj: q.obj,
                                off: q.off,
                                pointee: p.pointee.clone(),
                            }),
                            (_, v) => v,
                        },
                        (Some(o), rhs) => {
                            let r = rhs.unwrap_or(Val::Int(Expr::konst(1)));
                            match (&old, r) {
                                (Val::Ptr(p), Val::Int(i))
                                    if matches!(o, BinOp::Add | BinOp::Sub) =>
                                {
                                    let sz = self.elem_size(&p.pointee).unwrap_or(1) as i64;
                                    Val::Ptr(Ptr {
                                        obj: p.obj,
                                        off: Expr::bin(
                                            o,
                                            p.off.clone(),
                                            Expr::times(i, Expr::konst(sz)),
                                        ),
                                        pointee: p.pointee.clone(),
                                    })
                                }
                                (_, r) => {
                                    let a = self.as_int(old.clone());
                                    let b = self.as_int(r);
                                    Val::Int(Expr::bin(o, a, b))
                                }
                            }
                        }
                        (None, None) => old.clone(),
                    };
                    if let Some(b) = self.lookup_mut(&name) {
                        b.val = new.clone();
                    }
                    return (old, new);
                }
            }
        }
        // A place in memory.
        let place = match self.expr(t, src) {
            Val::Place(p) => p,
            _ => return (Val::Void, Val::Void),
        };
        let old = if op.is_some() {
            self.rvalue_of(Val::Place(place.clone()), n, src)
        } else {
            Val::Void
        };
        self.access(&place, Op::Store, n, src);
        (old, rhs.unwrap_or(Val::Void))
    }

    // ------------------------------------------------------------- calls

    fn call(&mut self, n: Node, src: &Src) -> Val {
        let Some(f) = n.field("function") else {
            return Val::Void;
        };
        let args_node = n.field("arguments");
        let args: Vec<Node> = match args_node {
            Some(a) => {
                let mut c = a.walk();
                a.named_children(&mut c)
                    .filter(|x| x.node_kind() != "comment")
                    .collect()
            }
            None => Vec::new(),
        };
        let mut c = n.walk();
        let launch = n
            .children(&mut c)
            .find(|k| k.node_kind() == "kernel_call_syntax");
        if let Some(cfg) = launch {
            return self.launch_site(n, f, cfg, &args, src);
        }
        // A functional cast to a scalar type: `int(x)`, `uint32_t(x)`.
        if args.len() == 1 && matches!(f.node_kind(), "primitive_type" | "identifier") {
            let name = src.text(f);
            let ty = match f.node_kind() {
                "primitive_type" => builtin(&name),
                _ if self.lookup(&name).is_none() => Some(self.named_type(&name)),
                _ => None,
            };
            if let Some(ty @ (Ty::Int { .. } | Ty::Float { .. })) = ty {
                let v = self.rv(args[0], src);
                return self.cast(ty, v);
            }
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
            _ => {
                for a in &args {
                    self.rv(*a, src);
                }
                return self.unknown_val(format!("the result of `{}`", src.text(f)));
            }
        };
        let short = name.rsplit("::").next().unwrap_or(&name).to_string();
        // Function-like macros first: that is what the preprocessor does.
        if let Some(m) = self.tu.macros.get(&short) {
            if m.params.is_some() && !self.expanding.contains(&short) {
                let texts: Vec<String> = args.iter().map(|a| src.text(*a)).collect();
                return self.expand_function_macro(&short, &texts, n, src, false);
            }
        }
        match short.as_str() {
            "reinterpret_cast" | "static_cast" | "const_cast" | "dynamic_cast" => {
                let ty = targs_node
                    .and_then(|t| t.named_child(0))
                    .map(|t| {
                        if t.node_kind() == "type_descriptor" {
                            self.type_descriptor(t, src)
                        } else {
                            Ty::Unknown(src.text(t))
                        }
                    })
                    .unwrap_or(Ty::Unknown(String::new()));
                let v = match args.first() {
                    Some(a) => self.rv(*a, src),
                    None => Val::Void,
                };
                return self.cast(ty, v);
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
                return Val::Int(Expr::bin(op, a, b));
            }
            "ceil" | "ceilf" | "floor" | "floorf" if args.len() == 1 => {
                // `ceil((float)n / (float)b)`: the usual grid-size idiom.
                let mut inner = args[0];
                while inner.node_kind() == "parenthesized_expression" {
                    match inner.named_child(0) {
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
                self.rv(args[0], src);
                return self.unknown_val(format!("the result of `{short}()`"));
            }
            "__mul24" | "__umul24" if args.len() == 2 => {
                let a = self.int(args[0], src);
                let b = self.int(args[1], src);
                return Val::Int(Expr::times(a, b));
            }
            "abs" | "llabs" | "labs" if args.len() == 1 => {
                let a = self.int(args[0], src);
                return Val::Int(Expr::bin(BinOp::Max, a.clone(), Expr::un(UnOp::Neg, a)));
            }
            "dim3" => {
                let mut d = [Expr::konst(1), Expr::konst(1), Expr::konst(1)];
                for (i, a) in args.iter().take(3).enumerate() {
                    d[i] = self.int(*a, src);
                }
                return Val::Dim3(d);
            }
            "__syncthreads"
            | "__syncwarp"
            | "__threadfence"
            | "__threadfence_block"
            | "__threadfence_system"
            | "assert"
            | "printf" => {
                for a in &args {
                    self.rv(*a, src);
                }
                // A barrier or fence orders memory: nothing merges across it.
                self.region += 1;
                return Val::Void;
            }
            _ => {}
        }
        let base = short.trim_end_matches("_block").trim_end_matches("_system");
        if ATOMICS.contains(&base) {
            if let Some(first) = args.first() {
                match self.rv(*first, src) {
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
                        return Val::Int(self.unknown(format!("the result of `{short}`"), Some(w)));
                    }
                    _ => {
                        for a in &args[1..] {
                            self.rv(*a, src);
                        }
                        return self.unknown_val(format!("the result of `{short}`"));
                    }
                }
            }
        }
        let is_load = matches!(
            short.as_str(),
            "__ldg" | "__ldcs" | "__ldca" | "__ldcg" | "__ldlu" | "__ldcv"
        );
        let is_store = matches!(short.as_str(), "__stcs" | "__stcg" | "__stwb" | "__stwt");
        if (is_load || is_store) && !args.is_empty() {
            if let Val::Ptr(p) = self.rv(args[0], src) {
                let place = Place {
                    obj: p.obj,
                    off: p.off,
                    ty: p.pointee,
                };
                if is_load {
                    return self.rvalue_of(Val::Place(place), n, src);
                }
                for a in &args[1..] {
                    self.rv(*a, src);
                }
                self.access(&place, Op::Store, n, src);
                return Val::Void;
            }
        }
        if let Some(defs) = self.tu.functions.get(&short) {
            let def = defs
                .iter()
                .rev()
                .find(|d| !d.is_kernel && param_count(d.node) == Some(args.len()))
                .or_else(|| defs.iter().rev().find(|d| !d.is_kernel))
                .cloned();
            if let Some(def) = def {
                if def.node.field("body").is_some() {
                    let vals: Vec<Val> = args.iter().map(|a| self.expr(*a, src)).collect();
                    return self.inline_call(&def, vals, args.clone(), n, src);
                }
            }
        }
        let mut first = None;
        for a in &args {
            let v = self.rv(*a, src);
            if first.is_none() {
                first = Some(v);
            }
        }
        if super::fuse::SPLITS.contains(&short.as_str()) {
            self.region += 1;
        } else if !super::fuse::MERGES.contains(&short.as_str()) {
            self.undecided += 1;
        }
        let witness = match (args.len(), first) {
            (1, Some(Val::Int(e))) => Some(e),
            (0, _) => Some(Expr::konst(0)),
            _ => None,
        };
        let reason = format!("the result of `{short}()`");
        // `elemPerCopy<T>()`, defined in the file, with a template
        // parameter that no launch instantiates.
        let dependent = if self.tu.functions.contains_key(&short) {
            self.dependent_unknown(&src.text(f), witness.clone(), |p| {
                format!("{reason}, which depends on template parameter `{p}`")
            })
        } else {
            None
        };
        dependent.unwrap_or_else(|| Val::Int(self.unknown(reason, witness)))
    }

    fn inline_call(
        &mut self,
        def: &FuncDef<'t>,
        vals: Vec<Val>,
        arg_nodes: Vec<Node>,
        n: Node,
        src: &Src,
    ) -> Val {
        if self.inlining.contains(&def.name) {
            for (i, v) in vals.into_iter().enumerate() {
                let an = arg_nodes.get(i).copied().unwrap_or(n);
                self.rvalue_of(v, an, src);
            }
            return self.unknown_val(format!("the result of `{}` (a recursive call)", def.name));
        }
        if self.inline_depth >= budget::MAX_INLINE_DEPTH
            || self.inlined >= budget::MAX_INLINED_CALLS
        {
            let b = if self.inline_depth >= budget::MAX_INLINE_DEPTH {
                ("MAX_INLINE_DEPTH", budget::MAX_INLINE_DEPTH, "nested calls")
            } else {
                (
                    "MAX_INLINED_CALLS",
                    budget::MAX_INLINED_CALLS,
                    "calls per kernel",
                )
            };
            let what = format!("the result of `{}`", def.name);
            return self.budget_unknown(n, src, b, &what);
        }
        self.inlined += 1;
        let main = Src::of(def.src);
        let Some(body) = def.node.field("body") else {
            return Val::Void;
        };
        let params = function_params(def.node);
        let mut scope = Scope::new();
        let mut tscope = HashMap::new();
        // Explicit template arguments (`put<Cfg<8>, 4>(s)`), read in the
        // caller's scope; a type not given is deduced below.
        let explicit = n
            .field("function")
            .filter(|f| f.node_kind() == "template_function")
            .and_then(|f| f.field("arguments"))
            .map(|list| self.template_args(list, src))
            .unwrap_or_default();
        self.bind_targs(&def.tparams, &explicit, &mut tscope, &mut scope);
        // A value parameter not given takes its default (`template <int
        // width = WARP_SIZE>`), read in the callee's scope: its earlier
        // parameters and the file's names, not the caller's variables.
        for (i, p) in def.tparams.iter().enumerate().skip(explicit.len()) {
            let (TParam::Value(name), Some(Some(d))) = (p, def.tdefaults.get(i)) else {
                continue;
            };
            let saved = std::mem::replace(&mut self.scopes, vec![scope.clone()]);
            let v = self.const_int(*d, &main);
            self.scopes = saved;
            if let Some(v) = v {
                scope.insert(
                    name.clone(),
                    Binding {
                        val: Val::Int(Expr::konst(v)),
                    },
                );
            }
        }
        let tnames: Vec<String> = def
            .tparams
            .iter()
            .filter_map(|p| match p {
                TParam::Type(n) => Some(n.clone()),
                TParam::Value(_) => None,
            })
            .collect();
        // Arguments are evaluated in the caller's scope.
        let mut converted = Vec::new();
        for (i, (p, v)) in params.iter().zip(vals).enumerate() {
            let tn = p.field("type");
            // Deduce `T` from `T *` arguments.
            if let (Some(tn), Val::Ptr(ptr)) = (tn, &v) {
                let tname = main.text(tn);
                if tnames.contains(&tname) && !tscope.contains_key(&tname) {
                    tscope.insert(tname, ptr.pointee.clone());
                }
            }
            let is_ref = p
                .field("declarator")
                .map(|d| d.node_kind() == "reference_declarator")
                .unwrap_or(false);
            let v = if is_ref {
                v
            } else {
                let an = arg_nodes.get(i).copied().unwrap_or(n);
                self.rvalue_of(v, an, src)
            };
            converted.push((*p, v));
        }
        self.tscopes.push(tscope);
        for (p, v) in converted {
            let Some(tn) = p.field("type") else {
                continue;
            };
            let base = self.resolve_type(tn, &main);
            let Some(d) = p.field("declarator") else {
                continue;
            };
            let (pname, ty, _, _) = self.declarator_ref(base, d, &main, 0);
            let v = match (ty, v) {
                (Ty::Ptr(t), Val::Ptr(q)) => Val::Ptr(Ptr {
                    obj: q.obj,
                    off: q.off,
                    pointee: *t,
                }),
                (_, v) => v,
            };
            scope.insert(pname, Binding { val: v });
        }
        let saved_scopes = std::mem::replace(&mut self.scopes, vec![scope]);
        self.frames.push(Frame {
            guard_base: self.guards.len(),
            ..Frame::default()
        });
        self.inline_depth += 1;
        self.inlining.push(def.name.clone());
        self.stmt(body, &main);
        self.inlining.pop();
        self.inline_depth -= 1;
        let frame = self.frames.pop().unwrap_or_default();
        self.scopes = saved_scopes;
        self.tscopes.pop();
        let mut rets = frame.returns;
        let Some((_, last)) = rets.pop() else {
            return Val::Void;
        };
        let mut v = last;
        while let Some((c, val)) = rets.pop() {
            v = self.merge_vals(c, val, v);
        }
        v
    }

    fn launch_site(&mut self, n: Node, f: Node, cfg: Node, args: &[Node], src: &Src) -> Val {
        let (name, targs) = match f.node_kind() {
            "template_function" => (
                f.field("name").map(|x| src.text(x)).unwrap_or_default(),
                f.field("arguments")
                    .map(|a| self.template_args(a, src))
                    .unwrap_or_default(),
            ),
            _ => (src.text(f), Vec::new()),
        };
        let name = name.rsplit("::").next().unwrap_or(&name).to_string();
        let mut c = cfg.walk();
        let parts: Vec<Node> = cfg.named_children(&mut c).collect();
        let grid = parts.first().and_then(|g| {
            let v = self.rv(*g, src);
            self.dim3(v)
        });
        let block = parts.get(1).and_then(|b| {
            let v = self.rv(*b, src);
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
                self.note(
                    n,
                    src,
                    format!(
                        "block [{}, {}, {}] has more than {} threads; launch ignored",
                        b[0],
                        b[1],
                        b[2],
                        budget::MAX_THREADS_PER_BLOCK
                    ),
                );
                None
            }
            None => None,
        };
        let mut vals = Vec::new();
        for a in args {
            let v = self.rv(*a, src);
            vals.push(match v {
                Val::Int(e) => e.as_const(),
                _ => None,
            });
        }
        let offset_args = args.iter().map(|a| self.offset_pointer(*a, src)).collect();
        let span = self.span(n, src);
        if let Some(l) = self.launches.as_mut() {
            l.push(LaunchSite {
                kernel: name,
                targs,
                grid,
                block,
                args: vals,
                offset_args,
                span,
            });
        }
        Val::Void
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
            self.moved = Some((key, moved_names(body, src)));
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
        let fixed = |e: Expr| -> Expr {
            if e.as_const().is_some() {
                return e;
            }
            for g in self.guards.iter().rev() {
                if !g.expect {
                    continue;
                }
                if let crate::ir::ExprKind::Bin(BinOp::Eq, a, b) = g.cond.kind() {
                    match (a.as_const(), b.as_const()) {
                        (None, Some(k)) if a.same(&e) => return Expr::konst(k),
                        (Some(k), None) if b.same(&e) => return Expr::konst(k),
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
        if d.iter().any(|x| *x < 1 || *x > (1 << 31)) {
            return None;
        }
        Some([d[0] as u64, d[1] as u64, d[2] as u64])
    }

    fn template_args(&mut self, list: Node, src: &Src) -> Vec<TArg> {
        let mut out = Vec::new();
        let mut c = list.walk();
        let kids: Vec<Node> = list.named_children(&mut c).collect();
        for a in kids {
            if a.node_kind() == "type_descriptor" {
                let text = src.text(a).trim().to_string();
                let is_value = self.tu.consts.contains_key(&text)
                    || self
                        .tu
                        .macros
                        .get(&text)
                        .map(|m| m.params.is_none())
                        .unwrap_or(false)
                    || self.lookup(&text).is_some();
                if is_value {
                    let v = self.ident(&text, a, src);
                    let e = self.as_int(v);
                    out.push(match e.as_const() {
                        Some(v) => TArg::Value(v),
                        None => TArg::Unknown(text),
                    });
                } else {
                    let t = self.type_arg(a, src);
                    out.push(t);
                }
            } else {
                match self.const_int(a, src) {
                    Some(v) => out.push(TArg::Value(v)),
                    None => out.push(TArg::Unknown(src.text(a))),
                }
            }
        }
        out
    }

    // ---------------------------------------------------------- statements

    fn frame(&mut self) -> &mut Frame {
        if self.frames.is_empty() {
            self.frames.push(Frame::default());
        }
        let i = self.frames.len() - 1;
        &mut self.frames[i]
    }

    pub(crate) fn stmt(&mut self, n: Node, src: &Src) {
        if self.frame().terminated {
            return;
        }
        if self.depth >= budget::MAX_SYNTAX_DEPTH {
            let (name, limit, unit) = SYNTAX_DEPTH;
            self.note(
                n,
                src,
                format!(
                    "statements nested too deeply; the rest of this block is not analysed (the \
                     {} ran out)",
                    budget::named(name, limit, unit)
                ),
            );
            return;
        }
        self.depth += 1;
        // Control flow between two field accesses may or may not keep nvcc
        // from merging them (if-conversion, unrolling): on the way in and out.
        let branches = !if_converts(n, src)
            && matches!(
                n.node_kind(),
                "if_statement"
                    | "for_statement"
                    | "while_statement"
                    | "do_statement"
                    | "for_range_loop"
                    | "switch_statement"
                    | "labeled_statement"
                    | "goto_statement"
            );
        self.undecided += branches as u32;
        self.stmt_inner(n, src);
        self.undecided += branches as u32;
        self.depth -= 1;
    }

    fn stmt_inner(&mut self, n: Node, src: &Src) {
        match n.node_kind() {
            "compound_statement" | "declaration_list" => {
                self.scopes.push(Scope::new());
                self.local_aliases.push(HashMap::new());
                let mut c = n.walk();
                let kids: Vec<Node> = n.named_children(&mut c).collect();
                for k in kids {
                    self.stmt(k, src);
                }
                self.local_aliases.pop();
                self.scopes.pop();
            }
            "declaration" => self.local_decl(n, src),
            "enum_specifier" => self.local_enum(n, src),
            "expression_statement" => {
                if let Some(e) = n.named_child(0) {
                    if e.node_kind() == "call_expression" {
                        // A macro used as a statement may expand to statements.
                        if let Some(f) = e.field("function") {
                            let name = src.text(f);
                            if let Some(m) = self.tu.macros.get(&name) {
                                if m.params.is_some() && !self.expanding.contains(&name) {
                                    let args: Vec<String> = e
                                        .field("arguments")
                                        .map(|a| {
                                            let mut c = a.walk();
                                            a.named_children(&mut c).map(|x| src.text(x)).collect()
                                        })
                                        .unwrap_or_default();
                                    self.expand_function_macro_stmt(&name, &args, e, src);
                                    return;
                                }
                            }
                        }
                    }
                    self.expr(e, src);
                }
            }
            "if_statement" => self.if_stmt(n, src),
            "for_statement" | "while_statement" | "do_statement" => self.loop_stmt(n, src),
            "for_range_loop" => {
                // `for (x : range)`: the body, once per unknown element.
                self.scopes.push(Scope::new());
                if let Some(d) = n.field("declarator") {
                    let name = src.text(d);
                    let u = self.unknown_val(format!("range element `{name}`"));
                    self.bind(name, u);
                }
                if let Some(b) = n.field("body") {
                    self.stmt(b, src);
                }
                self.scopes.pop();
            }
            "return_statement" => {
                let v = match n.named_child(0) {
                    Some(e) => self.rv(e, src),
                    None => Val::Void,
                };
                self.exit(n, src, Some(v), false);
            }
            "break_statement" => self.exit(n, src, None, true),
            "continue_statement" => {
                let cond = self.current_cond();
                if let Some(l) = self.frame().loops.last_mut() {
                    l.skip.push(Guard {
                        cond,
                        expect: false,
                    });
                }
            }
            "switch_statement" => self.switch_stmt(n, src),
            "labeled_statement" => {
                if let Some(s) = n.field("statement").or_else(|| n.named_child(1)) {
                    self.stmt(s, src);
                }
            }
            "preproc_if" | "preproc_ifdef" | "preproc_elif" | "preproc_else" => {
                let kids = Self::preproc_branch(n);
                for k in kids {
                    self.stmt(k, src);
                }
            }
            "type_definition" | "alias_declaration" => {
                if let Some(t) = n.field("type") {
                    let ty = if n.node_kind() == "alias_declaration" {
                        self.type_descriptor(t, src)
                    } else {
                        self.resolve_type(t, src)
                    };
                    let mut c = n.walk();
                    let decls: Vec<Node> = n.children_by_field_name("declarator", &mut c).collect();
                    let names: Vec<(String, Ty)> = if n.node_kind() == "alias_declaration" {
                        n.field("name")
                            .map(|x| vec![(src.text(x), ty.clone())])
                            .unwrap_or_default()
                    } else {
                        decls
                            .iter()
                            .map(|d| {
                                let (name, t, _) = self.declarator(ty.clone(), *d, src);
                                (name, t)
                            })
                            .collect()
                    };
                    // `using K = Dims<D>;`: `K::stages` reads the struct
                    // with these arguments.
                    if n.node_kind() == "alias_declaration" {
                        let tt = t.field("type").filter(|x| x.node_kind() == "template_type");
                        let name = n.field("name").map(|x| src.text(x));
                        if let (Some(tt), Some(name)) = (tt, name) {
                            if let Some(found) = self.template_type_args(tt, src) {
                                if let Some(m) = self.local_aliases.last_mut() {
                                    m.insert(name, found);
                                }
                            }
                        }
                    }
                    if let Some(s) = self.tscopes.last_mut() {
                        for (name, t) in names {
                            s.insert(name, t);
                        }
                    }
                }
            }
            "goto_statement" => self.note(
                n,
                src,
                "`goto` is not followed; the code after it is analysed as if reached",
            ),
            _ => {}
        }
    }

    fn expand_function_macro_stmt(&mut self, name: &str, args: &[String], n: Node, src: &Src) {
        let Some(m) = self.tu.macros.get(name) else {
            return;
        };
        let params = m.params.clone().unwrap_or_default();
        let body = substitute(&m.body, &params, args);
        // Try it as an expression first, then as statements.
        let text = format!("auto __warplint_expansion = ({body}\n);");
        let ok_expr = parse_snippet(&text)
            .map(|t| !t.root_node().has_error())
            .unwrap_or(false);
        self.expand_text(name, &body, n, src, !ok_expr);
    }

    fn exit(&mut self, n: Node, src: &Src, value: Option<Val>, is_break: bool) {
        let cond = self.current_cond();
        let guard_base = self.frame().guard_base;
        let unguarded = self.guards.len() == guard_base;
        if is_break {
            let Some(ctx) = self.frame().loops.last_mut() else {
                return;
            };
            let id = ctx.id;
            ctx.skip.push(Guard {
                cond: cond.clone(),
                expect: false,
            });
            if id != usize::MAX {
                if let Some(l) = self.k.loops.get_mut(id) {
                    l.breaks.push(vec![Guard { cond, expect: true }]);
                }
            }
            return;
        }
        if let Some(v) = value {
            self.frame().returns.push((cond.clone(), v));
        }
        let loop_ids: Vec<usize> = self.frame().loops.iter().map(|l| l.id).collect();
        if loop_ids.is_empty() {
            if unguarded {
                self.frame().terminated = true;
            } else {
                self.frame().dead.push(Guard {
                    cond,
                    expect: false,
                });
            }
            return;
        }
        for id in loop_ids {
            if let Some(l) = self.k.loops.get_mut(id) {
                l.breaks.push(vec![Guard {
                    cond: cond.clone(),
                    expect: true,
                }]);
            }
        }
        for ctx in self.frame().loops.iter_mut() {
            ctx.skip.push(Guard {
                cond: cond.clone(),
                expect: false,
            });
            ctx.returned = true;
        }
        let _ = (n, src);
    }

    fn if_stmt(&mut self, n: Node, src: &Src) {
        let Some(c) = n.field("condition") else {
            return;
        };
        let c = if c.node_kind() == "condition_clause" {
            c.field("value").or_else(|| c.named_child(0)).unwrap_or(c)
        } else {
            c
        };
        let cond = if c.node_kind() == "declaration" {
            self.local_decl(c, src);
            self.unknown("a declaration used as a condition", None)
        } else {
            self.int(c, src)
        };
        let cons = n.field("consequence");
        let alt = n.field("alternative").map(|a| {
            if a.node_kind() == "else_clause" {
                a.named_child(0).unwrap_or(a)
            } else {
                a
            }
        });
        if let Some(v) = cond.as_const() {
            let taken = if v != 0 { cons } else { alt };
            if let Some(s) = taken {
                self.stmt(s, src);
            }
            return;
        }
        let before = self.scopes.clone();
        self.guards.push(Guard {
            cond: cond.clone(),
            expect: true,
        });
        if let Some(s) = cons {
            self.stmt(s, src);
        }
        self.guards.pop();
        let then_scopes = std::mem::replace(&mut self.scopes, before);
        self.frame().terminated = false;
        if let Some(s) = alt {
            self.guards.push(Guard {
                cond: cond.clone(),
                expect: false,
            });
            self.stmt(s, src);
            self.guards.pop();
            self.frame().terminated = false;
        }
        self.merge_scopes(cond, then_scopes);
    }

    fn merge_scopes(&mut self, cond: Expr, then_scopes: Vec<Scope>) {
        for (i, then_scope) in then_scopes.iter().enumerate().take(self.scopes.len()) {
            let names: Vec<String> = self.scopes[i].keys().cloned().collect();
            for name in names {
                let Some(t) = then_scope.get(&name) else {
                    continue;
                };
                let e = &self.scopes[i][&name];
                let same = match (&t.val, &e.val) {
                    (Val::Int(a), Val::Int(b)) => a.same(b),
                    (Val::Ptr(a), Val::Ptr(b)) => a.obj == b.obj && a.off.same(&b.off),
                    (Val::Place(a), Val::Place(b)) => a.obj == b.obj && a.off.same(&b.off),
                    (Val::Dim3(a), Val::Dim3(b)) => a.iter().zip(b).all(|(x, y)| x.same(y)),
                    (Val::Void, Val::Void) => true,
                    _ => false,
                };
                if same {
                    continue;
                }
                let merged = self.merge_vals(cond.clone(), t.val.clone(), e.val.clone());
                if let Some(b) = self.scopes[i].get_mut(&name) {
                    b.val = merged;
                }
            }
        }
    }

    fn switch_stmt(&mut self, n: Node, src: &Src) {
        let Some(c) = n.field("condition") else {
            return;
        };
        let c = if c.node_kind() == "condition_clause" {
            c.field("value").or_else(|| c.named_child(0)).unwrap_or(c)
        } else {
            c
        };
        let value = self.int(c, src);
        let Some(body) = n.field("body") else {
            return;
        };
        self.frame().loops.push(LoopCtx {
            id: usize::MAX,
            ..LoopCtx::default()
        });
        let mut cursor = body.walk();
        let cases: Vec<Node> = body.named_children(&mut cursor).collect();
        // The condition the previous case was entered under, when its
        // statements fall through into the next one.
        let mut falling: Option<Expr> = None;
        for case in cases {
            if case.node_kind() != "case_statement" {
                self.stmt(case, src);
                continue;
            }
            let cv = case.field("value").map(|v| self.int(v, src));
            let own = match cv {
                Some(v) => Expr::bin(BinOp::Eq, value.clone(), v),
                None => self.unknown("the `default:` case of a switch", None),
            };
            // A case the one before falls into runs for either value.
            let cond = match falling.take() {
                Some(prev) => Expr::bin(BinOp::LOr, prev, own),
                None => own,
            };
            self.guards.push(Guard {
                cond: cond.clone(),
                expect: true,
            });
            let mut c2 = case.walk();
            let stmts: Vec<Node> = case
                .named_children(&mut c2)
                .filter(|s| Some(s.id()) != case.field("value").map(|v| v.id()))
                .collect();
            let jumps = stmts.last().is_some_and(|s| {
                matches!(
                    s.node_kind(),
                    "break_statement"
                        | "return_statement"
                        | "continue_statement"
                        | "goto_statement"
                        | "throw_statement"
                )
            });
            if !jumps {
                falling = Some(cond);
            }
            self.scopes.push(Scope::new());
            for s in stmts {
                self.stmt(s, src);
            }
            self.scopes.pop();
            self.guards.pop();
            if let Some(l) = self.frame().loops.last_mut() {
                l.skip.clear();
            }
        }
        self.frame().loops.pop();
    }

    fn loop_stmt(&mut self, n: Node, src: &Src) {
        let kind = n.node_kind();
        self.scopes.push(Scope::new());
        if kind == "for_statement" {
            if let Some(init) = n.field("initializer") {
                if init.node_kind() == "declaration" {
                    self.local_decl(init, src);
                } else {
                    self.expr(init, src);
                }
            }
        }
        let body = n.field("body");
        let cond_node = n.field("condition").map(|c| {
            if c.node_kind() == "condition_clause" {
                c.field("value").or_else(|| c.named_child(0)).unwrap_or(c)
            } else if c.node_kind() == "parenthesized_expression" && kind == "do_statement" {
                c.named_child(0).unwrap_or(c)
            } else {
                c
            }
        });
        let update = n.field("update");
        let mut assigned = Vec::new();
        for part in [body, cond_node, update].into_iter().flatten() {
            collect_assigned(part, src, &mut assigned);
        }
        let id = self.k.loops.len();
        let span = self.span(n, src);
        self.k.loops.push(Loop {
            parent: self.open_loops.last().copied(),
            vars: Vec::new(),
            init: Vec::new(),
            next: Vec::new(),
            pre_cond: None,
            post_cond: None,
            entry_guards: self.current_guards(),
            breaks: Vec::new(),
            span,
        });
        let mut carried: Vec<(String, u32, bool)> = Vec::new();
        for name in assigned {
            let Some(b) = self.lookup(&name).cloned() else {
                continue;
            };
            let var = self.k.loop_vars.len() as u32;
            let atom = Expr::atom(Atom::LoopVar(var));
            let (init, newval, is_ptr) = match b.val {
                Val::Int(e) => (e, Val::Int(atom), false),
                Val::Ptr(p) => (
                    p.off,
                    Val::Ptr(Ptr {
                        obj: p.obj,
                        off: atom,
                        pointee: p.pointee,
                    }),
                    true,
                ),
                _ => continue,
            };
            self.k.loop_vars.push(LoopVar {
                name: name.clone(),
                loop_id: id,
            });
            self.k.loops[id].vars.push(var);
            self.k.loops[id].init.push(init);
            if let Some(b) = self.lookup_mut(&name) {
                b.val = newval;
            }
            carried.push((name, var, is_ptr));
        }
        self.open_loops.push(id);
        self.frame().loops.push(LoopCtx {
            id,
            ..LoopCtx::default()
        });
        if kind != "do_statement" {
            let pre = cond_node.map(|c| {
                if c.node_kind() == "declaration" {
                    self.local_decl(c, src);
                    self.unknown("a declaration used as a loop condition", None)
                } else {
                    self.int(c, src)
                }
            });
            self.k.loops[id].pre_cond = pre;
        }
        if let Some(b) = body {
            self.stmt(b, src);
            self.frame().terminated = false;
        }
        // The update runs for lanes that did not break or return this iteration.
        if let Some(l) = self.frame().loops.last_mut() {
            l.skip.retain(|_| false);
        }
        if let Some(u) = update {
            self.expr(u, src);
        }
        if kind == "do_statement" {
            let post = cond_node.map(|c| self.int(c, src));
            self.k.loops[id].post_cond = post;
        }
        let mut next = Vec::new();
        for (name, _, is_ptr) in &carried {
            let v = self.lookup(name).map(|b| b.val.clone());
            let e = match (v, is_ptr) {
                (Some(Val::Int(e)), false) => e,
                (Some(Val::Ptr(p)), true) => p.off,
                _ => Expr::atom(Atom::TooComplex),
            };
            next.push(e);
        }
        self.k.loops[id].next = next;
        self.open_loops.pop();
        let ctx = self.frame().loops.pop().unwrap_or_default();
        if ctx.returned {
            let line = span.line;
            let outermost = self.frame().loops.iter().all(|l| l.id == usize::MAX);
            if outermost {
                let u = self.unknown(
                    format!("lanes that returned inside the loop at line {line}"),
                    None,
                );
                self.frame().dead.push(Guard {
                    cond: u,
                    expect: false,
                });
            } else if let Some(p) = self.frame().loops.last_mut() {
                p.returned = true;
            }
        }
        // After the loop, carried variables hold their exit values.
        let line = span.line;
        for (name, _, is_ptr) in carried {
            let u = self.unknown(
                format!("the value of `{name}` after the loop at line {line}"),
                None,
            );
            if let Some(b) = self.lookup_mut(&name) {
                b.val = match (&b.val, is_ptr) {
                    (Val::Ptr(p), true) => Val::Ptr(Ptr {
                        obj: p.obj,
                        off: u,
                        pointee: p.pointee.clone(),
                    }),
                    _ => Val::Int(u),
                };
            }
        }
        self.scopes.pop();
    }

    /// `enum { A = expr, B };` in a function body: each enumerator is a
    /// constant of the enclosing scope (its value may depend on template
    /// arguments).
    fn local_enum(&mut self, n: Node, src: &Src) {
        let Some(body) = n.field("body") else {
            return;
        };
        let mut next = Expr::konst(0);
        let mut c = body.walk();
        let items: Vec<Node> = body.named_children(&mut c).collect();
        for e in items {
            let Some(name) = e.field("name").filter(|_| e.node_kind() == "enumerator") else {
                continue;
            };
            if let Some(v) = e.field("value") {
                next = self.int(v, src);
            }
            self.bind(src.text(name), Val::Int(next.clone()));
            next = Expr::plus(next, Expr::konst(1));
        }
    }

    fn local_decl(&mut self, n: Node, src: &Src) {
        let Some(tn) = n.field("type") else {
            return;
        };
        if tn.node_kind() == "enum_specifier" {
            self.local_enum(tn, src);
        }
        let quals = qualifiers(n, src);
        let shared = quals.iter().any(|q| q == "__shared__");
        let is_extern = quals.iter().any(|q| q == "extern");
        let base = self.resolve_type(tn, src);
        let elem_text = src.text(tn);
        let decl_span = self.span(n, src);
        let decl_text = src.text(n);
        let mut c = n.walk();
        let decls: Vec<Node> = n.children_by_field_name("declarator", &mut c).collect();
        for d in decls {
            if d.node_kind() == "function_declarator" {
                // `dim3 block(BX, BY);` with macro arguments parses as a
                // function declaration (C++'s most vexing parse); inside a
                // function body it is a constructor call.
                self.vexing_parse(d, &base, src);
                continue;
            }
            let (name, ty, init, is_ref) = self.declarator_ref(base.clone(), d, src, 0);
            if name.is_empty() {
                continue;
            }
            if shared {
                let ty = if is_extern {
                    match ty {
                        Ty::Array(e, _) => Ty::Array(e, None),
                        t => t,
                    }
                } else {
                    ty
                };
                let ty = match ty {
                    Ty::Array(..) => ty,
                    t => Ty::Array(Box::new(t), Some(1)),
                };
                let obj = self.new_object(
                    &name,
                    Space::Shared,
                    &ty,
                    elem_text.clone(),
                    decl_span,
                    decl_text.clone(),
                );
                if src.at.is_none() {
                    self.k.objects[obj].inner_dim =
                        innermost_size(d).map(|n| src.map.span(n.start_byte(), n.end_byte()));
                }
                let val = if matches!(&ty, Ty::Array(_, Some(1))) && !src.text(d).contains('[') {
                    // A scalar `__shared__ float x;`: a place of one element.
                    let Ty::Array(e, _) = ty else { continue };
                    Val::Place(Place {
                        obj,
                        off: Expr::konst(0),
                        ty: *e,
                    })
                } else {
                    Val::Place(Place {
                        obj,
                        off: Expr::konst(0),
                        ty,
                    })
                };
                self.bind(name, val);
                continue;
            }
            if let Ty::Array(..) = ty {
                let obj = self.new_object(
                    &name,
                    Space::Local,
                    &ty,
                    elem_text.clone(),
                    decl_span,
                    decl_text.clone(),
                );
                if let Some(i) = init {
                    self.expr(i, src);
                }
                self.bind(
                    name,
                    Val::Place(Place {
                        obj,
                        off: Expr::konst(0),
                        ty,
                    }),
                );
                continue;
            }
            let val = match init {
                Some(i) => {
                    if is_ref {
                        self.expr(i, src)
                    } else {
                        let v = self.rv(i, src);
                        match (&ty, v) {
                            (Ty::Ptr(t), Val::Ptr(p)) => Val::Ptr(Ptr {
                                obj: p.obj,
                                off: p.off,
                                pointee: (**t).clone(),
                            }),
                            (Ty::Dim3, Val::Int(e)) => {
                                Val::Dim3([e, Expr::konst(1), Expr::konst(1)])
                            }
                            (_, v) => v,
                        }
                    }
                }
                None if ty == Ty::Dim3 => {
                    Val::Dim3([Expr::konst(1), Expr::konst(1), Expr::konst(1)])
                }
                None => self.unknown_val(format!("`{name}` before it is assigned")),
            };
            self.bind(name, val);
        }
    }

    /// `S::member` / `S<T>::member` / `Alias::member`: a static constant
    /// of a struct, with the template's parameters bound to the arguments.
    fn static_member(&mut self, scope: Node, src: &Src, member: &str) -> Option<i64> {
        if self.depth >= budget::MAX_SYNTAX_DEPTH {
            return None;
        }
        let (struct_name, args) = self.scope_struct(scope, src)?;
        self.member_value(&struct_name, &args, member)
    }

    /// The struct a scope names and its template arguments: a
    /// `template_type` (`Dims<D>`), an alias in the function (`using K =
    /// Dims<D>;`) or the file, a template type parameter bound to a struct
    /// (`Ktraits::N` in `k<Traits>`), or the struct's own name.
    fn scope_struct(&mut self, scope: Node, src: &Src) -> Option<(String, Vec<TArg>)> {
        if scope.node_kind() == "template_type" {
            return self.template_type_args(scope, src);
        }
        let name = src.text(scope);
        if let Some(found) = self.local_aliases.iter().rev().find_map(|m| m.get(&name)) {
            return Some(found.clone());
        }
        if let Some((t, s)) = self.tu.template_aliases.get(&name).copied() {
            return self.template_type_args(t, &Src::of(s));
        }
        match self.scoped_type(&name) {
            Some(Ty::Struct(id)) => Some((self.structs().get(*id)?.name.clone(), Vec::new())),
            Some(Ty::Unknown(text)) => self
                .instances
                .get(text)
                .cloned()
                .or(Some((name, Vec::new()))),
            _ => Some((name, Vec::new())),
        }
    }

    /// Binds each template parameter whose argument is known: a type (or
    /// struct template instance) into `tscope`, an integer into `scope`.
    fn bind_targs(
        &mut self,
        params: &[TParam],
        args: &[TArg],
        tscope: &mut HashMap<String, Ty>,
        scope: &mut Scope,
    ) {
        for (p, a) in params.iter().zip(args) {
            match (p, a) {
                (TParam::Type(n), TArg::Type(t) | TArg::Instance(t, ..)) => {
                    tscope.insert(n.clone(), t.clone());
                    self.instance(a);
                }
                (TParam::Value(n), TArg::Value(v)) => {
                    scope.insert(
                        n.clone(),
                        Binding {
                            val: Val::Int(Expr::konst(*v)),
                        },
                    );
                }
                _ => {}
            }
        }
    }

    /// Remembers, when `a` (a template parameter's value) is a struct
    /// template instance, which template and arguments its type's text
    /// stands for, for `scope_struct`.
    fn instance(&mut self, a: &TArg) {
        if let TArg::Instance(Ty::Unknown(text), name, args) = a {
            self.instances
                .insert(text.clone(), (name.clone(), args.clone()));
        }
    }

    /// `Name<args>` with each argument resolved (a type, or an integer;
    /// `None` for an integer not known here).
    fn template_type_args(&mut self, tt: Node, src: &Src) -> Option<(String, Vec<TArg>)> {
        let name = src.text(tt.field("name")?);
        let mut args = Vec::new();
        if let Some(a) = tt.field("arguments") {
            let mut c = a.walk();
            let nodes: Vec<Node> = a.named_children(&mut c).collect();
            for n in nodes {
                // `Dims<D>` parses `D` as a type; a bound value parameter
                // is a value.
                let bound = match self.lookup(&src.text(n)).map(|b| &b.val) {
                    Some(Val::Int(e)) => e.as_const(),
                    _ => None,
                };
                let arg = if let Some(v) = bound {
                    TArg::Value(v)
                } else if n.node_kind() == "type_descriptor" {
                    self.type_arg(n, src)
                } else {
                    match self.int(n, src).as_const() {
                        Some(v) => TArg::Value(v),
                        None => TArg::Unknown(src.text(n)),
                    }
                };
                args.push(arg);
            }
        }
        Some((name, args))
    }

    /// A type given as a template argument; an instance of a struct
    /// template whose arguments are all known keeps them
    /// ([`TArg::Instance`]).
    fn type_arg(&mut self, n: Node, src: &Src) -> TArg {
        let t = self.type_descriptor(n, src);
        // An alias of an instance: `using Cfg = PipelineConfig<4, 16>;`
        // in the launching function, or in the file.
        let text = src.text(n);
        let text = text.trim();
        if let Some((name, args)) = self
            .local_aliases
            .iter()
            .rev()
            .find_map(|m| m.get(text))
            .filter(|(_, args)| TArg::all_known(args))
            .cloned()
        {
            return TArg::Instance(t, name, args);
        }
        let Some(tt) = n.field("type").filter(|x| x.node_kind() == "template_type") else {
            return TArg::Type(t);
        };
        let known = tt
            .field("name")
            .is_some_and(|x| self.tu.struct_nodes.contains_key(&src.text(x)));
        // Nested instances (`A<B<C<...>>>`) recurse: bounded like syntax.
        if !known || self.depth >= budget::MAX_SYNTAX_DEPTH {
            return TArg::Type(t);
        }
        self.depth += 1;
        let found = self.template_type_args(tt, src);
        self.depth -= 1;
        match found {
            Some((name, args)) if TArg::all_known(&args) => TArg::Instance(t, name, args),
            _ => TArg::Type(t),
        }
    }

    /// `Name<args>::member` for a `static constexpr` member: a full
    /// specialisation whose arguments match (`template <> struct
    /// Dims<64>`) before the primary template.
    fn member_value(&mut self, struct_name: &str, args: &[TArg], member: &str) -> Option<i64> {
        let key = format!("{struct_name}\u{0}{args:?}\u{0}{member}");
        if let Some(v) = self.member_values.get(&key) {
            return *v;
        }
        // In progress: a member defined through itself is not a constant.
        self.member_values.insert(key.clone(), None);
        let v = self.member_value_uncached(struct_name, args, member);
        self.member_values.insert(key, v);
        v
    }

    fn member_value_uncached(
        &mut self,
        struct_name: &str,
        args: &[TArg],
        member: &str,
    ) -> Option<i64> {
        let prefix = format!("{struct_name}<");
        let keys: Vec<String> = self
            .tu
            .struct_nodes
            .keys()
            .filter(|k| k.starts_with(&prefix))
            .cloned()
            .collect();
        let mut chosen = None;
        for key in keys {
            let Some((tparams, node, ssrc)) = self.tu.struct_nodes.get(&key).cloned() else {
                continue;
            };
            if !tparams.is_empty() {
                continue; // a partial specialisation: not matched
            }
            let Some((_, sargs)) = node
                .field("name")
                .and_then(|t| self.template_type_args(t, &Src::of(ssrc)))
            else {
                continue;
            };
            // Equal arguments, none of them unknown here.
            if sargs.as_slice() == args && TArg::all_known(&sargs) {
                chosen = Some((tparams, node, ssrc));
                break;
            }
        }
        let (tparams, node, ssrc) = match chosen {
            Some(c) => c,
            None => self.tu.struct_nodes.get(struct_name)?.clone(),
        };
        let body = node.field("body")?;
        let mut c = body.walk();
        let init = body.named_children(&mut c).find_map(|f| {
            let d = f.field("declarator")?;
            (f.node_kind() == "field_declaration" && Src::of(ssrc).text(d) == member)
                .then(|| f.field("default_value"))
                .flatten()
        })?;
        // Bind the template's parameters to the arguments.
        let mut tscope = HashMap::new();
        let mut scope_vals = Scope::new();
        self.bind_targs(&tparams, args, &mut tscope, &mut scope_vals);
        if self.depth >= budget::MAX_SYNTAX_DEPTH {
            return None;
        }
        self.tscopes.push(tscope);
        self.scopes.push(scope_vals);
        self.member_scopes
            .push((struct_name.to_string(), args.to_vec()));
        self.depth += 1;
        let v = self.const_int(init, &Src::of(ssrc));
        self.depth -= 1;
        self.member_scopes.pop();
        self.scopes.pop();
        self.tscopes.pop();
        v
    }

    /// `T name(a, b);` read as a variable constructed from `a` and `b`.
    fn vexing_parse(&mut self, d: Node, base: &Ty, src: &Src) {
        let Some(name) = d.field("declarator").map(|x| src.text(x)) else {
            return;
        };
        let mut args = Vec::new();
        if let Some(pl) = d.field("parameters") {
            let mut c = pl.walk();
            let params: Vec<Node> = pl.named_children(&mut c).collect();
            for p in params {
                let text = src.text(p);
                let v = self.expand_text(&name, &text, p, src, false);
                args.push(self.as_int(v));
            }
        }
        let val = match (base, args.len()) {
            (Ty::Dim3, 0..=3) => {
                let mut dims = [Expr::konst(1), Expr::konst(1), Expr::konst(1)];
                for (i, a) in args.into_iter().enumerate() {
                    dims[i] = a;
                }
                Val::Dim3(dims)
            }
            (_, 1) => Val::Int(args.remove(0)),
            _ => self.unknown_val(format!("`{name}`")),
        };
        self.bind(name, val);
    }

    // ------------------------------------------------------------ entries

    /// Lowers one instantiation of a kernel.
    pub fn lower_kernel(&mut self, def: &FuncDef<'t>, targs: &[TArg]) -> Kernel {
        let main = Src::of(def.src);
        let n = def.node;
        let mut k = Kernel {
            name: def.name.clone(),
            ..Kernel::default()
        };
        let mut shown = Vec::new();
        let mut tscope = HashMap::new();
        for (i, p) in def.tparams.iter().enumerate() {
            // A missing argument takes the parameter's default, if any.
            let defaulted = match (p, targs.get(i), def.tdefaults.get(i).copied().flatten()) {
                (TParam::Value(_), None, Some(d)) => self.const_int(d, &main).map(TArg::Value),
                (TParam::Type(_), None, Some(d)) => {
                    Some(TArg::Type(if d.node_kind() == "type_descriptor" {
                        self.type_descriptor(d, &main)
                    } else {
                        self.resolve_type(d, &main)
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
                    shown.push(super::types::spell(t, self.structs()));
                    tscope.insert(name.clone(), t.clone());
                    self.instance(a);
                }
                (TParam::Value(name), _) => {
                    shown.push(name.clone());
                    let u = self.k.add_dependent(
                        format!(
                            "template parameter `{name}` (no launch of `{}` gives it a value)",
                            def.name
                        ),
                        Some(Expr::konst(0)),
                    );
                    self.bind(name.clone(), Val::Int(u));
                }
                (TParam::Type(name), _) => {
                    shown.push(name.clone());
                    tscope.insert(name.clone(), Ty::Unknown(name.clone()));
                }
            }
        }
        self.tscopes.push(tscope);
        k.display_name = if def.tparams.is_empty() {
            def.name.clone()
        } else {
            format!("{}<{}>", def.name, shown.join(", "))
        };
        let mut c = n.walk();
        for ch in n.children(&mut c) {
            if ch.node_kind() == "launch_bounds" {
                if let Some(v) = ch.named_child(0) {
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
                    self.k.params.push(Param {
                        name: name.clone(),
                        object: Some(obj),
                        is_integer: false,
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
                    });
                    self.bind(name, Val::Int(Expr::atom(Atom::Param(idx))));
                }
                _ => {
                    self.k.params.push(Param {
                        name: name.clone(),
                        object: None,
                        is_integer: false,
                    });
                    let u = self.unknown(format!("parameter `{name}`"), Some(Expr::konst(0)));
                    self.bind(name, Val::Int(u));
                }
            }
        }
        if let Some(body) = n.field("body") {
            self.frames = vec![Frame::default()];
            self.stmt(body, &main);
        }
        std::mem::take(&mut self.k)
    }

    /// Walks a host function and returns its kernel launches.
    pub fn host_launches(&mut self, f: Node, source: &Source) -> Vec<LaunchSite> {
        let main = Src::of(source);
        self.launches = Some(Vec::new());
        // An integer parameter is one unknown value throughout, so that
        // `dim3 block(threads)` under `case 64:` of `switch (threads)` is
        // known (see `known_by_guards`).
        for p in function_params(f) {
            let (Some(tn), Some(d)) = (p.field("type"), p.field("declarator")) else {
                continue;
            };
            let base = self.resolve_type(tn, &main);
            let (name, ty, _) = self.declarator(base, d, &main);
            if matches!(ty, Ty::Int { .. }) {
                let u = self.unknown(format!("parameter `{name}`"), None);
                self.bind(name, Val::Int(u));
            }
        }
        if let Some(body) = f.field("body") {
            self.stmt(body, &main);
        }
        self.launches.take().unwrap_or_default()
    }
}

/// The size expression of the innermost dimension of an array declarator
/// (`33` in `tile[32][33]`: the outermost `array_declarator` node).
fn innermost_size(d: Node) -> Option<Node> {
    let mut x = d;
    for _ in 0..16 {
        match x.node_kind() {
            "array_declarator" => return x.field("size"),
            "init_declarator" | "parenthesized_declarator" | "attributed_declarator" => {
                x = x.field("declarator").or_else(|| x.named_child(0))?
            }
            _ => return None,
        }
    }
    None
}

/// The operator token of a unary/binary/assignment/update expression.
fn op_of(n: Node) -> String {
    n.field("operator")
        .map(|o| o.node_kind().to_string())
        .unwrap_or_default()
}

fn param_count(f: Node) -> Option<usize> {
    Some(function_params(f).len())
}

fn function_params(f: Node) -> Vec<Node> {
    let mut d = f.field("declarator");
    for _ in 0..16 {
        let Some(x) = d else { break };
        if x.node_kind() == "function_declarator" {
            let Some(pl) = x.field("parameters") else {
                return Vec::new();
            };
            let mut c = pl.walk();
            return pl
                .named_children(&mut c)
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

/// Identifiers assigned (`=`, `op=`, `++`, `--`) anywhere under `n`.
fn collect_assigned(n: Node, src: &Src, out: &mut Vec<String>) {
    let mut stack = vec![n];
    let mut budget = 200_000u32;
    while let Some(x) = stack.pop() {
        budget = budget.saturating_sub(1);
        if budget == 0 {
            return;
        }
        let target = match x.node_kind() {
            "assignment_expression" => x.field("left"),
            "update_expression" => x.field("argument"),
            _ => None,
        };
        if let Some(mut t) = target {
            while t.node_kind() == "parenthesized_expression" {
                match t.named_child(0) {
                    Some(i) => t = i,
                    None => break,
                }
            }
            if t.node_kind() == "identifier" {
                let name = src.text(t);
                if !out.contains(&name) {
                    out.push(name);
                }
            }
        }
        let mut c = x.walk();
        stack.extend(x.children(&mut c));
    }
}

/// Replaces macro parameters in `body` with the argument texts (whole
/// identifiers only; `##` pastes).
fn substitute(body: &str, params: &[String], args: &[String]) -> String {
    let mut out = String::new();
    let chars: Vec<char> = body.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            match params.iter().position(|p| *p == word) {
                Some(k) => out.push_str(args.get(k).map(String::as_str).unwrap_or("")),
                None if word == "__VA_ARGS__" => out.push_str(
                    &args
                        .get(params.len()..)
                        .map(|a| a.join(", "))
                        .unwrap_or_default(),
                ),
                None => out.push_str(&word),
            }
            continue;
        }
        if c == '"' {
            // Copy string literals untouched.
            out.push(c);
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' && i + 1 < chars.len() {
                    out.push(chars[i]);
                    i += 1;
                }
                out.push(chars[i]);
                i += 1;
            }
            if i < chars.len() {
                out.push('"');
                i += 1;
            }
            continue;
        }
        out.push(c);
        i += 1;
    }
    out.replace(" ## ", "").replace("##", "")
}

/// `budget::MAX_SYNTAX_DEPTH`: its name, limit and unit.
const SYNTAX_DEPTH: (&str, u32, &str) = ("MAX_SYNTAX_DEPTH", budget::MAX_SYNTAX_DEPTH, "levels");

#[cfg(test)]
mod snippet_tests {
    use super::parse_snippet;
    use std::rc::Rc;

    #[test]
    fn a_snippet_is_parsed_once_per_text() {
        let a = parse_snippet("auto e = (x * 2\n);").unwrap();
        let b = parse_snippet("auto e = (x * 2\n);").unwrap();
        let c = parse_snippet("auto e = (x * 3\n);").unwrap();
        assert!(Rc::ptr_eq(&a, &b));
        assert!(!Rc::ptr_eq(&a, &c));
        assert!(!c.root_node().has_error());
    }
}
