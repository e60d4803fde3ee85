//! [`MetricValue`]: a metric's value as a report holds it.

use std::fmt;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value as Json;

/// A number, true/false or null. The number keeps how it was written: an
/// integer-typed metric prints without a fraction (`3`), a float-typed one with
/// one (`3.0`), as [`crate::base::typed_json::format_typed`] makes them, and
/// `diff` shows them the same way.
///
/// A metric whose type is unknown to the compiler (an `if` with a string branch)
/// can still give a string or a list; the writer keeps it as it is, but a report
/// holding one does not read back: nothing can compare it.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricValue(Json);

impl MetricValue {
    pub const NULL: MetricValue = MetricValue(Json::Null);

    /// The value as [`crate::base::typed_json::format_typed`] wrote it.
    pub fn from_typed(value: Json) -> Self {
        MetricValue(value)
    }

    pub fn as_json(&self) -> &Json {
        &self.0
    }

    pub fn into_json(self) -> Json {
        self.0
    }

    pub fn as_f64(&self) -> Option<f64> {
        self.0.as_f64()
    }

    pub fn as_bool(&self) -> Option<bool> {
        self.0.as_bool()
    }
}

impl Serialize for MetricValue {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for MetricValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Scalar;

        impl Visitor<'_> for Scalar {
            type Value = MetricValue;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number, true/false or null")
            }

            fn visit_bool<E: de::Error>(self, v: bool) -> Result<MetricValue, E> {
                Ok(MetricValue(Json::Bool(v)))
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<MetricValue, E> {
                Ok(MetricValue(Json::from(v)))
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<MetricValue, E> {
                Ok(MetricValue(Json::from(v)))
            }

            fn visit_f64<E: de::Error>(self, v: f64) -> Result<MetricValue, E> {
                Ok(MetricValue(
                    serde_json::Number::from_f64(v).map_or(Json::Null, Json::Number),
                ))
            }

            fn visit_unit<E: de::Error>(self) -> Result<MetricValue, E> {
                Ok(MetricValue::NULL)
            }

            fn visit_none<E: de::Error>(self) -> Result<MetricValue, E> {
                Ok(MetricValue::NULL)
            }
        }

        deserializer.deserialize_any(Scalar)
    }
}
