//! Macros expanded at their use: the expansion's text is parsed as an
//! expression (or as statements) and lowered, reported at the use.
//! Bounded by `budget::MAX_MACRO_DEPTH` and `budget::MAX_MACRO_EXPANSIONS`.
//!
//! `SNIPPETS` is a per-thread cache of parsed macro snippets, by text,
//! bounded by `budget::MAX_SNIPPET_TREES` trees and
//! `budget::MAX_SNIPPET_BYTES` of text (it starts again when either is
//! reached); it only saves parsing, the trees are the same either way.

use std::collections::HashMap;

use tree_sitter::{Node, Parser};

use super::{Lowerer, Src, Val};
use crate::budget;
use crate::finding::Origin;
use crate::frontend::fields::Fields;
use crate::frontend::source::macro_args_to;

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

pub(crate) fn parse_snippet(text: &str) -> Option<std::rc::Rc<tree_sitter::Tree>> {
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

/// Replaces macro parameters in `body` with the argument texts (whole
/// identifiers only; `##` pastes).
pub(crate) fn substitute(body: &str, params: &[String], args: &[String]) -> String {
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

/// `text` (statements) with a `;` after each use of a function-like macro
/// that expands to statements (its body ends with `;` or `}`) where the
/// next statement follows with none (`L(64) break;` in a macro's body,
/// with `#define L(K) k<K><<<g, b>>>(x);`): the grammar would otherwise
/// read the use and the next statement as one broken expression.
fn terminate_statement_uses(
    text: &str,
    macros: &HashMap<String, crate::frontend::preprocess::Macro>,
) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len() + 8);
    let mut copied = 0;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if !(c.is_ascii_alphabetic() || c == b'_') {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
            i += 1;
        }
        let statements = macros
            .get(&text[start..i])
            .and_then(|m| m.function())
            .is_some_and(|(_, body)| body.trim_end().ends_with([';', '}']));
        if !statements || (start > 0 && matches!(b[start - 1], b'.' | b'>' | b':')) {
            continue;
        }
        let mut j = i;
        while j < b.len() && b[j].is_ascii_whitespace() {
            j += 1;
        }
        if b.get(j) != Some(&b'(') {
            continue;
        }
        let Some(close) = crate::frontend::source::closing_paren(b, j, b.len()) else {
            break;
        };
        let next = b[close + 1..].iter().find(|x| !x.is_ascii_whitespace());
        if next.is_some_and(|x| x.is_ascii_alphabetic() || matches!(x, b'_' | b'{')) {
            out.push_str(&text[copied..=close]);
            out.push(';');
            copied = close + 1;
        }
        i = close + 1;
    }
    out.push_str(&text[copied..]);
    out
}

impl<'a, 't> Lowerer<'a, 't> {
    /// Parses `body` (a macro's expansion) as an expression or, with
    /// `statement`, as statements, and lowers it; everything in it is
    /// reported at the macro's use.
    pub(super) fn expand_text(
        &mut self,
        name: &str,
        body: &str,
        n: Node,
        src: &Src,
        statement: bool,
    ) -> Val {
        if self.expanding.len() as u32 >= budget::MAX_MACRO_DEPTH {
            let what = Origin::NestedMacro { name: name.into() };
            return self.budget_unknown(n, src, budget::MACRO_DEPTH, what);
        }
        if self.expansions >= budget::MAX_MACRO_EXPANSIONS {
            let what = Origin::Macro { name: name.into() };
            return self.budget_unknown(n, src, budget::MACRO_EXPANSIONS, what);
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
                            .named(0)
                            .and_then(|d| d.field("declarator"))
                            .and_then(|d| d.field("value"));
                        if let Some(v) = value {
                            return self.expr(v, &snip);
                        }
                    }
                }
            }
            let body = terminate_statement_uses(body, &self.tu.macros);
            let text = format!("void __warplint_expansion() {{ {body}\n; }}");
            if let Some(tree) = parse_snippet(&text) {
                let snip = Src {
                    bytes: text.as_bytes(),
                    at,
                    map: src.map,
                };
                if let Some(b) = tree.root_node().named(0).and_then(|f| f.field("body")) {
                    let stmts = b.kids();
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

    pub(super) fn expand_function_macro(
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
        let args = self.prescanned(name, &m.body, args, n, src);
        let body = substitute(&m.body, &params, &args);
        self.expand_text(name, &body, n, src, statement)
    }

    /// The arguments of a use of `name` prescanned ([`Self::prescan_args`]),
    /// or as written past the budget, said in a note: the inner uses are
    /// then calls the analysis does not know, as without the prescan.
    fn prescanned(
        &mut self,
        name: &str,
        body: &str,
        args: &[String],
        n: Node,
        src: &Src,
    ) -> Vec<String> {
        match self.prescan_args(name, body, args) {
            Some(a) => a,
            None => {
                let what = Origin::Macro { name: name.into() };
                let _ = self.budget_unknown(n, src, budget::PRESCAN_BYTES, what);
                args.to_vec()
            }
        }
    }

    /// C's argument prescan, for the macro the lowering would not expand
    /// again once substituted: in the arguments of a use of `name`, each
    /// use of `name` is replaced by its expansion (its own arguments
    /// first), as the preprocessor replaces every macro in an argument
    /// before substituting it (`IMAD(IMAD(a, b, c), d, e)`, cuda-samples'
    /// dct8x8). Other macros are left to the lowering, which expands them
    /// where they are used; a name an enclosing expansion's own body
    /// spells is not expanded again, as in C. A body that stringizes or
    /// pastes (`#`, `##`) is not prescanned (C does not prescan those
    /// arguments). `None` when the arguments would grow past
    /// [`budget::MAX_PRESCAN_BYTES`].
    fn prescan_args(&mut self, name: &str, body: &str, args: &[String]) -> Option<Vec<String>> {
        if body.contains('#') {
            return Some(args.to_vec());
        }
        let mut grown = 0usize;
        args.iter()
            .map(|a| self.prescan(a, name, 0, &mut grown))
            .collect()
    }

    /// `text` with each use of the function-like macro `name` replaced by
    /// its expansion (see [`Self::prescan_args`]); `grown` counts the text
    /// made, `None` past the budget.
    fn prescan(&mut self, text: &str, name: &str, depth: u32, grown: &mut usize) -> Option<String> {
        let b = text.as_bytes();
        let mut out = String::with_capacity(text.len());
        let (mut copied, mut i) = (0, 0);
        while i < b.len() {
            if !(b[i].is_ascii_alphabetic() || b[i] == b'_') {
                i += 1;
                continue;
            }
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            if &text[start..i] != name {
                continue;
            }
            let Some(m) = self.tu.macros.get(name).filter(|m| m.params.is_some()) else {
                continue;
            };
            let mut open = i;
            while open < b.len() && b[open].is_ascii_whitespace() {
                open += 1;
            }
            if b.get(open) != Some(&b'(')
                || depth >= budget::MAX_MACRO_DEPTH
                || self.expansions >= budget::MAX_MACRO_EXPANSIONS
            {
                continue;
            }
            let Some((inner, close)) = macro_args_to(b, open) else {
                break;
            };
            self.expansions += 1;
            let params = m.params.clone().unwrap_or_default();
            let body = m.body.clone();
            let inner: Vec<String> = if body.contains('#') {
                inner
            } else {
                inner
                    .iter()
                    .map(|a| self.prescan(a, name, depth + 1, grown))
                    .collect::<Option<_>>()?
            };
            let expanded = substitute(&body, &params, &inner);
            *grown = grown.saturating_add(expanded.len());
            if *grown > budget::MAX_PRESCAN_BYTES {
                return None;
            }
            out.push_str(&text[copied..start]);
            out.push_str(&expanded);
            copied = close + 1;
            i = close + 1;
        }
        out.push_str(&text[copied..]);
        Some(out)
    }

    pub(super) fn expand_function_macro_stmt(
        &mut self,
        name: &str,
        args: &[String],
        n: Node,
        src: &Src,
    ) {
        let Some(m) = self.tu.macros.get(name) else {
            return;
        };
        let params = m.params.clone().unwrap_or_default();
        let args = self.prescanned(name, &m.body, args, n, src);
        let body = substitute(&m.body, &params, &args);
        // Try it as an expression first, then as statements.
        let text = format!("auto __warplint_expansion = ({body}\n);");
        let ok_expr = parse_snippet(&text)
            .map(|t| !t.root_node().has_error())
            .unwrap_or(false);
        self.expand_text(name, &body, n, src, !ok_expr);
    }
}

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
