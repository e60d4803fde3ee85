//! Errors as part of a run's state. Each part of the work keeps the errors it
//! met with their places; merged, the first ones by place are what one reader
//! in file order would report, however the work was split, and nothing is
//! re-run to find them.
//!
//! The order is the one the datasets are read in when every looked-up
//! dataset is a table: the looked-up datasets first, in plan order, then the
//! items dataset; within a dataset, by line. An item that does not evaluate
//! is a *failure*: reading goes on, and up to [`MAX_ITEM_ERRORS`] are
//! reported. A record that cannot be read, a key that does not evaluate, a
//! key repeated under `duplicates: error` is a *stop*: nothing after it is.

use crate::base::codec::{Decoded, Reader, Writer};
use crate::base::diagnostic::Diagnostic;
use crate::eval::error::EvalError;

/// Item-evaluation errors to show before giving up.
pub(in crate::eval) const MAX_ITEM_ERRORS: usize = 10;

/// Where an error was met: its dataset's rank in reading order (looked-up
/// datasets by plan order, the items dataset last: its id), its line, then
/// its place among the records read on that line (several elements of a
/// JSON array may share one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(in crate::eval) struct ErrorPlace {
    pub(in crate::eval) dataset: usize,
    pub(in crate::eval) line: usize,
    pub(in crate::eval) seq: u64,
}

impl ErrorPlace {
    /// The item or record numbered `seq` on `line` of `dataset`.
    pub(in crate::eval) fn record(dataset: usize, line: usize, seq: u64) -> Self {
        ErrorPlace { dataset, line, seq }
    }

    /// A reader's stop on `line`: after every record read on it.
    pub(in crate::eval) fn reader(dataset: usize, line: usize) -> Self {
        ErrorPlace {
            dataset,
            line,
            seq: u64::MAX,
        }
    }
}

/// The errors met so far, first by place.
#[derive(Debug, Default)]
pub(in crate::eval) struct ErrorLog {
    /// Failures and at most one stop, in place order (equal places in the
    /// order met); none after the stop.
    errors: Vec<(ErrorPlace, Diagnostic)>,
    /// The place of the stop in `errors`, if there is one.
    stop: Option<ErrorPlace>,
}

impl ErrorLog {
    /// An item at `place` did not evaluate.
    pub(in crate::eval) fn failure(&mut self, place: ErrorPlace, error: Diagnostic) {
        if self.stop.is_some_and(|stop| place > stop) || self.has_enough_before(place) {
            return;
        }
        let at = self.errors.partition_point(|(p, _)| *p <= place);
        self.errors.insert(at, (place, error));
        self.errors.truncate(MAX_ITEM_ERRORS + 1);
    }

    /// Reading stopped at `place`: nothing after it counts.
    pub(in crate::eval) fn stop(&mut self, place: ErrorPlace, error: Diagnostic) {
        if self.stop.is_some_and(|stop| stop <= place) {
            return;
        }
        self.errors.retain(|(p, _)| *p <= place);
        let at = self.errors.partition_point(|(p, _)| *p <= place);
        self.errors.insert(at, (place, error));
        self.stop = Some(place);
    }

    /// Whether a reader that has met this log's errors in order can stop:
    /// as many failures are kept as are shown, so nothing later is reported.
    pub(in crate::eval) fn is_full(&self) -> bool {
        self.errors.len() >= MAX_ITEM_ERRORS
    }

    /// Whether [`MAX_ITEM_ERRORS`] errors come before `place` already.
    fn has_enough_before(&self, place: ErrorPlace) -> bool {
        self.errors.len() >= MAX_ITEM_ERRORS && self.errors[MAX_ITEM_ERRORS - 1].0 < place
    }

    /// Adds the errors of another part of the work (in any order).
    pub(in crate::eval) fn merge(&mut self, other: ErrorLog) {
        let stop = other.stop;
        for (place, error) in other.errors {
            if Some(place) == stop {
                self.stop(place, error);
            } else {
                self.failure(place, error);
            }
        }
    }

    /// The errors with their places, for a partial state sent elsewhere.
    pub(in crate::eval) fn encode(&self, w: &mut Writer) {
        w.seq(self.errors.iter(), |w, (place, error)| {
            w.usize(place.dataset);
            w.usize(place.line);
            w.u64(place.seq);
            w.diagnostic(error);
        });
        w.option(self.stop, |w, stop| {
            w.usize(stop.dataset);
            w.usize(stop.line);
            w.u64(stop.seq);
        });
    }

    pub(in crate::eval) fn decode(r: &mut Reader<'_>) -> Decoded<ErrorLog> {
        let place = |r: &mut Reader<'_>| -> Decoded<ErrorPlace> {
            Ok(ErrorPlace {
                dataset: r.usize()?,
                line: r.usize()?,
                seq: r.u64()?,
            })
        };
        Ok(ErrorLog {
            errors: r.seq(|r| Ok((place(r)?, r.diagnostic()?)))?,
            stop: r.option(place)?,
        })
    }

    pub(in crate::eval) fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }

    /// What is reported: the errors in place order up to the stop; past
    /// [`MAX_ITEM_ERRORS`] of them, the first that many and a line saying
    /// more were not shown. Empty when nothing went wrong.
    pub(in crate::eval) fn into_diagnostics(self) -> Vec<Diagnostic> {
        let mut errors: Vec<Diagnostic> = self.errors.into_iter().map(|(_, e)| e).collect();
        if errors.len() > MAX_ITEM_ERRORS
            || (errors.len() == MAX_ITEM_ERRORS && self.stop.is_none())
        {
            errors.truncate(MAX_ITEM_ERRORS);
            let kind = EvalError::TooManyItemErrors {
                shown: MAX_ITEM_ERRORS,
            };
            errors.push(Diagnostic::of(&kind));
        }
        errors
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// An error by its place and whether it stops: its message names both.
    fn error(place: ErrorPlace, stops: bool) -> Diagnostic {
        let kind = EvalError::TooManyItemErrors {
            shown: place.dataset * 100_000
                + place.line * 100
                + place.seq as usize * 10
                + usize::from(stops),
        };
        Diagnostic::of(&kind)
    }

    fn text(diagnostics: &[Diagnostic]) -> Vec<String> {
        diagnostics.iter().map(Diagnostic::render).collect()
    }

    /// What one reader meeting `events` in place order reports: each error
    /// in turn, ending at a stop or at the limit.
    fn one_reader(mut events: Vec<(ErrorPlace, bool)>) -> Vec<Diagnostic> {
        events.sort_by_key(|&(place, stops)| (place, stops));
        let mut out = Vec::new();
        for (place, stops) in events {
            out.push(error(place, stops));
            if stops {
                return out;
            }
            if out.len() == MAX_ITEM_ERRORS {
                out.push(Diagnostic::of(&EvalError::TooManyItemErrors {
                    shown: MAX_ITEM_ERRORS,
                }));
                return out;
            }
        }
        out
    }

    fn log_of(events: &[(ErrorPlace, bool)]) -> ErrorLog {
        let mut log = ErrorLog::default();
        for &(place, stops) in events {
            match stops {
                true => log.stop(place, error(place, stops)),
                false => log.failure(place, error(place, stops)),
            }
        }
        log
    }

    fn events() -> impl Strategy<Value = Vec<(ErrorPlace, bool)>> {
        let place = (0usize..2, 1usize..40, 0u64..3).prop_map(|(d, l, s)| ErrorPlace {
            dataset: d,
            line: l,
            seq: s,
        });
        prop::collection::vec((place, prop::bool::weighted(0.15)), 0..30).prop_map(|mut v| {
            // One event per place, as records have one place each.
            v.sort_by_key(|e| e.0);
            v.dedup_by_key(|e| e.0);
            v
        })
    }

    proptest! {
        /// However the errors are split into parts, met in any order within
        /// a part, and the parts merged in any grouping: what one reader in
        /// place order reports.
        #[test]
        fn merged_logs_report_what_one_reader_would(
            events in events(),
            cuts in prop::collection::vec(0usize..30, 0..4),
            seed in any::<u64>(),
        ) {
            let mut shuffled = events.clone();
            let mut rng = crate::base::stats::rng::SplitMix64::new(seed);
            for i in (1..shuffled.len()).rev() {
                shuffled.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
            }
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(shuffled.len())).collect();
            cuts.sort_unstable();
            let mut parts = Vec::new();
            let mut start = 0;
            for cut in cuts.into_iter().chain([shuffled.len()]) {
                parts.push(log_of(&shuffled[start..cut.max(start)]));
                start = cut.max(start);
            }
            // Merged right to left: a grouping other than the reading order.
            let mut merged = ErrorLog::default();
            while let Some(part) = parts.pop() {
                let mut part = part;
                part.merge(merged);
                merged = part;
            }
            prop_assert_eq!(text(&merged.into_diagnostics()), text(&one_reader(events)));
        }
    }

    #[test]
    fn a_stop_cuts_what_comes_after_it_and_the_limit_adds_a_line() {
        let at = |line| ErrorPlace::record(1, line, 0);
        let mut log = ErrorLog::default();
        log.failure(at(5), error(at(5), false));
        log.stop(ErrorPlace::reader(1, 3), error(at(3), true));
        log.failure(at(2), error(at(2), false));
        assert_eq!(log.into_diagnostics().len(), 2);
        let mut full = ErrorLog::default();
        for line in 1..=MAX_ITEM_ERRORS + 3 {
            full.failure(at(line), error(at(line), false));
        }
        assert!(full.is_full());
        let shown = full.into_diagnostics();
        assert_eq!(shown.len(), MAX_ITEM_ERRORS + 1);
        assert!(shown[MAX_ITEM_ERRORS].render().contains("10"));
    }
}
