//! The translation-unit pass: walks the file once, in order, collecting
//! macros, types, constants, functions and kernels (resolving `#if` on
//! the way), then finds launch sites and lowers every kernel
//! instantiation.

use super::fields::Fields;
use std::collections::HashMap;

use tree_sitter::{Node, Parser};

use super::lower::{Lowerer, Src};
use super::preprocess;
use super::source::Source;
use super::types::{layout_struct, StructDef, Ty};
use super::Options;
use crate::budget;
use crate::ir::{Kernel, Launch, LaunchOrigin, Note, Program, Space, Span};

#[derive(Clone, Debug)]
pub(crate) struct Macro {
    pub params: Option<Vec<String>>,
    pub body: String,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum TParam {
    Value(String),
    Type(String),
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum TArg {
    Value(i64),
    Type(Ty),
    /// An instance of a struct template (`Cfg<4, 16>`): its type, and the
    /// template and arguments its static members are read with
    /// (`Cfg::UNIT` in a kernel whose parameter `Cfg` it is).
    Instance(Ty, String, Vec<TArg>),
    Unknown(String),
}

impl TArg {
    /// Every one of `args` is known here (none is [`TArg::Unknown`]).
    pub fn all_known(args: &[TArg]) -> bool {
        !args.iter().any(|a| matches!(a, TArg::Unknown(_)))
    }
}

#[derive(Clone)]
pub(crate) struct FuncDef<'t> {
    pub node: Node<'t>,
    /// The file the definition is in.
    pub src: &'t Source,
    pub name: String,
    pub tparams: Vec<TParam>,
    /// Default arguments of the template parameters (`int N = 256`).
    pub tdefaults: Vec<Option<Node<'t>>>,
    pub is_kernel: bool,
}

#[derive(Clone, Debug)]
pub(crate) struct GlobalDecl {
    pub space: Space,
    pub ty: Ty,
    pub elem_text: String,
    pub span: Span,
    pub text: String,
}

#[derive(Clone, Debug)]
pub(crate) struct LaunchSite {
    pub kernel: String,
    pub targs: Vec<TArg>,
    pub grid: Option<[u64; 3]>,
    pub block: Option<[u64; 3]>,
    pub args: Vec<Option<i64>>,
    /// [`crate::ir::Launch::offset_args`].
    pub offset_args: Vec<bool>,
    pub span: Span,
}

/// What one analysis of a file worked out before lowering that an edit
/// inside one declaration's brackets (the fix search's candidate array
/// sizes) leaves as it was: the conditionals and specifier macros resolved
/// (in the file and in every header), which headers were entered, the
/// launches in host code. A candidate that reuses it spends its time on
/// parsing the edit and lowering one kernel, not on the headers again.
pub(crate) struct Prepared {
    /// The file as read.
    input: Vec<u8>,
    /// The file as parsed (conditionals resolved, braces closed).
    source: Source,
    headers: Vec<Source>,
    entered: Vec<bool>,
    notes: Vec<Note>,
    skipped: Vec<(u32, u32)>,
    launches: Vec<LaunchSite>,
    /// The kernel the launches were looked for (`None`: all).
    only: Option<String>,
}

impl Prepared {
    /// Whether `input` is this file with bytes `start..old_end` replaced
    /// by `start..new_end`, in active code, by text that no preprocessing
    /// step reads (numbers, spaces, arithmetic and the names already there,
    /// on one line).
    fn fits(&self, input: &[u8], start: usize, old_end: usize, new_end: usize) -> bool {
        let old = &self.input;
        if start > old_end || old_end > old.len() || start > new_end || new_end > input.len() {
            return false;
        }
        // No `__` either: attributes (`__align__(8)`) are read before parsing.
        let plain = |t: &[u8]| {
            !t.windows(2).any(|w| w == b"__")
                && t.iter().all(|b| {
                    b.is_ascii_alphanumeric()
                        || matches!(b, b'_' | b' ' | b'+' | b'-' | b'*' | b'(' | b')')
                })
        };
        // Names the preprocessing acts on (specifier and statement macros,
        // `unsigned(`, `typename`) stay where they were: the edit brings no
        // name the replaced text did not have.
        let names = |t: &[u8]| -> Vec<Vec<u8>> {
            t.split(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
                .filter(|w| w.first().is_some_and(|b| !b.is_ascii_digit()))
                .map(<[u8]>::to_vec)
                .collect()
        };
        let (before, after) = (names(&old[start..old_end]), names(&input[start..new_end]));
        let same_names = after
            .iter()
            .all(|w| before.contains(w) && w != b"unsigned" && w != b"typename");
        old.len() - old_end == input.len() - new_end
            && old[..start] == input[..start]
            && old[old_end..] == input[new_end..]
            && plain(&input[start..new_end])
            && plain(&old[start..old_end])
            && same_names
            // Untouched before parsing: not in a left-out branch.
            && self.source.text.get(start..old_end) == Some(&old[start..old_end])
    }
}

/// `span` (in the file before an edit at `at` that changed its length by
/// `delta`) in the edited `source`.
fn shifted(span: Span, at: usize, delta: isize, source: &Source) -> Span {
    if span.file != 0 || span.start < at {
        return span;
    }
    let m = |x: usize| x.saturating_add_signed(delta);
    source.span(m(span.start), m(span.end))
}

/// A header the file includes, parsed.
struct Included<'t> {
    name: String,
    source: &'t Source,
    root: Node<'t>,
    done: bool,
}

pub(crate) struct Tu<'t> {
    /// The file being collected (the analysed file or one of its headers).
    pub src: &'t Source,
    headers: Vec<Included<'t>>,
    pub macros: HashMap<String, Macro>,
    pub typedefs: HashMap<String, Ty>,
    pub structs: Vec<StructDef>,
    pub struct_names: HashMap<String, usize>,
    pub consts: HashMap<String, i64>,
    pub functions: HashMap<String, Vec<FuncDef<'t>>>,
    pub kernels: Vec<FuncDef<'t>>,
    pub globals: HashMap<String, GlobalDecl>,
    /// Struct definitions by name (templates with their parameters), for
    /// `S::member` and `S<T>::member` static constants.
    pub struct_nodes: HashMap<String, (Vec<TParam>, Node<'t>, &'t Source)>,
    /// `typedef S<float> name;` / `using name = S<float>;`: the template_type.
    pub template_aliases: HashMap<String, (Node<'t>, &'t Source)>,
    pub notes: Vec<Note>,
    launch_fns: Vec<(Node<'t>, &'t Source)>,
}

pub(crate) fn build(input: &[u8], options: &Options) -> Program {
    let mut program = Program::default();
    if input.len() > budget::MAX_FILE_BYTES {
        program.notes.push(Note {
            span: Span::default(),
            message: format!(
                "file is larger than the {}; not analysed",
                budget::named("MAX_FILE_BYTES", budget::MAX_FILE_BYTES >> 20, "MiB")
            ),
        });
        return program;
    }
    if input.contains(&0) {
        program.notes.push(Note {
            span: Span::default(),
            message: "file contains NUL bytes (binary?); not analysed".into(),
        });
        return program;
    }
    let mut source: Source;
    let mut parser = Parser::new();
    if parser
        .set_language(&tree_sitter_cuda::LANGUAGE.into())
        .is_err()
    {
        program.notes.push(Note {
            span: Span::default(),
            message: "internal error: the CUDA grammar could not be loaded".into(),
        });
        return program;
    }
    // An edit the fix search made inside one declaration's brackets: what
    // the unedited file's analysis prepared still holds (see `Prepared`).
    let reuse = options.reparse.as_ref().and_then(|r| {
        let p = r.base.prepared.as_ref()?;
        let same_scope = p.only.is_none() || p.only == options.only_kernel;
        (same_scope && p.fits(input, r.start, r.old_end, r.new_end)).then_some((r, p))
    });
    let mut header_sources: Vec<Source>;
    let entered: Vec<bool>;
    let pre_notes: Vec<Note>;
    let mut reused_launches = None;
    if let Some((r, p)) = reuse {
        let delta = r.new_end as isize - r.old_end as isize;
        source = p
            .source
            .spliced(r.start, r.old_end, &input[r.start..r.new_end]);
        header_sources = p.headers.clone();
        entered = p.entered.clone();
        program.skipped_lines = p.skipped.clone();
        pre_notes = p
            .notes
            .iter()
            .map(|n| Note {
                span: shifted(n.span, r.old_end, delta, &source),
                message: n.message.clone(),
            })
            .collect();
        reused_launches = Some(
            p.launches
                .iter()
                .map(|l| LaunchSite {
                    span: shifted(l.span, r.old_end, delta, &source),
                    ..l.clone()
                })
                .collect::<Vec<_>>(),
        );
    } else {
        source = Source::new(input);
        // Headers the caller read for us.
        header_sources = options
            .headers
            .iter()
            .take(budget::MAX_HEADERS)
            .enumerate()
            .filter(|(_, h)| h.text.len() <= budget::MAX_FILE_BYTES && !h.text.contains(&0))
            .map(|(i, h)| Source::with_file(&h.text, i as u32 + 1))
            .collect();
        // #if/#ifdef/#else/#endif resolved before parsing (offsets unchanged).
        let defines: preprocess::Defines = options
            .defines
            .iter()
            .map(|(k, v)| (k.clone(), preprocess::Macro::Object(v.clone())))
            .collect();
        let names: Vec<String> = header_sources
            .iter()
            .map(|s| options.headers[s.file as usize - 1].name.clone())
            .collect();
        let hs: Vec<(&str, &mut Source)> = names
            .iter()
            .map(String::as_str)
            .zip(header_sources.iter_mut())
            .collect();
        match preprocess::Conditionals::new(defines, hs, options.parse_cache.as_deref()) {
            Some(mut c) => {
                c.run(&mut source, 0);
                entered = c.entered();
                pre_notes = c.notes;
                program.skipped_lines = c.skipped;
            }
            None => {
                entered = vec![true; header_sources.len()];
                pre_notes = Vec::new();
            }
        }
        for h in &mut header_sources {
            h.close_open_braces();
            h.split_template_closers();
        }
        source.close_open_braces();
        source.split_template_closers();
    }
    let prepared_notes = pre_notes.clone();
    let prior = options
        .reparse
        .as_ref()
        .and_then(|r| super::edited_tree(r, &source.text));
    let Some(tree) = parser.parse(&source.text, prior.as_ref()) else {
        program.notes.push(Note {
            span: Span::default(),
            message: "the parser gave up on this file".into(),
        });
        return program;
    };
    // Only the headers an active `#include` entered: the others (behind an
    // `#if` for another architecture, say) are not part of this file.
    let header_trees: Vec<Option<std::sync::Arc<tree_sitter::Tree>>> = header_sources
        .iter()
        .zip(&entered)
        .map(|(s, e)| {
            if !*e {
                return None;
            }
            match &options.parse_cache {
                Some(c) => c.get_or_parse(&s.text, || parser.parse(&s.text, None)),
                None => parser.parse(&s.text, None).map(std::sync::Arc::new),
            }
        })
        .collect();
    program.files = options.headers.iter().map(|h| h.path.clone()).collect();
    let headers: Vec<Included> = header_sources
        .iter()
        .zip(&header_trees)
        .filter_map(|(s, t)| {
            let t = t.as_ref()?;
            Some(Included {
                name: options.headers[s.file as usize - 1].name.clone(),
                source: s,
                root: t.root_node(),
                done: false,
            })
        })
        .collect();
    let mut tu = Tu {
        src: &source,
        headers,
        macros: HashMap::new(),
        typedefs: HashMap::new(),
        structs: Vec::new(),
        struct_names: HashMap::new(),
        consts: HashMap::new(),
        functions: HashMap::new(),
        kernels: Vec::new(),
        globals: HashMap::new(),
        struct_nodes: HashMap::new(),
        template_aliases: HashMap::new(),
        notes: Vec::new(),
        launch_fns: Vec::new(),
    };
    tu.notes.extend(pre_notes);
    for (name, value) in &options.defines {
        tu.macros.insert(
            name.clone(),
            Macro {
                params: None,
                body: value.clone(),
            },
        );
    }
    let root = tree.root_node();
    if source.closed_braces > 0 {
        let end = source.input_len;
        tu.notes.push(Note {
            span: source.span(end, end),
            message: format!(
                "the file ends inside {} unclosed brace{}; analysed as if closed here",
                source.closed_braces,
                if source.closed_braces == 1 { "" } else { "s" }
            ),
        });
    }
    tu.collect_errors(root);
    tu.collect(root, 0);
    tu.src = &source;
    let launches = match reused_launches {
        Some(l) => {
            tu.launch_fns.clear();
            l
        }
        None => tu.find_launches(options.only_kernel.as_deref()),
    };
    program.kernels = tu.lower_kernels(&launches, options);
    let mut notes = tu.notes;
    notes.sort_by(|a, b| {
        (a.span.file, a.span.start, &a.message).cmp(&(b.span.file, b.span.start, &b.message))
    });
    notes.dedup();
    program.notes = notes;
    // Kept for an incremental reparse of an edited copy (the fix search).
    program.parsed = Some(std::sync::Arc::new(super::ParsedMain {
        text: source.text.clone(),
        tree,
        prepared: Some(Prepared {
            input: input.to_vec(),
            source,
            headers: header_sources,
            entered,
            notes: prepared_notes,
            skipped: program.skipped_lines.clone(),
            launches,
            only: options.only_kernel.clone(),
        }),
    }));
    program
}

impl<'t> Tu<'t> {
    fn src(&self) -> Src<'t> {
        Src::of(self.src)
    }

    /// Collects an included header (each once per translation unit, which
    /// also breaks include cycles).
    fn include(&mut self, n: Node<'t>, depth: u32) {
        let Some(path) = n.field("path") else {
            return;
        };
        let raw = Src::of(self.src).text(path);
        let name = raw.trim().trim_matches(['"', '<', '>']).to_string();
        let Some(i) = self.headers.iter().position(|h| h.name == name) else {
            return;
        };
        if self.headers[i].done {
            return;
        }
        self.headers[i].done = true;
        let (source, root) = (self.headers[i].source, self.headers[i].root);
        let saved = self.src;
        self.src = source;
        self.collect_errors(root);
        self.collect(root, depth + 1);
        self.src = saved;
    }

    fn note(&mut self, n: Node, message: impl Into<String>) {
        let span = self.src.span(n.start_byte(), n.end_byte());
        self.notes.push(Note {
            span,
            message: message.into(),
        });
    }

    /// One note per syntax error tree-sitter recovered from (the first few).
    fn collect_errors(&mut self, root: Node<'t>) {
        if !root.has_error() {
            return;
        }
        let mut found = Vec::new();
        let mut stack = vec![root];
        while let Some(n) = stack.pop() {
            if found.len() >= 20 {
                break;
            }
            if n.is_error() || n.is_missing() {
                found.push(n);
                continue;
            }
            if n.has_error() {
                let mut c = n.walk();
                let kids: Vec<_> = n.children(&mut c).collect();
                stack.extend(kids.into_iter().rev());
            }
        }
        found.sort_by_key(|n| n.start_byte());
        for n in found {
            let msg = if n.is_missing() {
                format!("could not parse: expected `{}` here", n.node_kind())
            } else {
                let text = String::from_utf8_lossy(&self.src.text[n.byte_range()]);
                let snippet: String = text.chars().take(40).collect();
                let snippet = snippet.split_whitespace().collect::<Vec<_>>().join(" ");
                format!("could not parse `{snippet}`; analysing the rest")
            };
            self.note(n, msg);
        }
    }

    /// Walks top-level declarations in source order.
    fn collect(&mut self, n: Node<'t>, depth: u32) {
        if depth > budget::MAX_SYNTAX_DEPTH {
            let message = format!(
                "declarations nested too deeply; those inside are not read (the {} ran out)",
                budget::named("MAX_SYNTAX_DEPTH", budget::MAX_SYNTAX_DEPTH, "levels")
            );
            if !self.notes.iter().any(|x| x.message == message) {
                self.note(n, message);
            }
            return;
        }
        let src = self.src();
        match n.node_kind() {
            "translation_unit" | "declaration_list" | "ERROR" => {
                let mut c = n.walk();
                let kids: Vec<_> = n.children(&mut c).collect();
                for k in kids {
                    self.collect(k, depth + 1);
                }
            }
            "preproc_if" | "preproc_ifdef" | "preproc_elif" | "preproc_else" => {
                for k in Lowerer::preproc_branch(n) {
                    self.collect(k, depth + 1);
                }
            }
            "namespace_definition" | "linkage_specification" => {
                if let Some(b) = n.field("body") {
                    self.collect(b, depth + 1);
                }
            }
            "preproc_def" | "preproc_function_def" => self.define(n),
            "preproc_include" => self.include(n, depth),
            "preproc_call" => {
                let directive = n
                    .field("directive")
                    .map(|d| src.text(d))
                    .unwrap_or_default();
                if directive.trim() == "#undef" {
                    if let Some(a) = n.field("argument") {
                        let name = src.text(a).trim().to_string();
                        self.macros.remove(&name);
                    }
                }
            }
            "struct_specifier" | "class_specifier" | "union_specifier" => {
                self.struct_def(n, None);
            }
            "enum_specifier" => self.enum_def(n),
            "type_definition" => self.typedef(n),
            "alias_declaration" => {
                if let (Some(name), Some(ty)) = (n.field("name"), n.field("type")) {
                    if let Some(tt) = ty
                        .field("type")
                        .filter(|t| t.node_kind() == "template_type")
                    {
                        self.template_aliases.insert(src.text(name), (tt, self.src));
                    }
                    let t = Lowerer::new(self).type_descriptor(ty, &src);
                    self.typedefs.insert(src.text(name), t);
                }
            }
            "declaration" => self.global_declaration(n),
            "function_definition" => self.function(n, Vec::new(), Vec::new()),
            "template_declaration" => {
                let tparams = template_params(n, &src);
                let tdefaults = template_defaults(n);
                let mut c = n.walk();
                let kids: Vec<_> = n.named_children(&mut c).collect();
                for k in kids {
                    match k.node_kind() {
                        "function_definition" => {
                            self.function(k, tparams.clone(), tdefaults.clone())
                        }
                        "struct_specifier" | "class_specifier" => {
                            if let Some(name) = k.field("name") {
                                let name = src.text(name);
                                self.struct_nodes
                                    .insert(name, (tparams.clone(), k, self.src));
                            }
                            self.struct_def(k, None);
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }

    fn define(&mut self, n: Node<'t>) {
        let src = self.src();
        let Some(name) = n.field("name") else {
            return;
        };
        let body = n
            .field("value")
            .map(|v| preprocess::strip_comments(&src.text(v)))
            .unwrap_or_default();
        let params = n.field("parameters").map(|p| {
            let mut c = p.walk();
            p.named_children(&mut c)
                .map(|x| src.text(x))
                .collect::<Vec<_>>()
        });
        self.macros.insert(src.text(name), Macro { params, body });
    }

    /// Registers a struct with a body; returns its type.
    pub(crate) fn struct_def(&mut self, n: Node<'t>, alias: Option<String>) -> Option<Ty> {
        let src = self.src();
        let name = n.field("name").map(|x| src.text(x)).or(alias)?;
        self.struct_nodes
            .entry(name.clone())
            .or_insert((Vec::new(), n, self.src));
        let body = n.field("body")?;
        let mut fields = Vec::new();
        {
            let mut lw = Lowerer::new(self);
            let mut c = body.walk();
            for f in body.named_children(&mut c) {
                if f.node_kind() != "field_declaration" {
                    continue;
                }
                let Some(tn) = f.field("type") else {
                    continue;
                };
                let base = lw.resolve_type(tn, &src);
                let mut c2 = f.walk();
                for d in f.children_by_field_name("declarator", &mut c2) {
                    let (fname, ty, _) = lw.declarator(base.clone(), d, &src);
                    fields.push((fname, ty));
                }
            }
        }
        let mut force = self.src.align_in(n.start_byte(), body.start_byte());
        let mut c = n.walk();
        for ch in n.children(&mut c) {
            if ch.node_kind() == "alignas_qualifier" {
                if let Some(v) = ch.named_child(0) {
                    force = Lowerer::new(self)
                        .const_int(v, &src)
                        .map(|v| v.max(1) as u64)
                        .or(force);
                }
            }
        }
        let def = layout_struct(name.clone(), fields, force, &self.structs)?;
        self.structs.push(def);
        let id = self.structs.len() - 1;
        self.struct_names.insert(name, id);
        Some(Ty::Struct(id))
    }

    fn enum_def(&mut self, n: Node<'t>) {
        let src = self.src();
        let Some(body) = n.field("body") else {
            return;
        };
        let mut next = 0i64;
        let mut c = body.walk();
        let items: Vec<_> = body.named_children(&mut c).collect();
        for e in items {
            if e.node_kind() != "enumerator" {
                continue;
            }
            let Some(name) = e.field("name") else {
                continue;
            };
            if let Some(v) = e.field("value") {
                match Lowerer::new(self).const_int(v, &src) {
                    Some(x) => next = x,
                    None => continue,
                }
            }
            self.consts.insert(src.text(name), next);
            next = next.wrapping_add(1);
        }
    }

    fn typedef(&mut self, n: Node<'t>) {
        let src = self.src();
        let Some(tn) = n.field("type") else {
            return;
        };
        if tn.node_kind() == "template_type" {
            let mut c = n.walk();
            let decls: Vec<_> = n.children_by_field_name("declarator", &mut c).collect();
            for d in decls {
                self.template_aliases.insert(src.text(d), (tn, self.src));
            }
        }
        let mut c = n.walk();
        let decls: Vec<_> = n.children_by_field_name("declarator", &mut c).collect();
        // `typedef struct { … } Name;`
        let first_name = decls.first().map(|d| src.text(*d));
        let base = if matches!(tn.node_kind(), "struct_specifier" | "class_specifier")
            && tn.field("body").is_some()
        {
            match self.struct_def(tn, first_name) {
                Some(t) => t,
                None => return,
            }
        } else {
            Lowerer::new(self).resolve_type(tn, &src)
        };
        for d in decls {
            let (name, ty, _) = Lowerer::new(self).declarator(base.clone(), d, &src);
            self.typedefs.insert(name, ty);
        }
    }

    fn global_declaration(&mut self, n: Node<'t>) {
        let src = self.src();
        let text = src.text(n);
        let Some(tn) = n.field("type") else {
            return;
        };
        if matches!(tn.node_kind(), "struct_specifier" | "class_specifier")
            && tn.field("body").is_some()
        {
            self.struct_def(tn, None);
        }
        if tn.node_kind() == "enum_specifier" {
            self.enum_def(tn);
        }
        let quals = qualifiers(n, &src);
        let space = if quals.iter().any(|q| q == "__constant__") {
            Some(Space::Constant)
        } else if quals.iter().any(|q| q == "__shared__") {
            Some(Space::Shared)
        } else if quals
            .iter()
            .any(|q| q == "__device__" || q == "__managed__")
        {
            Some(Space::Global)
        } else {
            None
        };
        let is_const = quals.iter().any(|q| q == "const" || q == "constexpr");
        let mut c = n.walk();
        let decls: Vec<_> = n.children_by_field_name("declarator", &mut c).collect();
        for d in decls {
            let (name, ty, init, elem_text) = {
                let mut lw = Lowerer::new(self);
                let base = lw.resolve_type(tn, &src);
                let (name, ty, init) = lw.declarator(base, d, &src);
                (name, ty, init, src.text(tn))
            };
            if name.is_empty() {
                continue;
            }
            if let Some(space) = space {
                if matches!(ty, Ty::Array(..)) || space != Space::Shared {
                    let span = self.src.span(n.start_byte(), n.end_byte());
                    self.globals.insert(
                        name,
                        GlobalDecl {
                            space,
                            ty,
                            elem_text,
                            span,
                            text: text.clone(),
                        },
                    );
                }
                continue;
            }
            if is_const && ty.is_integer() {
                if let Some(init) = init {
                    if let Some(v) = Lowerer::new(self).const_int(init, &src) {
                        self.consts.insert(name, v);
                    }
                }
            }
        }
    }

    fn function(&mut self, n: Node<'t>, tparams: Vec<TParam>, tdefaults: Vec<Option<Node<'t>>>) {
        let src = self.src();
        let Some(decl) = n.field("declarator") else {
            return;
        };
        let Some(name) = function_name(decl, &src) else {
            return;
        };
        let mut is_kernel = false;
        let mut c = n.walk();
        for k in n.children(&mut c) {
            if k.node_kind() == "__global__" {
                is_kernel = true;
            }
            if k.id() == decl.id() {
                break;
            }
        }
        if !is_kernel {
            // Older grammars put the qualifier in an attribute or storage class.
            let head = &self.src.text[n.start_byte()..decl.start_byte()];
            is_kernel = head.windows(10).any(|w| w == b"__global__");
        }
        let def = FuncDef {
            node: n,
            src: self.src,
            name: name.clone(),
            tparams,
            tdefaults,
            is_kernel,
        };
        if is_kernel {
            self.kernels.push(def.clone());
        }
        // A launch needs `<<<` (or `<< <`) in the function's text: the
        // byte search spares the tree walk for almost every function.
        let text = self
            .src
            .text
            .get(n.start_byte()..n.end_byte())
            .unwrap_or(&[]);
        if launch_chevrons(text) && contains_launch(n) {
            self.launch_fns.push((n, self.src));
        }
        self.functions.entry(name).or_default().push(def);
    }

    /// Launch sites in the functions that launch (only those that name
    /// `only` when the analysis is of one kernel).
    fn find_launches(&mut self, only: Option<&str>) -> Vec<LaunchSite> {
        let mut out = Vec::new();
        let fns = std::mem::take(&mut self.launch_fns);
        for (f, source) in fns {
            if let Some(name) = only {
                let text = source.text.get(f.start_byte()..f.end_byte()).unwrap_or(&[]);
                if !name.is_empty() && !text.windows(name.len()).any(|w| w == name.as_bytes()) {
                    continue;
                }
            }
            let mut lw = Lowerer::new(self);
            out.extend(lw.host_launches(f, source));
        }
        out
    }

    fn lower_kernels(&mut self, launches: &[LaunchSite], options: &Options) -> Vec<Kernel> {
        let mut out = Vec::new();
        let kernels = self.kernels.clone();
        for def in &kernels {
            if options.only_kernel.as_ref().is_some_and(|k| *k != def.name) {
                continue;
            }
            // Instantiations: the distinct template arguments of its launches.
            let mut insts: Vec<Vec<TArg>> = Vec::new();
            for l in launches.iter().filter(|l| l.kernel == def.name) {
                let targs = if def.tparams.is_empty() {
                    Vec::new()
                } else {
                    l.targs.clone()
                };
                if !insts.contains(&targs) {
                    insts.push(targs);
                }
            }
            if insts.is_empty() {
                let configured = options
                    .kernels
                    .get(&def.name)
                    .map(|o| o.template.iter().map(|v| TArg::Value(*v)).collect())
                    .unwrap_or_default();
                insts.push(configured);
            }
            if insts.len() > budget::MAX_INSTANTIATIONS {
                self.note(
                    def.node,
                    format!(
                        "`{}` has {} template instantiations; only the first {} are analysed \
                         (the {} ran out)",
                        def.name,
                        insts.len(),
                        budget::MAX_INSTANTIATIONS,
                        budget::named(
                            "MAX_INSTANTIATIONS",
                            budget::MAX_INSTANTIATIONS,
                            "per kernel"
                        )
                    ),
                );
                insts.truncate(budget::MAX_INSTANTIATIONS);
            }
            for targs in insts {
                let (mut kernel, notes) = {
                    let mut lw = Lowerer::new(self);
                    let mut k = lw.lower_kernel(def, &targs);
                    super::fuse::fuse_fields(&mut k);
                    (k, lw.notes)
                };
                kernel.lowering_notes = notes.clone();
                self.notes.extend(notes);
                kernel.launches = launches_for(&kernel, def, &targs, launches, options);
                if kernel.launches.len() > budget::MAX_LAUNCHES_PER_KERNEL {
                    let message = format!(
                        "`{}` is launched with {} configurations; only the first {} are \
                         analysed (the {} ran out)",
                        kernel.display_name,
                        kernel.launches.len(),
                        budget::MAX_LAUNCHES_PER_KERNEL,
                        budget::named(
                            "MAX_LAUNCHES_PER_KERNEL",
                            budget::MAX_LAUNCHES_PER_KERNEL,
                            "per instantiation"
                        )
                    );
                    self.note(def.node, message);
                    kernel.launches.truncate(budget::MAX_LAUNCHES_PER_KERNEL);
                }
                out.push(kernel);
            }
        }
        out
    }
}

fn launches_for(
    kernel: &Kernel,
    def: &FuncDef,
    targs: &[TArg],
    sites: &[LaunchSite],
    options: &Options,
) -> Vec<Launch> {
    let named = |values: &std::collections::BTreeMap<String, i64>, base: &mut Vec<Option<i64>>| {
        for (i, p) in kernel.params.iter().enumerate() {
            if let Some(v) = values.get(&p.name) {
                base[i] = Some(*v);
            }
        }
    };
    let nparams = kernel.params.len();
    if let Some(ov) = options.kernels.get(&kernel.name) {
        if ov.block.is_some() {
            let mut params = vec![None; nparams];
            named(&ov.params, &mut params);
            return vec![Launch {
                grid: ov.grid,
                block: ov.block,
                params,
                offset_args: Vec::new(),
                span: None,
                origin: LaunchOrigin::Config,
            }];
        }
    }
    let mut out: Vec<Launch> = Vec::new();
    for s in sites.iter().filter(|s| s.kernel == def.name) {
        if !def.tparams.is_empty() && s.targs != targs {
            continue;
        }
        let mut params: Vec<Option<i64>> = (0..nparams)
            .map(|i| s.args.get(i).copied().flatten())
            .collect();
        if let Some(ov) = options.kernels.get(&kernel.name) {
            named(&ov.params, &mut params);
        }
        let l = Launch {
            grid: s.grid,
            block: s.block,
            params,
            offset_args: s.offset_args.clone(),
            span: Some(s.span),
            origin: if s.block.is_some() {
                LaunchOrigin::LaunchSite
            } else {
                LaunchOrigin::Default
            },
        };
        if !out
            .iter()
            .any(|o| o.grid == l.grid && o.block == l.block && o.params == l.params)
        {
            out.push(l);
        }
    }
    if out.is_empty() {
        let mut params = vec![None; nparams];
        let ov = options.kernels.get(&kernel.name);
        if let Some(ov) = ov {
            named(&ov.params, &mut params);
        }
        let (block, origin) = match kernel.launch_bounds {
            Some(n) => (Some([n, 1, 1]), LaunchOrigin::LaunchBounds),
            None => (None, LaunchOrigin::Default),
        };
        out.push(Launch {
            grid: ov.and_then(|o| o.grid),
            block,
            params,
            offset_args: Vec::new(),
            span: None,
            origin,
        });
    }
    out
}

/// The default argument of each template parameter, if any.
pub(crate) fn template_defaults(n: Node) -> Vec<Option<Node>> {
    let Some(list) = n.field("parameters") else {
        return Vec::new();
    };
    let mut c = list.walk();
    list.named_children(&mut c)
        .filter(|p| {
            matches!(
                p.node_kind(),
                "type_parameter_declaration"
                    | "optional_type_parameter_declaration"
                    | "parameter_declaration"
                    | "optional_parameter_declaration"
            )
        })
        .map(|p| p.field("default_value").or_else(|| p.field("default_type")))
        .collect()
}

pub(crate) fn template_params(n: Node, src: &Src) -> Vec<TParam> {
    let mut out = Vec::new();
    let Some(list) = n.field("parameters") else {
        return out;
    };
    let mut c = list.walk();
    for p in list.named_children(&mut c) {
        match p.node_kind() {
            "type_parameter_declaration" | "optional_type_parameter_declaration" => {
                let name = p
                    .field("name")
                    .or_else(|| p.named_child(0))
                    .map(|x| src.text(x))
                    .unwrap_or_default();
                out.push(TParam::Type(name));
            }
            "parameter_declaration" | "optional_parameter_declaration" => {
                let name = p
                    .field("declarator")
                    .map(|x| src.text(x))
                    .unwrap_or_default();
                out.push(TParam::Value(name));
            }
            _ => {}
        }
    }
    out
}

/// Qualifier keywords of a declaration (`__shared__`, `const`, `extern`, …).
pub(crate) fn qualifiers(n: Node, src: &Src) -> Vec<String> {
    let mut out = Vec::new();
    let mut c = n.walk();
    for k in n.children(&mut c) {
        match k.node_kind() {
            "type_qualifier" | "storage_class_specifier" | "attribute_specifier" => {
                out.extend(src.text(k).split_whitespace().map(str::to_string))
            }
            "__shared__" | "__constant__" | "__device__" | "__managed__" | "constexpr"
            | "const" | "extern" | "static" => out.push(k.node_kind().to_string()),
            _ => {}
        }
    }
    out
}

fn function_name(decl: Node, src: &Src) -> Option<String> {
    let mut d = decl;
    for _ in 0..16 {
        match d.node_kind() {
            "function_declarator" => {
                let inner = d.field("declarator")?;
                return Some(match inner.node_kind() {
                    "qualified_identifier" => inner
                        .field("name")
                        .map(|x| src.text(x))
                        .unwrap_or_else(|| src.text(inner)),
                    _ => src.text(inner),
                });
            }
            _ => d = d.field("declarator")?,
        }
    }
    None
}

/// Whether `text` has `<<` followed (after blanks) by `<`.
fn launch_chevrons(text: &[u8]) -> bool {
    let mut i = 0;
    while i + 1 < text.len() {
        if text[i] == b'<' && text[i + 1] == b'<' {
            let mut j = i + 2;
            while j < text.len() && text[j].is_ascii_whitespace() {
                j += 1;
            }
            if text.get(j) == Some(&b'<') {
                return true;
            }
            i += 2;
            continue;
        }
        i += 1;
    }
    false
}

fn contains_launch(n: Node) -> bool {
    let mut stack = vec![n];
    let mut visited = 0u32;
    while let Some(x) = stack.pop() {
        visited += 1;
        if visited > 1_000_000 {
            return false;
        }
        if x.node_kind() == "kernel_call_syntax" {
            return true;
        }
        let mut c = x.walk();
        stack.extend(x.children(&mut c));
    }
    false
}
