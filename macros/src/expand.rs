//! The attribute's expansion: the item unchanged, plus a `compile_error!`
//! (or a deprecation warning) at each access warplint proves wasteful.

use std::collections::BTreeSet;

use proc_macro2::{Span, TokenStream};
use quote::quote_spanned;
use warplint_analyzer::frontend::{KernelOverride, Language};
use warplint_analyzer::Arch;

use crate::args::{Args, Level};
use crate::flat::Flat;

/// One finding to report: where it starts (a byte of the analysed text)
/// and what it says.
#[derive(Debug)]
pub struct Finding {
    pub start: usize,
    pub text: String,
}

/// The attribute `attr` on `item`.
pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let args = match Args::parse(attr) {
        Ok(a) => a,
        Err((span, m)) => {
            return with(
                item,
                &[(span, format!("warplint::check: {m}"))],
                Level::Error,
            )
        }
    };
    let func: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(e) => {
            let m = format!("warplint::check goes on a kernel function: {e}");
            return with(item, &[(e.span(), m)], Level::Error);
        }
    };
    let name = func.sig.ident.to_string();
    let flat = Flat::new(item.clone());
    let mut text = String::new();
    for (c, v) in &args.consts {
        text.push_str(&format!("const {c}: usize = {v};\n"));
    }
    let marked = func.attrs.iter().any(|a| {
        let p = a.path();
        p.is_ident("kernel")
            || p.segments
                .last()
                .is_some_and(|s| s.ident == "kernel" || s.ident == "cube")
    });
    if !marked {
        text.push_str("#[kernel]\n");
    }
    let offset = text.len();
    text.push_str(&flat.text);
    // The analysis parses text with syn: its spans must be proc_macro2's
    // own (byte positions), not the compiler's, while it runs.
    proc_macro2::fallback::force();
    let found = findings(&text, &name, &args);
    proc_macro2::fallback::unforce();
    let at = |f: &Finding| {
        f.start
            .checked_sub(offset)
            .and_then(|s| flat.span_at(s))
            .unwrap_or_else(|| func.sig.ident.span())
    };
    let out: Vec<(Span, String)> = match found {
        Ok(fs) => fs.iter().map(|f| (at(f), f.text.clone())).collect(),
        Err(m) => vec![(func.sig.ident.span(), format!("warplint::check: {m}"))],
    };
    with(item, &out, args.level)
}

/// `item` followed by one error or warning per message, each at its span.
fn with(item: TokenStream, messages: &[(Span, String)], level: Level) -> TokenStream {
    let mut out = item;
    for (span, m) in messages {
        let span = *span;
        out.extend(match level {
            Level::Error => quote_spanned! {span=> ::core::compile_error!(#m);},
            // Stable Rust has no warning from a macro: a deprecated item,
            // used, is one (the note is the message).
            Level::Warn => quote_spanned! {span=>
                const _: () = {
                    #[deprecated(note = #m)]
                    struct WarplintFinding;
                    let _ = WarplintFinding;
                };
            },
        });
    }
    out
}

/// The findings that hold for every value (no assumption) in kernel
/// `name` of the Rust `text`, each with its help and re-checked fix.
pub fn findings(text: &str, name: &str, args: &Args) -> Result<Vec<Finding>, String> {
    let arch = Arch::parse(&args.arch)?;
    let model = arch.model()?;
    let mut o = warplint_analyzer::Options::default();
    o.frontend.language = Language::Rust;
    o.frontend.arch = Some(arch);
    o.frontend.kernels.insert(
        name.to_string(),
        KernelOverride {
            block: args.block,
            grid: args.grid,
            params: args.params.clone(),
            template: Vec::new(),
        },
    );
    let analysis = warplint_analyzer::analyze(text.as_bytes(), model.as_ref(), &o);
    let thresholds = warplint_lints::Thresholds::default();
    let ctx = warplint_lints::Context {
        source: text.as_bytes(),
        analysis: &analysis,
        model: model.as_ref(),
        options: &o,
        arch,
        thresholds: &thresholds,
    };
    let selected: BTreeSet<&'static str> = warplint_lints::rules().map(|r| r.code).collect();
    let diagnostics = warplint_lints::check(&ctx, &selected);
    Ok(diagnostics
        .iter()
        .filter(|d| d.facts.status == "exact" && d.span.file == 0)
        .map(|d| Finding {
            start: d.span.start,
            text: worded(d, text),
        })
        .collect())
}

/// A diagnostic as one message: code, what, help, and the fix.
fn worded(d: &warplint_lints::Diagnostic, text: &str) -> String {
    let mut m = format!("warplint {} ({}): {}", d.code, d.name, d.message);
    if let Some(h) = &d.help {
        m.push_str(&format!("\nhelp: {h}"));
    }
    if let Some(f) = &d.fix {
        m.push_str(&format!("\nfix (re-checked by warplint): {}", f.message));
        for e in &f.edits {
            let old = text.get(e.span.start..e.span.end).unwrap_or("");
            m.push_str(&format!("\n  `{old}` -> `{}`", e.content));
        }
    }
    m
}

#[cfg(test)]
mod tests;
