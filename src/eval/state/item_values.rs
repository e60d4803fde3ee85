//! Each item's contribution to the metrics computed from items
//! (`plan.stats.columns`) and its observation of every aggregate that other
//! metrics computed from items read (`plan.stats.observed`): what intervals
//! resample, what paired tests match by key against the baseline, and what
//! item-values.jsonl keeps. Filled item by
//! item in each chunk and concatenated in file order, so it does not depend on
//! the thread count.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use crate::base::codec::{Decoded, Reader, Writer};
use crate::base::parallel::map_in_parallel;
use crate::base::value::{push_number, Key};
use crate::ir::AggregateId;
use crate::library::aggregates::AggregateFn;
use crate::plan::Plan;
use crate::report_model::item_values::{
    push_observation, push_value, Observation, ValueKind, FLAG_ENTRIES,
};
use crate::stats::aggregate::Accumulator;
use crate::stats::resample::{flag_number, Flags, Observed, NOT_COUNTED};

/// One run's items, each with one contribution per column.
#[derive(Debug, Clone, Default)]
pub struct ValueTable {
    /// The run, with several.
    pub run: Option<Arc<str>>,
    pub keys: Vec<Option<Key>>,
    /// Each item's place in its file (its line, then its number on the
    /// line; or its number among the items), in item order: what a merge
    /// of tables of interleaved items orders them by.
    places: Vec<u64>,
    /// Per column (`plan.stats.columns`), every item's contribution in item
    /// order: its observation's number, `None` where the item does not count
    /// (see `report_model::item_values`).
    columns: Vec<Observations>,
    /// Per observed aggregate (`plan.stats.observed`), where its observations
    /// are kept.
    observed: Vec<Kept>,
    /// The observations of the observed aggregates that are no metric's
    /// column, every item's in item order.
    own: Vec<Observations>,
    /// Row by row: item `i`'s value of slice `s` is `slices[i * plan.slices.len() + s]`.
    pub slices: Vec<Arc<str>>,
}

/// Where an observed aggregate's observations are kept: a metric's column
/// where one folds the same aggregate (`StatsPlan::column_of`), else apart.
#[derive(Debug, Clone, Copy)]
enum Kept {
    Column(usize),
    Own(usize),
}

/// [`FLAG_ENTRIES`], each padded to eight bytes (one store), with its length.
const PADDED_FLAG_ENTRIES: [([u8; 8], usize); 3] = {
    let mut padded = [([0; 8], 0); 3];
    let mut flag = 0;
    while flag < 3 {
        let entry = FLAG_ENTRIES[flag];
        let mut i = 0;
        while i < entry.len() {
            padded[flag].0[i] = entry[i];
            i += 1;
        }
        padded[flag].1 = entry.len();
        flag += 1;
    }
    padded
};

/// A flag's entry of item-values.jsonl, padded to eight bytes, and its length.
#[inline]
fn flag_entry(flag: u8) -> (&'static [u8; 8], usize) {
    let (padded, len) = &PADDED_FLAG_ENTRIES[usize::from(flag.min(NOT_COUNTED))];
    (padded, *len)
}

/// A table's columns as its lines of item-values.jsonl write them, sorted
/// out once per part of the file rather than matched per item and column:
/// each run of neighbouring `count` and `ratio` columns (most of a wide
/// file's: the 46-aggregate benchmark writes 44 a line) as their bytes, each
/// other column as it is.
pub struct LineWriter<'t> {
    segments: Vec<Segment<'t>>,
}

enum Segment<'t> {
    Flags(Vec<&'t [u8]>),
    Numbers(&'t [Option<f64>]),
    /// Any other column, with how its entry is written.
    Other(&'t Observations, fn(&Observations, usize, &mut Vec<u8>)),
}

impl<'t> LineWriter<'t> {
    fn new(table: &'t ValueTable) -> Self {
        let metric = table.columns.iter().map(|c| (c, true));
        let own = table.own.iter().map(|c| (c, false));
        let mut segments = Vec::new();
        for (column, is_metric) in metric.chain(own) {
            match (column, segments.last_mut()) {
                (Observations::Flags(flags), Some(Segment::Flags(run))) => run.push(&flags[..]),
                (Observations::Flags(flags), _) => segments.push(Segment::Flags(vec![&flags[..]])),
                (Observations::Numbers(numbers), _) => segments.push(Segment::Numbers(numbers)),
                (other, _) => segments.push(Segment::Other(
                    other,
                    match is_metric {
                        true => Observations::push_value_entry,
                        false => Observations::push_observation_entry,
                    },
                )),
            }
        }
        LineWriter { segments }
    }

    /// Appends item `item`'s entries, each after a comma (see
    /// [`ValueTable::line_writer`]).
    pub fn push_entries(&self, item: usize, out: &mut Vec<u8>) {
        // The last number written and where its text is in `out`: an item's
        // number is often in several columns (a score's mean, its
        // percentile, its max), and its text is copied rather than made again.
        let mut last_number: Option<(u64, Range<usize>)> = None;
        for segment in &self.segments {
            match segment {
                Segment::Flags(columns) => push_flag_entries(columns, item, out),
                Segment::Numbers(numbers) => {
                    // The bytes of `push_value`.
                    let Some(x) = numbers[item] else {
                        out.extend_from_slice(b",null");
                        continue;
                    };
                    out.push(b',');
                    match &last_number {
                        Some((bits, text)) if *bits == x.to_bits() => {
                            out.extend_from_within(text.clone())
                        }
                        _ => {
                            let start = out.len();
                            push_number(out, x);
                            last_number = Some((x.to_bits(), start..out.len()));
                        }
                    }
                }
                Segment::Other(column, push) => push(column, item, out),
            }
        }
    }
}

/// Appends item `item`'s entry of each flag column, each a byte that picks
/// its text: gathered eight bytes a store at a place kept in a register,
/// since appended to `out` one at a time each entry waited on the last one's
/// length, written to memory and read back.
#[inline]
fn push_flag_entries(columns: &[&[u8]], item: usize, out: &mut Vec<u8>) {
    let mut pending = [0u8; 256];
    let mut n = 0;
    for flags in columns {
        if n > pending.len() - 8 {
            out.extend_from_slice(&pending[..n]);
            n = 0;
        }
        let (padded, len) = flag_entry(flags[item]);
        pending[n..n + 8].copy_from_slice(padded);
        n += len;
    }
    out.extend_from_slice(&pending[..n]);
}

/// One aggregate's observations, for a metric's column or an observed
/// aggregate. A `count` or `ratio` observes 1, 0 or nothing: a byte each (at
/// 1M items, 1 MB instead of 16 MB per column; the 46-aggregate benchmark
/// keeps 44 columns). A number or nothing otherwise; anything else (two
/// labels, a confidence) as it is. An observation a kind cannot hold turns
/// the column into the general one, so what is read back is always what was
/// pushed.
#[derive(Debug, Clone)]
enum Observations {
    Flags(Vec<u8>),
    Numbers(Vec<Option<f64>>),
    Any(Vec<Observation>),
}

impl Observations {
    fn of(function: AggregateFn) -> Self {
        match function {
            AggregateFn::Count | AggregateFn::Ratio => Observations::Flags(Vec::new()),
            AggregateFn::Sum
            | AggregateFn::Mean
            | AggregateFn::Min
            | AggregateFn::Max
            | AggregateFn::Percentile(_) => Observations::Numbers(Vec::new()),
            _ => Observations::Any(Vec::new()),
        }
    }

    /// A metric column's: a byte for a ratio or count, a number otherwise.
    fn of_kind(kind: ValueKind) -> Self {
        match kind {
            ValueKind::Ratio | ValueKind::Count => Observations::Flags(Vec::new()),
            ValueKind::Mean | ValueKind::Sum => Observations::Numbers(Vec::new()),
        }
    }

    fn len(&self) -> usize {
        match self {
            Observations::Flags(flags) => flags.len(),
            Observations::Numbers(numbers) => numbers.len(),
            Observations::Any(all) => all.len(),
        }
    }

    // Inlined into the item's loop over its columns (a call per column and
    // item was a tenth of the 46-aggregate benchmark); turning a column
    // general is out of line.
    #[inline(always)]
    fn push(&mut self, observation: &Observation) {
        match (&mut *self, observation) {
            (Observations::Flags(flags), Observation::Out) => flags.push(NOT_COUNTED),
            // +0.0 exactly: a -0.0 would come back as +0.0.
            (Observations::Flags(flags), Observation::Number(x))
                if *x == 1.0 || x.to_bits() == 0 =>
            {
                flags.push(u8::from(*x == 1.0))
            }
            (Observations::Numbers(numbers), Observation::Out) => numbers.push(None),
            (Observations::Numbers(numbers), Observation::Number(x)) => numbers.push(Some(*x)),
            (Observations::Any(all), observation) => all.push(observation.clone()),
            (_, observation) => self.make_any_and_push(observation),
        }
    }

    /// Pushes a count's or ratio's observation given as its flag.
    #[inline(always)]
    fn push_flag(&mut self, flag: u8) {
        match self {
            Observations::Flags(flags) => flags.push(flag),
            other => other.push(&flag_number(flag).map_or(Observation::Out, Observation::Number)),
        }
    }

    #[cold]
    #[inline(never)]
    fn make_any_and_push(&mut self, observation: &Observation) {
        self.make_any().push(observation.clone());
    }

    fn get(&self, item: usize) -> Cow<'_, Observation> {
        match self {
            Observations::Flags(flags) => Cow::Owned(
                Flags::of(flags)
                    .number(item)
                    .map_or(Observation::Out, Observation::Number),
            ),
            Observations::Numbers(numbers) => {
                Cow::Owned(numbers[item].map_or(Observation::Out, Observation::Number))
            }
            Observations::Any(all) => Cow::Borrowed(&all[item]),
        }
    }

    /// Item `item`'s number (a condition's 1 or 0), if it has one.
    fn number(&self, item: usize) -> Option<f64> {
        match self {
            Observations::Flags(flags) => Flags::of(flags).number(item),
            Observations::Numbers(numbers) => numbers[item],
            Observations::Any(all) => all[item].number(),
        }
    }

    /// Appends item `item`'s contribution as an entry of item-values.jsonl
    /// (a wide line's flags go through [`LineWriter::push_entries`]).
    #[inline]
    fn push_value_entry(&self, item: usize, out: &mut Vec<u8>) {
        match self {
            Observations::Flags(flags) => {
                let (padded, len) = flag_entry(flags[item]);
                out.extend_from_slice(&padded[..len]);
            }
            Observations::Numbers(numbers) => push_value(out, numbers[item]),
            Observations::Any(all) => push_value(out, all[item].number()),
        }
    }

    /// Appends item `item`'s observation as an entry of item-values.jsonl.
    #[inline]
    fn push_observation_entry(&self, item: usize, out: &mut Vec<u8>) {
        match self {
            // An observation of a number, 1 or 0 is its number; none is null.
            Observations::Flags(_) | Observations::Numbers(_) => self.push_value_entry(item, out),
            Observations::Any(all) => push_observation(out, &all[item]),
        }
    }

    /// The general column, with every observation kept so far.
    fn make_any(&mut self) -> &mut Vec<Observation> {
        if !matches!(self, Observations::Any(_)) {
            let all = (0..self.len()).map(|i| self.get(i).into_owned()).collect();
            *self = Observations::Any(all);
        }
        match self {
            Observations::Any(all) => all,
            _ => unreachable!("made general above"),
        }
    }

    /// Folds every observation into `accumulator`, a count's or ratio's, in
    /// item order: as [`Accumulator::observe_one`] of each would.
    fn count_into(&self, from: usize, accumulator: &mut Accumulator) {
        match self {
            // Two counts a column over its bytes, a flag each.
            Observations::Flags(flags) => {
                let flags = &flags[from..];
                let hits = count_bytes(flags, |f| f == 1);
                let counted = count_bytes(flags, |f| f != NOT_COUNTED);
                accumulator.observe_flags(hits, counted);
            }
            _ => {
                for item in from..self.len() {
                    // A count's or ratio's observation is a number or `Out`,
                    // which fold without error.
                    let _ = accumulator.observe_one(&self.get(item));
                }
            }
        }
    }

    fn encode(&self, w: &mut Writer) {
        match self {
            Observations::Flags(flags) => {
                w.u8(0);
                w.raw(flags);
            }
            Observations::Numbers(numbers) => {
                w.u8(1);
                w.seq(numbers.iter(), |w, x| w.option(*x, Writer::f64));
            }
            Observations::Any(all) => {
                w.u8(2);
                w.seq(all.iter(), |w, observation| match observation {
                    Observation::Out => w.u8(0),
                    Observation::Number(x) => {
                        w.u8(1);
                        w.f64(*x);
                    }
                    Observation::Labels(labels) => {
                        w.u8(2);
                        w.str(&labels.0);
                        w.str(&labels.1);
                    }
                    Observation::Calibrated(confidence, correct) => {
                        w.u8(3);
                        w.f64(*confidence);
                        w.bool(*correct);
                    }
                });
            }
        }
    }

    fn decode(r: &mut Reader<'_>) -> Decoded<Observations> {
        Ok(match r.u8()? {
            0 => Observations::Flags(r.raw()?.to_vec()),
            1 => Observations::Numbers(r.seq(|r| r.option(Reader::f64))?),
            2 => Observations::Any(r.seq(|r| {
                Ok(match r.u8()? {
                    0 => Observation::Out,
                    1 => Observation::Number(r.f64()?),
                    2 => Observation::labels(r.arc_str()?, r.arc_str()?),
                    3 => Observation::Calibrated(r.f64()?, r.bool()?),
                    _ => return Err(r.expected("an observation's tag")),
                })
            })?),
            _ => return Err(r.expected("a column's kind")),
        })
    }

    /// This column's and `other`'s observations, the `i`-th from `other` where
    /// `from_other[i]`, in order.
    fn interleave(self, other: Observations, from_other: &[bool]) -> Observations {
        match (self, other) {
            (Observations::Flags(a), Observations::Flags(b)) => {
                Observations::Flags(interleave(a, b, from_other, 1))
            }
            (Observations::Numbers(a), Observations::Numbers(b)) => {
                Observations::Numbers(interleave(a, b, from_other, 1))
            }
            (mut mine, mut theirs) => {
                let a = std::mem::take(mine.make_any());
                let b = std::mem::take(theirs.make_any());
                Observations::Any(interleave(a, b, from_other, 1))
            }
        }
    }

    fn extend(&mut self, other: Observations) {
        match (&mut *self, other) {
            (Observations::Flags(a), Observations::Flags(b)) => a.extend(b),
            (Observations::Numbers(a), Observations::Numbers(b)) => a.extend(b),
            (_, mut other) => {
                let theirs = std::mem::take(other.make_any());
                self.make_any().extend(theirs);
            }
        }
    }
}

/// The rows of `a` and `b` (`width` entries each) in the order
/// `from_other` gives: the `i`-th row is `b`'s next where `from_other[i]`.
fn interleave<T>(a: Vec<T>, b: Vec<T>, from_other: &[bool], width: usize) -> Vec<T> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut a, mut b) = (a.into_iter(), b.into_iter());
    for &theirs in from_other {
        let rows = if theirs { &mut b } else { &mut a };
        out.extend(rows.by_ref().take(width));
    }
    out
}

/// How many of `bytes` are `wanted`. Counted into a byte per vector lane,
/// 255 bytes at a time (no lane can overflow), so that the compiler
/// vectorises it 16 or 32 bytes to an instruction; `filter().count()` adds
/// into 64-bit lanes, widening every byte, at four instructions a byte.
fn count_bytes(bytes: &[u8], wanted: impl Fn(u8) -> bool) -> u64 {
    (bytes.chunks(255))
        .map(|chunk| chunk.iter().fold(0u8, |n, &b| n + u8::from(wanted(b))))
        .map(u64::from)
        .sum()
}

impl ValueTable {
    /// An empty table with `plan`'s columns and observed aggregates.
    pub fn new(plan: &Plan) -> Self {
        let columns = plan
            .stats
            .columns
            .iter()
            .map(|c| Observations::of_kind(c.kind))
            .collect();
        let (mut observed, mut own) = (Vec::new(), Vec::new());
        for a in &plan.stats.observed {
            match plan.stats.column_of(*a) {
                Some(c) => observed.push(Kept::Column(c)),
                None => {
                    observed.push(Kept::Own(own.len()));
                    own.push(Observations::of(plan.aggregates[a.index()].function));
                }
            }
        }
        ValueTable {
            columns,
            observed,
            own,
            ..ValueTable::default()
        }
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Item `item`'s contribution to column `c`.
    pub fn value(&self, item: usize, c: usize) -> Option<f64> {
        self.columns[c].number(item)
    }

    /// Writes items' entries of item-values.jsonl, each after a comma: an
    /// item's contribution to every column (the bytes of `push_value` of
    /// [`ValueTable::value`]), then its observation of every observed
    /// aggregate kept apart from the columns (those of `push_observation` of
    /// [`ValueTable::observation`]); a reader takes the others' from their
    /// columns.
    pub fn line_writer(&self) -> LineWriter<'_> {
        LineWriter::new(self)
    }

    /// Where aggregate `a`'s observations are kept, if they are: a metric's
    /// column or a column of its own, numbered as [`ValueTable::count_into`]
    /// takes it.
    pub(in crate::eval) fn column_keeping(&self, plan: &Plan, a: AggregateId) -> Option<usize> {
        if let Some(c) = plan.stats.column_of(a) {
            return Some(c);
        }
        let k = plan.stats.observed.iter().position(|o| *o == a)?;
        match self.observed[k] {
            Kept::Column(c) => Some(c),
            Kept::Own(j) => Some(self.columns.len() + j),
        }
    }

    /// Folds the observations of items `from..` in column `column` (see
    /// [`ValueTable::column_keeping`]) into `accumulator`, a count's or
    /// ratio's: what folding them item by item would have added.
    pub(in crate::eval) fn count_into(
        &self,
        column: usize,
        from: usize,
        accumulator: &mut Accumulator,
    ) {
        match column.checked_sub(self.columns.len()) {
            None => self.columns[column].count_into(from, accumulator),
            Some(j) => self.own[j].count_into(from, accumulator),
        }
    }

    /// Item `item`'s observation of the `k`-th observed aggregate.
    pub fn observation(&self, item: usize, k: usize) -> Cow<'_, Observation> {
        self.observed_column(k).get(item)
    }

    fn observed_column(&self, k: usize) -> &Observations {
        match self.observed[k] {
            Kept::Column(c) => &self.columns[c],
            Kept::Own(j) => &self.own[j],
        }
    }

    /// Every item's contribution to column `c`, in item order.
    pub fn column(&self, c: usize) -> impl Iterator<Item = Option<f64>> + Clone + '_ {
        ColumnValues::of(&self.columns[c])
    }

    /// Every item's key, place, slice values and contributions, for a
    /// partial state sent elsewhere.
    pub(in crate::eval) fn encode(&self, w: &mut Writer) {
        w.option(self.run.as_deref(), Writer::str);
        w.seq(self.keys.iter(), |w, key| {
            w.option(key.as_ref(), Writer::key)
        });
        w.seq(self.places.iter(), |w, place| w.u64(*place));
        w.seq(self.slices.iter(), |w, value| w.str(value));
        for column in self.columns.iter().chain(&self.own) {
            column.encode(w);
        }
    }

    /// The table [`ValueTable::encode`] wrote, for `plan`.
    pub(in crate::eval) fn decode(r: &mut Reader<'_>, plan: &Plan) -> Decoded<ValueTable> {
        let mut table = ValueTable::new(plan);
        table.run = r.option(Reader::arc_str)?;
        table.keys = r.seq(|r| r.option(Reader::key))?;
        table.places = r.seq(Reader::u64)?;
        table.slices = r.seq(Reader::arc_str)?;
        for column in table.columns.iter_mut().chain(&mut table.own) {
            *column = Observations::decode(r)?;
        }
        let rows = table.keys.len();
        let width = plan.slices.len();
        let whole = table.places.len() == rows
            && table.slices.len() == rows * width
            && (table.columns.iter().chain(&table.own)).all(|c| c.len() == rows);
        match whole {
            true => Ok(table),
            false => Err(r.expected("item values of one length")),
        }
    }

    /// Whether every item of `other` comes after every item here.
    pub(in crate::eval) fn precedes(&self, other: &ValueTable) -> bool {
        match (self.places.last(), other.places.first()) {
            (Some(last), Some(first)) => last < first,
            _ => true,
        }
    }

    /// Adds the items of `other` (another table of the same run's items, in
    /// any order relative to these), every vector merged by the items'
    /// places: what one table of all the items in place order holds.
    pub(in crate::eval) fn merge(&mut self, other: ValueTable) {
        if self.precedes(&other) {
            return self.merge_all(vec![other], 1);
        }
        if other.precedes(self) {
            let mine = std::mem::replace(self, other);
            return self.merge_all(vec![mine], 1);
        }
        // Which table each item of the merge comes from, in place order.
        let (a, b) = (&self.places, &other.places);
        let mut from_other = Vec::with_capacity(a.len() + b.len());
        let (mut i, mut j) = (0, 0);
        while i < a.len() || j < b.len() {
            let theirs = j < b.len() && (i == a.len() || b[j] < a[i]);
            from_other.push(theirs);
            if theirs {
                j += 1;
            } else {
                i += 1;
            }
        }
        let width = match self.len() {
            0 => 0,
            n => self.slices.len() / n,
        };
        self.keys = interleave(std::mem::take(&mut self.keys), other.keys, &from_other, 1);
        self.places = interleave(
            std::mem::take(&mut self.places),
            other.places,
            &from_other,
            1,
        );
        self.slices = interleave(
            std::mem::take(&mut self.slices),
            other.slices,
            &from_other,
            width,
        );
        let columns = (self.columns.iter_mut())
            .chain(&mut self.own)
            .zip(other.columns.into_iter().chain(other.own));
        for (column, theirs) in columns {
            let mine = std::mem::replace(column, Observations::Flags(Vec::new()));
            *column = mine.interleave(theirs, &from_other);
        }
    }

    /// Appends the tables of the later chunks, in order. Each vector (the
    /// keys, the slices, every column) is grown on its own, on up to
    /// `threads` threads: on one, after the chunks were read, this was 70 ms
    /// of a 1M-item run with the other core idle.
    pub(in crate::eval) fn merge_all(&mut self, others: Vec<ValueTable>, threads: usize) {
        let mut keys = Vec::with_capacity(others.len());
        let mut places = Vec::with_capacity(others.len());
        let mut slices = Vec::with_capacity(others.len());
        let mut columns: Vec<Vec<Observations>> = self.columns.iter().map(|_| Vec::new()).collect();
        let mut own: Vec<Vec<Observations>> = self.own.iter().map(|_| Vec::new()).collect();
        for other in others {
            keys.push(other.keys);
            places.push(other.places);
            slices.push(other.slices);
            (columns.iter_mut().zip(other.columns)).for_each(|(all, theirs)| all.push(theirs));
            (own.iter_mut().zip(other.own)).for_each(|(all, theirs)| all.push(theirs));
        }
        let mut jobs = vec![
            Merge::Keys(&mut self.keys, keys),
            Merge::Places(&mut self.places, places),
            Merge::Slices(&mut self.slices, slices),
        ];
        let columns = (self.columns.iter_mut())
            .chain(&mut self.own)
            .zip(columns.into_iter().chain(own));
        jobs.extend(columns.map(|(column, theirs)| Merge::Column(column, theirs)));
        let jobs: Vec<Mutex<Option<Merge<'_>>>> =
            jobs.into_iter().map(|job| Mutex::new(Some(job))).collect();
        map_in_parallel(threads, jobs.len(), |j| {
            let job = jobs[j].lock().expect("never poisoned").take();
            match job.expect("each job done once") {
                Merge::Keys(keys, theirs) => theirs.into_iter().for_each(|t| keys.extend(t)),
                Merge::Places(places, theirs) => theirs.into_iter().for_each(|t| places.extend(t)),
                Merge::Slices(slices, theirs) => theirs.into_iter().for_each(|t| slices.extend(t)),
                Merge::Column(column, theirs) => theirs.into_iter().for_each(|t| column.extend(t)),
            }
        });
    }
}

/// A column's numbers in item order ([`Observations::number`] of each),
/// its kind matched once rather than per item: intervals read a column in
/// whole, several times (the 46-aggregate benchmark, 40 columns).
#[derive(Clone)]
enum ColumnValues<'t> {
    Flags(std::slice::Iter<'t, u8>),
    Numbers(std::slice::Iter<'t, Option<f64>>),
    Any(std::slice::Iter<'t, Observation>),
}

impl<'t> ColumnValues<'t> {
    fn of(column: &'t Observations) -> Self {
        match column {
            Observations::Flags(flags) => ColumnValues::Flags(flags.iter()),
            Observations::Numbers(numbers) => ColumnValues::Numbers(numbers.iter()),
            Observations::Any(all) => ColumnValues::Any(all.iter()),
        }
    }
}

impl Iterator for ColumnValues<'_> {
    type Item = Option<f64>;

    #[inline]
    fn next(&mut self) -> Option<Option<f64>> {
        match self {
            ColumnValues::Flags(flags) => flags.next().map(|&flag| flag_number(flag)),
            ColumnValues::Numbers(numbers) => numbers.next().copied(),
            ColumnValues::Any(all) => all.next().map(Observation::number),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = match self {
            ColumnValues::Flags(flags) => flags.len(),
            ColumnValues::Numbers(numbers) => numbers.len(),
            ColumnValues::Any(all) => all.len(),
        };
        (left, Some(left))
    }

    // Whole columns are folded (sums, counts): each kind in a loop of its own.
    fn fold<B, F: FnMut(B, Option<f64>) -> B>(self, init: B, mut f: F) -> B {
        match self {
            ColumnValues::Flags(flags) => flags.fold(init, |acc, &flag| f(acc, flag_number(flag))),
            ColumnValues::Numbers(numbers) => numbers.fold(init, |acc, &x| f(acc, x)),
            ColumnValues::Any(all) => all.fold(init, |acc, o| f(acc, o.number())),
        }
    }
}

/// One vector of a table and what the later chunks append to it.
enum Merge<'t> {
    Keys(&'t mut Vec<Option<Key>>, Vec<Vec<Option<Key>>>),
    Places(&'t mut Vec<u64>, Vec<Vec<u64>>),
    Slices(&'t mut Vec<Arc<str>>, Vec<Vec<Arc<str>>>),
    Column(&'t mut Observations, Vec<Observations>),
}

impl Observed for ValueTable {
    fn observation(&self, item: usize, k: usize) -> Cow<'_, Observation> {
        ValueTable::observation(self, item, k)
    }

    fn flags(&self, k: usize) -> Option<Flags<'_>> {
        match self.observed_column(k) {
            Observations::Flags(flags) => Some(Flags::of(flags)),
            _ => None,
        }
    }
}

/// Where each column of a [`ValueTable`] (numbered as
/// [`ValueTable::column_keeping`] numbers them) takes an item's observation
/// from: its aggregate's contribution, or its flag for the aggregates scored
/// as flags (`ItemChunk::flagged`). Worked out once per chunk, so that adding
/// an item is a loop over each list without a test per column.
#[derive(Debug, Default)]
pub(in crate::eval) struct Sources {
    /// (column, aggregate) pairs.
    contributions: Vec<(usize, usize)>,
    flags: Vec<(usize, usize)>,
    /// The flags of the last items, row by row in `flags`' order, not yet in
    /// their columns: up to `PENDING_ROWS` items are moved column by column
    /// at once (`flush`), a tight loop per column, instead of a push into
    /// each column per item (a tenth of a 46-aggregate run at 1M items).
    pending: Vec<u8>,
}

/// Items whose flags wait in `Sources::pending`: their 44 bytes each in the
/// 46-aggregate benchmark stay within the first-level cache.
const PENDING_ROWS: usize = 64;

impl ValueTable {
    pub(in crate::eval) fn sources(&self, plan: &Plan, flagged: &[bool]) -> Sources {
        let metric_columns = (plan.stats.columns.iter().enumerate())
            .map(|(c, column)| (c, column.aggregate.index()));
        let own_columns =
            (self.observed.iter().zip(&plan.stats.observed)).filter_map(|(kept, a)| match *kept {
                Kept::Own(j) => Some((self.columns.len() + j, a.index())),
                Kept::Column(_) => None,
            });
        let (flags, contributions) = metric_columns
            .chain(own_columns)
            .partition(|&(_, a)| flagged[a]);
        Sources {
            contributions,
            flags,
            pending: Vec::new(),
        }
    }

    fn column_mut(&mut self, column: usize) -> &mut Observations {
        match column.checked_sub(self.columns.len()) {
            None => &mut self.columns[column],
            Some(j) => &mut self.own[j],
        }
    }
}

/// Adds one item: `contributions` and `flags` hold one entry per aggregate
/// of the plan, each column's read from where `sources` says. Its flags may
/// wait in `sources` until `flush`.
pub(in crate::eval) fn push(
    table: &mut ValueTable,
    sources: &mut Sources,
    (key, place): (Option<&Key>, u64),
    contributions: &[Observation],
    flags: &[u8],
) {
    table.keys.push(key.cloned());
    table.places.push(place);
    for &(c, a) in &sources.contributions {
        table.column_mut(c).push(&contributions[a]);
    }
    if sources.flags.is_empty() {
        return;
    }
    (sources.pending).extend(sources.flags.iter().map(|&(_, a)| flags[a]));
    if sources.pending.len() >= PENDING_ROWS * sources.flags.len() {
        flush(table, sources);
    }
}

/// Moves the flags waiting in `sources` into their columns, in item order:
/// what has to happen before the table is read.
pub(in crate::eval) fn flush(table: &mut ValueTable, sources: &mut Sources) {
    let width = sources.flags.len();
    if width == 0 || sources.pending.is_empty() {
        return;
    }
    let rows = || sources.pending.chunks_exact(width);
    for (j, &(c, _)) in sources.flags.iter().enumerate() {
        let column_flags = rows().map(|row| row[j]);
        match table.column_mut(c) {
            Observations::Flags(flags) => flags.extend(column_flags),
            other => column_flags.for_each(|flag| other.push_flag(flag)),
        }
    }
    sources.pending.clear();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::stats::rng::SplitMix64;

    fn read_back(column: &Observations) -> Vec<Observation> {
        (0..column.len())
            .map(|i| column.get(i).into_owned())
            .collect()
    }

    /// Items pushed with some of their flags waiting in `Sources` end up, once
    /// flushed, in their columns in item order, beside the columns pushed
    /// directly, however many items wait.
    #[test]
    fn waiting_flags_reach_their_columns_in_item_order() {
        let plan = crate::plan::testing::plan(
            "  a: ratio(j.gold == 'a' where j.pred == 'a')\n  \
             b: count(j.pred == 'b')\n  \
             m: mean(j.score)\n",
        );
        let flagged: Vec<bool> = (plan.aggregates.iter())
            .map(|a| matches!(a.function, AggregateFn::Count | AggregateFn::Ratio))
            .collect();
        let flag_of = |i: usize, a: usize| ((i * 7 + a * 5) % 3) as u8;
        let number_of = |i: usize, a: usize| (i * 10 + a) as f64;
        for n in [
            0,
            1,
            PENDING_ROWS - 1,
            PENDING_ROWS,
            PENDING_ROWS + 1,
            3 * PENDING_ROWS + 5,
        ] {
            let mut table = ValueTable::new(&plan);
            let mut sources = table.sources(&plan, &flagged);
            assert_eq!((sources.flags.len(), sources.contributions.len()), (2, 1));
            for i in 0..n {
                let aggregates = 0..plan.aggregates.len();
                let flags: Vec<u8> = aggregates.clone().map(|a| flag_of(i, a)).collect();
                let contributions: Vec<Observation> = (aggregates)
                    .map(|a| Observation::Number(number_of(i, a)))
                    .collect();
                push(
                    &mut table,
                    &mut sources,
                    (None, i as u64),
                    &contributions,
                    &flags,
                );
            }
            flush(&mut table, &mut sources);
            assert_eq!(table.keys.len(), n);
            for &(c, a) in &sources.flags {
                let column = table.column_mut(c);
                let numbers: Vec<Option<f64>> = (0..n).map(|i| column.number(i)).collect();
                let expected: Vec<Option<f64>> =
                    (0..n).map(|i| flag_number(flag_of(i, a))).collect();
                assert_eq!((column.len(), numbers), (n, expected), "{n} items");
            }
            for &(c, a) in &sources.contributions {
                let column = table.column_mut(c);
                let numbers: Vec<Option<f64>> = (0..n).map(|i| column.number(i)).collect();
                let expected: Vec<Option<f64>> = (0..n).map(|i| Some(number_of(i, a))).collect();
                assert_eq!((column.len(), numbers), (n, expected), "{n} items");
            }
        }
    }

    /// A column read whole, item by item or folded, gives each item's number
    /// in item order, in every kind of column.
    #[test]
    fn a_column_reads_whole_as_item_by_item() {
        let pushed = [
            Observation::Number(1.0),
            Observation::Out,
            Observation::Number(0.0),
            Observation::Number(0.25),
            Observation::Calibrated(0.5, true),
        ];
        for function in [AggregateFn::Ratio, AggregateFn::Mean, AggregateFn::Kappa] {
            for n in 0..=pushed.len() {
                let mut column = Observations::of(function);
                pushed[..n].iter().for_each(|o| column.push(o));
                let bits = |x: Option<f64>| x.map(f64::to_bits);
                let expected: Vec<Option<u64>> = (0..n).map(|i| bits(column.number(i))).collect();
                let mut values = ColumnValues::of(&column);
                let stepped: Vec<Option<u64>> =
                    std::iter::from_fn(|| values.next()).map(bits).collect();
                let folded = ColumnValues::of(&column).fold(Vec::new(), |mut all, x| {
                    all.push(bits(x));
                    all
                });
                assert_eq!(stepped, expected, "{function:?}, {n} items");
                assert_eq!(folded, expected, "{function:?}, {n} items");
                assert_eq!(ColumnValues::of(&column).size_hint(), (n, Some(n)));
            }
        }
    }

    /// A count's or ratio's column counted at once adds what folding each
    /// observation in item order adds, kept as flags or in general.
    #[test]
    fn a_column_counts_into_its_aggregate_as_its_items_would_fold() {
        let kinds = [
            Observation::Number(1.0),
            Observation::Number(0.0),
            Observation::Out,
        ];
        for function in [AggregateFn::Count, AggregateFn::Ratio] {
            for seed in 0u64..64 {
                // Each item's kind picked by the seed's scrambled bits.
                let items: Vec<&Observation> = (0..20)
                    .map(|i| &kinds[((seed.wrapping_mul(0x9e37_79b9) >> (i % 21)) % 3) as usize])
                    .collect();
                let mut flags = Observations::of(function);
                let mut general = Observations::Any(Vec::new());
                let mut one_by_one = Accumulator::new(function);
                for observation in &items {
                    flags.push(observation);
                    general.push(observation);
                    one_by_one.observe_one(observation).unwrap();
                }
                assert!(matches!(flags, Observations::Flags(_)));
                let (mut counted, mut counted_in_general) =
                    (Accumulator::new(function), Accumulator::new(function));
                flags.count_into(0, &mut counted);
                general.count_into(0, &mut counted_in_general);
                assert_eq!(format!("{counted:?}"), format!("{one_by_one:?}"));
                assert_eq!(format!("{counted_in_general:?}"), format!("{one_by_one:?}"));
            }
        }
    }

    #[test]
    fn bytes_are_counted_across_every_length_and_chunk_boundary() {
        let mut rng = SplitMix64::seeded("count bytes", 1);
        for len in [0, 1, 254, 255, 256, 510, 511, 1000, 4096] {
            let bytes: Vec<u8> = (0..len).map(|_| rng.below(3) as u8).collect();
            for wanted in [0, 1, 2] {
                let expected = bytes.iter().filter(|&&b| b == wanted).count() as u64;
                assert_eq!(count_bytes(&bytes, |b| b == wanted), expected, "{len}");
            }
            assert_eq!(count_bytes(&vec![1; len], |b| b == 1), len as u64);
        }
    }

    #[test]
    fn observations_read_back_as_pushed_in_any_column() {
        let labels = Observation::labels(Arc::from("a"), Arc::from("b"));
        let pushed = [
            Observation::Number(1.0),
            Observation::Out,
            Observation::Number(0.0),
            Observation::Number(-0.0),
            Observation::Number(0.25),
            labels,
            Observation::Calibrated(0.5, true),
        ];
        for function in [AggregateFn::Ratio, AggregateFn::Mean, AggregateFn::Kappa] {
            // Every prefix: a column stays compact while it can.
            for n in 0..=pushed.len() {
                let mut column = Observations::of(function);
                pushed[..n].iter().for_each(|o| column.push(o));
                let back = read_back(&column);
                assert_eq!(format!("{back:?}"), format!("{:?}", &pushed[..n]));
                // A metric column reads the numbers alone.
                let numbers: Vec<Option<u64>> =
                    (0..n).map(|i| column.number(i).map(f64::to_bits)).collect();
                let expected: Vec<Option<u64>> = pushed[..n]
                    .iter()
                    .map(|o| o.number().map(f64::to_bits))
                    .collect();
                assert_eq!(numbers, expected);
            }
        }
        let mut flags = Observations::of(AggregateFn::Count);
        [1.0, 0.0]
            .iter()
            .for_each(|x| flags.push(&Observation::Number(*x)));
        assert!(matches!(flags, Observations::Flags(_)));
        flags.push(&Observation::Number(-0.0));
        assert!(
            matches!(flags, Observations::Any(_)),
            "-0.0 is kept exactly"
        );
    }

    #[test]
    fn entries_are_the_values_and_observations_text() {
        let pushed = [
            Observation::Number(1.0),
            Observation::Out,
            Observation::Number(0.0),
            Observation::Number(0.25),
            Observation::Number(-3.0),
            Observation::labels(Arc::from("a \"b\""), Arc::from("c")),
            Observation::Calibrated(0.5, true),
        ];
        for function in [AggregateFn::Ratio, AggregateFn::Mean, AggregateFn::Kappa] {
            // Every prefix: each kind of column while it stays that kind.
            for n in 0..=pushed.len() {
                let mut column = Observations::of(function);
                pushed[..n].iter().for_each(|o| column.push(o));
                for item in 0..n {
                    let (mut value, mut expected_value) = (Vec::new(), Vec::new());
                    column.push_value_entry(item, &mut value);
                    push_value(&mut expected_value, column.number(item));
                    assert_eq!(value, expected_value, "{function:?}, item {item} of {n}");
                    let (mut observed, mut expected_observed) = (Vec::new(), Vec::new());
                    column.push_observation_entry(item, &mut observed);
                    push_observation(&mut expected_observed, &column.get(item));
                    assert_eq!(
                        observed, expected_observed,
                        "{function:?}, item {item} of {n}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_line_of_many_flags_is_each_entry_in_order() {
        // Flags past what gathers before a flush, around numbers and
        // observations of other shapes, in metric columns and kept apart.
        let flag = |i: usize| match i % 3 {
            0 => Observation::Number(0.0),
            1 => Observation::Number(1.0),
            _ => Observation::Out,
        };
        let column = |function, i: usize| {
            let mut column = Observations::of(function);
            for item in 0..3 {
                let observation = match function {
                    AggregateFn::Ratio => flag(i + item),
                    AggregateFn::Mean => Observation::Number(i as f64 + 0.5),
                    _ => Observation::Calibrated(0.25, item == 1),
                };
                column.push(&observation);
            }
            column
        };
        // Runs of up to 85 flags: up to 425 bytes, past the 256 gathered.
        let functions = |n: usize| {
            (0..n).map(|i| match i % 97 {
                5 => AggregateFn::Mean,
                11 => AggregateFn::Kappa,
                _ => AggregateFn::Ratio,
            })
        };
        let table = ValueTable {
            columns: functions(120)
                .enumerate()
                .map(|(i, f)| column(f, i))
                .collect(),
            own: functions(110)
                .enumerate()
                .map(|(i, f)| column(f, i + 7))
                .collect(),
            ..ValueTable::default()
        };
        for item in 0..3 {
            let mut expected = Vec::new();
            for c in &table.columns {
                push_value(&mut expected, c.number(item));
            }
            for own in &table.own {
                push_observation(&mut expected, &own.get(item));
            }
            let mut line = b"[1".to_vec();
            table.line_writer().push_entries(item, &mut line);
            assert_eq!(
                String::from_utf8(line).unwrap(),
                format!("[1{}", String::from_utf8(expected).unwrap())
            );
        }
    }

    /// A number written again in a line (its text copied) is written as each
    /// column on its own would write it, around nulls, flags and numbers
    /// equal in value but not in bits.
    #[test]
    fn a_number_repeated_in_a_line_is_each_column_entry() {
        let row = [
            Some(0.25),
            Some(0.25),
            None,
            Some(0.25),
            Some(1e300),
            Some(-0.0),
            Some(0.0),
            Some(0.1 + 0.2),
            Some(0.3),
            Some(3.0),
            Some(3.0),
        ];
        let numbers = |x: Option<f64>| {
            let mut column = Observations::of(AggregateFn::Mean);
            column.push(&x.map_or(Observation::Out, Observation::Number));
            column
        };
        let mut flag = Observations::of(AggregateFn::Ratio);
        flag.push(&Observation::Number(1.0));
        let table = ValueTable {
            columns: (row.iter().map(|x| numbers(*x)))
                .chain([flag.clone()])
                .collect(),
            own: vec![numbers(Some(3.0)), flag, numbers(Some(0.25))],
            ..ValueTable::default()
        };
        let mut expected = Vec::new();
        // The metric columns' entries, the flag last, then those kept apart.
        let after = [Some(1.0), Some(3.0), Some(1.0), Some(0.25)];
        for x in row.iter().chain(&after) {
            push_value(&mut expected, *x);
        }
        let expected = String::from_utf8(expected).unwrap();
        let mut line = Vec::new();
        table.line_writer().push_entries(0, &mut line);
        assert_eq!(String::from_utf8(line).unwrap(), expected);
    }

    #[test]
    fn tables_merge_in_order_on_any_number_of_threads() {
        // Three chunks; the second's column turned general (0.5 in a ratio).
        let table = |first: usize, half_in: bool| {
            let mut column = Observations::of(AggregateFn::Ratio);
            let mut own = Observations::of(AggregateFn::Mean);
            for i in first..first + 3 {
                let x = if half_in && i % 2 == 0 {
                    0.5
                } else {
                    (i % 2) as f64
                };
                column.push(&Observation::Number(x));
                own.push(&Observation::Number(i as f64));
            }
            ValueTable {
                keys: (first..first + 3)
                    .map(|i| Some(Key::Num(i as u64)))
                    .collect(),
                columns: vec![column],
                own: vec![own],
                slices: (first..first + 3)
                    .map(|i| Arc::from(format!("s{i}")))
                    .collect(),
                ..ValueTable::default()
            }
        };
        let render = |t: &ValueTable| {
            let rows: Vec<String> = (0..t.len())
                .map(|i| {
                    let mut line = Vec::new();
                    t.line_writer().push_entries(i, &mut line);
                    format!(
                        "{:?} {} {}",
                        t.keys[i],
                        t.slices[i],
                        String::from_utf8(line).unwrap()
                    )
                })
                .collect();
            rows.join("\n")
        };
        let mut expected = String::new();
        for (first, half_in) in [(0, false), (3, true), (6, false)] {
            if !expected.is_empty() {
                expected.push('\n');
            }
            expected.push_str(&render(&table(first, half_in)));
        }
        for threads in [1, 2, 5] {
            let mut merged = table(0, false);
            merged.merge_all(vec![table(3, true), table(6, false)], threads);
            assert_eq!(render(&merged), expected, "{threads} threads");
        }
    }

    #[test]
    fn columns_of_two_kinds_concatenate_in_order() {
        let mut flags = Observations::of(AggregateFn::Ratio);
        flags.push(&Observation::Number(1.0));
        let mut general = Observations::of(AggregateFn::Ratio);
        general.push(&Observation::Number(0.5));
        general.push(&Observation::Out);
        flags.extend(general);
        let expected = [
            Observation::Number(1.0),
            Observation::Number(0.5),
            Observation::Out,
        ];
        assert_eq!(format!("{:?}", read_back(&flags)), format!("{expected:?}"));
    }
}
