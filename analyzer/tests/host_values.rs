//! Host values followed up the calls: a launch argument that is a
//! parameter of the host function launching (`run(…, uint len)` launching
//! `k<<<…>>>(…, len)`) takes the values the function's callers pass — a
//! constant, the values a loop with constant bounds gives its variable,
//! or, through a caller that passes its own parameter on, what its
//! callers pass. One value not known, and the argument is not known.

use std::collections::BTreeMap;

use warplint_analyzer::finding::{Assumption, Condition, ValueSource};
use warplint_analyzer::hardware::Modern;
use warplint_analyzer::ir::{HostArg, Op, Space};
use warplint_analyzer::symbolic::Cost;
use warplint_analyzer::{analyze, host_facts, host_values_of, AccessReport, Options};

/// A kernel whose store is 2-way for `size` below 32 (lanes `l` and
/// `l + 16` of one segment land on one bank), 1-way from 32 up.
const KERNEL: &str = r#"
typedef unsigned int uint;
__global__ void scan1(uint *out, uint size) {
    __shared__ uint s[512];
    uint pos = 2 * threadIdx.x - (threadIdx.x & (size - 1));
    s[pos] = 0;
}
void run(uint *d, uint batch, uint len) {
    scan1<<<batch, 256>>>(d, len);
}
"#;

fn store(text: &str, options: &Options) -> AccessReport {
    let a = analyze(text.as_bytes(), &Modern, options);
    a.reports
        .into_iter()
        .find(|r| r.space == Space::Shared && r.op == Op::Store)
        .expect("a shared store")
}

/// The condition and values of the `size` assumption, and where its
/// values came from.
fn size_condition(r: &AccessReport) -> Option<(Condition, Vec<i64>, ValueSource)> {
    r.assumptions.iter().find_map(|a| match a {
        Assumption::ParamCondition {
            name,
            when,
            tried,
            source,
            ..
        } if name == "size" => Some((when.clone(), tried.clone(), *source)),
        _ => None,
    })
}

fn ways(r: &AccessReport) -> f64 {
    match &r.cost {
        Some(Cost::Shared(s)) => s.max_ways,
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_loop_with_constant_bounds_gives_its_values_to_the_launch() {
    let text = format!(
        "{KERNEL}
int main() {{
    uint *d = 0;
    uint sz;
    for (uint len = 4; len <= 64; len <<= 1) {{
        for (int i = 0; i < 100; i++) {{
            run(d, 1024 / len, len);
        }}
    }}
    return 0;
}}"
    );
    let r = store(&text, &Options::default());
    let (when, tried, source) = size_condition(&r).expect("a condition on `size`");
    assert_eq!(source, ValueSource::Callers);
    assert_eq!(tried, vec![4, 8, 16, 32, 64]);
    // 4, 8 and 16 are below 32: 2-way; 32 and 64 are not.
    assert_eq!(when, Condition::AtMost(16), "{when:?}");
    assert_eq!(ways(&r), 2.0);
}

#[test]
fn a_caller_that_passes_its_parameter_on_is_followed_to_its_callers() {
    let text = format!(
        "{KERNEL}
void twice(uint *d, uint n) {{ run(d, 1, n); run(d, 2, n); }}
int main() {{ twice(0, 8); twice(0, 128); return 0; }}"
    );
    let r = store(&text, &Options::default());
    let (when, tried, source) = size_condition(&r).expect("a condition on `size`");
    assert_eq!((tried, source), (vec![8, 128], ValueSource::Callers));
    assert_eq!(when, Condition::OneOf(vec![8]), "{when:?}");
}

#[test]
fn one_call_passing_a_value_not_known_leaves_the_argument_not_known() {
    let text = format!(
        "{KERNEL}
int main(int argc, char **argv) {{ run(0, 1, 8); run(0, 1, argc); return 0; }}"
    );
    let r = store(&text, &Options::default());
    let (_, tried, source) = size_condition(&r).expect("a condition on `size`");
    assert_eq!(source, ValueSource::Spread, "{tried:?}");
}

#[test]
fn a_loop_whose_bound_is_not_known_gives_no_values() {
    let text = format!(
        "{KERNEL}
int main(int argc, char **argv) {{
    for (uint len = 4; len <= argc; len <<= 1) run(0, 1, len);
    return 0;
}}"
    );
    let r = store(&text, &Options::default());
    let (_, _, source) = size_condition(&r).expect("a condition on `size`");
    assert_eq!(source, ValueSource::Spread);
}

#[test]
fn a_bound_another_file_defines_is_taken_from_the_project() {
    // As `main.cpp` sees it: the bound declared, defined elsewhere.
    let text = format!(
        "{KERNEL}
extern \"C\" const uint MAX_LEN;
int main() {{ for (uint len = 4; len <= MAX_LEN; len *= 2) run(0, 1, len); return 0; }}"
    );
    let alone = store(&text, &Options::default());
    assert_eq!(
        size_condition(&alone).map(|c| c.2),
        Some(ValueSource::Spread)
    );
    let mut o = Options::default();
    o.frontend.extern_values = BTreeMap::from([("MAX_LEN".to_string(), 16)]);
    let r = store(&text, &o);
    // Every value the loop gives (4, 8, 16) is 2-way: no condition.
    assert_eq!(size_condition(&r), None, "{:?}", r.assumptions);
    assert_eq!(ways(&r), 2.0);
}

#[test]
fn the_projects_calls_join_the_units_own() {
    // The unit calls `run` with 8; another file (the index) with 64.
    let text = format!("{KERNEL}\nint main() {{ run(0, 1, 8); return 0; }}");
    let alone = store(&text, &Options::default());
    assert_eq!(
        size_condition(&alone).map(|c| c.1),
        None,
        "8 alone: no condition"
    );
    assert_eq!(ways(&alone), 2.0);
    let mut o = Options::default();
    o.frontend.host_calls = vec![warplint_analyzer::ir::HostCall {
        callee: "run".into(),
        caller: "other".into(),
        args: vec![
            HostArg::Unknown,
            HostArg::Values(vec![1]),
            HostArg::Values(vec![64]),
        ],
    }];
    let r = store(&text, &o);
    let (when, tried, source) = size_condition(&r).expect("a condition on `size`");
    assert_eq!((tried, source), (vec![8, 64], ValueSource::Callers));
    assert_eq!(when, Condition::OneOf(vec![8]), "{when:?}");
}

#[test]
fn a_unit_gives_its_calls_and_its_external_constants() {
    let text = r#"
typedef unsigned int uint;
extern "C" const uint MAX_LEN = 1024;
const uint LOCAL = 7;
extern "C" void launch_it(uint *d, uint n);
void outer(uint *d, uint m, int flag) {
    for (uint k = 1; k <= 4; k++) launch_it(d, k * 8);
    launch_it(d, m);
    launch_it(d, flag ? 1 : m);
}
"#;
    let mut o = Options::default().frontend;
    o.host_callees = vec!["launch_it".into()];
    let f = host_facts(text.as_bytes(), &o);
    // Only the constant with external linkage: `LOCAL` is the unit's own.
    assert_eq!(f.extern_consts, vec![("MAX_LEN".to_string(), 1024)]);
    let args: Vec<&HostArg> = f
        .calls
        .iter()
        .filter(|c| c.callee == "launch_it" && c.caller == "outer")
        .map(|c| &c.args[1])
        .collect();
    assert_eq!(
        args,
        vec![
            &HostArg::Values(vec![8, 16, 24, 32]),
            &HostArg::Param(1),
            &HostArg::Unknown,
        ]
    );
}

#[test]
fn values_are_joined_over_the_calls_and_up_the_callers() {
    use warplint_analyzer::ir::HostCall;
    let call = |callee: &str, caller: &str, a: HostArg| HostCall {
        callee: callee.into(),
        caller: caller.into(),
        args: vec![a],
    };
    let calls = vec![
        call("run", "a", HostArg::Values(vec![4, 8])),
        call("run", "b", HostArg::Param(0)),
        call("b", "main", HostArg::Values(vec![8, 32])),
    ];
    assert_eq!(host_values_of(&calls, "run", 0), Ok(vec![4, 8, 32]));
    // Nothing calls it: not known.
    assert_eq!(host_values_of(&calls, "main", 0), Err(None));
    // One caller's value not known: not known.
    let mut more = calls.clone();
    more.push(call("b", "main", HostArg::Unknown));
    assert_eq!(host_values_of(&more, "run", 0), Err(None));
    // A function that calls itself ends at the depth budget, which says so.
    let rec = vec![call("f", "f", HostArg::Param(0))];
    assert_eq!(
        host_values_of(&rec, "f", 0),
        Err(Some(warplint_analyzer::budget::HOST_CALL_DEPTH))
    );
}

#[test]
fn values_the_launchs_conditions_rule_out_are_not_tried() {
    // The launch runs only for `len <= 32` (as bitonicSort launches its
    // shared-memory kernel only for short arrays); the loop in `main`
    // passes 64 and 128 too, but only below 100.
    let text = r#"
typedef unsigned int uint;
__global__ void scan1(uint *out, uint size) {
    __shared__ uint s[512];
    uint pos = 2 * threadIdx.x - (threadIdx.x & (size - 1));
    s[pos] = 0;
}
void run(uint *d, uint len) {
    if (len < 2)
        return;
    if (len <= 32) {
        scan1<<<1, 256>>>(d, len);
    }
}
int main() {
    for (uint len = 1; len <= 1024; len *= 2) {
        if (len < 100)
            run(0, len);
    }
    return 0;
}
"#;
    let r = store(text, &Options::default());
    let (when, tried, source) = size_condition(&r).expect("a condition on `size`");
    assert_eq!(
        (tried, source),
        (vec![2, 4, 8, 16, 32], ValueSource::Callers)
    );
    assert_eq!(when, Condition::AtMost(16), "{when:?}");
}

#[test]
fn a_variable_a_call_writes_through_its_address_is_not_known_after_it() {
    // As rodinia's mummergpu: `n = 0`, a call fills it in through `&n`,
    // and the launch is skipped when it is still 0.
    let text = format!(
        "{KERNEL}
void fill(uint *out);
int main() {{
    for (int round = 0; round < 4; round++) {{
        uint n = 0;
        fill(&n);
        if (n == 0)
            continue;
        run(0, 1, n);
    }}
    return 0;
}}"
    );
    let r = store(&text, &Options::default());
    let (_, tried, source) = size_condition(&r).expect("a condition on `size`");
    assert_eq!(source, ValueSource::Spread, "{tried:?}");
}

#[test]
fn a_call_in_code_that_never_runs_passes_nothing() {
    let text = format!(
        "{KERNEL}
int main() {{
    uint n = 0;
    if (n == 0)
        return 1;
    run(0, 1, n);
    return 0;
}}"
    );
    let r = store(&text, &Options::default());
    let (_, _, source) = size_condition(&r).expect("a condition on `size`");
    // No call runs: nothing is known of `len`.
    assert_eq!(source, ValueSource::Spread);
}

#[test]
fn an_argument_computed_from_the_launching_functions_parameters_takes_their_values() {
    // llm.c's attention: `d = C / NH` computed in the launching function,
    // evaluated per call (768 / 12 and 1024 / 16 are both 64).
    let kernel = "
__global__ void k(float *o, int d) { __shared__ float s[8192]; s[threadIdx.x * d] = o[0]; }
void run(float *o, int C, int NH) { k<<<1, 32>>>(o, C / NH); }
";
    let one = format!("{kernel}\nint main() {{ run(0, 768, 12); run(0, 1024, 16); return 0; }}");
    let r = store(&one, &Options::default());
    // 64 words apart: every lane on bank 0, 32-way, for the one value.
    assert_eq!(size_param(&r, "d"), None, "{:?}", r.assumptions);
    assert_eq!(ways(&r), 32.0);
    // 64 and 2 (32 / 16): 32-way and 2-way, said for the callers' values.
    let two = format!("{kernel}\nint main() {{ run(0, 768, 12); run(0, 32, 16); return 0; }}");
    let r = store(&two, &Options::default());
    assert_eq!(
        size_param(&r, "d"),
        Some(ValueSource::Callers),
        "{:?}",
        r.assumptions
    );
    // One call whose two arguments each take several values (two loops):
    // which go together is not known, so `d` is not known.
    let loops = format!(
        "{kernel}\nint main() {{ for (int c = 64; c <= 128; c *= 2) for (int h = 1; h <= 2; h++) run(0, c, h); return 0; }}"
    );
    let r = store(&loops, &Options::default());
    assert_eq!(
        size_param(&r, "d"),
        Some(ValueSource::Spread),
        "{:?}",
        r.assumptions
    );
}

/// Where the values tried for parameter `name` came from, if the cost
/// depends on it.
fn size_param(r: &AccessReport, name: &str) -> Option<ValueSource> {
    r.assumptions.iter().find_map(|a| match a {
        Assumption::ParamCondition {
            name: n, source, ..
        } if n == name => Some(*source),
        _ => None,
    })
}

#[test]
fn past_the_budget_evenly_spaced_values_are_tried_and_said_to_be() {
    // 100 values passed; MAX_HOST_VALUES (16) tried: the first, the last
    // and evenly spaced ones between. Every one of them is 2-way here
    // (`t & (size - 1)` keeps lanes `l` and `l + 16` apart by 32 words
    // for each), so the finding holds for every value tried.
    let text = format!(
        "{KERNEL}\nint main() {{ for (uint len = 1; len <= 100; len++) run(0, 1, len); return 0; }}"
    );
    let r = store(&text, &Options::default());
    let tried = r
        .for_every
        .iter()
        .find_map(|f| match f {
            warplint_analyzer::finding::ForEvery::Param {
                name,
                tried,
                source,
                ..
            } if name == "size" => Some((tried.clone(), *source)),
            _ => None,
        })
        .map(|(t, s)| {
            assert_eq!(s, ValueSource::CallersSample { passed: 100 });
            t
        })
        .expect("the values tried for `size`");
    assert_eq!(tried.len(), warplint_analyzer::budget::MAX_HOST_VALUES);
    assert_eq!((tried[0], tried[tried.len() - 1]), (1, 100));
    assert!(tried.windows(2).all(|w| w[0] < w[1]), "{tried:?}");
    assert_eq!(ways(&r), 2.0);
}
