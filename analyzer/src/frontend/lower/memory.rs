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
use crate::finding::{Cut, Origin, UnknownReason};
use crate::frontend::fields::Fields;
use crate::frontend::types::{self, align_of, size_of, Ty};
use crate::ir::{Access, Atom, Builtin, Expr, Loaded, MemObject, Op, Param, Space, Span};

/// The longest loaded expression used as an input's name (else the
/// object's name).
const MAX_INPUT_NAME: usize = 40;

/// A value this thread stored, which a later load of the same place reads
/// back (`Lowerer::own_store_value`).
pub(super) struct OwnStore {
    obj: usize,
    off: Expr,
    ty: Ty,
    value: Expr,
    guards: Vec<crate::ir::Guard>,
    loops: Vec<usize>,
}

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
                    if let Some(v) = self.own_store_value(&p) {
                        return Val::Int(v);
                    }
                    if let Some(v) = self.block_uniform_load(&p, n, src) {
                        return Val::Int(v);
                    }
                    if let Some(v) = self.loaded_pointer(&p, &src.text(n), n, src) {
                        return v;
                    }
                    if let Ty::Ptr(pointee) = &p.ty {
                        // Loaded per lane, or kept in shared memory: what
                        // is accessed through it is generic.
                        let u = self.unknown(Origin::LoadedPointer { array: name }, Some(witness));
                        return self.generic_pointer(&src.text(n), (**pointee).clone(), u, n, src);
                    }
                    let u = self.unknown(Origin::Loaded { array: name }, Some(witness));
                    // An integer's width (a vector's component's): the
                    // values the engine may draw.
                    let int = match &p.ty {
                        Ty::Int { size } => Some(*size),
                        Ty::Vector { comp, .. } => match **comp {
                            Ty::Int { size } => Some(size),
                            _ => None,
                        },
                        _ => None,
                    };
                    if let (Some(size), Some(Atom::Unknown(i))) = (int, u.atoms().first().copied())
                    {
                        if let Some(x) = self.k.unknowns.get_mut(i as usize) {
                            x.loaded_bits = Some((size as u32 * 8).min(62));
                        }
                    }
                    Val::Int(u)
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
        // Another object may be the same memory (two pointer parameters,
        // two `extern __shared__` arrays); a per-thread array is not.
        let local = self.k.objects[obj].space == Space::Local;
        let objects = &self.k.objects;
        self.own_stores
            .retain(|s| local && s.obj != obj && objects[s.obj].space == Space::Local);
        if self.k.objects[obj].space == Space::Generic {
            // May write any shared or global value.
            self.uniform_loads.clear();
            return;
        }
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

    /// Everything known about memory's contents is forgotten: a barrier
    /// (another thread may have written), a call or store the analysis
    /// cannot follow.
    pub(super) fn forget_memory(&mut self) {
        self.uniform_loads.clear();
        self.own_stores.clear();
    }

    /// An assignment just recorded stored `value` to `place` (after
    /// [`Self::stored_to`] forgot what it may overwrite): a later load of
    /// the same place by this thread reads it back ([`Self::own_store_value`]).
    pub(super) fn own_store(&mut self, place: &Place, value: &Val) {
        let Val::Int(e) = value else { return };
        let obj = &self.k.objects[place.obj];
        let wide_int = matches!(place.ty, Ty::Int { size } if size >= 4);
        if obj.volatile || obj.space == Space::Generic || !wide_int {
            // Another thread may write a volatile place between; a
            // narrower integer would need the store's truncation.
            return;
        }
        let mut known = true;
        e.visit_atoms(&mut |a| known &= !matches!(a, Atom::TooComplex));
        if !known {
            return;
        }
        self.own_stores.push(OwnStore {
            obj: place.obj,
            off: place.off.clone(),
            ty: place.ty.clone(),
            value: e.clone(),
            guards: self.current_guards(),
            loops: self.open_loops.clone(),
        });
    }

    /// The value this thread stored to `p` and reads back now: the same
    /// object, offset and type, in the same loop iteration, stored under
    /// guards the load is also under (so the store ran whenever the load
    /// runs), with no other store, barrier or unseen call between. What
    /// the thread sees, and what nvcc forwards (`forward.cu`).
    fn own_store_value(&self, p: &Place) -> Option<Expr> {
        let guards = self.current_guards();
        self.own_stores
            .iter()
            .rev()
            .find(|s| {
                s.obj == p.obj
                    && s.ty == p.ty
                    && s.off.same(&p.off)
                    && s.loops == self.open_loops
                    && s.guards.len() <= guards.len()
                    && s.guards.iter().zip(&guards).all(|(a, b)| a.same(b))
            })
            .map(|s| s.value.clone())
    }

    /// Records the memory access(es) of reading or writing a place.
    pub(super) fn access(&mut self, p: &Place, op: Op, n: Node, src: &Src) {
        let span = self.span(n, src);
        self.access_at(p, op, n, span, src);
    }

    /// [`Self::access`], on the line nvcc gives it (`span`), which may not
    /// be where `n` starts (`expr.rs`, `attributed_span`).
    pub(super) fn access_at(&mut self, p: &Place, op: Op, n: Node, span: Span, src: &Src) {
        if op != Op::Load {
            self.stored_to(p.obj);
        }
        let obj = &self.k.objects[p.obj];
        let space = obj.space;
        if space == Space::Local && p.off.as_const().is_some() {
            return; // constant indices into local arrays live in registers
        }
        let mut unknown = self
            .constexpr_undecided
            .last()
            .map(|o| UnknownReason::BranchUndecided { origin: o.clone() });
        let mut pieces: Vec<(u64, u32)> = Vec::new();
        let mut off = p.off.clone();
        if space == Space::Generic {
            // One access, unknown before any warp runs.
            let (width, why) = self.generic_reason(p);
            unknown = Some(why);
            pieces.push((0, width));
        } else {
            self.pieces(p, n, src, &mut pieces, &mut off);
        }
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
                unknown: unknown.clone(),
                unrolled: 1,
                select_at: None,
                inlined_at: self.call_site.clone(),
                hoisted: None,
                epoch: self.fences + self.warp_syncs,
                hinted: false,
                predicated_from: None,
                predication_undecided: false,
            });
        }
    }

    /// The pieces (offset, width) a load or store of `p` moves: one where
    /// the type is one access wide and aligned, else pieces no wider than
    /// its alignment; a type without a size is one unknown access (`off`).
    fn pieces(
        &mut self,
        p: &Place,
        n: Node,
        src: &Src,
        pieces: &mut Vec<(u64, u32)>,
        off: &mut Expr,
    ) {
        let size = size_of(&p.ty, self.structs());
        let align = align_of(&p.ty, self.structs()).unwrap_or(1).clamp(1, 16);
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
                *off = self.unknown(Origin::TypeSize { ty }, None);
                pieces.push((0, 4));
            }
        }
    }

    /// The width and the reason of an access to a place reached through a
    /// pointer whose space is not known: the reason the pointer's unknown
    /// value gives (its first unknown).
    fn generic_reason(&self, p: &Place) -> (u32, UnknownReason) {
        let mut first = None;
        p.off.visit_atoms(&mut |a| {
            if let (Atom::Unknown(u), None) = (a, first) {
                first = Some(u);
            }
        });
        let (origin, differs) = match first.and_then(|u| self.k.unknowns.get(u as usize)) {
            Some(u) => (
                u.origin.clone(),
                u.witness.as_ref().is_some_and(|w| !Self::block_uniform(w)),
            ),
            None => (Origin::Unrecorded, false),
        };
        let width = size_of(&p.ty, self.structs())
            .filter(|s| [1, 2, 4, 8, 16].contains(s))
            .unwrap_or(4) as u32;
        (width, UnknownReason::DependsOn { origin, differs })
    }

    /// A pointer (to `pointee`) whose space the analysis does not know,
    /// written `text`: into an object of [`Space::Generic`] of its own (one
    /// per text per kernel), at offset `unknown`, the unknown value that
    /// says why. Every access through it is recorded and unknown.
    pub(super) fn generic_pointer(
        &mut self,
        text: &str,
        pointee: Ty,
        unknown: Expr,
        n: Node,
        src: &Src,
    ) -> Val {
        let text: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let key = PointeeKey::Generic(text.clone());
        let obj = self.keyed_object(key, &text, Space::Generic, &pointee, n, src);
        Val::Ptr(Ptr {
            obj,
            off: unknown,
            pointee,
        })
    }

    /// `v` given to a pointer to `pointee` (a cast, a declaration's
    /// initial value), written `text`: an integer that is not null becomes
    /// a generic pointer ([`Self::generic_pointer`]), at the unknown it is
    /// when it is one (a name nothing declares, a call's result), else at
    /// a new one saying an integer was made a pointer. Anything else as
    /// it is.
    pub(super) fn pointer_from(&mut self, pointee: &Ty, v: Val, n: Node, src: &Src) -> Val {
        let Val::Int(e) = v else { return v };
        if e.as_const().is_some() {
            return Val::Int(e);
        }
        if let crate::ir::ExprKind::Atom(Atom::Unknown(u)) = e.kind() {
            // `(int *)&f` of a register value: no memory is accessed.
            let origin = self.k.unknowns.get(*u as usize).map(|x| &x.origin);
            if matches!(origin, Some(Origin::AddressOfNonMemory)) {
                return Val::Int(e);
            }
        }
        let u = if matches!(e.kind(), crate::ir::ExprKind::Atom(Atom::Unknown(_))) {
            e
        } else {
            self.unknown(Origin::IntegerAsPointer, Some(e))
        };
        self.generic_pointer(&src.text(n), pointee.clone(), u, n, src)
    }

    /// A name nothing declares, or a call's result, subscripted or
    /// dereferenced (`n`): an array or pointer from a header that was not
    /// read, in a space not known, of an element type not known (a generic
    /// pointer at the unknown). `None` for any other integer.
    pub(super) fn undeclared_pointer(&mut self, e: Expr, n: Node, src: &Src) -> Option<Ptr> {
        let crate::ir::ExprKind::Atom(Atom::Unknown(u)) = e.kind() else {
            return None;
        };
        let name = match &self.k.unknowns.get(*u as usize)?.origin {
            Origin::Undeclared { name } => name.clone(),
            // `get_ptr(t)[i]`: a call's result used as a pointer.
            Origin::CallResult { callee } => callee.clone(),
            _ => return None,
        };
        let ty = Ty::Unknown(String::new());
        match self.generic_pointer(&name, ty, e, n, src) {
            Val::Ptr(p) => Some(p),
            _ => None,
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
                    let array = self.k.objects[p.obj].name.clone();
                    match self.rvalue_of(Val::Place(p), pointer, src) {
                        Val::Ptr(q) => q,
                        _ => return self.unknown_val(Origin::LoadedPointer { array }),
                    }
                }
                // `FOO[t][1]` of a name nothing declares: still generic.
                Ty::Unknown(_) if self.k.objects[p.obj].space == Space::Generic => Ptr {
                    obj: p.obj,
                    off: p.off,
                    pointee: p.ty,
                },
                _ => return self.unknown_val(Origin::SubscriptOfNonArray),
            },
            Val::Ptr(p) => p,
            Val::Either(_) => {
                return self.on_each(base, &mut |s, side| {
                    s.index_place(side, idx.clone(), n, src)
                })
            }
            Val::Int(e) => match self.undeclared_pointer(e, n, src) {
                Some(p) => p,
                None => return self.unknown_val(Origin::SubscriptOfUnknownArray),
            },
            Val::Dim3(_) | Val::Group(_) | Val::Void => {
                return self.unknown_val(Origin::SubscriptOfUnknownArray)
            }
        };
        let off = match self.elem_size(&ptr.pointee) {
            Some(sz) => Expr::plus(ptr.off, Expr::times(idx, Expr::konst(sz as i64))),
            // Unknown already, for the reason the pointer says.
            None if self.k.objects[ptr.obj].space == Space::Generic => ptr.off,
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
        let elem_keyword = match &t {
            Ty::Struct(i) => self.structs().get(*i).and_then(|s| s.keyword),
            Ty::Instance(s) => s.keyword,
            _ => None,
        };
        let volatile = decl_text.contains("volatile");
        self.k.objects.push(MemObject {
            volatile,
            volatile_view: volatile,
            name: name.to_string(),
            space,
            elem_type: elem_text,
            elem_size,
            elem_align,
            elem_keyword,
            dims,
            decl,
            decl_text,
            inner_dim: None,
            dim_copies: Vec::new(),
            pointee_of: None,
        });
        self.k.objects.len() - 1
    }

    /// The object a pointer no declaration gives points into, named `name`
    /// (of elements `pointee`, in `space`): the same one for the same `key`
    /// in one kernel ([`Self::pointee_object`], [`Self::generic_pointer`]).
    fn keyed_object(
        &mut self,
        key: PointeeKey,
        name: &str,
        space: Space,
        pointee: &Ty,
        n: Node,
        src: &Src,
    ) -> usize {
        if let Some((_, o)) = self.pointees.iter().find(|(k, _)| k.same(&key)) {
            return *o;
        }
        let elem_text = types::spell(pointee, self.structs());
        let arr = Ty::Array(Box::new(pointee.clone()), None);
        let span = self.span(n, src);
        let o = self.new_object(name, space, &arr, elem_text, span, String::new());
        self.pointees.push((key, o));
        o
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
        let obj = self.keyed_object(key, &pointer, Space::Global, &pointee, n, src);
        self.k.objects[obj].pointee_of = Some(pointer);
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
