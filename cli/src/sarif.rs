//! SARIF 2.1.0 for GitHub code scanning, from typed structs (the subset
//! warplint writes): every selected rule in `tool.driver.rules`, results with
//! relative URIs under `%SRCROOT%`, each finding's status and assumptions in
//! `properties`, related locations for declarations, fixes, and
//! `partialFingerprints` that follow a finding when lines move above it.

use std::collections::{BTreeSet, HashMap};

use serde::Serialize;
use serde_json::Value;
use warplint_lints::{Diagnostic, Severity};

use crate::render::FileDiagnostics;

/// The fingerprint's name in `partialFingerprints` (its scheme's version).
const FINGERPRINT: &str = "warplintFinding/v1";

#[derive(Serialize)]
struct Log<'a> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: Vec<Run<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Run<'a> {
    tool: Tool<'a>,
    column_kind: &'static str,
    results: Vec<SarifResult>,
    properties: RunProperties,
}

#[derive(Serialize)]
struct RunProperties {
    summary: Value,
}

#[derive(Serialize)]
struct Tool<'a> {
    driver: Driver<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver<'a> {
    name: &'static str,
    version: &'static str,
    information_uri: &'static str,
    rules: Vec<RuleDescriptor<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RuleDescriptor<'a> {
    id: &'a str,
    name: &'a str,
    short_description: Text,
    full_description: Text,
    help: Help<'a>,
    help_uri: String,
    default_configuration: Configuration,
    properties: RuleProperties,
}

#[derive(Serialize)]
struct Text {
    text: String,
}

#[derive(Serialize)]
struct Help<'a> {
    text: &'a str,
    markdown: &'a str,
}

#[derive(Serialize)]
struct Configuration {
    level: &'static str,
}

#[derive(Serialize)]
struct RuleProperties {
    tags: [&'static str; 2],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult {
    rule_id: String,
    rule_index: usize,
    level: &'static str,
    message: Text,
    locations: Vec<LocationRecord>,
    related_locations: Vec<RelatedLocation>,
    partial_fingerprints: HashMap<&'static str, String>,
    properties: ResultProperties,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    fixes: Vec<FixRecord>,
}

/// Proven or assumed, and what: code scanning shows result properties.
#[derive(Serialize)]
struct ResultProperties {
    status: String,
    assumptions: Vec<String>,
    assumption_kinds: Vec<&'static str>,
    kernel: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LocationRecord {
    physical_location: PhysicalLocation,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RelatedLocation {
    id: usize,
    message: Text,
    physical_location: PhysicalLocation,
}

#[derive(Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation {
    artifact_location: ArtifactLocation,
    region: Region,
}

#[derive(Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct ArtifactLocation {
    uri: String,
    uri_base_id: &'static str,
}

#[derive(Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: u32,
    start_column: u32,
    end_line: u32,
    end_column: u32,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct FixRecord {
    description: Text,
    artifact_changes: Vec<ArtifactChange>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ArtifactChange {
    artifact_location: ArtifactLocation,
    replacements: Vec<Replacement>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Replacement {
    deleted_region: Region,
    inserted_content: Text,
}

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

fn region(s: &warplint_analyzer::ir::Span) -> Region {
    Region {
        start_line: s.line,
        start_column: s.column,
        end_line: s.end_line,
        end_column: s.end_column,
    }
}

/// FNV-1a, 64 bits: stable across Rust versions and platforms (the std
/// hasher is not), so a fingerprint is the same on every run.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// What identifies a finding across commits: the rule, the file, the kernel
/// and array, and the text of its line with whitespace collapsed (not its
/// line number, which moves when lines are added above it).
fn fingerprint_key(path: &str, lines: &[&str], d: &Diagnostic) -> String {
    let line = lines
        .get(d.span.line.saturating_sub(1) as usize)
        .copied()
        .unwrap_or("")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    format!(
        "{}\u{0}{path}\u{0}{}\u{0}{}\u{0}{line}",
        d.code, d.facts.kernel, d.facts.array
    )
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
    let descriptors = rules
        .iter()
        .map(|r| RuleDescriptor {
            id: r.code,
            name: r.name,
            short_description: Text {
                text: r.summary.to_string(),
            },
            full_description: Text {
                text: r.summary.to_string(),
            },
            help: Help {
                text: r.doc,
                markdown: r.doc,
            },
            help_uri: r.url(),
            default_configuration: Configuration { level: "warning" },
            properties: RuleProperties {
                tags: ["performance", "cuda"],
            },
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
        let artifact = ArtifactLocation {
            uri: uri(&path),
            uri_base_id: "%SRCROOT%",
        };
        // Findings with the same key in one file are told apart by order.
        let mut seen: HashMap<String, u32> = HashMap::new();
        let lines: Vec<&str> = f.source.lines().collect();
        let file_uri = uri(&path);
        for d in &f.diagnostics {
            let key = fingerprint_key(&file_uri, &lines, d);
            let n = seen.entry(key.clone()).or_default();
            let print = format!("{:016x}:{n}", fnv1a(key.as_bytes()));
            *n += 1;
            results.push(result(&rules, &artifact, d, print));
        }
    }
    let log = Log {
        schema: "https://json.schemastore.org/sarif-2.1.0.json",
        version: "2.1.0",
        runs: vec![Run {
            tool: Tool {
                driver: Driver {
                    name: "warplint",
                    version: env!("CARGO_PKG_VERSION"),
                    information_uri: "https://warplint.dev",
                    rules: descriptors,
                },
            },
            column_kind: "unicodeCodePoints",
            results,
            properties: RunProperties { summary },
        }],
    };
    serde_json::to_string_pretty(&log).unwrap_or_default() + "\n"
}

/// One result: the finding, where, how sure, and its fix.
fn result(
    rules: &[&warplint_lints::Rule],
    artifact: &ArtifactLocation,
    d: &Diagnostic,
    fingerprint: String,
) -> SarifResult {
    let here = |span| PhysicalLocation {
        artifact_location: artifact.clone(),
        region: region(span),
    };
    SarifResult {
        rule_id: d.code.to_string(),
        rule_index: rules.iter().position(|r| r.code == d.code).unwrap_or(0),
        level: level(d.severity),
        message: Text {
            text: match &d.help {
                Some(h) => format!("{}\nhelp: {h}", d.message),
                None => d.message.clone(),
            },
        },
        locations: vec![LocationRecord {
            physical_location: here(&d.span),
        }],
        related_locations: d
            .related
            .iter()
            .enumerate()
            .map(|(i, r)| RelatedLocation {
                id: i,
                message: Text {
                    text: r.message.clone(),
                },
                physical_location: here(&r.span),
            })
            .collect(),
        partial_fingerprints: [(FINGERPRINT, fingerprint)].into_iter().collect(),
        properties: ResultProperties {
            status: d.facts.status.clone(),
            assumptions: d.facts.assumptions.clone(),
            assumption_kinds: d.facts.assumption_kinds.clone(),
            kernel: d.facts.kernel.clone(),
        },
        fixes: d
            .fix
            .iter()
            .map(|fix| FixRecord {
                description: Text {
                    text: fix.message.clone(),
                },
                artifact_changes: vec![ArtifactChange {
                    artifact_location: artifact.clone(),
                    replacements: fix
                        .edits
                        .iter()
                        .map(|e| Replacement {
                            deleted_region: region(&e.span),
                            inserted_content: Text {
                                text: e.content.clone(),
                            },
                        })
                        .collect(),
                }],
            })
            .collect(),
    }
}
