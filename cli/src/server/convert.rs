//! Between warplint's facts and the protocol's: byte offsets and LSP
//! positions (UTF-16 code units unless the client takes UTF-8), a
//! diagnostic and its quick fix. Pure: text in, protocol values out.

use lsp_types::{
    CodeAction, CodeActionKind, CodeDescription, DiagnosticRelatedInformation, DiagnosticSeverity,
    Location, NumberOrString, Position, Range, TextEdit, Url, WorkspaceEdit,
};
use warplint_lints::{Applicability, Diagnostic, Severity};

/// How a position's `character` counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf16,
}

/// Line starts of one text, to turn byte offsets into positions and back.
pub struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
    encoding: Encoding,
}

impl<'a> LineIndex<'a> {
    pub fn new(text: &'a str, encoding: Encoding) -> Self {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        LineIndex {
            text,
            starts,
            encoding,
        }
    }

    /// The position of byte `offset` (clamped to the text, and back to the
    /// start of a character it falls inside).
    pub fn position(&self, offset: usize) -> Position {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let before = &self.text[self.starts[line]..offset];
        let character = match self.encoding {
            Encoding::Utf8 => before.len(),
            Encoding::Utf16 => before.encode_utf16().count(),
        };
        Position::new(line as u32, character as u32)
    }

    /// The byte offset of `p` (a line past the end is the end; a character
    /// past the line's end is its end, before the newline).
    pub fn offset(&self, p: Position) -> usize {
        let (start, end) = self.line_bytes(p.line);
        let line = &self.text[start..end];
        let mut units = 0;
        for (i, c) in line.char_indices() {
            if units >= p.character as usize {
                return start + i;
            }
            units += match self.encoding {
                Encoding::Utf8 => c.len_utf8(),
                Encoding::Utf16 => c.len_utf16(),
            };
        }
        end
    }

    /// The bytes of 0-based `line`, without its newline (the text's end
    /// past the last line).
    pub fn line_bytes(&self, line: u32) -> (usize, usize) {
        let Some(&start) = self.starts.get(line as usize) else {
            return (self.text.len(), self.text.len());
        };
        let end = self
            .starts
            .get(line as usize + 1)
            .map_or(self.text.len(), |e| e - 1);
        (start, end)
    }

    pub fn range(&self, start: usize, end: usize) -> Range {
        Range::new(self.position(start), self.position(end))
    }
}

/// The protocol's diagnostic for one of warplint's in the document `uri`.
/// Its status (proven, or what it assumes) and help follow the message.
pub fn diagnostic(uri: &Url, index: &LineIndex, d: &Diagnostic) -> lsp_types::Diagnostic {
    let severity = match d.severity {
        Severity::Error => DiagnosticSeverity::ERROR,
        Severity::Warning => DiagnosticSeverity::WARNING,
        Severity::Info => DiagnosticSeverity::INFORMATION,
    };
    let mut message = d.message.clone();
    if let Some(help) = &d.help {
        message.push_str(&format!("\nhelp: {help}"));
    }
    for n in d.notes.iter().filter(|n| n.starts_with("assumed: ")) {
        message.push_str(&format!("\n{n}"));
    }
    let related = d
        .related
        .iter()
        .filter(|l| l.span.file == 0)
        .map(|l| DiagnosticRelatedInformation {
            location: Location::new(uri.clone(), index.range(l.span.start, l.span.end)),
            message: l.message.clone(),
        })
        .collect::<Vec<_>>();
    lsp_types::Diagnostic {
        range: index.range(d.span.start, d.span.end),
        severity: Some(severity),
        code: Some(NumberOrString::String(d.code.to_string())),
        code_description: warplint_lints::find(d.code)
            .and_then(|r| Url::parse(&r.url()).ok())
            .map(|href| CodeDescription { href }),
        source: Some("warplint".into()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        tags: None,
        data: Some(serde_json::json!({ "status": status(d) })),
    }
}

/// A suppression comment that names no rule (a warning) or suppressed
/// nothing (a hint, shown faded as unnecessary), on its whole line.
pub fn idle_suppression(index: &LineIndex, i: &crate::suppress::Idle) -> lsp_types::Diagnostic {
    let (start, end) = index.line_bytes(i.line.saturating_sub(1));
    let unknown = !i.unknown.is_empty() || i.unmatched;
    lsp_types::Diagnostic {
        range: index.range(start, end),
        severity: Some(if unknown {
            DiagnosticSeverity::WARNING
        } else {
            DiagnosticSeverity::HINT
        }),
        code: Some(NumberOrString::String(
            if unknown {
                "unknown-rule"
            } else {
                "unused-suppression"
            }
            .into(),
        )),
        source: Some("warplint".into()),
        message: i.describe(),
        tags: (!unknown).then(|| vec![lsp_types::DiagnosticTag::UNNECESSARY]),
        ..Default::default()
    }
}

/// `exact` (holds for every value it depends on) or `assumed`, as in
/// `check`'s JSON.
pub fn status(d: &Diagnostic) -> &str {
    &d.facts.status
}

/// The quick fix of `d`, where it has one that may be applied (a safe one
/// is preferred; an unsafe one says so in its title).
pub fn quick_fix(uri: &Url, index: &LineIndex, d: &Diagnostic) -> Option<CodeAction> {
    let fix = d.fix.as_ref()?;
    if fix.applicability == Applicability::DisplayOnly
        || fix.edits.is_empty()
        || fix.edits.iter().any(|e| e.span.file != 0)
    {
        return None;
    }
    let edits = fix
        .edits
        .iter()
        .map(|e| TextEdit::new(index.range(e.span.start, e.span.end), e.content.clone()))
        .collect();
    let safe = fix.applicability == Applicability::Safe;
    let title = if safe {
        format!("{} ({})", fix.message, d.code)
    } else {
        format!(
            "{} ({}, unsafe: {})",
            fix.message,
            d.code,
            warplint_lints::unsafe_why(d.code)
        )
    };
    Some(CodeAction {
        title,
        kind: Some(CodeActionKind::QUICKFIX),
        diagnostics: Some(vec![diagnostic(uri, index, d)]),
        edit: Some(WorkspaceEdit::new(
            [(uri.clone(), edits)].into_iter().collect(),
        )),
        command: None,
        is_preferred: Some(safe),
        disabled: None,
        data: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_utf16_units_or_bytes_and_round_trip() {
        let text = "a\n\u{e9}x\u{1f600}y\nlast";
        for enc in [Encoding::Utf8, Encoding::Utf16] {
            let index = LineIndex::new(text, enc);
            for (offset, _) in text.char_indices() {
                assert_eq!(index.offset(index.position(offset)), offset, "{enc:?}");
            }
            assert_eq!(index.position(text.len()), Position::new(2, 4));
        }
        let y = text.find('y').unwrap();
        assert_eq!(
            LineIndex::new(text, Encoding::Utf16).position(y),
            Position::new(1, 4)
        );
        assert_eq!(
            LineIndex::new(text, Encoding::Utf8).position(y),
            Position::new(1, 7)
        );
        // Past the line's end: its end; past the last line: the text's end.
        let index = LineIndex::new(text, Encoding::Utf16);
        assert_eq!(index.offset(Position::new(0, 9)), 1);
        assert_eq!(index.offset(Position::new(7, 0)), text.len());
    }
}
