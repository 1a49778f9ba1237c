//! A token stream written out as Rust text, with where each token went, so
//! that a byte range the analysis reports on that text gives back the
//! token's span (the compiler's: an error then points into the user's
//! source).

use proc_macro2::{Delimiter, Span, TokenStream, TokenTree};

/// The text of a token stream and each token's place in it.
pub struct Flat {
    pub text: String,
    /// (start, end, span) per token, in text order.
    tokens: Vec<(usize, usize, Span)>,
}

impl Flat {
    pub fn new(ts: TokenStream) -> Flat {
        let mut f = Flat {
            text: String::new(),
            tokens: Vec::new(),
        };
        f.walk(ts);
        f
    }

    fn push(&mut self, s: &str, span: Span, space: bool) {
        let start = self.text.len();
        self.text.push_str(s);
        self.tokens.push((start, self.text.len(), span));
        if space {
            self.text.push(' ');
        }
    }

    fn walk(&mut self, ts: TokenStream) {
        for tt in ts {
            match tt {
                TokenTree::Group(g) => {
                    let (open, close) = match g.delimiter() {
                        Delimiter::Parenthesis => ("(", ")"),
                        Delimiter::Bracket => ("[", "]"),
                        Delimiter::Brace => ("{", "}"),
                        // A `$e:expr` a macro_rules passed in is one
                        // operand: `i * $s` with `$s = 32 - 31` is
                        // `i * (32 - 31)`. A single token needs nothing.
                        Delimiter::None if g.stream().into_iter().nth(1).is_some() => ("(", ")"),
                        Delimiter::None => ("", ""),
                    };
                    // `#[kernel]` as written: the front end looks for
                    // its markers as bytes before parsing.
                    self.push(open, g.span_open(), false);
                    self.walk(g.stream());
                    if self.text.ends_with(' ') {
                        self.text.pop();
                    }
                    self.push(close, g.span_close(), true);
                }
                TokenTree::Ident(i) => self.push(&i.to_string(), i.span(), true),
                // `::`, `+=`, `'a`: a joint punctuation is written against
                // what follows.
                TokenTree::Punct(p) => self.push(
                    &p.as_char().to_string(),
                    p.span(),
                    p.spacing() == proc_macro2::Spacing::Alone && p.as_char() != '#',
                ),
                TokenTree::Literal(l) => self.push(&l.to_string(), l.span(), true),
            }
        }
    }

    /// The span of the token at byte `at` of [`Flat::text`] (the last one
    /// starting at or before it): where the access starts. (Joining it
    /// with the last token's needs a nightly compiler, and after the
    /// analysis the fallback spans of a test can no longer be joined.)
    pub fn span_at(&self, at: usize) -> Option<Span> {
        let i = self.tokens.partition_point(|t| t.0 <= at);
        i.checked_sub(1).map(|i| self.tokens[i].2)
    }
}

#[cfg(test)]
mod tests {
    use super::Flat;
    use std::str::FromStr;

    /// The text is Rust that reads back as the same tokens, joint
    /// punctuation kept together.
    #[test]
    fn the_text_reads_back_as_the_tokens() {
        let src = "fn f<'a>(x: &'a [f32], n: usize) -> f32 { let mut s = 0.0f32; s += x[n - 1]; a::b(x.len()); s }";
        let ts = proc_macro2::TokenStream::from_str(src).unwrap();
        let flat = Flat::new(ts.clone());
        let again = proc_macro2::TokenStream::from_str(&flat.text).unwrap();
        assert_eq!(again.to_string(), ts.to_string());
        assert!(flat.text.contains(" += "), "{}", flat.text);
        assert!(flat.text.contains(" :: "), "{}", flat.text);
        assert!(flat.text.contains("'a "), "{}", flat.text);
        assert!(flat.text.contains("[f32]"), "{}", flat.text);
        let at = flat.text.find("len").unwrap();
        assert!(flat.span_at(at).is_some());
        assert!(flat.span_at(0).is_some());
        // An invisible group (a macro_rules fragment) keeps its grouping.
        let inner = proc_macro2::TokenStream::from_str("32 - 31").unwrap();
        let mut ts = proc_macro2::TokenStream::from_str("i *").unwrap();
        ts.extend([proc_macro2::TokenTree::Group(proc_macro2::Group::new(
            proc_macro2::Delimiter::None,
            inner,
        ))]);
        assert_eq!(Flat::new(ts).text.trim(), "i * (32 - 31)");
    }
}
