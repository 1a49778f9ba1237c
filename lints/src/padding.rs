//! The padding fix for a conflicting shared array: the smallest number of
//! extra elements on the innermost dimension that makes every access to
//! the array in its kernel conflict-free (or, failing that, the one that
//! minimises the worst), found by editing the declaration and re-running
//! the whole analysis on the edited source.

use warplint_analyzer::ir::{Kernel, Space, Span};
use warplint_analyzer::symbolic::Cost;
use warplint_analyzer::{analyze, Status};

use crate::{Context, Edit};

/// The fix search's re-analyses left for one file
/// (`budget::MAX_FIX_REANALYSES_PER_FILE`), and whether a search stopped
/// because none was left.
#[derive(Clone, Copy, Debug)]
pub struct FixBudget {
    pub left: u32,
    pub ran_out: bool,
}

impl Default for FixBudget {
    fn default() -> Self {
        FixBudget {
            left: warplint_analyzer::budget::MAX_FIX_REANALYSES_PER_FILE,
            ran_out: false,
        }
    }
}

impl FixBudget {
    /// Takes one re-analysis; `false` (and `ran_out` set) when none is left.
    pub(crate) fn take(&mut self) -> bool {
        if self.left == 0 {
            self.ran_out = true;
            return false;
        }
        self.left -= 1;
        true
    }
}

/// Candidate paddings tried, in elements (`budget::MAX_PAD_ELEMENTS`).
pub const MAX_PAD: u64 = warplint_analyzer::budget::MAX_PAD_ELEMENTS;

#[derive(Clone, Debug, PartialEq)]
pub struct PaddingPlan {
    /// Extra elements on the innermost dimension.
    pub pad: u64,
    pub edit: Edit,
    /// The same change where the dimension is written again (a Rust
    /// static's initializer: `MemObject::dim_copies`).
    pub also: Vec<Edit>,
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

/// The reports on shared accesses to `array` in `kernel`.
fn array_reports<'a>(
    a: &'a warplint_analyzer::FileAnalysis,
    kernel: &'a str,
    array: &'a str,
) -> impl Iterator<Item = &'a warplint_analyzer::AccessReport> {
    a.reports
        .iter()
        .filter(move |r| r.kernel_name == kernel && r.array == array && r.space == Space::Shared)
}

/// Worst-warp ways over every shared access to `array` in `kernel`;
/// `None` if one of them is unknown.
fn worst_ways(a: &warplint_analyzer::FileAnalysis, kernel: &str, array: &str) -> Option<f64> {
    let mut worst: f64 = 0.0;
    let mut any = false;
    for r in array_reports(a, kernel, array) {
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

/// A lower bound on the worst n-way degree of the array padded by `pad`
/// elements, without re-analysing: each access's worst warp of the
/// unpadded analysis, its lanes' offsets read as `[row][column]` of the
/// array (`row * inner + column`) and moved to `row * (inner + pad) +
/// column`, costed by the model. `None` when that reading does not hold
/// (an offset below the array, not on an element, an unknown dimension).
/// The same warp runs in the padded kernel when its indices do not
/// depend on the dimension (the usual `tile[r][c]`), so a candidate whose
/// bound is no better than the best so far cannot be better: it is not
/// re-analysed. The bound only rejects; a candidate it lets through is
/// re-analysed in full, and only that analysis accepts it.
fn padded_worst_bound(ctx: &Context, k: &Kernel, obj: usize, pad: u64) -> Option<f64> {
    let o = k.objects.get(obj)?;
    let inner = (*o.dims.last()?)? as i64;
    let elem = o.elem_size as i64;
    if inner <= 0 || elem <= 0 {
        return None;
    }
    // A pad that moves rows off an unrolled access's alignment changes
    // the instruction nvcc emits (narrower accesses): no bound.
    let misaligns = k.accesses.iter().any(|a| {
        a.obj == obj && a.unrolled > 1 && !(pad * o.elem_size).is_multiple_of(u64::from(a.width))
    });
    if misaligns {
        return None;
    }
    let mut worst: f64 = 0.0;
    for r in array_reports(ctx.analysis, &k.display_name, &o.name) {
        let sample = r.worst.as_ref()?;
        let mut lanes = sample.lanes;
        for a in lanes.iter_mut().flatten() {
            if *a < 0 {
                return None;
            }
            let (q, within) = (*a / elem, *a % elem);
            let (row, col) = (q / inner, q % inner);
            *a = row
                .checked_mul(inner.checked_add(pad as i64)?)?
                .checked_add(col)?
                .checked_mul(elem)?
                .checked_add(within)?;
        }
        let c = ctx.model.shared(&lanes, r.width);
        if c.ideal > 0 {
            worst = worst.max(c.wavefronts as f64 / c.ideal as f64);
        }
    }
    Some(worst)
}

/// Candidate pads up to `max`, in elements: multiples of the widest access
/// the source writes to the array, so that a vector access (`float4`,
/// 16-byte casts) stays aligned: a pad that misaligns it is not a fix (an
/// unrolled loop nvcc merged only becomes narrower accesses, re-analysed).
fn pads(k: &Kernel, obj: usize, max: u64) -> impl Iterator<Item = u64> {
    let elem = k.objects.get(obj).map_or(1, |o| o.elem_size.max(1));
    let widest = k
        .accesses
        .iter()
        .filter(|a| a.obj == obj)
        .map(|a| u64::from(a.width / a.unrolled.max(1)))
        .max()
        .unwrap_or(1);
    let step = (widest / elem).max(1);
    (1..=max / step).map(move |i| i * step)
}

/// The dimension `size_text` grown by `pad`: a literal is summed
/// (`32` -> `33`), a trailing `+ N` grows (`TILE + 1` -> `TILE + 2`,
/// `16 + 1` -> `16 + 32`), anything else gets `+ pad`, in parentheses when
/// an operator in it binds less tightly than `+` (`1 << LOG` ->
/// `(1 << LOG) + 1`, not `1 << LOG + 1`).
fn replacement(size_text: &str, pad: u64) -> String {
    let text = size_text.trim();
    if let Ok(n) = text.parse::<u64>() {
        if let Some(sum) = n.checked_add(pad) {
            return sum.to_string();
        }
    }
    let looser = ["<<", ">>", "<", ">", "=", "&", "|", "^", "?", ":", ","];
    if looser.iter().any(|op| text.contains(op)) {
        return format!("({text}) + {pad}");
    }
    if let Some((head, tail)) = text.rsplit_once('+') {
        let (head, tail) = (head.trim_end(), tail.trim());
        if let (Ok(n), false) = (tail.parse::<u64>(), head.is_empty()) {
            let ends_in_operator = head.ends_with(['+', '-', '*', '/', '%', '(']);
            if let (Some(sum), false) = (n.checked_add(pad), ends_in_operator) {
                return format!("{head} + {sum}");
            }
        }
    }
    format!("{text} + {pad}")
}

/// The candidate replaces `start..end` of the file with `len` bytes: the
/// front end reparses the analysed tree incrementally.
fn reparse(
    ctx: &Context,
    start: usize,
    end: usize,
    len: usize,
) -> Option<warplint_analyzer::frontend::Reparse> {
    Some(warplint_analyzer::frontend::Reparse {
        base: ctx.analysis.parsed.clone()?,
        start,
        old_end: end,
        new_end: start + len,
    })
}

/// Plans the padding of object `obj` of kernel `kernel` (indices into the
/// analysed program), or `None` when the array is one-dimensional, its
/// dimension is not written in the file, or no padding helps.
pub fn find(
    ctx: &Context,
    kernel: usize,
    obj: usize,
    budget: &mut FixBudget,
) -> Option<PaddingPlan> {
    let k = ctx.analysis.program.kernels.get(kernel)?;
    let o = k.objects.get(obj)?;
    if o.space != Space::Shared || o.dims.len() < 2 {
        return None;
    }
    // Only the analysed file is edited (not a header it includes).
    let dim: Span = o.inner_dim.filter(|d| d.file == 0)?;
    let copies: Vec<Span> = o.dim_copies.clone();
    if copies.iter().any(|c| c.file != 0) {
        return None;
    }
    let size_text = String::from_utf8_lossy(ctx.source.get(dim.start..dim.end)?).into_owned();
    let before = worst_ways(ctx.analysis, &k.display_name, &o.name)?;
    if before <= 1.0 + 1e-9 {
        return None;
    }
    let mut options = ctx.options.clone();
    options.frontend.only_kernel = Some(k.name.clone());
    options.engine.only_array = Some(o.name.clone());
    let mut best: Option<(f64, u64)> = None;
    // A candidate is kept only when it beats the best so far (at first,
    // the array as written): the engine stops at the first warp that
    // shows it cannot.
    let stop_above = |best: Option<(f64, u64)>| {
        let limit = best.map_or(before, |(w, _)| w) - 1e-9;
        Some((o.name.clone(), limit))
    };
    // Pads past one sweep of the banks repeat earlier ones.
    let max_pad = MAX_PAD.min((ctx.model.bank_row_bytes() / o.elem_size.max(1)).max(1));
    for pad in pads(k, obj, max_pad) {
        let limit = best.map_or(before, |(w, _)| w) - 1e-9;
        if padded_worst_bound(ctx, k, obj, pad).is_some_and(|b| b >= limit) {
            continue;
        }
        if !budget.take() {
            return None;
        }
        let new_size = replacement(&size_text, pad);
        options.engine.stop_above_ways = stop_above(best);
        let edited = edit_all(ctx.source, dim, &copies, pad)?;
        options.frontend.reparse = if copies.is_empty() {
            reparse(ctx, dim.start, dim.end, new_size.len())
        } else {
            None
        };
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
    let also = copies
        .iter()
        .map(|c| {
            let text = String::from_utf8_lossy(ctx.source.get(c.start..c.end)?).into_owned();
            Some(Edit {
                span: *c,
                content: replacement(&text, pad),
            })
        })
        .collect::<Option<Vec<Edit>>>()?;
    let new_decl = also
        .iter()
        .filter(|e| e.span.start >= o.decl.start && e.span.end <= o.decl.end)
        .try_fold(new_decl, |d, e| {
            // The copies lie after the dimension: offsets shift by its edit.
            let shift = new_size.len() as isize - (dim.end - dim.start) as isize;
            let a = (e.span.start - o.decl.start).checked_add_signed(shift)?;
            let b = (e.span.end - o.decl.start).checked_add_signed(shift)?;
            Some(format!("{}{}{}", d.get(..a)?, e.content, d.get(b..)?))
        })?;
    Some(PaddingPlan {
        pad,
        also,
        edit: Edit {
            span: dim,
            content: new_size,
        },
        new_decl,
        worst_before: before,
        worst_after: after,
    })
}

/// `source` with the dimension at `dim` and its `copies` (all after it)
/// padded by `pad`.
fn edit_all(source: &[u8], dim: Span, copies: &[Span], pad: u64) -> Option<Vec<u8>> {
    let mut spans: Vec<Span> = std::iter::once(dim).chain(copies.iter().copied()).collect();
    spans.sort_by_key(|s| s.start);
    let mut out = Vec::with_capacity(source.len() + 8 * spans.len());
    let mut at = 0;
    for s in spans {
        if s.start < at || s.end < s.start {
            return None;
        }
        let text = String::from_utf8_lossy(source.get(s.start..s.end)?).into_owned();
        out.extend_from_slice(source.get(at..s.start)?);
        out.extend_from_slice(replacement(&text, pad).as_bytes());
        at = s.end;
    }
    out.extend_from_slice(source.get(at..)?);
    Some(out)
}

/// A named integer constant defined in the file: `#define PITCH 32` or
/// `const int PITCH = 32;` (also `constexpr`), with where its value is.
#[derive(Clone, Debug, PartialEq)]
pub struct NamedConstant {
    pub name: String,
    pub value: u64,
    /// Byte range of the value literal.
    pub start: usize,
    pub end: usize,
    /// The whole definition line, for messages.
    pub line: String,
}

/// Finds the definition of `name` in `source`.
pub fn find_constant(source: &[u8], name: &str) -> Option<NamedConstant> {
    let text = std::str::from_utf8(source).ok()?;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let start_of_line = offset;
        offset += line.len();
        let t = line.trim_start();
        let lead = line.len() - t.len();
        let value_at = (|| {
            if let Some(rest) = t.strip_prefix("#define") {
                let after_name = rest.trim_start().strip_prefix(name)?;
                if !after_name.starts_with([' ', '\t']) {
                    return None;
                }
                let v = after_name.trim_start();
                Some(lead + "#define".len() + (rest.len() - v.len()))
            } else if t.contains("const") {
                let p = t.find(name)?;
                let after = &t[p + name.len()..];
                let after_eq = after.trim_start().strip_prefix('=')?;
                let v = after_eq.trim_start();
                Some(lead + p + name.len() + (after.len() - v.len()))
            } else {
                None
            }
        })();
        let Some(at) = value_at else { continue };
        let digits: String = line[at..]
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        if digits.is_empty() {
            continue;
        }
        let value = digits.parse().ok()?;
        return Some(NamedConstant {
            name: name.to_string(),
            value,
            start: start_of_line + at,
            end: start_of_line + at + digits.len(),
            line: line.trim().to_string(),
        });
    }
    None
}

/// Names that multiply something in the subscripts of `array` in `text`
/// (`s[r * PITCH + c]`): the candidates for a pitch. The access's text can
/// be a whole statement (`s[i] = f(RADIUS)`); a name outside the brackets,
/// or one that is only added (`s[i + RADIUS]`), is not a pitch, and
/// raising it would change what the kernel computes.
fn pitch_names(text: &str, array: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(array) {
        let before_ok = rest[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        let after = rest[at + array.len()..].trim_start();
        rest = &rest[at + array.len()..];
        if !before_ok || !after.starts_with('[') {
            continue;
        }
        let mut depth = 0usize;
        let mut end = after.len();
        for (i, c) in after.char_indices() {
            match c {
                '[' => depth += 1,
                ']' => {
                    depth -= 1;
                    if depth == 0 {
                        end = i;
                        break;
                    }
                }
                _ => {}
            }
        }
        multiplied_names(&after[1..end.max(1)], &mut out);
    }
    out
}

/// Identifiers in `subscript` with a `*` right before or after them.
fn multiplied_names(subscript: &str, out: &mut Vec<String>) {
    let b = subscript.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i] as char;
        if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let prev = subscript[..start].trim_end().ends_with('*');
            let next = subscript[i..].trim_start().starts_with('*');
            let name = &subscript[start..i];
            if (prev || next) && !out.iter().any(|n| n == name) {
                out.push(name.to_string());
            }
        } else {
            i += 1;
        }
    }
}

/// A new pitch for a 1-D array indexed as `r * PITCH + c`: the smallest
/// increase of a named constant used in the array's indices that makes
/// every access to the array conflict-free without making any other
/// shared access in the file worse.
pub fn find_pitch(
    ctx: &Context,
    kernel: usize,
    obj: usize,
    budget: &mut FixBudget,
) -> Option<(NamedConstant, PaddingPlan)> {
    let k = ctx.analysis.program.kernels.get(kernel)?;
    let o = k.objects.get(obj)?;
    if o.space != Space::Shared || o.dims.len() != 1 {
        return None;
    }
    let before = worst_ways(ctx.analysis, &k.display_name, &o.name)?;
    if before <= 1.0 + 1e-9 {
        return None;
    }
    let others_before = all_shared_worst(ctx.analysis, &k.display_name, &o.name);
    // Only a conflict-free candidate is kept: the engine stops analysing
    // the array at the first warp that conflicts.
    let mut options = ctx.options.clone();
    options.engine.stop_above_ways = Some((o.name.clone(), 1.0 + 1e-9));
    let mut names = Vec::new();
    for a in k.accesses.iter().filter(|a| a.obj == obj) {
        for id in pitch_names(&a.text, &o.name) {
            if !names.contains(&id) {
                names.push(id);
            }
        }
    }
    for name in names {
        let Some(c) = find_constant(ctx.source, &name) else {
            continue;
        };
        for pad in pads(k, obj, MAX_PAD) {
            if !budget.take() {
                return None;
            }
            let value = (c.value + pad).to_string();
            let mut edited = Vec::with_capacity(ctx.source.len() + 4);
            edited.extend_from_slice(&ctx.source[..c.start]);
            edited.extend_from_slice(value.as_bytes());
            edited.extend_from_slice(&ctx.source[c.end..]);
            options.frontend.reparse = reparse(ctx, c.start, c.end, value.len());
            let after = analyze(&edited, ctx.model, &options);
            let Some(w) = worst_ways(&after, &k.display_name, &o.name) else {
                continue;
            };
            if w > 1.0 + 1e-9 {
                continue;
            }
            let others_after = all_shared_worst(&after, &k.display_name, &o.name);
            let worse = others_after.iter().any(|(key, w2)| {
                others_before
                    .iter()
                    .find(|(k2, _)| k2 == key)
                    .is_none_or(|(_, w1)| *w2 > *w1 + 1e-9)
            });
            if worse {
                continue;
            }
            let span = line_col(ctx.source, c.start, c.end);
            let new_line = c.line.replacen(&c.value.to_string(), &value, 1);
            return Some((
                c.clone(),
                PaddingPlan {
                    also: Vec::new(),
                    pad,
                    edit: Edit {
                        span,
                        content: value,
                    },
                    new_decl: new_line,
                    worst_before: before,
                    worst_after: w,
                },
            ));
        }
    }
    None
}

/// Worst ways of every other shared array access in the file.
fn all_shared_worst(
    a: &warplint_analyzer::FileAnalysis,
    kernel: &str,
    array: &str,
) -> Vec<((String, String, usize), f64)> {
    a.reports
        .iter()
        .filter(|r| r.space == Space::Shared && !(r.kernel_name == kernel && r.array == array))
        .filter_map(|r| match &r.cost {
            Some(Cost::Shared(s)) => Some((
                (r.kernel_name.clone(), r.array.clone(), r.span.line as usize),
                s.max_ways,
            )),
            _ => None,
        })
        .collect()
}

/// 1-based line/column of a byte range (for edits outside declarations).
fn line_col(source: &[u8], start: usize, end: usize) -> Span {
    let pos = |o: usize| {
        let before = &source[..o.min(source.len())];
        let line = before.iter().filter(|b| **b == b'\n').count() as u32 + 1;
        let line_start = before
            .iter()
            .rposition(|b| *b == b'\n')
            .map(|p| p + 1)
            .unwrap_or(0);
        let col = String::from_utf8_lossy(&source[line_start..o.min(source.len())])
            .chars()
            .count() as u32
            + 1;
        (line, col)
    };
    let (line, column) = pos(start);
    let (end_line, end_column) = pos(end);
    Span {
        file: 0,
        start,
        end,
        line,
        column,
        end_line,
        end_column,
    }
}

#[cfg(test)]
mod tests {
    use super::{padded_worst_bound, pitch_names, worst_ways};
    use crate::{Context, Thresholds};
    use warplint_analyzer::hardware::Arch;
    use warplint_analyzer::{analyze, Options};

    /// Kernels indexing a shared array `[row][column]` with indices that
    /// do not depend on its inner dimension `{C}`: the bound computed from
    /// the unpadded analysis never exceeds what re-analysing the padded
    /// kernel finds, for every candidate pad, on two architectures.
    #[test]
    fn the_padding_bound_never_exceeds_the_reanalysis() {
        let kernels = [
            ("tile", 32, "__global__ void k(float *o, const float *i) {\n __shared__ float tile[32][{C}];\n \
              for (int j = 0; j < 32; j += 8) tile[threadIdx.y + j][threadIdx.x] = i[threadIdx.x];\n \
              __syncthreads();\n for (int j = 0; j < 32; j += 8) o[threadIdx.x] = tile[threadIdx.x][threadIdx.y + j];\n}\n\
              int main() { k<<<1, dim3(32, 8)>>>(0, 0); }\n"),
            ("halo", 18, "__global__ void k(float *o) {\n __shared__ float halo[18][{C}];\n \
              halo[threadIdx.y + 1][threadIdx.x + 1] = 1.0f;\n __syncthreads();\n \
              o[0] = halo[threadIdx.y][threadIdx.x + 2] + halo[threadIdx.y + 2][threadIdx.x];\n}\n\
              int main() { k<<<1, dim3(16, 16)>>>(0); }\n"),
            ("Bs", 16, "__global__ void k(float *o) {\n __shared__ float Bs[16][{C}];\n \
              Bs[threadIdx.y][threadIdx.x] = 0.0f;\n __syncthreads();\n float a = 0.0f;\n \
              for (int q = 0; q < 16; ++q) a += Bs[q][threadIdx.x] + Bs[threadIdx.x][q];\n o[0] = a;\n}\n\
              int main() { k<<<1, dim3(16, 16)>>>(0); }\n"),
            ("s", 8, "__global__ void k(double *o) {\n __shared__ double s[4][8][{C}];\n \
              s[threadIdx.x % 4][threadIdx.x / 4 % 8][threadIdx.y] = 0.0;\n __syncthreads();\n \
              o[0] = s[threadIdx.y % 4][threadIdx.x % 8][threadIdx.x / 8];\n}\n\
              int main() { k<<<1, dim3(32, 4)>>>(0); }\n"),
        ];
        for arch in ["sm_90", "sm_35"] {
            let arch = Arch::parse(arch).unwrap();
            let model = arch.model().unwrap();
            let options = Options::default();
            let thresholds = Thresholds::default();
            for (array, inner, text) in kernels {
                let src = |c: u64| text.replace("{C}", &c.to_string());
                let base = src(inner);
                let analysis = analyze(base.as_bytes(), model.as_ref(), &options);
                let ctx = Context {
                    source: base.as_bytes(),
                    analysis: &analysis,
                    model: model.as_ref(),
                    options: &options,
                    arch,
                    thresholds: &thresholds,
                };
                let k = &analysis.program.kernels[0];
                let obj = k.objects.iter().position(|o| o.name == array).unwrap();
                for pad in 0..=32 {
                    let Some(bound) = padded_worst_bound(&ctx, k, obj, pad) else {
                        // Only where the pad misaligns a merged loop.
                        let merged = k.accesses.iter().any(|a| a.obj == obj && a.unrolled > 1);
                        assert!(merged && pad % 4 != 0, "no bound for {array} + {pad}");
                        continue;
                    };
                    let padded = analyze(src(inner + pad).as_bytes(), model.as_ref(), &options);
                    let actual = worst_ways(&padded, &k.display_name, array).unwrap();
                    assert!(
                        bound <= actual + 1e-9,
                        "{array} padded by {pad} on {arch:?}: bound {bound}, re-analysis {actual}"
                    );
                    // Unpadded, the bound is the analysis's own worst warp.
                    if pad == 0 {
                        assert!(
                            (bound - actual).abs() < 1e-9,
                            "{array}: {bound} vs {actual}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn a_padded_dimension_reads_as_its_author_would_write_it() {
        use super::replacement;
        assert_eq!(replacement("32", 1), "33");
        assert_eq!(replacement(" TILE ", 1), "TILE + 1");
        assert_eq!(replacement("TILE + 1", 1), "TILE + 2");
        assert_eq!(replacement("16 + 1", 31), "16 + 32");
        assert_eq!(replacement("BM+4", 4), "BM + 8");
        assert_eq!(replacement("N * 2", 1), "N * 2 + 1");
        assert_eq!(replacement("N - 1", 2), "N - 1 + 2");
        assert_eq!(replacement("1 << LOG", 1), "(1 << LOG) + 1");
        assert_eq!(replacement("A + B", 1), "A + B + 1");
        assert_eq!(replacement("(A + 1)", 1), "(A + 1) + 1");
        assert_eq!(replacement("N * +1", 1), "N * +1 + 1");
    }

    #[test]
    fn pitch_names_multiply_inside_the_subscript() {
        assert_eq!(pitch_names("s[r * PITCH + c]", "s"), ["r", "PITCH"]);
        assert_eq!(
            pitch_names("s[(ty) * W + tx] = in[tx * RADIUS]", "s"),
            ["W"]
        );
        assert!(pitch_names("s[i + RADIUS] = f(2 * RADIUS)", "s").is_empty());
        assert!(pitch_names("sum[k * N]", "s").is_empty());
        assert_eq!(pitch_names("x = s [a * B][c]", "s"), ["a", "B"]);
    }
}
