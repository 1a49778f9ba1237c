//! A progress bar on stderr for long runs in a terminal (human formats
//! only; machine formats print nothing extra).

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};

use crate::Format;

/// Files from which a bar is worth showing.
const MIN_FILES: usize = 20;

pub struct Progress(Option<ProgressBar>);

impl Progress {
    pub fn new(files: usize, format: Format) -> Progress {
        let human = matches!(format, Format::Full | Format::Concise);
        if !human || files < MIN_FILES || !std::io::stderr().is_terminal() {
            return Progress(None);
        }
        let bar = ProgressBar::new(files as u64);
        if let Ok(style) = ProgressStyle::with_template("{bar:30} {pos}/{len} files {elapsed}") {
            bar.set_style(style);
        }
        Progress(Some(bar))
    }

    pub fn tick(&self) {
        if let Some(b) = &self.0 {
            b.inc(1);
        }
    }

    pub fn finish(&self) {
        if let Some(b) = &self.0 {
            b.finish_and_clear();
        }
    }
}
