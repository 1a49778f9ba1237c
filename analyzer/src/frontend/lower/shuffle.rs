//! Warp shuffles as the index expressions they are, and inline assembly.
//!
//! `__shfl_sync(m, v, src, w)` gives each lane `v` as lane `src` of its
//! `w`-lane segment computes it; `__shfl_xor_sync` lane `lane ^ m`,
//! `__shfl_up_sync`/`__shfl_down_sync` lane `lane ∓ d` when that stays in
//! the segment, else the lane's own `v` (the CUDA Programming Guide, Warp
//! Shuffle Functions). That is `v` with the thread index of the source lane
//! substituted ([`at_lane`]): the warp's linear thread index with its lane
//! replaced, made back into `threadIdx` over `blockDim`. The same for the
//! PTX a kernel writes itself: `shfl.sync.idx.b32` and `shfl.sync.bfly.b32`
//! with the source or mask and the segment word as constants (the PTX ISA,
//! shfl.sync), and `mov.u32 %0, %laneid;`.
//!
//! A value that depends on something else that differs between lanes (a
//! loaded value, a loop variable) cannot be moved to another lane: the
//! shuffle's result is then an unknown call result. Any other inline
//! assembly assigns its outputs unknown values ([`Origin::InlineAsm`]); one
//! that synchronises or clobbers memory ends a straight-line region, as a
//! barrier does.

use tree_sitter::Node;

use super::groups::{linear, triple};
use super::{Lowerer, Src, Val};
use crate::finding::Origin;
use crate::frontend::fields::Fields;
use crate::ir::{Atom, BinOp, Builtin, Dim, Expr, ExprKind};

/// Which lane a shuffle reads, relative to the reading lane.
#[derive(Clone, Debug)]
enum Source {
    /// Lane `src % width` of the segment.
    Index(Expr),
    /// Lane `lane ^ mask`.
    Xor(Expr),
    /// Lane `lane - delta`, when that is in the segment.
    Up(Expr),
    /// Lane `lane + delta`, when that is in the segment.
    Down(Expr),
}

/// The calling thread's index within its block, made linear.
fn linear_tid() -> Expr {
    linear(&triple(Builtin::ThreadIdx), &triple(Builtin::BlockDim))
}

/// The linear thread index of the lane that `source` names in segments of
/// `width` lanes (a power of two up to 32), for the calling lane: the PTX
/// ISA's `shfl.sync` rule, with `j` the source lane and the lane's own
/// value where `j` falls outside what the mode allows (`up`: below its
/// segment; `down`, `bfly`: past its segment's last lane).
fn source_tid(source: &Source, width: i64) -> Expr {
    let t = linear_tid();
    let lane = Expr::bin(BinOp::Rem, t.clone(), Expr::konst(32));
    let first = Expr::bin(BinOp::And, lane.clone(), Expr::konst(!(width - 1) & 31));
    let last = Expr::plus(first.clone(), Expr::konst(width - 1));
    let five = |e: &Expr| Expr::bin(BinOp::And, e.clone(), Expr::konst(31));
    let (j, valid) = match source {
        Source::Index(s) => {
            let j = Expr::plus(
                first,
                Expr::bin(BinOp::And, s.clone(), Expr::konst(width - 1)),
            );
            (j, None)
        }
        Source::Xor(m) => {
            let j = Expr::bin(BinOp::Xor, lane.clone(), five(m));
            (j.clone(), Some(Expr::bin(BinOp::Le, j, last)))
        }
        Source::Up(d) => {
            let j = Expr::minus(lane.clone(), five(d));
            (j.clone(), Some(Expr::bin(BinOp::Ge, j, first)))
        }
        Source::Down(d) => {
            let j = Expr::plus(lane.clone(), five(d));
            (j.clone(), Some(Expr::bin(BinOp::Le, j, last)))
        }
    };
    let moved = Expr::plus(Expr::minus(t.clone(), lane), j);
    match valid {
        Some(v) => Expr::select(v, moved, t),
        None => moved,
    }
}

/// `e` as the thread of linear index `tid` (in the same block) computes
/// it; `None` when `e` depends on something else that may differ between
/// lanes (an unknown, a loop variable).
fn at_lane(e: &Expr, tid: &Expr) -> Option<Expr> {
    Some(match e.kind() {
        ExprKind::Const(_) => e.clone(),
        ExprKind::Atom(Atom::Builtin(Builtin::ThreadIdx(d))) => {
            let n = triple(Builtin::BlockDim);
            match d {
                Dim::X => Expr::bin(BinOp::Rem, tid.clone(), n[0].clone()),
                Dim::Y => Expr::bin(
                    BinOp::Rem,
                    Expr::bin(BinOp::Div, tid.clone(), n[0].clone()),
                    n[1].clone(),
                ),
                Dim::Z => Expr::bin(
                    BinOp::Div,
                    tid.clone(),
                    Expr::times(n[0].clone(), n[1].clone()),
                ),
            }
        }
        ExprKind::Atom(Atom::Builtin(_) | Atom::Param(_)) => e.clone(),
        ExprKind::Atom(_) => return None,
        ExprKind::Un(op, a) => Expr::un(*op, at_lane(a, tid)?),
        ExprKind::Bin(op, a, b) => Expr::bin(*op, at_lane(a, tid)?, at_lane(b, tid)?),
        ExprKind::Select(c, a, b) => {
            Expr::select(at_lane(c, tid)?, at_lane(a, tid)?, at_lane(b, tid)?)
        }
    })
}

/// The segment width a PTX `shfl.sync` packs in its `c` operand (bits
/// 8–12 hold 32 minus the width).
fn ptx_width(c: i64) -> i64 {
    32 - ((c >> 8) & 0x1f)
}

/// An integer literal of PTX or C (`0x1f`, `31`, `-1`).
fn literal(t: &str) -> Option<i64> {
    let t = t.trim();
    let (neg, t) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t),
    };
    let t = t.trim_end_matches(['u', 'U', 'l', 'L']);
    let v = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => i64::from_str_radix(h, 16).ok()?,
        None => t.parse().ok()?,
    };
    Some(if neg { -v } else { v })
}

impl<'a, 't> Lowerer<'a, 't> {
    /// `__shfl_sync` and its `_xor`/`_up`/`_down` forms (and the old ones
    /// without a mask): the value lane by lane, or `None` for another call.
    pub(super) fn shuffle_call(&mut self, short: &str, args: &[Node], src: &Src) -> Option<Val> {
        let (base, masked) = match short.strip_suffix("_sync") {
            Some(b) => (b, true),
            None => (short, false),
        };
        if !matches!(base, "__shfl" | "__shfl_xor" | "__shfl_up" | "__shfl_down") {
            return None;
        }
        let args = if masked { args.get(1..)? } else { args };
        let (value, lane) = (*args.first()?, *args.get(1)?);
        let v = self.rv(value, src);
        let v = self.as_int(v);
        let lane = self.int(lane, src);
        let width = match args.get(2) {
            Some(w) => self.int(*w, src).as_const(),
            None => Some(32),
        };
        let source = match base {
            "__shfl" => Source::Index(lane),
            "__shfl_xor" => Source::Xor(lane),
            "__shfl_up" => Source::Up(lane),
            _ => Source::Down(lane),
        };
        Some(self.shuffled(&v, &source, width, short))
    }

    /// `v` read from the lane `source` names; an unknown call result when
    /// it cannot be moved there or the width is not a power of two up to 32.
    fn shuffled(&mut self, v: &Expr, source: &Source, width: Option<i64>, callee: &str) -> Val {
        let moved = width
            .filter(|w| (1..=32).contains(w) && (*w as u64).is_power_of_two())
            .and_then(|w| at_lane(v, &source_tid(source, w)));
        match moved {
            // The lane's linear id reads threadIdx.y and .z, which are 0
            // in the blocks a kernel that reads only threadIdx.x is given:
            // the value's own reads say which dimensions the kernel uses.
            Some(e) => Val::Int(e),
            None => self.unknown_val(Origin::CallResult {
                callee: format!("{callee}()"),
            }),
        }
    }

    /// `asm("…" : outputs : inputs : clobbers)`: the shuffles and lane id
    /// it computes, else unknown outputs; a barrier, fence or memory
    /// clobber ends the straight-line region.
    pub(super) fn inline_asm(&mut self, n: Node, src: &Src) -> Val {
        let code = n
            .field("assembly_code")
            .map(|c| asm_text(&src.text(c)))
            .unwrap_or_default();
        let outputs = operands(n, "output_operands", src);
        let inputs = operands(n, "input_operands", src);
        let mut values: Vec<Option<Expr>> = Vec::new();
        for (constraint, v) in &inputs {
            let val = self.rv(*v, src);
            let int = constraint.contains('r') || constraint.contains('n');
            values.push(int.then(|| self.as_int(val)));
        }
        let clobbers = n.field("clobbers").map(|c| src.text(c)).unwrap_or_default();
        if clobbers.contains("memory")
            || ["bar.", "barrier", "fence", "membar"]
                .iter()
                .any(|b| code.contains(b))
        {
            self.fence();
        }
        if [".sync", "bar.warp"].iter().any(|w| code.contains(w)) {
            // `shfl.sync`, `vote.sync`, `match.sync`, `redux.sync`,
            // `bar.warp.sync`: the lanes of its mask meet here.
            self.warp_syncs += 1;
        }
        if code.contains("st.") || code.contains("atom") || code.contains("red.") {
            // A store the analysis does not follow may write any shared
            // value (`st.shared.u32 [%0], %1;`).
            self.forget_memory();
        }
        let instruction = code
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_string();
        let computed = self.asm_value(&code, outputs.len(), &values);
        for (i, (_, target)) in outputs.iter().enumerate() {
            let val = match (i, &computed) {
                (0, Some(v)) => v.clone(),
                _ => self.unknown_val(Origin::InlineAsm {
                    instruction: instruction.clone(),
                }),
            };
            self.assign(*target, None, Some((val, None)), n, src);
        }
        Val::Void
    }

    /// What a single-instruction asm writes to `%0` when it is a shuffle or
    /// the lane id; `inputs` are the integer inputs (`%1`, … after the
    /// outputs).
    fn asm_value(&mut self, code: &str, outputs: usize, inputs: &[Option<Expr>]) -> Option<Val> {
        let body = code.trim().trim_end_matches(';').trim();
        if outputs != 1 || body.contains(';') || body.contains('{') {
            return None;
        }
        let (op, rest) = body.split_once(char::is_whitespace)?;
        let ops: Vec<&str> = rest.split(',').map(str::trim).collect();
        if ops.first() != Some(&"%0") {
            return None;
        }
        // An operand: a literal, or `%k` (an input after the outputs).
        let operand = |t: &str| -> Option<Expr> {
            match t.strip_prefix('%').and_then(|k| k.parse::<usize>().ok()) {
                Some(k) => inputs.get(k.checked_sub(outputs)?)?.clone(),
                None => literal(t).map(Expr::konst),
            }
        };
        if matches!(op, "mov.u32" | "mov.b32" | "mov.s32") && ops.len() == 2 && ops[1] == "%laneid"
        {
            return Some(Val::Int(Expr::bin(
                BinOp::Rem,
                linear_tid(),
                Expr::konst(32),
            )));
        }
        let kind = match op {
            "shfl.sync.idx.b32" | "shfl.idx.b32" => 0,
            "shfl.sync.bfly.b32" | "shfl.bfly.b32" => 1,
            _ => return None,
        };
        if ops.len() < 4 {
            return None;
        }
        let v = operand(ops[1])?;
        let b = operand(ops[2])?;
        let width = literal(ops[3]).map(ptx_width);
        let source = if kind == 0 {
            Source::Index(b)
        } else {
            Source::Xor(b)
        };
        Some(self.shuffled(&v, &source, width, op))
    }
}

/// The operands in `field` of an asm statement, each as its constraint
/// and value.
fn operands<'n>(n: Node<'n>, field: &str, src: &Src) -> Vec<(String, Node<'n>)> {
    let Some(list) = n.field(field) else {
        return Vec::new();
    };
    list.kids()
        .into_iter()
        .filter_map(|o| {
            let constraint = o.field("constraint").map(|c| src.text(c))?;
            Some((constraint, o.field("value")?))
        })
        .collect()
}

/// The text of an asm template: its string literals joined, escapes for
/// newline and tab as spaces, `%%` as `%`.
fn asm_text(literals: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    let mut chars = literals.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => inside = !inside,
            '\\' if inside => {
                if let Some(e) = chars.next() {
                    out.push(if matches!(e, 'n' | 't') { ' ' } else { e });
                }
            }
            _ if inside => out.push(c),
            _ => {}
        }
    }
    out.replace("%%", "%")
}
