//! `#if` expressions evaluated against the macros defined at that point,
//! over tree-sitter's parse of the condition (never a hand-written
//! parser). `Err(Missing)` names the first macro used that is not defined
//! (or the text that could not be read), or says the macros nest past
//! their budget: the caller keeps the first branch.

use tree_sitter::{Node, Parser};

use super::super::fields::Fields;
use super::{Defines, Macro};
use crate::budget;

/// C++'s alternative tokens (`and`, `or`, `not`, …) spelled as operators:
/// they are keywords, never macro names, and the grammar's `#if` does not
/// know them (`#if defined(__CUDA_ARCH__) and (__CUDA_ARCH__ == 900)`).
fn operator_words(text: &str) -> String {
    const WORDS: &[(&str, &str)] = &[
        ("and", "&&"),
        ("or", "||"),
        ("not", "!"),
        ("not_eq", "!="),
        ("bitand", "&"),
        ("bitor", "|"),
        ("xor", "^"),
        ("compl", "~"),
    ];
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        match WORDS.iter().find(|(w, _)| *w == word.as_str()) {
            Some((_, op)) => out.push_str(&format!(" {op} ")),
            None => out.push_str(word),
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// Why a condition could not be evaluated.
pub(super) enum Missing {
    /// The first macro used that is not defined (or the text that could
    /// not be read).
    Name(String),
    /// Macros (`MAX_MACRO_DEPTH`) or the expression's syntax
    /// (`MAX_SYNTAX_DEPTH`) nested past the budget named.
    TooDeep(crate::finding::Budget),
}

impl From<String> for Missing {
    fn from(name: String) -> Missing {
        Missing::Name(name)
    }
}

/// Evaluates a condition; `Err` says what is missing.
pub(super) fn eval_condition(
    parser: &mut Parser,
    text: &str,
    defines: &Defines,
    depth: u32,
) -> Result<i64, Missing> {
    if depth > budget::MAX_MACRO_DEPTH {
        return Err(Missing::TooDeep(budget::MACRO_DEPTH));
    }
    let snippet = format!("#if {}\n#endif\n", operator_words(text));
    let tree = parser
        .parse(&snippet, None)
        .ok_or_else(|| Missing::Name(text.to_string()))?;
    let cond = tree
        .root_node()
        .named(0)
        .and_then(|n| n.field("condition"))
        .ok_or_else(|| Missing::Name(text.to_string()))?;
    eval_node(parser, cond, snippet.as_bytes(), defines, depth, 0)
}

fn eval_node(
    parser: &mut Parser,
    n: Node,
    src: &[u8],
    defines: &Defines,
    depth: u32,
    level: u32,
) -> Result<i64, Missing> {
    // One level per syntax node: `#if ((((…))))` would otherwise recurse as
    // deep as the text nests, past the thread's stack.
    if level > budget::MAX_SYNTAX_DEPTH {
        return Err(Missing::TooDeep(budget::SYNTAX_DEPTH));
    }
    let text = |n: Node| String::from_utf8_lossy(&src[n.byte_range()]).into_owned();
    match n.node_kind() {
        "number_literal" => {
            crate::frontend::lower::parse_int(&text(n)).ok_or_else(|| Missing::Name(text(n)))
        }
        "char_literal" => Ok(text(n)
            .trim_matches('\'')
            .chars()
            .next()
            .map(|c| c as i64)
            .unwrap_or(0)),
        "true" => Ok(1),
        "false" => Ok(0),
        "identifier" => {
            let name = text(n);
            match defines.get(&name).and_then(Macro::object_body) {
                Some(body) if !body.trim().is_empty() => {
                    eval_condition(parser, body, defines, depth + 1)
                }
                Some(_) => Ok(0),
                None => Err(Missing::Name(name)),
            }
        }
        "preproc_defined" => {
            let name = n.named(0).map(text).unwrap_or_default();
            Ok(defines.contains_key(&name) as i64)
        }
        "parenthesized_expression" => match n.named(0) {
            Some(i) => eval_node(parser, i, src, defines, depth, level + 1),
            None => Err(Missing::Name(text(n))),
        },
        "unary_expression" => {
            let op = n.field("operator").map(|o| o.node_kind()).unwrap_or("");
            let v = eval_node(
                parser,
                n.field("argument").ok_or_else(|| Missing::Name(text(n)))?,
                src,
                defines,
                depth,
                level + 1,
            )?;
            Ok(match op {
                "!" => (v == 0) as i64,
                "-" => v.wrapping_neg(),
                "~" => !v,
                _ => v,
            })
        }
        "binary_expression" => {
            let op = n.field("operator").map(|o| o.node_kind()).unwrap_or("");
            let l = n.field("left").ok_or_else(|| Missing::Name(text(n)))?;
            let r = n.field("right").ok_or_else(|| Missing::Name(text(n)))?;
            let a = eval_node(parser, l, src, defines, depth, level + 1);
            // `defined(X) && X > 2` with X undefined is simply false.
            match (op, &a) {
                ("&&", Ok(0)) => return Ok(0),
                ("||", Ok(v)) if *v != 0 => return Ok(1),
                _ => {}
            }
            let b = eval_node(parser, r, src, defines, depth, level + 1)?;
            let a = a?;
            let bop = match op {
                "+" => crate::ir::BinOp::Add,
                "-" => crate::ir::BinOp::Sub,
                "*" => crate::ir::BinOp::Mul,
                "/" => crate::ir::BinOp::Div,
                "%" => crate::ir::BinOp::Rem,
                "<<" => crate::ir::BinOp::Shl,
                ">>" => crate::ir::BinOp::Shr,
                "&" => crate::ir::BinOp::And,
                "|" => crate::ir::BinOp::Or,
                "^" => crate::ir::BinOp::Xor,
                "<" => crate::ir::BinOp::Lt,
                "<=" => crate::ir::BinOp::Le,
                ">" => crate::ir::BinOp::Gt,
                ">=" => crate::ir::BinOp::Ge,
                "==" => crate::ir::BinOp::Eq,
                "!=" => crate::ir::BinOp::Ne,
                "&&" => crate::ir::BinOp::LAnd,
                "||" => crate::ir::BinOp::LOr,
                _ => return Err(Missing::Name(text(n))),
            };
            crate::ir::eval_bin(bop, a, b).ok_or_else(|| Missing::Name(text(n)))
        }
        "conditional_expression" => {
            let c = eval_node(
                parser,
                n.field("condition").ok_or_else(|| Missing::Name(text(n)))?,
                src,
                defines,
                depth,
                level + 1,
            )?;
            let pick = if c != 0 { "consequence" } else { "alternative" };
            eval_node(
                parser,
                n.field(pick).ok_or_else(|| Missing::Name(text(n)))?,
                src,
                defines,
                depth,
                level + 1,
            )
        }
        _ => Err(Missing::Name(text(n))),
    }
}
