//! Short pieces of wording several findings share: lists of lines and
//! of items, and which SASS a finding was checked against.

/// `line 3`, `lines 3 and 5`, `lines 3, 5 and 8`.
pub fn lines_list(lines: impl IntoIterator<Item = u32>) -> String {
    let l: Vec<String> = lines.into_iter().map(|n| n.to_string()).collect();
    match l.as_slice() {
        [] => String::new(),
        [one] => format!("line {one}"),
        _ => format!("lines {}", and_list(&l)),
    }
}

/// Which SASS a finding was checked against: `nvcc 13.0 SASS`, or `the
/// SASS given` for a listing given with `--sass`.
pub fn sass_by(compiler: Option<&String>) -> String {
    compiler.map_or_else(|| "the SASS given".to_string(), |v| format!("{v} SASS"))
}

/// `a`, `a and b`, `a, b and c`.
pub fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}
