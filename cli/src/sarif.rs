//! SARIF 2.1.0 for GitHub code scanning: every selected rule in
//! `tool.driver.rules`, results with relative URIs under `%SRCROOT%`,
//! related locations for declarations, fixes.

use std::collections::BTreeSet;

use serde_json::{json, Value};
use warplint_lints::Severity;

use crate::render::FileDiagnostics;

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

fn uri(path: &str) -> String {
    let p = path.trim_start_matches("./").replace('\\', "/");
    p.split('/')
        .map(|seg| {
            seg.bytes()
                .map(|b| match b {
                    b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                        (b as char).to_string()
                    }
                    _ => format!("%{b:02X}"),
                })
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("/")
}

fn region(s: &warplint_analyzer::ir::Span) -> Value {
    json!({
        "startLine": s.line,
        "startColumn": s.column,
        "endLine": s.end_line,
        "endColumn": s.end_column,
    })
}

/// The SARIF log of `files`; `summary` (the run's counts and why accesses
/// could not be analysed) becomes the run's `properties.summary`.
pub fn render(
    files: &[FileDiagnostics],
    selected: &BTreeSet<&'static str>,
    summary: Value,
) -> String {
    let rules: Vec<&warplint_lints::Rule> = warplint_lints::rules()
        .filter(|r| selected.contains(r.code))
        .collect();
    let rule_json: Vec<Value> = rules
        .iter()
        .map(|r| {
            json!({
                "id": r.code,
                "name": r.name,
                "shortDescription": {"text": r.summary},
                "fullDescription": {"text": r.summary},
                "help": {"text": r.doc, "markdown": r.doc},
                "helpUri": r.url(),
                "defaultConfiguration": {"level": "warning"},
                "properties": {"tags": ["performance", "cuda"]},
            })
        })
        .collect();
    let mut results = Vec::new();
    for f in files {
        // A relative path when the user gave one; else the absolute one.
        let path = if std::path::Path::new(&f.path).is_absolute() {
            f.abs_path.clone()
        } else {
            f.path.clone()
        };
        let artifact = json!({"uri": uri(&path), "uriBaseId": "%SRCROOT%"});
        for d in &f.diagnostics {
            let idx = rules.iter().position(|r| r.code == d.code).unwrap_or(0);
            let mut res = json!({
                "ruleId": d.code,
                "ruleIndex": idx,
                "level": level(d.severity),
                "message": {"text": match &d.help {
                    Some(h) => format!("{}\nhelp: {h}", d.message),
                    None => d.message.clone(),
                }},
                "locations": [{"physicalLocation": {
                    "artifactLocation": artifact.clone(),
                    "region": region(&d.span),
                }}],
                "relatedLocations": d.related.iter().enumerate().map(|(i, r)| json!({
                    "id": i,
                    "message": {"text": r.message},
                    "physicalLocation": {"artifactLocation": artifact.clone(), "region": region(&r.span)},
                })).collect::<Vec<_>>(),
            });
            // Proven or assumed, and what: code scanning shows properties.
            res["properties"] = json!({
                "status": d.facts.status,
                "assumptions": d.facts.assumptions,
                "assumption_kinds": d.facts.assumption_kinds,
            });
            if let Some(fix) = &d.fix {
                res["fixes"] = json!([{
                    "description": {"text": fix.message},
                    "artifactChanges": [{
                        "artifactLocation": artifact.clone(),
                        "replacements": fix.edits.iter().map(|e| json!({
                            "deletedRegion": region(&e.span),
                            "insertedContent": {"text": e.content},
                        })).collect::<Vec<_>>(),
                    }],
                }]);
            }
            results.push(res);
        }
    }
    let doc = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "warplint",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://warplint.dev",
                "rules": rule_json,
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
            "properties": {"summary": summary},
        }],
    });
    serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
}
