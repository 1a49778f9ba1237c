//! SM001's advice where no padding or pitch fix was verified, computed from
//! the worst warp's lane addresses: the stride between neighbouring lanes,
//! or the pitch between the rows of a 2-D block's lanes, and the change
//! that helps, re-checked on that warp with the hardware model. Never a
//! fixed sentence that can contradict the conflict it is attached to.

use warplint_analyzer::hardware::{Lanes, MemoryModel, WARP};
use warplint_analyzer::ir::{Access, Atom, BinOp, Expr, ExprKind, Kernel, Op};
use warplint_analyzer::symbolic::{linear, WarpSample};

use crate::fmt_num;

/// Word steps tried for a new stride or pitch (up to a whole sweep of the
/// 32 banks).
const MAX_WORD_STEPS: i64 = 32;

/// The advice for `sample` (a warp of a `width`-byte access, `block_x`
/// threads per row), or `None` when neither a lane stride nor a row pitch
/// explains it.
pub fn bank_conflict(
    model: &dyn MemoryModel,
    sample: &WarpSample,
    width: u32,
    block_x: u64,
) -> Option<String> {
    let now = ways(model, &sample.lanes, width)?;
    if now < 2.0 {
        return None;
    }
    let active: Vec<(i64, i64)> = (0..WARP)
        .filter_map(|l| sample.lanes[l].map(|o| (l as i64, o)))
        .collect();
    let unit = i64::from(width).max(4);
    if let Some(s) = lane_stride(&active) {
        // A wider step in the lanes' direction (a descending index stays
        // descending).
        let (step, after) = best(now, unit, |d| {
            let lanes = relaid(&active, |l, o0, l0| o0 + (s + d * s.signum()) * (l - l0));
            ways(model, &lanes, width)
        })?;
        let apart = match wrap(s) {
            1 => "every lane falls on the same bank".to_string(),
            n => format!("lanes {n} apart fall on the same bank"),
        };
        return Some(format!(
            "neighbouring lanes are {} bytes apart, so {apart}: a stride of {} bytes ({} more) \
             makes this warp {}-way",
            s.abs(),
            s.abs() + step,
            match step {
                4 => "one word".to_string(),
                _ => format!("{step} bytes"),
            },
            fmt_num(after)
        ));
    }
    // Rows of the block's `x` threads, else the first grouping of 2, 4, 8
    // or 16 lanes whose offsets are rows (a wmma fragment's rows are 4
    // lanes).
    let bx_block = i64::try_from(block_x)
        .ok()
        .filter(|b| *b > 1 && *b < WARP as i64 && WARP as i64 % b == 0);
    let (bx, (a, pitch)) = bx_block
        .into_iter()
        .chain([2, 4, 8, 16])
        .find_map(|bx| rows(&active, bx).map(|r| (bx, r)))?;
    let (step, after) = best(now, unit, |d| {
        let lanes = relaid(&active, |l, o0, _| {
            o0 + a * (l % bx) + (pitch + d) * (l / bx)
        });
        ways(model, &lanes, width)
    })?;
    let row = model.bank_row_bytes() as i64;
    // The fewest rows apart that come back to the same banks, when some do
    // within the warp (else the rows only overlap).
    let rows_in_warp = WARP as i64 / bx;
    let same = (1..rows_in_warp).find(|r| (r * pitch).rem_euclid(row) == 0);
    let why = match same {
        Some(r) => format!("so lanes `l` and `l + {}` fall on the same banks", r * bx),
        None => "so rows overlap on the same banks".to_string(),
    };
    Some(format!(
        "rows of {bx} lanes are {pitch} bytes apart ({} mod {row}), {why}: a row pitch of {} \
         bytes ({} mod {row}) makes this warp {}-way",
        pitch.rem_euclid(row),
        pitch + step,
        (pitch + step).rem_euclid(row),
        fmt_num(after)
    ))
}

/// GM001's help where each lane walks its own run of consecutive elements
/// through a loop (`for k: out[t * 8 + k]`) or neighbouring accesses
/// (`p[4 * t] + p[4 * t + 1] + …`): threadIdx.x already moves
/// fastest, and the waste is the scalar width. The widest vector access
/// (8 or 16 bytes) the worst warp's lanes are aligned for, with the
/// sectors it needs there, when that is better.
pub fn vector_chunk(
    model: &dyn MemoryModel,
    k: &Kernel,
    a: &Access,
    sample: &WarpSample,
    width: u32,
    dialect: crate::wording::dialect::Dialect,
) -> Option<String> {
    let verb = match a.op {
        Op::Load => "reads",
        Op::Store => "writes",
        _ => "updates",
    };
    let w = i64::from(width);
    // A variable of the innermost loop that steps by one and moves the
    // address by one element.
    let walks = a.loops.last().and_then(|&l| k.loops.get(l)).is_some_and(|lp| {
        lp.vars.iter().zip(&lp.next).any(|(v, next)| {
            let by_one = matches!(next.kind(), ExprKind::Bin(BinOp::Add, x, c)
                if matches!(x.kind(), ExprKind::Atom(Atom::LoopVar(y)) if y == v) && c.as_const() == Some(1));
            by_one
                && linear::coefficient(&a.offset, Atom::LoopVar(*v)).and_then(|c| c.as_const())
                    == Some(w)
        })
    });
    // Or straight-line accesses of the same kind to the neighbouring
    // elements (`p[4 * t]`, `p[4 * t + 1]`, …): how far before this one
    // their run starts.
    let apart: Vec<i64> = k
        .accesses
        .iter()
        .filter(|b| b.obj == a.obj && b.op == a.op && b.width == a.width && b.loops == a.loops)
        .filter_map(|b| constant_apart(&b.offset, &a.offset))
        .filter(|d| *d != 0 && d % w == 0 && d.abs() < 16)
        .collect();
    if !walks && apart.is_empty() {
        return None;
    }
    // The bytes the neighbours cover, this access's included: one
    // contiguous run.
    let mut covered = apart;
    covered.push(0);
    covered.sort_unstable();
    covered.dedup();
    let contiguous = covered.windows(2).all(|p| p[1] - p[0] == w);
    let run_bytes = covered.len() as i64 * w;
    let back = if walks { 0 } else { covered[0] };
    let mut run_lanes = sample.lanes;
    for o in run_lanes.iter_mut().flatten() {
        *o += back;
    }
    let active: Vec<(i64, i64)> = (0..WARP)
        .filter_map(|l| run_lanes[l].map(|o| (l as i64, o)))
        .collect();
    let chunk = lane_stride(&active)?.abs();
    if chunk <= w || !(walks || (contiguous && run_bytes == chunk)) {
        return None;
    }
    let now = model.global(&sample.lanes, width);
    for vector in [16i64, 8] {
        if vector <= w || chunk % vector != 0 || active.iter().any(|(_, o)| o % vector != 0) {
            continue;
        }
        let wide = model.global(&run_lanes, vector as u32);
        // Per element moved: a vector access moves `vector / w` of them.
        let per = |c: u32, bytes: i64| f64::from(c) / bytes as f64;
        if per(wide.sectors, vector) < per(now.sectors, w) - 1e-9 {
            let fewer = per(now.sectors, w) / per(wide.sectors, vector);
            return Some(format!(
                "each lane {verb} its own {chunk}-byte run {w} bytes at a time: move it in \
                 {vector}-byte vectors ({}): {} sectors per request for {vector} bytes a lane, \
                 {}x fewer sectors for the run than now ({} per request for {w}); or let \
                 neighbouring lanes take neighbouring elements",
                dialect.vectors(vector),
                wide.sectors,
                fmt_num(fewer),
                now.sectors
            ));
        }
    }
    None
}

/// `x - y` where both are linear in the same atoms with the same
/// coefficients (`16 t + 4` and `16 t`: 4).
fn constant_apart(x: &Expr, y: &Expr) -> Option<i64> {
    let mut atoms = x.atoms();
    atoms.extend(y.atoms());
    atoms.sort_unstable();
    atoms.dedup();
    for &a in &atoms {
        let (cx, cy) = (linear::coefficient(x, a)?, linear::coefficient(y, a)?);
        if !cx.same(&cy) {
            return None;
        }
    }
    let cx = linear::zeroed(x, &atoms).as_const()?;
    let cy = linear::zeroed(y, &atoms).as_const()?;
    Some(cx.wrapping_sub(cy))
}

/// The n-way degree of one warp's lanes.
fn ways(model: &dyn MemoryModel, lanes: &Lanes, width: u32) -> Option<f64> {
    let c = model.shared(lanes, width);
    (c.ideal > 0).then(|| f64::from(c.wavefronts) / f64::from(c.ideal))
}

/// The byte step between consecutive active lanes, when every active lane
/// is on it (two lanes at least, a step not 0).
fn lane_stride(active: &[(i64, i64)]) -> Option<i64> {
    let (&(l0, o0), rest) = active.split_first()?;
    let (l1, o1) = *rest.first()?;
    let d = o1 - o0;
    if d == 0 || d % (l1 - l0) != 0 {
        return None;
    }
    let s = d / (l1 - l0);
    rest.iter()
        .all(|(l, o)| *o == o0 + s * (l - l0))
        .then_some(s)
}

/// `offset = o0 + a * (l % bx) + pitch * (l / bx)` for every active lane
/// (lane 0 active, more than one row): `(a, pitch)`.
fn rows(active: &[(i64, i64)], bx: i64) -> Option<(i64, i64)> {
    let at = |l: i64| active.iter().find(|(x, _)| *x == l).map(|(_, o)| *o);
    let o0 = at(0)?;
    let a = at(1)? - o0;
    let pitch = at(bx)? - o0;
    active
        .iter()
        .all(|(l, o)| *o == o0 + a * (l % bx) + pitch * (l / bx))
        .then_some((a, pitch))
}

/// Lanes at the offsets `f(lane, first offset, first lane)` gives.
fn relaid(active: &[(i64, i64)], f: impl Fn(i64, i64, i64) -> i64) -> Lanes {
    let mut lanes: Lanes = [None; WARP];
    let Some(&(l0, o0)) = active.first() else {
        return lanes;
    };
    for &(l, _) in active {
        lanes[l as usize] = Some(f(l, o0, l0));
    }
    lanes
}

/// The smallest added step (a whole number of `unit`s: a word, or the
/// access's width so that it stays aligned) whose degree is the lowest of
/// those tried, when it is lower than `now`.
fn best(now: f64, unit: i64, degree: impl Fn(i64) -> Option<f64>) -> Option<(i64, f64)> {
    let mut found: Option<(i64, f64)> = None;
    for k in 1..=MAX_WORD_STEPS {
        let Some(w) = degree(unit * k) else {
            continue;
        };
        if found.is_none_or(|(_, b)| w < b - 1e-9) {
            found = Some((unit * k, w));
        }
    }
    found.filter(|(_, w)| *w < now - 1e-9)
}

/// Lanes after which a `stride`-byte step comes back to the same bank
/// (32 banks of 4 bytes).
fn wrap(stride: i64) -> i64 {
    let words = (stride.abs() / 4).max(1);
    let mut g = (words, WARP as i64);
    while g.1 != 0 {
        g = (g.1, g.0 % g.1);
    }
    WARP as i64 / g.0.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use warplint_analyzer::hardware::Modern;

    fn sample(offset: impl Fn(i64) -> i64) -> WarpSample {
        let mut lanes: Lanes = [None; WARP];
        for (l, slot) in lanes.iter_mut().enumerate() {
            *slot = Some(offset(l as i64));
        }
        WarpSample {
            block: [0, 0, 0],
            warp: 0,
            iterations: Vec::new(),
            lanes,
            cost: 0,
        }
    }

    /// 4-byte words 2 apart: lanes 16 apart share a bank (2-way); 3 words
    /// apart (odd) is conflict-free.
    #[test]
    fn an_even_stride_gets_the_next_odd_one() {
        let a = bank_conflict(&Modern, &sample(|l| 8 * l), 4, 256).unwrap();
        assert_eq!(
            a,
            "neighbouring lanes are 8 bytes apart, so lanes 16 apart fall on the same bank: \
             a stride of 12 bytes (one word more) makes this warp 1-way"
        );
    }

    /// SobelFilter's shape: 16 lanes per row read 4 bytes apart (banks 0-15),
    /// rows 384 bytes apart (0 mod 128): the second row is on the same
    /// banks. A pitch of 64 mod 128 bytes puts it on banks 16-31.
    #[test]
    fn rows_on_the_same_banks_get_a_pitch_of_half_a_sweep() {
        let a = bank_conflict(&Modern, &sample(|l| 4 * (l % 16) + 384 * (l / 16)), 1, 16);
        assert_eq!(
            a.as_deref(),
            Some(
                "rows of 16 lanes are 384 bytes apart (0 mod 128), so lanes `l` and `l + 16` \
                 fall on the same banks: a row pitch of 448 bytes (64 mod 128) makes this warp \
                 1-way"
            )
        );
    }

    /// Lanes on scattered words (no stride, no rows): no computed advice;
    /// nor for a warp without a conflict.
    #[test]
    fn no_advice_without_a_pattern_or_a_conflict() {
        let scattered = sample(|l| 4 * ((l * l * 7) % 61) * 32);
        assert!(ways(&Modern, &scattered.lanes, 4).unwrap() >= 2.0);
        assert_eq!(bank_conflict(&Modern, &scattered, 4, 256), None);
        assert_eq!(bank_conflict(&Modern, &sample(|l| 4 * l), 4, 256), None);
    }
}
