//! Output formats of `warplint check`: full (miette graphical), concise,
//! json (ruff's field names plus warplint's facts), json-lines, github
//! (workflow-command annotations) and sarif (SARIF 2.1.0).

use std::fmt;

use std::sync::Arc;

use crate::record::DiagnosticRecord;
use miette::{
    GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteError, MietteSpanContents,
    SourceCode, SourceSpan, SpanContents,
};
use warplint_lints::{Diagnostic, Severity};

/// One file's diagnostics with what rendering needs.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct FileDiagnostics {
    /// Path as given (relative when the user gave a relative one).
    pub path: String,
    /// Absolute path, for machine formats.
    pub abs_path: String,
    pub source: String,
    pub diagnostics: Vec<Diagnostic>,
}

/// A file for miette, with our own line index: a span is read from the
/// few lines around it, not by scanning the file from its start (which
/// made rendering quadratic in diagnostics per file).
struct Indexed {
    name: String,
    text: Arc<str>,
    line_starts: Arc<Vec<usize>>,
}

impl Indexed {
    fn new(name: &str, text: &str) -> Indexed {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Indexed {
            name: name.to_string(),
            text: Arc::from(text),
            line_starts: Arc::new(starts),
        }
    }

    fn line_of(&self, offset: usize) -> usize {
        match self.line_starts.binary_search(&offset) {
            Ok(l) => l,
            Err(l) => l.saturating_sub(1),
        }
    }
}

impl SourceCode for Indexed {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let len = self.text.len();
        let start = span.offset().min(len);
        let end = (start + span.len()).min(len);
        let first = self.line_of(start).saturating_sub(before + 1);
        let last = self.line_of(end) + after + 1;
        let s0 = self.line_starts[first];
        let s1 = self.line_starts.get(last + 1).copied().unwrap_or(len);
        let slice: &'a str = &self.text[s0..s1];
        let inner = slice.read_span(
            &SourceSpan::new((start - s0).into(), end - start),
            before,
            after,
        )?;
        Ok(Box::new(MietteSpanContents::new_named(
            self.name.clone(),
            inner.data(),
            SourceSpan::new((inner.span().offset() + s0).into(), inner.span().len()),
            inner.line() + first,
            inner.column(),
            inner.line_count(),
        )))
    }
}

struct MietteDiag<'a> {
    d: &'a Diagnostic,
    src: &'a Indexed,
}

impl fmt::Debug for MietteDiag<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.d.message)
    }
}

impl fmt::Display for MietteDiag<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.d.message)
    }
}

impl std::error::Error for MietteDiag<'_> {}

fn span_of(s: &warplint_analyzer::ir::Span, len: usize) -> SourceSpan {
    let start = s.start.min(len);
    let end = s.end.clamp(start, len);
    SourceSpan::new(start.into(), end - start)
}

impl miette::Diagnostic for MietteDiag<'_> {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(self.d.code))
    }
    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.d.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
            Severity::Info => miette::Severity::Advice,
        })
    }
    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.d
            .help
            .as_ref()
            .map(|h| Box::new(h.clone()) as Box<dyn fmt::Display>)
    }
    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        Some(self.src)
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let len = self.src.text.len();
        let mut v = vec![LabeledSpan::new_primary_with_span(
            Some(self.d.label.clone()),
            span_of(&self.d.span, len),
        )];
        for r in &self.d.related {
            if r.span.line != self.d.span.line && near(r.span.line, self.d.span.line) {
                v.push(LabeledSpan::new_with_span(
                    Some(r.message.clone()),
                    span_of(&r.span, len),
                ));
            }
        }
        Some(Box::new(v.into_iter()))
    }
}

/// Secondary labels this close to the primary are drawn in the snippet;
/// farther ones become a note (miette would print every line between).
const NEAR_LINES: u32 = 200;

fn near(a: u32, b: u32) -> bool {
    a.abs_diff(b) <= NEAR_LINES
}

/// `--color`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// How the full format is drawn: colour, and the width text wraps at.
#[derive(Clone, Copy, Debug)]
pub struct Style {
    pub color: bool,
    pub width: usize,
}

/// Width when the output is not a terminal (files, pipes, tests): fixed, so
/// that output does not depend on who runs it.
const DEFAULT_WIDTH: usize = 80;
/// The narrowest a terminal's width is taken as.
const MIN_WIDTH: usize = 60;

impl Style {
    /// The style for output to stdout (`to_stderr`: stderr): colour as
    /// `--color` says (`auto`: on a terminal, unless `NO_COLOR` is set, or
    /// where `FORCE_COLOR` is), the terminal's width on a terminal.
    pub fn for_output(choice: ColorChoice, to_stderr: bool) -> Style {
        use std::io::IsTerminal;
        let term = if to_stderr {
            console::Term::stderr()
        } else {
            console::Term::stdout()
        };
        let tty = if to_stderr {
            std::io::stderr().is_terminal()
        } else {
            std::io::stdout().is_terminal()
        };
        let set = |k: &str| std::env::var_os(k).is_some_and(|v| !v.is_empty() && v != "0");
        let color = match choice {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto if set("FORCE_COLOR") => true,
            ColorChoice::Auto => tty && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        };
        let width = match term.size_checked() {
            Some((_, cols)) if tty => (cols as usize).max(MIN_WIDTH),
            _ => DEFAULT_WIDTH,
        };
        Style { color, width }
    }
}

impl Default for Style {
    fn default() -> Self {
        Style {
            color: false,
            width: DEFAULT_WIDTH,
        }
    }
}

/// ruff-like human output, drawn by miette (unicode; colour and width as
/// `style` says). Words are never broken across lines, so suggested code
/// stays whole.
pub fn full(files: &[FileDiagnostics], style: Style) -> String {
    let theme = if style.color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_width(style.width)
        .with_break_words(false)
        // Lines break at spaces only (not before `[`, as Unicode's rules
        // allow), and no word is hyphenated: code stays whole.
        .with_word_separator(textwrap::WordSeparator::AsciiSpace)
        .with_word_splitter(textwrap::WordSplitter::NoHyphenation)
        .with_links(false);
    let mut out = String::new();
    for f in files {
        let src = Indexed::new(&f.path, &f.source);
        for d in &f.diagnostics {
            let md = MietteDiag { d, src: &src };
            let mut s = String::new();
            if handler.render_report(&mut s, &md).is_err() {
                s = format!(
                    "{}:{}:{}: {} {}\n",
                    f.path, d.span.line, d.span.column, d.code, d.message
                );
            }
            out.push_str(&s);
            for r in &d.related {
                if !near(r.span.line, d.span.line) {
                    let text = f.source.get(r.span.start..r.span.end).unwrap_or("");
                    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
                    out.push_str(&format!(
                        "  note: {} (line {}): {text}\n",
                        r.message, r.span.line
                    ));
                }
            }
            for n in &d.notes {
                let mut lines = n.lines();
                if let Some(first) = lines.next() {
                    out.push_str(&format!("  note: {first}\n"));
                }
                for l in lines {
                    out.push_str(&format!("        {l}\n"));
                }
            }
            out.push('\n');
        }
    }
    out
}

/// ` (assumed)` after a finding that rests on an assumption (the full
/// format and JSON list what it assumed).
fn assumed_mark(d: &Diagnostic) -> &'static str {
    if d.facts.status == "assumed" {
        " (assumed)"
    } else {
        ""
    }
}

/// `path:line:col: CODE{mark} message`, and ` (assumed)` where it rests on
/// an assumption; with `color`, as ruff colours it: the location bold, the
/// code red and bold, the mark cyan.
fn headline(f: &FileDiagnostics, d: &Diagnostic, mark: &str, color: bool) -> String {
    let paint = |code: &str, text: &str| {
        if color && !text.is_empty() {
            format!("\u{1b}[{code}m{text}\u{1b}[0m")
        } else {
            text.to_string()
        }
    };
    format!(
        "{} {}{} {}{}",
        paint(
            "1",
            &format!("{}:{}:{}:", f.path, d.span.line, d.span.column)
        ),
        paint("1;31", d.code),
        paint("36", mark),
        d.message,
        assumed_mark(d)
    )
}

/// One line per diagnostic: `path:line:col: CODE message`, and
/// ` (assumed)` where it rests on an assumption (coloured with `color`).
pub fn concise(files: &[FileDiagnostics], color: bool) -> String {
    let mut out = String::new();
    for f in files {
        for d in &f.diagnostics {
            let fix = if d.fix.is_some() { " [*]" } else { "" };
            out.push_str(&headline(f, d, fix, color));
            out.push('\n');
        }
    }
    out
}

pub fn json_array(files: &[FileDiagnostics]) -> String {
    let all: Vec<DiagnosticRecord> = files
        .iter()
        .flat_map(|f| {
            f.diagnostics
                .iter()
                .map(move |d| DiagnosticRecord::new(f, d))
        })
        .collect();
    serde_json::to_string_pretty(&all).unwrap_or_else(|_| "[]".into()) + "\n"
}

pub fn json_lines(files: &[FileDiagnostics]) -> String {
    let mut out = String::new();
    for f in files {
        for d in &f.diagnostics {
            out.push_str(&serde_json::to_string(&DiagnosticRecord::new(f, d)).unwrap_or_default());
            out.push('\n');
        }
    }
    out
}

/// Escaping of workflow-command data and properties (actions/toolkit).
fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// GitHub Actions annotations: `::warning file=…,line=…::message`.
pub fn github(files: &[FileDiagnostics]) -> String {
    let mut out = String::new();
    for f in files {
        for d in &f.diagnostics {
            let level = match d.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Info => "notice",
            };
            let cols = if d.span.line == d.span.end_line {
                format!(",col={},endColumn={}", d.span.column, d.span.end_column)
            } else {
                String::new()
            };
            let mut msg = headline(f, d, "", false);
            for a in &d.facts.assumptions {
                msg.push_str(&format!("\n  assumed: {a}"));
            }
            if let Some(h) = &d.help {
                msg.push_str(&format!("\n  help: {h}"));
            }
            out.push_str(&format!(
                "::{level} title={},file={},line={},endLine={}{cols}::{}\n",
                escape_property(&format!("warplint ({}, {})", d.code, d.facts.status)),
                escape_property(&f.path),
                d.span.line,
                d.span.end_line,
                escape_data(&msg)
            ));
        }
    }
    out
}
