//! Places in memory: a place read as a value (a load), a subscript of an
//! array or pointer, the [`Access`] records a load or store makes, and the
//! memory objects (`MemObject`) places point into.
//!
//! A constant index into a local array is a register, not an access; a
//! type that no single load can move is split into pieces no wider than
//! its alignment.

use tree_sitter::Node;

use super::{Lowerer, Place, PointeeKey, Ptr, Src, Val};
use crate::budget;
use crate::finding::{Cut, Origin};
use crate::frontend::fields::Fields;
use crate::frontend::types::{self, align_of, size_of, Ty};
use crate::ir::{Access, Atom, Builtin, Expr, Loaded, MemObject, Op, Param, Space, Span};

/// The longest loaded expression used as an input's name (else the
/// object's name).
const MAX_INPUT_NAME: usize = 40;

impl<'a, 't> Lowerer<'a, 't> {
    pub(super) fn rvalue_of(&mut self, v: Val, n: Node, src: &Src) -> Val {
        match v {
            Val::Either(_) => self.on_each(v, &mut |s, side| s.rvalue_of(side, n, src)),
            Val::Place(p) => match &p.ty {
                Ty::Array(elem, _) => Val::Ptr(Ptr {
                    obj: p.obj,
                    off: p.off,
                    pointee: (**elem).clone(),
                }),
                _ => {
                    let witness = p.off.clone();
                    let name = self.k.objects[p.obj].name.clone();
                    self.access(&p, Op::Load, n, src);
                    if let Some(v) = self.block_uniform_load(&p, n, src) {
                        return Val::Int(v);
                    }
                    if let Some(v) = self.loaded_pointer(&p, &src.text(n), n, src) {
                        return v;
                    }
                    Val::Int(self.unknown(Origin::Loaded { array: name }, Some(witness)))
                }
            },
            other => other,
        }
    }

    /// An integer the whole block loads from one address of shared memory,
    /// outside any loop, as a [`Param::loaded`] input (the same one for a
    /// second load of the place with no store to its object between);
    /// `None` for any other load, which stays an unknown. Global loads stay
    /// unknown: they come in pairs the spread does not stand for (a range's
    /// `start = cu_seqlens[i]` and `end = cu_seqlens[i + 1]`, tried
    /// independently, mostly give empty ranges: flashinfer's flashkda
    /// kernels lost their findings that way).
    fn block_uniform_load(&mut self, p: &Place, n: Node, src: &Src) -> Option<Expr> {
        let obj = &self.k.objects[p.obj];
        let space = obj.space;
        if space != Space::Shared || !p.ty.is_integer() || !self.open_loops.is_empty() {
            return None;
        }
        if !Self::block_uniform(&p.off) || self.last_store_known.get(&p.obj) == Some(&true) {
            // The last store put a value the analysis knows there (`if
            // (tid == 0) s_stride = 33;`): not data, and not tried.
            return None;
        }
        if let Some((_, _, i)) = self
            .uniform_loads
            .iter()
            .find(|(o, off, _)| *o == p.obj && off.same(&p.off))
        {
            return Some(Expr::atom(Atom::Param(*i)));
        }
        let array = obj.name.clone();
        let text = src.text(n);
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let name = if text.is_empty() || text.len() > MAX_INPUT_NAME {
            array.clone()
        } else {
            text
        };
        let i = self.k.params.len() as u32;
        self.k.params.push(Param {
            name,
            object: None,
            is_integer: true,
            values: None,
            template: false,
            loaded: Some(Loaded { array, space }),
            compared: false,
        });
        self.uniform_loads.push((p.obj, p.off.clone(), i));
        Some(Expr::atom(Atom::Param(i)))
    }

    /// A store to object `obj` (or an atomic on it): a later load of it may
    /// read another value, taken for data until [`Self::note_stored`] says
    /// the value is known. A store to shared memory may write any shared
    /// object (two `extern __shared__` arrays are one), so every shared
    /// load is forgotten.
    fn stored_to(&mut self, obj: usize) {
        if self.k.objects[obj].space == Space::Shared {
            let objects = &self.k.objects;
            self.uniform_loads
                .retain(|(o, _, _)| objects[*o].space != Space::Shared);
            self.last_store_known.insert(obj, false);
        } else {
            self.uniform_loads.retain(|(o, _, _)| *o != obj);
        }
    }

    /// An assignment just recorded stored `value` to `place`: whether the
    /// analysis knows it (no unknown in it; see `last_store_known`).
    pub(super) fn note_stored(&mut self, place: &Place, value: &Val) {
        let Val::Int(e) = value else { return };
        if self.k.objects[place.obj].space != Space::Shared {
            return;
        }
        let mut known = true;
        e.visit_atoms(&mut |a| known &= !matches!(a, Atom::Unknown(_) | Atom::TooComplex));
        self.last_store_known.insert(place.obj, known);
    }

    /// Records the memory access(es) of reading or writing a place.
    pub(super) fn access(&mut self, p: &Place, op: Op, n: Node, src: &Src) {
        if op != Op::Load {
            self.stored_to(p.obj);
        }
        let obj = &self.k.objects[p.obj];
        let space = obj.space;
        if space == Space::Local && p.off.as_const().is_some() {
            return; // constant indices into local arrays live in registers
        }
        let size = size_of(&p.ty, self.structs());
        let align = align_of(&p.ty, self.structs()).unwrap_or(1).clamp(1, 16);
        let mut pieces: Vec<(u64, u32)> = Vec::new();
        let mut off = p.off.clone();
        match size {
            Some(s) if [1, 2, 4, 8, 16].contains(&s) && align >= s => pieces.push((0, s as u32)),
            Some(s) if s > 0 => {
                let mut chunk = align;
                while chunk > 1 && s % chunk != 0 {
                    chunk /= 2;
                }
                let count = s / chunk;
                let limit = u64::from(budget::MAX_ACCESS_PIECES);
                if count > limit {
                    let ty = types::spell(&p.ty, self.structs());
                    let what = Cut::AccessPieces { ty, count };
                    self.budget_note(n, src, budget::ACCESS_PIECES, what);
                }
                for i in 0..count.min(limit) {
                    pieces.push((i * chunk, chunk as u32));
                }
            }
            _ => {
                let ty = types::spell(&p.ty, self.structs());
                off = self.unknown(Origin::TypeSize { ty }, None);
                pieces.push((0, 4));
            }
        }
        let span = self.span(n, src);
        let text = src.text(n);
        let guards = self.current_guards();
        for (delta, width) in pieces {
            self.k.accesses.push(Access {
                obj: p.obj,
                op,
                width,
                offset: Expr::plus(off.clone(), Expr::konst(delta as i64)),
                guards: guards.clone(),
                loops: self.open_loops.clone(),
                span,
                text: text.clone(),
                region: self.region,
                undecided: self.undecided,
                unknown: self
                    .constexpr_undecided
                    .last()
                    .map(|o| crate::finding::UnknownReason::BranchUndecided { origin: o.clone() }),
                unrolled: 1,
                inlined_at: self.call_site.clone(),
                hoisted: None,
            });
        }
    }

    pub(super) fn index_place(&mut self, base: Val, idx: Expr, n: Node, src: &Src) -> Val {
        let ptr = match base {
            Val::Place(p) => match p.ty {
                Ty::Array(elem, _) => Ptr {
                    obj: p.obj,
                    off: p.off,
                    pointee: *elem,
                },
                Ty::Ptr(_) => {
                    // A pointer stored in memory: what the load gives.
                    let pointer = n.field("argument").unwrap_or(n);
                    match self.rvalue_of(Val::Place(p), pointer, src) {
                        Val::Ptr(q) => q,
                        _ => return self.unknown_val(Origin::LoadedPointer),
                    }
                }
                _ => return self.unknown_val(Origin::SubscriptOfNonArray),
            },
            Val::Ptr(p) => p,
            Val::Either(_) => {
                return self.on_each(base, &mut |s, side| {
                    s.index_place(side, idx.clone(), n, src)
                })
            }
            Val::Int(_) | Val::Dim3(_) | Val::Group(_) | Val::Void => {
                return self.unknown_val(Origin::SubscriptOfUnknownArray)
            }
        };
        let off = match self.elem_size(&ptr.pointee) {
            Some(sz) => Expr::plus(ptr.off, Expr::times(idx, Expr::konst(sz as i64))),
            None => {
                let name = self.k.objects[ptr.obj].name.clone();
                let what = match &ptr.pointee {
                    Ty::Array(..) => Origin::ArrayLayout { array: name },
                    t => Origin::TypeSize {
                        ty: types::spell(t, self.structs()),
                    },
                };
                self.unknown(what, None)
            }
        };
        Val::Place(Place {
            obj: ptr.obj,
            off,
            ty: ptr.pointee,
        })
    }

    pub(super) fn new_object(
        &mut self,
        name: &str,
        space: Space,
        ty: &Ty,
        elem_text: String,
        decl: Span,
        decl_text: String,
    ) -> usize {
        let mut dims = Vec::new();
        let mut t = ty.clone();
        while let Ty::Array(e, n) = t {
            dims.push(n);
            t = *e;
        }
        let elem_size = self.elem_size(&t).unwrap_or(0);
        let elem_align = align_of(&t, self.structs()).unwrap_or(1);
        let volatile = decl_text.contains("volatile");
        self.k.objects.push(MemObject {
            volatile,
            name: name.to_string(),
            space,
            elem_type: elem_text,
            elem_size,
            elem_align,
            dims,
            decl,
            decl_text,
            inner_dim: None,
            dim_copies: Vec::new(),
            pointee_of: None,
        });
        self.k.objects.len() - 1
    }

    /// A pointer to the object that `pointer` (as written) points to, where
    /// the pointer is one value for the whole block that no declaration
    /// gives ([`MemObject::pointee_of`]); the same object for the same
    /// `key` in one kernel.
    pub(super) fn pointee_object(
        &mut self,
        key: PointeeKey,
        pointer: &str,
        pointee: Ty,
        n: Node,
        src: &Src,
    ) -> Val {
        let pointer: String = pointer.split_whitespace().collect::<Vec<_>>().join(" ");
        let obj = match self.pointees.iter().find(|(k, _)| k.same(&key)) {
            Some((_, o)) => *o,
            None => {
                let elem_text = types::spell(&pointee, self.structs());
                let arr = Ty::Array(Box::new(pointee.clone()), None);
                let span = self.span(n, src);
                let o = self.new_object(
                    &pointer,
                    Space::Global,
                    &arr,
                    elem_text,
                    span,
                    String::new(),
                );
                self.k.objects[o].pointee_of = Some(pointer);
                self.pointees.push((key, o));
                o
            }
        };
        Val::Ptr(Ptr {
            obj,
            off: Expr::konst(0),
            pointee,
        })
    }

    /// The pointer a load of `p` gives, where it is one value for the
    /// whole block read from global or constant memory (a `__device__`
    /// pointer, `rows[blockIdx.x]`): a pointer to its own object
    /// ([`Self::pointee_object`]). One loaded per lane, or stored in shared
    /// memory (where the block may have put any pointer), stays unknown.
    fn loaded_pointer(&mut self, p: &Place, text: &str, n: Node, src: &Src) -> Option<Val> {
        let Ty::Ptr(pointee) = &p.ty else {
            return None;
        };
        let space = self.k.objects[p.obj].space;
        if !matches!(space, Space::Global | Space::Constant) || !Self::block_uniform(&p.off) {
            return None;
        }
        // A pointer the kernel itself writes is not what the launch put there.
        if self
            .k
            .accesses
            .iter()
            .any(|a| a.obj == p.obj && a.op != Op::Load)
        {
            return None;
        }
        let text = if text.trim_start().starts_with('*') || text.contains('[') {
            text.to_string()
        } else {
            format!("*{}", text.trim())
        };
        let key = PointeeKey::Load(p.obj, p.off.clone());
        Some(self.pointee_object(key, &text, (**pointee).clone(), n, src))
    }

    /// Whether an offset is one value for the whole block: it reads no
    /// thread index and nothing unknown.
    pub(super) fn block_uniform(off: &Expr) -> bool {
        let mut uniform = true;
        off.visit_atoms(&mut |a| {
            uniform &= match a {
                Atom::Builtin(b) => !matches!(b, Builtin::ThreadIdx(_)),
                Atom::Param(_) => true,
                _ => false,
            };
        });
        uniform
    }
}
