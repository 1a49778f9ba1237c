//! The attribute's arguments: `block = (32, 8, 1), grid = 64, arch =
//! "sm_90", level = "warn", params(n = 1024), consts(TILE = 32)`.

use std::collections::BTreeMap;

use proc_macro2::TokenStream;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{Expr, Lit, Meta, Token};

/// Compile error or warning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Error,
    Warn,
}

#[derive(Clone, Debug)]
pub struct Args {
    pub block: Option<[u64; 3]>,
    pub grid: Option<[u64; 3]>,
    pub arch: String,
    pub level: Level,
    pub params: BTreeMap<String, i64>,
    pub consts: Vec<(String, i64)>,
}

type Error = (proc_macro2::Span, String);

fn err<T>(at: &impl syn::spanned::Spanned, message: &str) -> Result<T, Error> {
    Err((at.span(), message.to_string()))
}

/// An integer literal, optionally negated.
fn int(e: &Expr) -> Result<i64, Error> {
    match e {
        Expr::Lit(l) => match &l.lit {
            Lit::Int(i) => i
                .base10_parse::<i64>()
                .map_err(|x| (i.span(), x.to_string())),
            _ => err(e, "expected an integer"),
        },
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => Ok(-int(&u.expr)?),
        Expr::Group(g) => int(&g.expr),
        Expr::Paren(p) => int(&p.expr),
        _ => err(e, "expected an integer"),
    }
}

/// `x`, `(x, y)` or `(x, y, z)`: a shape, the missing sizes 1.
fn shape(e: &Expr) -> Result<[u64; 3], Error> {
    let dims: Vec<i64> = match e {
        Expr::Tuple(t) => t.elems.iter().map(int).collect::<Result<_, _>>()?,
        _ => vec![int(e)?],
    };
    if dims.is_empty() || dims.len() > 3 || dims.iter().any(|d| *d <= 0) {
        return err(
            e,
            "expected a shape: `x`, `(x, y)` or `(x, y, z)` of positive sizes",
        );
    }
    let mut out = [1u64; 3];
    for (o, d) in out.iter_mut().zip(&dims) {
        *o = *d as u64;
    }
    Ok(out)
}

/// A block a launch may have (compute capability 2.0 and later: 1024
/// threads, 1024 x 1024 x 64); a larger one would not run, and the
/// analysis would run its warps for nothing.
fn block(e: &Expr) -> Result<[u64; 3], Error> {
    let b = shape(e)?;
    let threads = b.iter().fold(1u64, |a, x| a.saturating_mul(*x));
    if threads > 1024 || b[0] > 1024 || b[1] > 1024 || b[2] > 64 {
        return err(
            e,
            "a block has at most 1024 threads (1024 x 1024 x 64 at most per dimension)",
        );
    }
    Ok(b)
}

/// A grid a launch may have (x up to 2^31 - 1, y and z up to 65535).
fn grid(e: &Expr) -> Result<[u64; 3], Error> {
    let g = shape(e)?;
    if g[0] > (1 << 31) - 1 || g[1] > 65535 || g[2] > 65535 {
        return err(e, "a grid has at most 2^31 - 1 x 65535 x 65535 blocks");
    }
    Ok(g)
}

fn string(e: &Expr) -> Result<String, Error> {
    match e {
        Expr::Lit(l) => match &l.lit {
            Lit::Str(s) => Ok(s.value()),
            _ => err(e, "expected a string"),
        },
        _ => err(e, "expected a string"),
    }
}

/// `name = integer, ...` inside `params(...)` or `consts(...)`; a name may
/// be a string (`"a.len()" = 1024`).
fn pairs(list: &syn::MetaList) -> Result<Vec<(String, i64)>, Error> {
    let parser = Punctuated::<syn::MetaNameValue, Token![,]>::parse_terminated;
    let items = parser
        .parse2(list.tokens.clone())
        .map_err(|e| (e.span(), e.to_string()));
    let items = match items {
        Ok(i) => i,
        Err(_) => {
            // `"a.len()" = 1024`: a string key is not a path.
            return string_pairs(list.tokens.clone());
        }
    };
    items
        .iter()
        .map(|nv| {
            let name = nv
                .path
                .get_ident()
                .map(ToString::to_string)
                .ok_or_else(|| (nv.path.segments[0].ident.span(), "expected a name".into()))?;
            Ok((name, int(&nv.value)?))
        })
        .collect()
}

fn string_pairs(tokens: TokenStream) -> Result<Vec<(String, i64)>, Error> {
    struct Pair(String, i64);
    impl syn::parse::Parse for Pair {
        fn parse(input: syn::parse::ParseStream) -> syn::Result<Pair> {
            let name = if input.peek(syn::LitStr) {
                input.parse::<syn::LitStr>()?.value()
            } else {
                input.parse::<syn::Ident>()?.to_string()
            };
            input.parse::<Token![=]>()?;
            let v: Expr = input.parse()?;
            let v = int(&v).map_err(|(s, m)| syn::Error::new(s, m))?;
            Ok(Pair(name, v))
        }
    }
    let parser = Punctuated::<Pair, Token![,]>::parse_terminated;
    let items = parser
        .parse2(tokens)
        .map_err(|e| (e.span(), e.to_string()))?;
    Ok(items.into_iter().map(|p| (p.0, p.1)).collect())
}

impl Args {
    pub fn parse(attr: TokenStream) -> Result<Args, Error> {
        let mut a = Args {
            block: None,
            grid: None,
            arch: "sm_90".into(),
            level: Level::Error,
            params: BTreeMap::new(),
            consts: Vec::new(),
        };
        let parser = Punctuated::<Meta, Token![,]>::parse_terminated;
        let metas = parser.parse2(attr).map_err(|e| (e.span(), e.to_string()))?;
        for m in metas {
            let key = m
                .path()
                .get_ident()
                .map(ToString::to_string)
                .unwrap_or_default();
            match (key.as_str(), &m) {
                ("block", Meta::NameValue(nv)) => a.block = Some(block(&nv.value)?),
                ("grid", Meta::NameValue(nv)) => a.grid = Some(grid(&nv.value)?),
                ("arch", Meta::NameValue(nv)) => a.arch = string(&nv.value)?,
                ("level", Meta::NameValue(nv)) => {
                    a.level = match string(&nv.value)?.as_str() {
                        "error" => Level::Error,
                        "warn" | "warning" => Level::Warn,
                        _ => return err(&nv.value, "expected \"error\" or \"warn\""),
                    }
                }
                ("params", Meta::List(l)) => a.params.extend(pairs(l)?),
                ("consts", Meta::List(l)) => a.consts.extend(pairs(l)?),
                _ => {
                    return err(
                        &m,
                        "unknown argument: expected `block = (x, y, z)`, `grid = ...`, \
                         `arch = \"sm_90\"`, `level = \"error\"|\"warn\"`, `params(name = v, ...)` \
                         or `consts(NAME = v, ...)`",
                    )
                }
            }
        }
        Ok(a)
    }
}

#[cfg(test)]
mod tests {
    use super::{Args, Level};
    use std::str::FromStr;

    fn parse(s: &str) -> Result<Args, String> {
        Args::parse(proc_macro2::TokenStream::from_str(s).unwrap()).map_err(|e| e.1)
    }

    #[test]
    fn arguments_read_as_written() {
        let a = parse(
            r#"block = (32, 8), grid = 4, arch = "sm_70", level = "warn", params(n = 1024, "a.len()" = 64), consts(TILE = 32)"#,
        )
        .unwrap();
        assert_eq!(a.block, Some([32, 8, 1]));
        assert_eq!(a.grid, Some([4, 1, 1]));
        assert_eq!(a.arch, "sm_70");
        assert_eq!(a.level, Level::Warn);
        assert_eq!(a.params.get("n"), Some(&1024));
        assert_eq!(a.params.get("a.len()"), Some(&64));
        assert_eq!(a.consts, vec![("TILE".to_string(), 32)]);
        let d = parse("").unwrap();
        assert_eq!(
            (d.block, d.level, d.arch.as_str()),
            (None, Level::Error, "sm_90")
        );
    }

    #[test]
    fn wrong_arguments_say_what_is_expected() {
        assert!(parse("block = (0, 1)").unwrap_err().contains("positive"));
        assert!(parse("blok = 32").unwrap_err().contains("unknown argument"));
        assert!(parse(r#"level = "loud""#).unwrap_err().contains("\"warn\""));
        assert!(parse("block = \"32\"").unwrap_err().contains("integer"));
        assert!(parse("block = (65536, 65536)")
            .unwrap_err()
            .contains("at most 1024"));
        assert!(parse("block = (1, 1, 128)")
            .unwrap_err()
            .contains("at most 1024"));
        assert!(parse("grid = (1, 70000)").unwrap_err().contains("65535"));
    }
}
