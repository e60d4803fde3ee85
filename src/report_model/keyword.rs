//! Enums written as one keyword each (`"pass"`, `"higher"`, …). Read back, any
//! other value is refused in words that list the keywords.

/// Declares an enum of keywords with `keyword()`, and serde impls that write
/// the keyword and read only the keywords listed.
macro_rules! keyword_enum {
    ($(#[$doc:meta])* $name:ident { $($variant:ident => $keyword:literal),+ $(,)? } expecting $expecting:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum $name {
            $($variant),+
        }

        impl $name {
            pub fn keyword(self) -> &'static str {
                match self {
                    $($name::$variant => $keyword),+
                }
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.keyword())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct Keyword;

                impl serde::de::Visitor<'_> for Keyword {
                    type Value = $name;

                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str($expecting)
                    }

                    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<$name, E> {
                        match v {
                            $($keyword => Ok($name::$variant),)+
                            _ => Err(E::invalid_value(serde::de::Unexpected::Str(v), &self)),
                        }
                    }
                }

                deserializer.deserialize_str(Keyword)
            }
        }
    };
}

pub(crate) use keyword_enum;
