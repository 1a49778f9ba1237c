//! GM003 `unpitched-2d-array`.

use warplint_analyzer::hardware::{Lanes, WARP};
use warplint_analyzer::ir::{Access, Atom, Builtin, Dim, Kernel, Launch, Op, Space};
use warplint_analyzer::symbolic::eval::{eval, LaneEnv, Reads};
use warplint_analyzer::symbolic::linear::{coefficient, zeroed};

use crate::{Context, Diagnostic, Facts, Label, Lint, Rule, Severity};

pub struct Unpitched2dArray;

pub static RULE: Rule = Rule {
    code: "GM003",
    name: "unpitched-2d-array",
    summary: "a 2-D global array whose rows are not a multiple of 32 bytes apart, so warps reading a row start mid-sector",
    fixable: false,
    doc: r#"## What it does
Flags a global array read or written as rows (`a[row * width + col]`, the
lanes of a warp along `col`, consecutive elements) whose row length in
bytes, known from the launch or a constant, is not a multiple of 32: every
row but one in 32 / gcd(row bytes, 32) starts part-way into a 32-byte
sector, and a warp reading the start of such a row touches one sector more
than it needs. Named once per array, with the row pitch; GM002 reports the
misaligned accesses themselves. A width no launch gives is not reported,
nor an access whose warps start off a sector whatever the pitch (1-based
columns, `a[row * width + x + 1]`, or a stencil's neighbour `x + 1`):
padding the rows would not align them, and the finding is put on an
access of the array that padding does align.

## Why is this bad?
The CUDA programming guide (5.3.2.1.2): a 2-D array is accessed
efficiently only if its width is a multiple of the warp's access size;
`cudaMallocPitch` pads each row for that. Measured on an H200 with Nsight
Compute (`fixtures/lints/GM003/MEASURED.md`): rows of 1001 floats took
4.874 sectors per request, rows of 1024 floats 4.0; seven rows in eight
start inside a sector and their warps need 5 sectors instead of 4.

## Example
```cuda
// width = 1001 floats: rows 4004 bytes apart, 4 bytes past a multiple of 32
float v = a[y * width + x];
```

## Use instead
Allocate with `cudaMallocPitch` and index each row through the pitch it
returns, or pad the row length to a multiple of 32 bytes:
```cuda
float *row = (float *)((char *)a + y * pitch);
float v = row[x];
```"#,
};

/// The row atoms: what moves an access from one row to the next.
fn row_atoms(a: &Access) -> Vec<Atom> {
    let mut out: Vec<Atom> = a
        .offset
        .atoms()
        .into_iter()
        .filter(|x| {
            matches!(
                x,
                Atom::Builtin(Builtin::ThreadIdx(Dim::Y) | Builtin::BlockIdx(Dim::Y))
                    | Atom::LoopVar(_)
            )
        })
        .collect();
    out.dedup();
    out
}

/// `e`'s value under launch `l` where it reads nothing but constants and
/// parameters the launch gives.
fn launch_value(k: &Kernel, l: &Launch, e: &warplint_analyzer::ir::Expr) -> Option<i64> {
    let mut known = true;
    e.visit_atoms(&mut |x| {
        known &= match x {
            Atom::Param(i) => l.params.get(i as usize).copied().flatten().is_some(),
            Atom::Builtin(Builtin::BlockDim(_)) => true,
            Atom::Builtin(Builtin::GridDim(_)) => l.grid.is_some(),
            _ => false,
        }
    });
    if !known {
        return None;
    }
    let params: Vec<i64> = (0..k.params.len())
        .map(|i| l.params.get(i).copied().flatten().unwrap_or(0))
        .collect();
    let assumed = vec![false; params.len()];
    let env = LaneEnv {
        tid: [0; 3],
        bid: [0; 3],
        block: [l.block[0] as i64, l.block[1] as i64, l.block[2] as i64],
        grid: l
            .grid
            .map_or([1; 3], |g| [g[0] as i64, g[1] as i64, g[2] as i64]),
        params: &params,
        params_assumed: &assumed,
        grid_assumed: l.grid.is_none(),
        loop_vals: &[],
        data: None,
    };
    eval(e, &env, &mut Reads::default()).ok()
}

/// A misaligned row layout: the row pitch in bytes, and the row atom.
struct Rows {
    pitch: i64,
    along: &'static str,
}

/// Whether access `a` walks rows of a pitch that is not a multiple of the
/// sector, with the lanes along a row.
fn unpitched(k: &Kernel, l: &Launch, a: &Access, sector: i64) -> Option<Rows> {
    let x = coefficient(&a.offset, Atom::Builtin(Builtin::ThreadIdx(Dim::X)))?;
    if launch_value(k, l, &x)? != i64::from(a.width) || l.block[0] < WARP as u64 {
        return None;
    }
    // Where a warp starts within its row: the offset at row 0, lane 0, of
    // the first block along x (the lanes and blocks along x move it by
    // whole warps of elements). A warp that starts off a sector whatever
    // the pitch (1-based columns, `a[row * w + x + 1]`) is GM002's: padding
    // the rows would not align it (a review's polybench `correlation`).
    let rows = row_atoms(a);
    let mut along_x = rows.clone();
    along_x.extend([
        Atom::Builtin(Builtin::ThreadIdx(Dim::X)),
        Atom::Builtin(Builtin::BlockIdx(Dim::X)),
    ]);
    let start = launch_value(k, l, &zeroed(&a.offset, &along_x))?;
    if start.rem_euclid(sector) != 0 {
        return None;
    }
    rows.into_iter().find_map(|r| {
        let c = coefficient(&a.offset, r)?;
        let pitch = launch_value(k, l, &c)?;
        // A row at least a warp of elements wide, not on a sector boundary.
        let wide = pitch.abs() >= WARP as i64 * i64::from(a.width);
        let varies = match r {
            Atom::Builtin(Builtin::ThreadIdx(Dim::Y)) => l.block[1] > 1,
            Atom::Builtin(Builtin::BlockIdx(Dim::Y)) => l.grid.is_none_or(|g| g[1] > 1),
            _ => true,
        };
        let along = match r {
            Atom::Builtin(Builtin::ThreadIdx(Dim::Y)) => "threadIdx.y",
            Atom::Builtin(Builtin::BlockIdx(Dim::Y)) => "blockIdx.y",
            _ => "a loop",
        };
        (wide && varies && pitch % sector != 0).then_some(Rows { pitch, along })
    })
}

impl Lint for Unpitched2dArray {
    fn rule(&self) -> &'static Rule {
        &RULE
    }

    fn check(&self, ctx: &Context, out: &mut Vec<Diagnostic>) {
        let sector = i64::from(ctx.model.sector_bytes());
        for k in &ctx.analysis.program.kernels {
            // Once per array of a kernel.
            let mut named: Vec<usize> = Vec::new();
            for (li, l) in k.launches.iter().enumerate() {
                for a in &k.accesses {
                    let obj = &k.objects[a.obj];
                    let param = k.params.iter().position(|p| p.name == obj.name);
                    let moved = param.is_some_and(|i| l.offset_args.get(i) == Some(&true));
                    if obj.space != Space::Global
                        || a.op == Op::Atomic
                        || a.unknown.is_some()
                        || moved
                        || named.contains(&a.obj)
                    {
                        continue;
                    }
                    let Some(rows) = unpitched(k, l, a, sector) else {
                        continue;
                    };
                    named.push(a.obj);
                    out.push(diagnostic(ctx, k, li, a, &rows, sector));
                }
            }
        }
    }
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a.abs()
    } else {
        gcd(b, a % b)
    }
}

fn diagnostic(
    ctx: &Context,
    k: &Kernel,
    li: usize,
    a: &Access,
    rows: &Rows,
    sector: i64,
) -> Diagnostic {
    let obj = &k.objects[a.obj];
    let l = &k.launches[li];
    let w = i64::from(a.width);
    let elems = rows.pitch / w.max(1);
    let p = rows.pitch.abs();
    let period = sector / gcd(p, sector);
    // A warp reading the start of the first misaligned row, against one
    // reading an aligned row.
    let off = p % sector;
    let lanes = |start: i64| -> Lanes {
        let mut v: Lanes = [None; WARP];
        for (i, x) in v.iter_mut().enumerate() {
            *x = Some(start + i as i64 * w);
        }
        v
    };
    let misaligned = ctx.model.global(&lanes(off), a.width).sectors;
    let aligned = ctx.model.global(&lanes(0), a.width).sectors;
    let padded = (p + sector - 1) / sector * sector;
    let message = format!(
        "unpitched 2-D array `{}`: rows are {} bytes apart ({} elements of {} bytes), not a \
         multiple of {sector}: {} of every {period} rows start{} inside a sector, and a warp \
         reading 32 elements there needs {misaligned} sectors instead of {aligned} (kernel \
         `{}`, rows along {})",
        obj.name,
        p,
        elems.abs(),
        w,
        period - 1,
        if period == 2 { "s" } else { "" },
        k.display_name,
        rows.along
    );
    let help = format!(
        "allocate `{}` with `cudaMallocPitch` and index each row through its pitch (`(T *)((char \
         *){} + row * pitch)`), or pad the row to {} bytes ({} elements)",
        obj.name,
        obj.name,
        padded,
        padded / w.max(1)
    );
    let notes = vec![format!(
        "{}, block {}x{}x{}; the row pitch is known from constants and the launch{}; \
         allocations are assumed 256-byte aligned",
        ctx.arch,
        l.block[0],
        l.block[1],
        l.block[2],
        l.span
            .map_or(String::new(), |s| format!(" on line {}", s.line))
    )];
    Diagnostic {
        code: RULE.code,
        name: RULE.name,
        severity: Severity::Warning,
        message,
        span: a.span,
        label: format!("row 1 starts {off} bytes into a sector"),
        related: vec![Label::declaration(obj)],
        notes,
        help: Some(help),
        fix: None,
        facts: Facts {
            kernel: k.display_name.clone(),
            array: obj.name.clone(),
            arch: ctx.arch.to_string(),
            block: l.block,
            sectors: Some(f64::from(misaligned)),
            ideal_sectors: Some(f64::from(aligned)),
            status: "exact".into(),
            ..Facts::default()
        },
    }
}
