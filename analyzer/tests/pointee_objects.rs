//! A pointer the analysis cannot follow to a declaration, but that is one
//! value for the whole block (a pointer field of a by-value struct
//! parameter, a `__device__` pointer, `rows[blockIdx.x]` loaded from global
//! memory), points to an object of its own, taken to be the start of an
//! allocation as a pointer parameter is, and said so (`allocation-start`).
//! Before, the accesses through it were not recorded at all. A pointer
//! loaded per lane is generic and unknown. Costs by hand (sectors: 32 bytes).

mod common;

use common::{find, run, sectors};
use warplint_analyzer::finding::Assumption;
use warplint_analyzer::ir::Op;
use warplint_analyzer::Status;

fn allocation_start(r: &warplint_analyzer::AccessReport) -> Option<&str> {
    r.assumptions.iter().find_map(|a| match a {
        Assumption::AllocationStart { pointer } => Some(pointer.as_str()),
        _ => None,
    })
}

/// `p.out[32 t]`: 32 lanes 128 bytes apart, 32 sectors; `p.in[t]`: 4.
#[test]
fn a_pointer_field_of_a_struct_parameter_is_an_allocation() {
    let a = run(r#"
struct Params { const float *in; float *out; int n; };
__global__ void k(Params p) {
    p.out[threadIdx.x * 32] = p.in[threadIdx.x];
}
int main() { Params p; k<<<2, 128>>>(p); }
"#);
    let st = find(&a, "p.out", Op::Store);
    assert_eq!(st.status, Status::Assumed);
    assert_eq!(allocation_start(st), Some("p.out"));
    assert_eq!(sectors(st), 32.0);
    assert_eq!(sectors(find(&a, "p.in", Op::Load)), 4.0);
}

/// `rows[blockIdx.x]` is one pointer per block: `row[2 t]`, 8 sectors.
/// `g_buf` is a `__device__` pointer: `*g_buf`'s `[t]`, 4 sectors.
/// `rows[threadIdx.x]` is a pointer per lane: what it points to is not
/// known, so the access through it is generic and unknown
/// (`generic_pointers.rs`), never an allocation.
#[test]
fn a_block_uniform_loaded_pointer_is_an_allocation() {
    let a = run(r#"
__device__ float *g_buf;
__global__ void k(float *const *rows) {
    const float *row = rows[blockIdx.x];
    g_buf[threadIdx.x] = row[threadIdx.x * 2];
    const float *mine = rows[threadIdx.x];
    g_buf[threadIdx.x + 128] = mine[0];
}
int main() { k<<<2, 128>>>(0); }
"#);
    let r = find(&a, "rows[blockIdx.x]", Op::Load);
    assert_eq!(sectors(r), 8.0);
    assert_eq!(allocation_start(r), Some("rows[blockIdx.x]"));
    let g: Vec<_> = a.reports.iter().filter(|r| r.array == "*g_buf").collect();
    assert_eq!(g.len(), 2, "{:#?}", a.reports);
    assert!(g.iter().all(|r| sectors(r) == 4.0));
    let mine = find(&a, "rows[threadIdx.x]", Op::Load);
    assert_eq!(mine.space, warplint_analyzer::ir::Space::Generic);
    assert_eq!(mine.status, Status::Unknown);
    assert_eq!(allocation_start(mine), None);
}

/// A pointer kept in shared memory may be any pointer the block put
/// there (a shared one too): not followed.
#[test]
fn a_pointer_in_shared_memory_is_not_followed() {
    let a = run(r#"
__global__ void k(float *buf, float *out) {
    __shared__ float *sp;
    if (threadIdx.x == 0) sp = buf;
    __syncthreads();
    out[threadIdx.x] = sp[threadIdx.x];
}
int main() { k<<<2, 128>>>(0, 0); }
"#);
    assert!(
        a.reports.iter().all(|r| allocation_start(r).is_none()),
        "{:#?}",
        a.reports
    );
}
