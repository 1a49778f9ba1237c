//! Launch sites that a file-scope macro use makes: a function-like macro
//! whose body launches (`#define BIND(tag, T) void run_##tag(T *x) { …
//! k_##tag<<<g, b>>>(x); }`), used outside any function (`BIND(f32,
//! float)`, often several in a row with no `;`, which the parser reads as
//! an error). Each use is found by name in the tree outside function
//! bodies, its arguments read from the text up to the matching `)`, and
//! the expansion's host functions walked for launches, reported at the
//! use. Uses inside a function body are expanded where the lowerer meets
//! them.

use std::collections::HashSet;

use tree_sitter::Node;

use super::super::fields::Fields;
use super::super::lower::Lowerer;
use super::super::source::{macro_args, Source};
use super::{LaunchSite, Tu};
use crate::budget;
use crate::finding::{Cut, NoteKind};

/// Whether a macro body holds a launch: `<<<`, or `< < <` as a code
/// formatter may space it.
fn launches(body: &str) -> bool {
    body.contains("<<<") || joined_chevrons(body).is_some()
}

/// `text` with a spaced `< < <` … `> > >` joined into `<<<` … `>>>`
/// (`None` when it has none).
pub(crate) fn joined_chevrons(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let three = |i: usize, c: u8| -> Option<usize> {
        let mut j = i;
        for k in 0..3 {
            if k > 0 {
                while j < b.len() && b[j].is_ascii_whitespace() {
                    j += 1;
                }
            }
            if b.get(j) != Some(&c) {
                return None;
            }
            j += 1;
        }
        Some(j)
    };
    // Spaced: longer than three bytes (a joined `<<<` is not found again).
    let open = (0..b.len()).find_map(|i| three(i, b'<').filter(|e| e - i > 3).map(|e| (i, e)))?;
    let close = (open.1..b.len()).find_map(|i| three(i, b'>').map(|e| (i, e)))?;
    Some(format!(
        "{}<<<{}>>>{}",
        &text[..open.0],
        &text[open.1..close.0],
        &text[close.1..]
    ))
}

/// Whether macro `m`'s expansion launches: a function-like macro whose
/// body holds a launch or names a macro of `launching`.
pub(super) fn launches_through(m: &super::Macro, launching: &HashSet<String>) -> bool {
    let Some((_, body)) = m.function() else {
        return false;
    };
    launches(body)
        || (!launching.is_empty() && words(body.as_bytes()).any(|w| launching.contains(w)))
}

/// The identifiers of `text`, as text.
fn words(text: &[u8]) -> impl Iterator<Item = &str> {
    text.split(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
        .filter(|w| w.first().is_some_and(|b| !b.is_ascii_digit()))
        .filter_map(|w| std::str::from_utf8(w).ok())
}

/// The byte after `end` past blanks, if it is `(`.
fn paren_after(text: &[u8], end: usize) -> Option<usize> {
    let mut j = end;
    while j < text.len() && text[j].is_ascii_whitespace() {
        j += 1;
    }
    (text.get(j) == Some(&b'(')).then_some(j)
}

impl<'t> Tu<'t> {
    /// Whether `text` (a function's) uses a macro whose expansion launches
    /// (`RUN(k, x)` with `#define RUN(f, ...) f<<<g, b>>>(__VA_ARGS__)`),
    /// which the lowerer expands where it meets it.
    pub(super) fn uses_launching_macro(&self, text: &[u8]) -> bool {
        !self.launching.is_empty() && words(text).any(|w| self.launching.contains(w))
    }

    /// The names of the function-like macros whose body launches.
    fn launching_macros(&self) -> Vec<String> {
        self.macros
            .iter()
            .filter(|(_, m)| m.function().is_some_and(|(_, body)| launches(body)))
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// The launch sites of the file-scope uses of launching macros in the
    /// tree under `root` (the file's `source`).
    pub(super) fn macro_launches(&mut self, root: Node<'t>, source: &'t Source) -> Vec<LaunchSite> {
        let names = self.launching_macros();
        if names.is_empty() {
            return Vec::new();
        }
        let text = &source.text;
        let mut uses: Vec<(String, Vec<String>, Node<'t>)> = Vec::new();
        let mut stack = vec![root];
        let mut visited = 0u32;
        while let Some(n) = stack.pop() {
            visited += 1;
            if visited > budget::MAX_LAUNCH_SEARCH_NODES {
                let kind = NoteKind::OutOfBudget {
                    what: Cut::LaunchScan,
                    budget: budget::LAUNCH_SEARCH_NODES,
                };
                self.note(n, kind);
                break;
            }
            match n.node_kind() {
                "function_definition" | "preproc_function_def" | "preproc_def" => continue,
                "identifier" | "type_identifier" => {
                    let name = String::from_utf8_lossy(&text[n.byte_range()]).into_owned();
                    if names.contains(&name) {
                        let args =
                            paren_after(text, n.end_byte()).and_then(|o| macro_args(text, o));
                        if let Some(args) = args {
                            uses.push((name, args, n));
                        }
                    }
                    continue;
                }
                _ => {}
            }
            let mut c = n.walk();
            let kids: Vec<Node<'t>> = n.children(&mut c).collect();
            stack.extend(kids.into_iter().rev());
        }
        let mut out = Vec::new();
        for (name, args, n) in uses.into_iter().take(budget::MAX_MACRO_EXPANSIONS as usize) {
            let at = source.span(n.start_byte(), n.end_byte());
            let mut lw = Lowerer::new(self);
            out.extend(lw.macro_host_launches(&name, &args, at, source));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use crate::frontend::source::macro_args;

    #[test]
    fn arguments_split_at_top_level_commas_up_to_the_matching_parenthesis() {
        let t = b"BIND(a, f(x, y), \"s,)\", {1, 2}) rest";
        assert_eq!(
            macro_args(t, 4),
            Some(vec![
                "a".to_string(),
                "f(x, y)".into(),
                "\"s,)\"".into(),
                "{1, 2}".into()
            ])
        );
        assert_eq!(macro_args(b"BIND(a, b", 4), None);
    }

    #[test]
    fn spaced_chevrons_are_joined() {
        use super::joined_chevrons;
        assert_eq!(
            joined_chevrons("k < < < g,\n b > > > (x);").as_deref(),
            Some("k <<< g,\n b >>> (x);")
        );
        assert_eq!(joined_chevrons("a << b; c >> d"), None);
    }
}
