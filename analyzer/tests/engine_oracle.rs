//! End to end against a brute-force oracle: random index functions (affine
//! and not: `%`, `/`, `^`, `&`, `>>`, `<<`) are written into a CUDA kernel,
//! analysed by warplint (front end, engine with its shortcuts, fast cost
//! model), and compared with a direct enumeration of every lane of every
//! warp and loop iteration costed by the byte-level oracle. A barrier in
//! the loop keeps nvcc from merging its iterations (`nvcc/unroll.rs`): the
//! oracle costs each source access as its own instruction.

use proptest::prelude::*;
use warplint_analyzer::hardware::{oracle, Lanes, Modern, WARP};
use warplint_analyzer::ir::{Op, Space};
use warplint_analyzer::symbolic::Cost;
use warplint_analyzer::{analyze, Options};

#[derive(Clone, Debug)]
enum E {
    Tx,
    Ty,
    I,
    C(i64),
    Add(Box<E>, Box<E>),
    Sub(Box<E>, Box<E>),
    Mul(Box<E>, Box<E>),
    Xor(Box<E>, Box<E>),
    And(Box<E>, Box<E>),
    Div(Box<E>, i64),
    Rem(Box<E>, i64),
    Shr(Box<E>, i64),
    Shl(Box<E>, i64),
}

impl E {
    fn c(&self) -> String {
        match self {
            E::Tx => "tx".into(),
            E::Ty => "ty".into(),
            E::I => "i".into(),
            E::C(v) => v.to_string(),
            E::Add(a, b) => format!("({} + {})", a.c(), b.c()),
            E::Sub(a, b) => format!("({} - {})", a.c(), b.c()),
            E::Mul(a, b) => format!("({} * {})", a.c(), b.c()),
            E::Xor(a, b) => format!("({} ^ {})", a.c(), b.c()),
            E::And(a, b) => format!("({} & {})", a.c(), b.c()),
            E::Div(a, k) => format!("({} / {k})", a.c()),
            E::Rem(a, k) => format!("({} % {k})", a.c()),
            E::Shr(a, k) => format!("({} >> {k})", a.c()),
            E::Shl(a, k) => format!("({} << {k})", a.c()),
        }
    }
    fn eval(&self, tx: i64, ty: i64, i: i64) -> i64 {
        match self {
            E::Tx => tx,
            E::Ty => ty,
            E::I => i,
            E::C(v) => *v,
            E::Add(a, b) => a.eval(tx, ty, i).wrapping_add(b.eval(tx, ty, i)),
            E::Sub(a, b) => a.eval(tx, ty, i).wrapping_sub(b.eval(tx, ty, i)),
            E::Mul(a, b) => a.eval(tx, ty, i).wrapping_mul(b.eval(tx, ty, i)),
            E::Xor(a, b) => a.eval(tx, ty, i) ^ b.eval(tx, ty, i),
            E::And(a, b) => a.eval(tx, ty, i) & b.eval(tx, ty, i),
            E::Div(a, k) => a.eval(tx, ty, i) / k,
            E::Rem(a, k) => a.eval(tx, ty, i) % k,
            E::Shr(a, k) => a.eval(tx, ty, i) >> k,
            E::Shl(a, k) => a.eval(tx, ty, i) << k,
        }
    }
}

fn expr() -> impl Strategy<Value = E> {
    let leaf = prop_oneof![
        3 => Just(E::Tx),
        1 => Just(E::Ty),
        1 => Just(E::I),
        2 => (0i64..40).prop_map(E::C),
    ];
    leaf.prop_recursive(3, 12, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| E::Add(Box::new(a), Box::new(b))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| E::Sub(Box::new(a), Box::new(b))),
            (inner.clone(), 0i64..40).prop_map(|(a, k)| E::Mul(Box::new(a), Box::new(E::C(k)))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| E::Mul(Box::new(a), Box::new(b))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| E::Xor(Box::new(a), Box::new(b))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| E::And(Box::new(a), Box::new(b))),
            (inner.clone(), 1i64..40).prop_map(|(a, k)| E::Div(Box::new(a), k)),
            (inner.clone(), 1i64..40).prop_map(|(a, k)| E::Rem(Box::new(a), k)),
            (inner.clone(), 0i64..6).prop_map(|(a, k)| E::Shr(Box::new(a), k)),
            (inner, 0i64..4).prop_map(|(a, k)| E::Shl(Box::new(a), k)),
        ]
    })
}

const TYPES: [(&str, u32); 5] = [
    ("char", 1),
    ("short", 2),
    ("float", 4),
    ("double", 8),
    ("float4", 16),
];

#[derive(Debug)]
struct Case {
    shared_idx: E,
    global_idx: E,
    guard: Option<(E, i64, i64)>,
    ty: usize,
    block: [i64; 2],
    iters: i64,
}

fn case() -> impl Strategy<Value = Case> {
    (
        expr(),
        expr(),
        proptest::option::of((expr(), 2i64..9, 1i64..8)),
        0usize..TYPES.len(),
        prop_oneof![
            Just([32i64, 1]),
            Just([64, 1]),
            Just([128, 1]),
            Just([16, 16]),
            Just([32, 8]),
            Just([8, 8]),
            Just([48, 2]),
            Just([100, 1])
        ],
        1i64..4,
    )
        .prop_map(|(shared_idx, global_idx, guard, ty, block, iters)| Case {
            shared_idx,
            global_idx,
            guard,
            ty,
            block,
            iters,
        })
}

fn source(c: &Case) -> String {
    let t = TYPES[c.ty].0;
    let guard = match &c.guard {
        Some((g, m, k)) => format!("if (({}) % {m} < {k})", g.c()),
        None => String::new(),
    };
    format!(
        "__global__ void k({t} *g)\n{{\n    __shared__ {t} s[64];\n    int tx = threadIdx.x;\n    int ty = threadIdx.y;\n    for (int i = 0; i < {iters}; i++) {{\n        __syncthreads();\n        {guard} {{\n        {t} v = s[{si}];\n        g[{gi}] = v;\n    }}\n    }}\n}}\nint main() {{ k<<<1, dim3({bx}, {by})>>>(0); return 0; }}\n",
        iters = c.iters,
        si = c.shared_idx.c(),
        gi = c.global_idx.c(),
        bx = c.block[0],
        by = c.block[1],
    )
}

/// (mean cost, executions) by brute force.
fn oracle_costs(c: &Case, shared: bool) -> (f64, u64) {
    let w = TYPES[c.ty].1;
    let threads = c.block[0] * c.block[1];
    let warps = (threads + 31) / 32;
    let (mut sum, mut n) = (0u64, 0u64);
    for warp in 0..warps {
        for i in 0..c.iters {
            let mut lanes: Lanes = [None; WARP];
            for (l, slot) in lanes.iter_mut().enumerate() {
                let t = warp * 32 + l as i64;
                if t >= threads {
                    continue;
                }
                let (tx, ty) = (t % c.block[0], t / c.block[0]);
                if let Some((g, m, k)) = &c.guard {
                    if g.eval(tx, ty, i) % m >= *k {
                        continue;
                    }
                }
                let idx = if shared { &c.shared_idx } else { &c.global_idx };
                *slot = Some(idx.eval(tx, ty, i).wrapping_mul(w as i64));
            }
            if lanes.iter().all(|x| x.is_none()) {
                continue;
            }
            n += 1;
            sum += if shared {
                oracle::shared_modern(&lanes, w).0 as u64
            } else {
                oracle::global_modern(&lanes, w) as u64
            };
        }
    }
    (if n == 0 { 0.0 } else { sum as f64 / n as f64 }, n)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn engine_matches_brute_force(c in case()) {
        let src = source(&c);
        let a = analyze(src.as_bytes(), &Modern, &Options::default());
        for (space, op) in [(Space::Shared, Op::Load), (Space::Global, Op::Store)] {
            let shared = space == Space::Shared;
            let r = a.reports.iter().find(|r| r.space == space && r.op == op);
            let (want, n) = oracle_costs(&c, shared);
            let r = match r {
                Some(r) => r,
                // Code under a constant-false condition is not analysed.
                None if n == 0 => continue,
                None => return Err(TestCaseError::fail(format!("no {space:?} {op:?} access in\n{src}"))),
            };
            prop_assert_eq!(r.executions, n as f64, "executions\n{}", src);
            let got = match &r.cost {
                Some(Cost::Shared(s)) => s.wavefronts,
                Some(Cost::Global(g)) => g.sectors,
                other => return Err(TestCaseError::fail(format!("cost {other:?} ({:?}) for\n{src}", r.unknown_reason))),
            };
            prop_assert!((got - want).abs() < 1e-9, "{} predicted {} oracle {}\n{}", space.name(), got, want, src);
        }
    }
}
