//! Converting decoded Arrow columns into record values: one converter per
//! projected column, chosen once per row group from the column's Arrow type.

use std::ops::Range;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Decimal128Type, Decimal256Type, Decimal32Type, Decimal64Type, Float16Type, Float32Type,
    Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type, UInt64Type,
    UInt8Type,
};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::DataType as ArrowType;

use super::Columns;
use crate::base::value::Value;
use crate::data::columns::{self};
use crate::data::project::{Interner, ObjectFields};
use crate::ir::Record;

/// One batch's columns, ready to be turned into values row by row.
pub(super) struct Converters<'b> {
    /// Per use of `Columns::uses` (`None`: all null in this file), or per column for
    /// whole records.
    columns: Vec<Option<Converter<'b>>>,
    names: Vec<Arc<str>>,
}

impl<'b> Converters<'b> {
    pub(super) fn new(columns: &Columns<'_>, batch: &'b RecordBatch) -> Self {
        let ids = &mut 0;
        if columns.whole.is_some() {
            let schema = batch.schema();
            return Converters {
                columns: batch
                    .columns()
                    .iter()
                    .map(|c| Some(Converter::new(c.as_ref(), ids)))
                    .collect(),
                names: schema
                    .fields()
                    .iter()
                    .map(|f| Arc::from(f.name().as_str()))
                    .collect(),
            };
        }
        Converters {
            columns: columns
                .uses
                .iter()
                .map(|(name, _)| {
                    batch
                        .column_by_name(name)
                        .map(|c| Converter::new(c.as_ref(), ids))
                })
                .collect(),
            names: Vec::new(),
        }
    }

    pub(super) fn record(
        &self,
        columns: &Columns<'_>,
        i: usize,
        row: u64,
        cx: &mut Context,
    ) -> Result<Record, String> {
        let mut slots = vec![Value::Null; columns.slot_count].into_boxed_slice();
        if let Some(slot) = columns.whole {
            let mut fields = Vec::with_capacity(self.names.len());
            for (k, (name, converter)) in self.names.iter().zip(&self.columns).enumerate() {
                cx.interner.field(k);
                let value = match converter {
                    Some(c) => c
                        .value(i, cx, false)
                        .map_err(|m| format!("column `{name}`: {m}"))?,
                    None => Value::Null,
                };
                fields.push((name.clone(), value));
            }
            slots[slot] = columns::object(fields);
        } else {
            for (k, ((name, target), converter)) in
                columns.uses.iter().zip(&self.columns).enumerate()
            {
                let Some(converter) = converter else { continue };
                cx.interner.field(k);
                let value = converter
                    .value(i, cx, false)
                    .map_err(|m| format!("column `{name}`: {m}"))?;
                columns::place(name, *target, value, &mut slots)?;
            }
        }
        Ok(Record {
            slots,
            line: u32::try_from(row + 1).unwrap_or(u32::MAX),
        })
    }
}

/// Turns the values of one Arrow array into [`Value`]s.
pub(super) struct Converter<'a> {
    array: &'a dyn Array,
    kind: Kind<'a>,
}

pub(super) type Get<'a, T> = Box<dyn Fn(usize) -> T + Send + Sync + 'a>;

pub(super) enum Kind<'a> {
    Null,
    Bool(Get<'a, bool>),
    Number(Get<'a, f64>),
    /// A 64-bit integer column: kept exact beyond 2^53 (ids).
    Int(Get<'a, Value>),
    /// A decimal, as text: parsed into the nearest number.
    Decimal(Get<'a, String>),
    Text(Get<'a, &'a str>),
    Bytes(Get<'a, &'a [u8]>),
    /// Lists (and maps): each row's range of child values.
    List(Get<'a, Range<usize>>, Box<Converter<'a>>),
    Map(
        Get<'a, Range<usize>>,
        Box<Converter<'a>>,
        Box<Converter<'a>>,
    ),
    Struct(Vec<Arc<str>>, Vec<Converter<'a>>),
    /// Keys into a dictionary whose values are converted once (per row group) and
    /// shared: `id` numbers the dictionaries of a batch; `dictionary` is compared
    /// with the cached one to tell when the reader moved on to another.
    Dictionary {
        id: usize,
        dictionary: &'a ArrayRef,
        keys: Vec<usize>,
        values: Box<Converter<'a>>,
    },
    Unsupported,
}

macro_rules! number {
    ($array:expr, $t:ty) => {{
        let a = $array.as_primitive::<$t>();
        Kind::Number(Box::new(move |i| a.value(i) as f64))
    }};
}

macro_rules! decimal {
    ($array:expr, $t:ty) => {{
        let a = $array.as_primitive::<$t>();
        Kind::Decimal(Box::new(move |i| a.value_as_string(i)))
    }};
}

pub(super) fn offsets<O: arrow_array::OffsetSizeTrait>(offsets: &[O]) -> Get<'_, Range<usize>> {
    Box::new(move |i| offsets[i].as_usize()..offsets[i + 1].as_usize())
}

/// What converting keeps from row to row: the interner, and each dictionary with
/// its values converted so far. The dictionary is held, so that its buffers cannot
/// be freed and reused by another while it is cached.
#[derive(Default)]
pub(super) struct Context {
    interner: Interner,
    dictionaries: Vec<(Option<ArrayRef>, Vec<Option<Value>>)>,
}

/// The same dictionary: the same array, or (as the reader may hand each batch of a
/// row group a new array over one dictionary page) the same string buffers.
pub(super) fn same_dictionary(cached: &ArrayRef, current: &ArrayRef) -> bool {
    if Arc::ptr_eq(cached, current) {
        return true;
    }
    match (cached.data_type(), current.data_type()) {
        (ArrowType::Utf8, ArrowType::Utf8) => {
            let (a, b) = (cached.as_string::<i32>(), current.as_string::<i32>());
            a.len() == b.len()
                && a.value_data().as_ptr() == b.value_data().as_ptr()
                && a.value_offsets().as_ptr() == b.value_offsets().as_ptr()
        }
        _ => false,
    }
}

impl<'a> Converter<'a> {
    /// `ids` numbers the dictionaries inside, in a fixed order (the same for every
    /// batch of a file).
    pub(super) fn new(array: &'a dyn Array, ids: &mut usize) -> Self {
        let kind = match array.data_type() {
            ArrowType::Null => Kind::Null,
            ArrowType::Boolean => {
                let a = array.as_boolean();
                Kind::Bool(Box::new(move |i| a.value(i)))
            }
            ArrowType::Int8 => number!(array, Int8Type),
            ArrowType::Int16 => number!(array, Int16Type),
            ArrowType::Int32 => number!(array, Int32Type),
            ArrowType::Int64 => {
                let a = array.as_primitive::<Int64Type>();
                Kind::Int(Box::new(move |i| Value::from_i64(a.value(i))))
            }
            ArrowType::UInt8 => number!(array, UInt8Type),
            ArrowType::UInt16 => number!(array, UInt16Type),
            ArrowType::UInt32 => number!(array, UInt32Type),
            ArrowType::UInt64 => {
                let a = array.as_primitive::<UInt64Type>();
                Kind::Int(Box::new(move |i| Value::from_u64(a.value(i))))
            }
            ArrowType::Float16 => {
                let a = array.as_primitive::<Float16Type>();
                Kind::Number(Box::new(move |i| a.value(i).to_f64()))
            }
            ArrowType::Float32 => number!(array, Float32Type),
            ArrowType::Float64 => number!(array, Float64Type),
            ArrowType::Decimal32(..) => decimal!(array, Decimal32Type),
            ArrowType::Decimal64(..) => decimal!(array, Decimal64Type),
            ArrowType::Decimal128(..) => decimal!(array, Decimal128Type),
            ArrowType::Decimal256(..) => decimal!(array, Decimal256Type),
            ArrowType::Utf8 => {
                let a = array.as_string::<i32>();
                Kind::Text(Box::new(move |i| a.value(i)))
            }
            ArrowType::LargeUtf8 => {
                let a = array.as_string::<i64>();
                Kind::Text(Box::new(move |i| a.value(i)))
            }
            ArrowType::Utf8View => {
                let a = array.as_string_view();
                Kind::Text(Box::new(move |i| a.value(i)))
            }
            ArrowType::Binary => {
                let a = array.as_binary::<i32>();
                Kind::Bytes(Box::new(move |i| a.value(i)))
            }
            ArrowType::LargeBinary => {
                let a = array.as_binary::<i64>();
                Kind::Bytes(Box::new(move |i| a.value(i)))
            }
            ArrowType::BinaryView => {
                let a = array.as_binary_view();
                Kind::Bytes(Box::new(move |i| a.value(i)))
            }
            ArrowType::List(_) => {
                let a = array.as_list::<i32>();
                Kind::List(
                    offsets(a.value_offsets()),
                    Box::new(Converter::new(a.values().as_ref(), ids)),
                )
            }
            ArrowType::LargeList(_) => {
                let a = array.as_list::<i64>();
                Kind::List(
                    offsets(a.value_offsets()),
                    Box::new(Converter::new(a.values().as_ref(), ids)),
                )
            }
            ArrowType::FixedSizeList(_, size) => {
                let a = array.as_fixed_size_list();
                let size = usize::try_from(*size).unwrap_or(0);
                Kind::List(
                    Box::new(move |i| i * size..(i + 1) * size),
                    Box::new(Converter::new(a.values().as_ref(), ids)),
                )
            }
            ArrowType::Map(..) => {
                let a = array.as_map();
                Kind::Map(
                    offsets(a.value_offsets()),
                    Box::new(Converter::new(a.keys().as_ref(), ids)),
                    Box::new(Converter::new(a.values().as_ref(), ids)),
                )
            }
            ArrowType::Struct(fields) => {
                let a = array.as_struct();
                Kind::Struct(
                    fields
                        .iter()
                        .map(|f| Arc::from(f.name().as_str()))
                        .collect(),
                    a.columns()
                        .iter()
                        .map(|c| Converter::new(c.as_ref(), ids))
                        .collect(),
                )
            }
            ArrowType::Dictionary(..) => {
                let a = array.as_any_dictionary();
                if a.values().is_empty() {
                    Kind::Null
                } else {
                    let values = a.values();
                    let id = *ids;
                    *ids += 1;
                    Kind::Dictionary {
                        id,
                        dictionary: values,
                        keys: a.normalized_keys(),
                        values: Box::new(Converter::new(values.as_ref(), ids)),
                    }
                }
            }
            _ => Kind::Unsupported,
        };
        Converter { array, kind }
    }

    /// The value at row `i`; strings directly in a list are interned.
    pub(super) fn value(&self, i: usize, cx: &mut Context, in_list: bool) -> Result<Value, String> {
        if self.array.is_null(i) {
            return Ok(Value::Null);
        }
        let string = |s: &str, cx: &mut Context| {
            Value::String(if in_list {
                cx.interner.string(s)
            } else {
                Arc::from(s)
            })
        };
        Ok(match &self.kind {
            Kind::Null => Value::Null,
            Kind::Bool(get) => Value::Bool(get(i)),
            // NaN is a missing value (pandas writes one for each); an infinity
            // is no number a metric can use.
            Kind::Number(get) => match get(i) {
                n if n.is_nan() => Value::Null,
                n if n.is_infinite() => return Err(format!("{n} is not a finite number")),
                n => Value::Number(n),
            },
            Kind::Int(get) => get(i),
            Kind::Decimal(get) => {
                let text = get(i);
                Value::Number(
                    (text.parse::<f64>().ok())
                        .filter(|n| n.is_finite())
                        .ok_or_else(|| format!("cannot read the decimal {text}"))?,
                )
            }
            Kind::Text(get) => string(get(i), cx),
            Kind::Bytes(get) => string(
                std::str::from_utf8(get(i))
                    .map_err(|_| "a binary value is not UTF-8 text".to_string())?,
                cx,
            ),
            Kind::List(range, child) => {
                let items = range(i)
                    .map(|j| child.value(j, cx, true))
                    .collect::<Result<Vec<_>, _>>()?;
                Value::list(items)
            }
            Kind::Map(range, keys, values) => {
                let mut fields = ObjectFields::default();
                for j in range(i) {
                    let key: Arc<str> = match keys.value(j, cx, false)? {
                        Value::String(s) => s,
                        other => Arc::from(other.to_string()),
                    };
                    fields.insert(key, values.value(j, cx, false)?);
                }
                fields.into_value()
            }
            Kind::Struct(names, children) => Value::Object(
                names
                    .iter()
                    .zip(children)
                    .map(|(name, child)| Ok((name.clone(), child.value(i, cx, false)?)))
                    .collect::<Result<Vec<_>, String>>()?
                    .into(),
            ),
            Kind::Dictionary {
                id,
                dictionary,
                keys,
                values,
            } => {
                let key = keys[i];
                if cx.dictionaries.len() <= *id {
                    cx.dictionaries.resize_with(id + 1, Default::default);
                }
                let (seen, cache) = &mut cx.dictionaries[*id];
                if !seen
                    .as_ref()
                    .is_some_and(|seen| same_dictionary(seen, dictionary))
                {
                    *seen = Some(Arc::clone(dictionary));
                    *cache = vec![None; values.array.len()];
                }
                if let Some(value) = &cache[key] {
                    return Ok(value.clone());
                }
                // Shared through the cache: no need to intern.
                let value = values.value(key, cx, false)?;
                cx.dictionaries[*id].1[key] = Some(value.clone());
                value
            }
            Kind::Unsupported => {
                return Err(format!("type {} is not read", self.array.data_type()))
            }
        })
    }
}
