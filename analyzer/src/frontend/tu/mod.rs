//! The translation-unit pass: walks the file once, in order, collecting
//! macros, types, constants, functions and kernels (conditionals were
//! resolved before parsing), then finds launch sites and lowers every
//! kernel instantiation.
//!
//! - this file: the pass driver ([`build`]: preprocess, parse, collect,
//!   find launches, lower), the pass's state ([`Tu`]), the walk over
//!   top-level declarations and macros.
//! - [`prepared`]: the file and its headers as parsed, worked out afresh
//!   or carried over from an unedited file (the fix search's candidates).
//! - [`items`]: typedefs, structs, enums, constants, file-scope arrays and
//!   functions read from their declarations.
//! - [`launch_sites`]: host functions that launch, and the launches each
//!   kernel instantiation is analysed with.
//! - [`macro_sites`]: launch sites made by file-scope macro uses.
//! - [`project`]: the file's launch sites as plain data for other files,
//!   and other files' launch sites of the kernels this file defines.

mod host_values;
mod items;
pub(crate) use items::struct_keyword;
mod launch_sites;
mod macro_sites;
mod prepared;
mod project;

use super::fields::Fields;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use tree_sitter::{Node, Parser, Tree};

use super::lower::{Lowerer, Src};
use super::preprocess;
use super::source::Source;
use super::types::{StructDef, Ty};
use super::Options;
use crate::budget;
use crate::finding::{Cut, NoteKind};
use crate::ir::{Kernel, Note, Program, ProjectLaunch, Space, Span};
pub use host_values::{
    arg_values as host_arg_values, calls_name as host_calls_name, values_of as host_values_of,
};
use items::template_defaults;
pub(crate) use items::{function_name, qualifiers};
pub(crate) use items::{template_param_is_bool, template_params};
use launch_sites::launches_for;
pub(crate) use macro_sites::joined_chevrons;
pub(crate) use prepared::Prepared;
use prepared::Preprocessed;

/// The macro type of the pass's table (the preprocessor's).
pub(crate) use super::preprocess::Macro;

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
    /// [`crate::ir::SiteRecord::host`].
    pub host: Option<crate::ir::HostArgs>,
}

/// A header the file includes, parsed.
struct Included<'t> {
    name: String,
    source: &'t Source,
    root: Node<'t>,
    done: bool,
}

/// The pass's state: what the declarations read so far define, which
/// lowering reads through it.
pub(crate) struct Tu<'t> {
    /// The file being collected (the analysed file or one of its headers).
    pub src: &'t Source,
    headers: Vec<Included<'t>>,
    /// The macros defined at the point the walk has reached: those defined
    /// before the first line, then the preprocessor's `directives` applied
    /// where the walk meets them.
    pub macros: HashMap<String, Macro>,
    directives: &'t preprocess::MacroDirectives,
    /// The function-like macros of `macros` whose body launches, or names
    /// one that does (defined before it).
    launching: HashSet<String>,
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
    /// The functions that launch (host function templates too).
    launch_fns: Vec<FuncDef<'t>>,
    /// Explicit instantiations (`template __global__ void k<float, 128>(…);`).
    instantiations: Vec<(Node<'t>, &'t Source)>,
    /// The host functions whose calls a host walk records
    /// (`host_values.rs`).
    pub host_callees: HashSet<String>,
    /// Integer constants the unit defines with external linkage.
    pub extern_consts: Vec<(String, i64)>,
}

/// Analyses one file: refused if too large or binary; preprocessed (or
/// carried over, see [`Prepared`]), parsed with its entered headers, the
/// pass run over them, and what an edited copy can start from kept.
pub(crate) fn build(input: &[u8], options: &Options) -> (Program, Option<Arc<super::ParsedMain>>) {
    let mut program = Program::default();
    if let Some(note) = refused(input) {
        program.notes.push(note);
        return (program, None);
    }
    let mut parser = Parser::new();
    if parser
        .set_language(&tree_sitter_cuda::LANGUAGE.into())
        .is_err()
    {
        program.notes.push(Note {
            span: Span::default(),
            kind: NoteKind::GrammarUnavailable,
        });
        return (program, None);
    }
    // One table of the macros defined before the first line, from which
    // both the preprocessor's and the pass's tables start.
    let macros = command_line_macros(options);
    let mut pre = prepared::preprocess(input, &macros, options);
    program.skipped_lines = pre.skipped.clone();
    let prior = options
        .reparse
        .as_ref()
        .and_then(|r| super::edited_tree(r, &pre.source.text));
    let Some(tree) = parser.parse(&pre.source.text, prior.as_ref()) else {
        program.notes.push(Note {
            span: Span::default(),
            kind: NoteKind::ParserGaveUp,
        });
        return (program, None);
    };
    let header_trees = parse_headers(&mut parser, &pre, options);
    program.files = options.headers.iter().map(|h| h.path.clone()).collect();
    let reused_launches = pre.launches.take();
    let passed = pass(
        &pre,
        &header_trees,
        tree.root_node(),
        reused_launches,
        macros,
        options,
    );
    program.kernels = passed.kernels;
    program.notes = passed.notes;
    program.launch_sites = passed.records;
    program.host_calls = passed.host_calls;
    program.extern_consts = passed.extern_consts;
    let launches = passed.launches;
    // A candidate that reuses the launches replays their notes.
    pre.notes.extend(passed.launch_notes);
    // Kept for an incremental reparse of an edited copy (the fix search).
    let parsed = Arc::new(super::ParsedMain {
        text: pre.source.text.clone(),
        tree,
        prepared: Some(pre.keep(input, launches, options)),
    });
    (program, Some(parsed))
}

/// Why a file is not analysed at all (too large, or binary), as a note.
fn refused(input: &[u8]) -> Option<Note> {
    if input.len() > budget::MAX_FILE_BYTES {
        return Some(Note {
            span: Span::default(),
            kind: NoteKind::FileTooLarge {
                budget: budget::FILE_BYTES,
            },
        });
    }
    if input.contains(&0) {
        return Some(Note {
            span: Span::default(),
            kind: NoteKind::BinaryFile,
        });
    }
    None
}

/// The parse trees of the headers, from the run's cache when there is
/// one. Only the headers an active `#include` entered: the others (behind
/// an `#if` for another architecture, say) are not part of this file.
fn parse_headers(
    parser: &mut Parser,
    pre: &Preprocessed,
    options: &Options,
) -> Vec<Option<Arc<Tree>>> {
    pre.headers
        .iter()
        .zip(&pre.entered)
        .map(|(s, e)| {
            if !*e {
                return None;
            }
            match &options.parse_cache {
                Some(c) => c.get_or_parse(&s.text, || parser.parse(&s.text, None)),
                None => parser.parse(&s.text, None).map(Arc::new),
            }
        })
        .collect()
}

/// The headers that have a tree, by the name `#include` finds them by.
fn included<'t>(
    pre: &'t Preprocessed,
    trees: &'t [Option<Arc<Tree>>],
    options: &Options,
) -> Vec<Included<'t>> {
    pre.headers
        .iter()
        .zip(trees)
        .filter_map(|(s, t)| {
            let t = t.as_ref()?;
            Some(Included {
                name: options.headers[s.file as usize - 1].name.clone(),
                source: s,
                root: t.root_node(),
                done: false,
            })
        })
        .collect()
}

/// What the pass over a file produced.
struct Passed {
    kernels: Vec<Kernel>,
    /// Sorted, duplicates dropped.
    notes: Vec<Note>,
    launches: Vec<LaunchSite>,
    /// The notes the search for launch sites raised (none when they were
    /// carried over).
    launch_notes: Vec<Note>,
    /// The launch sites as plain data, for other files.
    records: Vec<crate::ir::SiteRecord>,
    host_calls: Vec<crate::ir::HostCall>,
    extern_consts: Vec<(String, i64)>,
}

/// The pass over the parsed file (`root`) and the headers it enters:
/// declarations in source order, launch sites (unless `reused` carries
/// them over), every kernel instantiation lowered.
fn pass<'t>(
    pre: &'t Preprocessed,
    header_trees: &'t [Option<Arc<Tree>>],
    root: Node<'t>,
    reused: Option<Vec<LaunchSite>>,
    macros: preprocess::Defines,
    options: &Options,
) -> Passed {
    let source = &pre.source;
    let headers = included(pre, header_trees, options);
    let mut tu = Tu::new(source, headers, macros, &pre.directives);
    // Constants other files define, for a unit that only declares them
    // (a definition here replaces one).
    tu.consts.extend(options.extern_values.clone());
    tu.notes.extend(pre.notes.iter().cloned());
    tu.notes.extend(unclosed_braces(source));
    tu.collect_errors(root);
    tu.collect(root, 0);
    tu.src = source;
    let (launches, launch_notes, host_calls) = match reused {
        Some(l) => {
            tu.launch_fns.clear();
            (l, Vec::new(), Vec::new())
        }
        None => tu.find_launches(root, options),
    };
    tu.notes.extend(launch_notes.iter().cloned());
    let kernels = tu.lower_kernels(&launches, options);
    let records = project::records(&launches, &tu.structs, &tu.kernels);
    let mut notes = tu.notes;
    notes.sort_by(|a, b| {
        (a.span.file, a.span.start, &a.kind).cmp(&(b.span.file, b.span.start, &b.kind))
    });
    notes.dedup();
    Passed {
        kernels,
        notes,
        launches,
        launch_notes,
        records,
        host_calls,
        extern_consts: tu.extern_consts,
    }
}

/// The macros defined before the file's first line, object-like: nvcc's
/// for [`Options::arch`], then [`Options::defines`] (a later definition of
/// a name replaces an earlier one).
fn command_line_macros(options: &Options) -> preprocess::Defines {
    let nvcc = options.arch.map(crate::nvcc::predefined_macros);
    nvcc.iter()
        .flatten()
        .chain(&options.defines)
        .map(|(name, value)| (name.clone(), Macro::new(None, value.clone())))
        .collect()
}

/// The note for a truncated file whose open braces were closed.
fn unclosed_braces(source: &Source) -> Option<Note> {
    if source.closed_braces == 0 {
        return None;
    }
    let end = source.input_len;
    Some(Note {
        span: source.span(end, end),
        kind: NoteKind::UnclosedBraces {
            count: source.closed_braces,
            left_open: source.braces_left_open,
            budget: budget::CLOSED_BRACES,
        },
    })
}

impl<'t> Tu<'t> {
    /// A pass over `src`, which may enter `headers`, with `macros` defined
    /// and nothing else read yet; the preprocessor's `directives` change
    /// them as the walk meets them.
    fn new(
        src: &'t Source,
        headers: Vec<Included<'t>>,
        macros: preprocess::Defines,
        directives: &'t preprocess::MacroDirectives,
    ) -> Tu<'t> {
        Tu {
            src,
            headers,
            macros,
            directives,
            launching: HashSet::new(),
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
            instantiations: Vec::new(),
            host_callees: HashSet::new(),
            extern_consts: Vec::new(),
        }
    }

    /// The file being collected, for reading node text.
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

    /// A note at node `n` of the file being collected.
    fn note(&mut self, n: Node, kind: NoteKind) {
        let span = self.src.span(n.start_byte(), n.end_byte());
        self.notes.push(Note { span, kind });
    }

    /// One note per syntax error tree-sitter recovered from (the first few).
    fn collect_errors(&mut self, root: Node<'t>) {
        if !root.has_error() {
            return;
        }
        let mut found = Vec::new();
        let mut stack = vec![root];
        // Whether errors past the budget were left unlisted.
        let mut more = false;
        let erroneous = |n: &Node| n.is_error() || n.is_missing() || n.has_error();
        while let Some(n) = stack.pop() {
            if found.len() >= budget::MAX_SYNTAX_ERROR_NOTES {
                more = erroneous(&n) || stack.iter().any(erroneous);
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
        let last = found.last().copied();
        for n in found {
            let kind = if n.is_missing() {
                NoteKind::ParseExpected {
                    node: n.node_kind().into(),
                }
            } else {
                let text = String::from_utf8_lossy(&self.src.text[n.byte_range()]);
                let snippet: String = text.chars().take(40).collect();
                let snippet = snippet.split_whitespace().collect::<Vec<_>>().join(" ");
                NoteKind::ParseError { snippet }
            };
            self.note(n, kind);
        }
        if let Some(last) = last.filter(|_| more) {
            let kind = NoteKind::OutOfBudget {
                what: Cut::SyntaxErrors,
                budget: budget::SYNTAX_ERROR_NOTES,
            };
            self.note(last, kind);
        }
    }

    /// Walks top-level declarations in source order.
    fn collect(&mut self, n: Node<'t>, depth: u32) {
        if depth > budget::MAX_SYNTAX_DEPTH {
            let kind = NoteKind::DeclarationsTooDeep {
                budget: budget::SYNTAX_DEPTH,
            };
            if !self.notes.iter().any(|x| x.kind == kind) {
                self.note(n, kind);
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
            "preproc_include" => self.include(n, depth),
            "preproc_def" | "preproc_function_def" | "preproc_call" => self.directive(n),
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
            "template_instantiation" => self.instantiations.push((n, self.src)),
            "function_definition" => self.function(n, Vec::new(), Vec::new()),
            "template_declaration" => {
                let tparams = template_params(n, &src);
                let tdefaults = template_defaults(n);
                let kids = n.kids();
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

    /// `#define` or `#undef` (another directive: nothing): what the
    /// preprocessor read on its line.
    fn directive(&mut self, n: Node<'t>) {
        let at = (self.src.file, self.src.position(n.start_byte()).0);
        match self.directives.get(&at) {
            Some((name, Some(m))) => {
                if macro_sites::launches_through(m, &self.launching) {
                    self.launching.insert(name.clone());
                } else {
                    self.launching.remove(name);
                }
                self.macros.insert(name.clone(), m.clone());
            }
            Some((name, None)) => {
                self.launching.remove(name);
                self.macros.remove(name);
            }
            None => {}
        }
    }

    /// Every kernel instantiation (the distinct template arguments of its
    /// launches, or the configured ones) lowered, with its launches.
    fn lower_kernels(&mut self, launches: &[LaunchSite], options: &Options) -> Vec<Kernel> {
        let mut out = Vec::new();
        let kernels = self.kernels.clone();
        for def in &kernels {
            if options.only_kernel.as_ref().is_some_and(|k| *k != def.name)
                || options.only_file.is_some_and(|f| f != def.src.file)
            {
                continue;
            }
            // Instantiations: the distinct template arguments of its launches.
            let mut insts: Vec<Vec<TArg>> = Vec::new();
            for l in launches.iter().filter(|l| l.kernel == def.name) {
                let targs = own_targs(def, &l.targs).to_vec();
                if !insts.contains(&targs) {
                    insts.push(targs);
                }
            }
            // Else those of the other files' launch sites.
            let project = self.project_sites_of(def, launches, options);
            for (_, targs) in &project {
                let targs = own_targs(def, targs).to_vec();
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
            // A type parameter that an instantiation gives no known type
            // takes each representative type in turn.
            let representing: &[&str] = if def.tparams.iter().any(|p| matches!(p, TParam::Type(_)))
            {
                &super::types::REPRESENTATIVE_TYPES
            } else {
                &[]
            };
            if insts.len() > budget::MAX_INSTANTIATIONS {
                let kind = NoteKind::TooManyInstantiations {
                    kernel: def.name.clone(),
                    count: insts.len(),
                    budget: budget::INSTANTIATIONS,
                };
                self.note(def.node, kind);
                insts.truncate(budget::MAX_INSTANTIATIONS);
            }
            for targs in insts {
                let kernel = self.lower_instance(def, &targs, None, launches, &project, options);
                // The instantiation's notes are those of its own lowering:
                // a representative type does not make a dependent array
                // dimension a missing constant.
                self.notes.extend(kernel.lowering_notes.iter().cloned());
                let mut types = representing.iter();
                let first = types.next().map(|ty| {
                    self.lower_instance(def, &targs, Some(ty), launches, &project, options)
                });
                // A parameter took the type: the representatives replace it.
                let Some(first) = first.filter(|k| k.representative.is_some()) else {
                    out.push(kernel);
                    continue;
                };
                let mut reps = vec![first];
                for ty in types {
                    reps.push(self.lower_instance(
                        def,
                        &targs,
                        Some(ty),
                        launches,
                        &project,
                        options,
                    ));
                }
                for mut k in reps {
                    k.lowering_notes = kernel.lowering_notes.clone();
                    out.push(k);
                }
            }
        }
        out
    }

    /// One instantiation of `def` lowered (with `representing` for its
    /// type parameters of no known type, when given), with its launches
    /// and the notes its lowering raised.
    fn lower_instance(
        &mut self,
        def: &FuncDef<'t>,
        targs: &[TArg],
        representing: Option<&str>,
        launches: &[LaunchSite],
        project: &[(&ProjectLaunch, Vec<TArg>)],
        options: &Options,
    ) -> Kernel {
        let (mut kernel, notes) = {
            let mut lw = Lowerer::new(self);
            let mut k = match representing {
                Some(ty) => lw.lower_kernel_representing(def, targs, ty),
                None => lw.lower_kernel(def, targs),
            };
            crate::nvcc::registers::place_local_arrays(&mut k);
            crate::nvcc::reload::drop_reloads(&mut k);
            crate::nvcc::overwrite::merge_overwrites(&mut k);
            crate::nvcc::sink::sink_common_accesses(&mut k);
            crate::nvcc::fuse::fuse_fields(&mut k);
            crate::nvcc::neighbours::merge_neighbours(&mut k);
            crate::nvcc::unroll::vectorise_unrolled(&mut k);
            crate::nvcc::hoist::hoist_invariant_loads(&mut k);
            (k, lw.notes)
        };
        kernel.lowering_notes = notes;
        kernel.launches = launches_for(&kernel, def, targs, launches, project, options);
        if kernel.launches.len() > budget::MAX_LAUNCHES_PER_KERNEL {
            let kind = NoteKind::TooManyLaunches {
                kernel: kernel.display_name.clone(),
                count: kernel.launches.len(),
                budget: budget::LAUNCHES_PER_KERNEL,
            };
            self.note(def.node, kind);
            kernel.launches.truncate(budget::MAX_LAUNCHES_PER_KERNEL);
        }
        kernel
    }
}

/// The template arguments of a launch that are `def`'s own: a launch may
/// give more than the kernel takes (the Rust front end's line widths,
/// one per buffer, which a kernel without lines does not declare).
pub(crate) fn own_targs<'a>(def: &FuncDef, targs: &'a [TArg]) -> &'a [TArg] {
    &targs[..targs.len().min(def.tparams.len())]
}
