//! The line (and place) a store is reported on, as nvcc gives it
//! (measured: `fixtures/groundtruth/sm_90/multiline*.cu`): a `float4`
//! copied from memory over two lines on the second, load and store; on
//! one line, where the statement starts (the target, not the copied
//! value, is what is underlined).

mod common;

use common::{find, run};
use warplint_analyzer::ir::Op;

#[test]
fn a_copy_over_two_lines_is_on_the_second() {
    let a = run(r#"
__global__ void k(float4 *o4, const float4 *i4) {
  int t = threadIdx.x;
  o4[t * 8] =
      i4[t];
  o4[t * 8 + 1] = i4[t + 1];
}
int main() { k<<<1, 128>>>(0, 0); }
"#);
    let lines = |op: Op| -> Vec<(u32, u32)> {
        a.reports
            .iter()
            .filter(|r| r.op == op)
            .map(|r| (r.span.line, r.span.column))
            .collect()
    };
    assert_eq!(lines(Op::Store), vec![(5, 7), (6, 3)]);
    assert_eq!(lines(Op::Load), vec![(5, 7), (6, 19)]);
    assert_eq!(find(&a, "o4", Op::Store).text, "o4[t * 8] =\n      i4[t]");
}
