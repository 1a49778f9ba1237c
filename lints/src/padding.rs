//! The padding fix for a conflicting shared array: the smallest number of
//! extra elements on the innermost dimension that makes every access to
//! the array in its kernel conflict-free (or, failing that, the one that
//! minimises the worst), found by editing the declaration and re-running
//! the whole analysis on the edited source.

use warplint_analyzer::ir::{Space, Span};
use warplint_analyzer::symbolic::Cost;
use warplint_analyzer::{analyze, Status};

use crate::{Context, Edit};

/// Candidate paddings tried, in elements.
pub const MAX_PAD: u64 = 32;

#[derive(Clone, Debug, PartialEq)]
pub struct PaddingPlan {
    /// Extra elements on the innermost dimension.
    pub pad: u64,
    pub edit: Edit,
    /// The declaration as it reads after the edit.
    pub new_decl: String,
    /// Worst n-way degree over the array's accesses, before and after.
    pub worst_before: f64,
    pub worst_after: f64,
}

impl PaddingPlan {
    pub fn conflict_free(&self) -> bool {
        self.worst_after <= 1.0 + 1e-9
    }
}

/// Worst-warp ways over every shared access to `array` in `kernel`;
/// `None` if one of them is unknown.
fn worst_ways(a: &warplint_analyzer::FileAnalysis, kernel: &str, array: &str) -> Option<f64> {
    let mut worst: f64 = 0.0;
    let mut any = false;
    for r in &a.reports {
        if r.kernel_name != kernel || r.array != array || r.space != Space::Shared {
            continue;
        }
        if r.status == Status::Unknown {
            return None;
        }
        if let Some(Cost::Shared(s)) = &r.cost {
            worst = worst.max(s.max_ways);
            any = true;
        }
    }
    any.then_some(worst)
}

fn replacement(size_text: &str, pad: u64) -> String {
    match size_text.trim().parse::<u64>() {
        Ok(n) => (n + pad).to_string(),
        Err(_) => format!("{} + {pad}", size_text.trim()),
    }
}

/// Plans the padding of object `obj` of kernel `kernel` (indices into the
/// analysed program), or `None` when the array is one-dimensional, its
/// dimension is not written in the file, or no padding helps.
pub fn find(ctx: &Context, kernel: usize, obj: usize) -> Option<PaddingPlan> {
    let k = ctx.analysis.program.kernels.get(kernel)?;
    let o = k.objects.get(obj)?;
    if o.space != Space::Shared || o.dims.len() < 2 {
        return None;
    }
    let dim: Span = o.inner_dim?;
    let size_text = String::from_utf8_lossy(ctx.source.get(dim.start..dim.end)?).into_owned();
    let before = worst_ways(ctx.analysis, &k.display_name, &o.name)?;
    if before <= 1.0 + 1e-9 {
        return None;
    }
    let mut options = ctx.options.clone();
    options.frontend.only_kernel = Some(k.name.clone());
    let mut best: Option<(f64, u64)> = None;
    for pad in 1..=MAX_PAD {
        let new_size = replacement(&size_text, pad);
        let mut edited = Vec::with_capacity(ctx.source.len() + 8);
        edited.extend_from_slice(&ctx.source[..dim.start]);
        edited.extend_from_slice(new_size.as_bytes());
        edited.extend_from_slice(&ctx.source[dim.end..]);
        let after = analyze(&edited, ctx.model, &options);
        let Some(w) = worst_ways(&after, &k.display_name, &o.name) else {
            continue;
        };
        if best.is_none_or(|(bw, _)| w < bw - 1e-9) {
            best = Some((w, pad));
        }
        if w <= 1.0 + 1e-9 {
            break;
        }
    }
    let (after, pad) = best?;
    if after >= before - 1e-9 {
        return None;
    }
    let new_size = replacement(&size_text, pad);
    let rel = dim.start.checked_sub(o.decl.start)?..dim.end.checked_sub(o.decl.start)?;
    let decl = &o.decl_text;
    let new_decl = match (decl.get(..rel.start), decl.get(rel.end..)) {
        (Some(a), Some(b)) => format!("{a}{new_size}{b}"),
        _ => return None,
    };
    Some(PaddingPlan {
        pad,
        edit: Edit {
            span: dim,
            content: new_size,
        },
        new_decl,
        worst_before: before,
        worst_after: after,
    })
}
