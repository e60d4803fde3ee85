//! Where a CSV row's quotes open and close: a scan over a row's raw bytes that
//! finds the cell a byte belongs to, for errors that name a column.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};

use crate::base::diagnostic::Diagnostic;
use crate::data::file::open_error;
use crate::plan::DatasetPlan;

/// A second look at one row's bytes, to locate its cells: where each starts (line,
/// character column), where the row ends, and a quote still open at the end of the
/// file. Only errors pay for it.
pub(super) struct Scan {
    pub(super) cells: Vec<(usize, usize)>,
    pub(super) end: (usize, usize),
    pub(super) open_quote: Option<(usize, usize)>,
    /// Lines spanned by quoted cells that hold line breaks.
    pub(super) quoted_lines: Vec<(usize, usize)>,
    pub(super) state: State,
    pub(super) line: usize,
    pub(super) column: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum State {
    Start,
    Unquoted,
    Quoted,
    QuoteSeen,
    Ended,
}

impl Scan {
    /// Scans the row that starts at `offset`, on `line`, of the dataset's file.
    pub(super) fn row(
        dataset: &DatasetPlan,
        offset: u64,
        line: usize,
        delimiter: u8,
    ) -> Result<Scan, Diagnostic> {
        let io = |e: std::io::Error| open_error(dataset, &e);
        let mut file = File::open(&dataset.path).map_err(io)?;
        file.seek(SeekFrom::Start(offset)).map_err(io)?;
        let mut scan = Scan::new(line);
        let mut skip_bom = offset == 0;
        for (i, b) in BufReader::new(file).bytes().enumerate() {
            let b = b.map_err(io)?;
            // A byte order mark takes no column.
            if skip_bom && i < 3 && b == [0xEF, 0xBB, 0xBF][i] {
                continue;
            }
            skip_bom = false;
            if !scan.push(b, delimiter) {
                return Ok(scan);
            }
        }
        scan.finish();
        Ok(scan)
    }

    pub(super) fn new(line: usize) -> Scan {
        Scan {
            cells: vec![(line, 1)],
            end: (line, 1),
            open_quote: None,
            quoted_lines: Vec::new(),
            state: State::Start,
            line,
            column: 1,
        }
    }

    /// Takes one byte; false once the row has ended.
    pub(super) fn push(&mut self, b: u8, delimiter: u8) -> bool {
        let ends_row = b == b'\n' || b == b'\r';
        let mut new_cell = false;
        match self.state {
            State::Ended => return false,
            State::Start | State::Unquoted if ends_row => self.state = State::Ended,
            State::Start if b == b'"' => {
                self.open_quote = Some((self.line, self.column));
                self.state = State::Quoted;
            }
            State::Start | State::Unquoted if b == delimiter => new_cell = true,
            State::Start => self.state = State::Unquoted,
            State::Unquoted => {}
            State::Quoted if b == b'"' => self.state = State::QuoteSeen,
            State::Quoted => {}
            // A doubled quote inside a quoted cell.
            State::QuoteSeen if b == b'"' => self.state = State::Quoted,
            State::QuoteSeen => {
                self.close_quote();
                if ends_row {
                    self.state = State::Ended;
                } else if b == delimiter {
                    new_cell = true;
                } else {
                    self.state = State::Unquoted;
                }
            }
        }
        if self.state == State::Ended {
            self.end = (self.line, self.column);
            return false;
        }
        if b == b'\n' {
            self.line += 1;
            self.column = 1;
        } else if b & 0xC0 != 0x80 {
            self.column += 1;
        }
        if new_cell {
            self.cells.push((self.line, self.column));
            self.state = State::Start;
        }
        true
    }

    /// The end of the file.
    pub(super) fn finish(&mut self) {
        if self.state == State::QuoteSeen {
            self.close_quote();
        }
        self.end = (self.line, self.column);
    }

    pub(super) fn close_quote(&mut self) {
        if let Some((from, _)) = self.open_quote.take() {
            if from != self.line {
                self.quoted_lines.push((from, self.line));
            }
        }
    }
}
