//! `warplint rule CODE|NAME` and `warplint rule --all`.

use warplint_lints::Rule;

pub fn text(r: &Rule) -> String {
    format!(
        "# {} ({})\n\n{}\n\nFix: {}.\n\n{}\n",
        r.name,
        r.code,
        r.summary,
        if r.fixable {
            "sometimes available"
        } else {
            "not available"
        },
        r.doc
    )
}

pub fn json(r: &Rule) -> serde_json::Value {
    serde_json::json!({
        "code": r.code,
        "name": r.name,
        "summary": r.summary,
        "fixable": r.fixable,
        "explanation": r.doc,
        "url": r.url(),
    })
}
