//! Syntax-tree fields by name, with the grammar's field ids looked up once.
//!
//! `Node::child_by_field_name` resolves the name against the grammar's
//! field table (a string comparison per field) at every call; the front
//! end asks for fields millions of times on a large tree, so the ids of the
//! names it uses are resolved once per process.

use std::sync::OnceLock;
use tree_sitter::Node;

/// The field names the front end reads, most used first.
const NAMES: [&str; 27] = [
    "declarator",
    "name",
    "type",
    "body",
    "value",
    "argument",
    "operator",
    "left",
    "right",
    "condition",
    "parameters",
    "arguments",
    "size",
    "function",
    "field",
    "default_value",
    "consequence",
    "alternative",
    "update",
    "statement",
    "scope",
    "path",
    "initializer",
    "indices",
    "index",
    "directive",
    "default_type",
];

fn ids() -> &'static [u16; NAMES.len()] {
    static IDS: OnceLock<[u16; NAMES.len()]> = OnceLock::new();
    IDS.get_or_init(|| {
        let language: tree_sitter::Language = tree_sitter_cuda::LANGUAGE.into();
        NAMES.map(|n| language.field_id_for_name(n).map_or(0, |id| id.get()))
    })
}

/// The grammar's id of field `name` (0, which no child has, when the
/// grammar has no such field).
fn id(name: &str) -> u16 {
    match NAMES.iter().position(|n| *n == name) {
        Some(i) => ids()[i],
        None => {
            let language: tree_sitter::Language = tree_sitter_cuda::LANGUAGE.into();
            language.field_id_for_name(name).map_or(0, |id| id.get())
        }
    }
}

/// The grammar's node kind names, by kind id.
fn kinds() -> &'static [String] {
    static KINDS: OnceLock<Vec<String>> = OnceLock::new();
    KINDS.get_or_init(|| {
        let language: tree_sitter::Language = tree_sitter_cuda::LANGUAGE.into();
        (0..language.node_kind_count())
            .map(|id| {
                u16::try_from(id)
                    .ok()
                    .and_then(|id| language.node_kind_for_id(id))
                    .unwrap_or_default()
                    .to_string()
            })
            .collect()
    })
}

pub(crate) trait Fields<'t> {
    /// `child_by_field_name`, with the id looked up once.
    fn field(&self, name: &str) -> Option<Node<'t>>;
    /// `kind`, read from a table (`Node::kind` measures and validates the
    /// grammar's C string at every call).
    fn node_kind(&self) -> &'t str;
    /// The `i`th named child that is not a comment: tree-sitter puts
    /// comments anywhere (`else // why` before the `{`), and a comment is
    /// never the operand, branch or declarator a caller looks for.
    fn named(&self, i: usize) -> Option<Node<'t>>;
    /// The named children that are not comments, in order (an argument,
    /// parameter or initializer list's items with `/* why */` between).
    fn kids(&self) -> Vec<Node<'t>>;
}

impl<'t> Fields<'t> for Node<'t> {
    fn field(&self, name: &str) -> Option<Node<'t>> {
        match id(name) {
            0 => None,
            i => self.child_by_field_id(i),
        }
    }

    fn node_kind(&self) -> &'t str {
        match kinds().get(self.kind_id() as usize) {
            Some(k) if !k.is_empty() => k,
            _ => self.kind(),
        }
    }

    fn named(&self, i: usize) -> Option<Node<'t>> {
        self.kids().into_iter().nth(i)
    }

    fn kids(&self) -> Vec<Node<'t>> {
        let mut cursor = self.walk();
        self.named_children(&mut cursor)
            .filter(|c| c.node_kind() != "comment")
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every name resolves to what `child_by_field_name` finds, and every
    /// node's kind to `kind`, on a file that has each field.
    #[test]
    fn fields_by_id_are_the_fields_by_name() {
        let src = "template <typename T = int, int N = 4> struct S { int a[N]; };\n\
                   #define M(x) (x)\n#include \"h.cuh\"\n\
                   __global__ void k(float *p, int n = 3) {\n  int i = threadIdx.x + 1;\n  \
                   for (int j = 0; j < n; j++) { if (i < n) p[i] = -p[j]; else p[0] = M(1); }\n  \
                   while (i) i--; S<int, 2> s; s.a[0] = sizeof(float); ::f(1); \n  \
                   for (auto x : v) {} int q[2] = {1, 2}; int r[] = {[0] = 1}; }\n";
        let mut parser = tree_sitter::Parser::new();
        parser
            .set_language(&tree_sitter_cuda::LANGUAGE.into())
            .unwrap();
        let tree = parser.parse(src, None).unwrap();
        let mut seen = vec![false; NAMES.len()];
        let mut stack = vec![tree.root_node()];
        while let Some(n) = stack.pop() {
            for (i, name) in NAMES.iter().enumerate() {
                let by_name = n.child_by_field_name(name);
                assert_eq!(n.field(name), by_name, "{name} of {}", n.kind());
                seen[i] |= by_name.is_some();
            }
            assert_eq!(n.field("no_such_field"), None);
            assert_eq!(n.node_kind(), n.kind());
            let mut c = n.walk();
            stack.extend(n.children(&mut c));
        }
        let missing: Vec<_> = NAMES.iter().zip(&seen).filter(|(_, s)| !**s).collect();
        assert!(missing.len() <= 4, "fields never met: {missing:?}");
    }
}
