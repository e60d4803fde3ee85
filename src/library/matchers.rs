//! Matchers: named, parameterised per-item checks. A matcher kind declares its
//! inputs (expressions, evaluated per item) and options (constants, checked when
//! the spec compiles); the compiled [`Matcher`] applies them to input values.

use regex::Regex;

use crate::base::python::python_strip;
use crate::base::types::Type;
use crate::base::value::Value;
use crate::library::builtins::Param;
use crate::library::error::RuntimeErrorKind;

pub struct MatcherKind {
    pub name: &'static str,
    pub summary: &'static str,
    pub inputs: &'static [(&'static str, Param)],
    pub options: &'static [OptionDef],
    pub returns: fn() -> Type,
}

pub struct OptionDef {
    pub name: &'static str,
    pub kind: OptionKind,
    /// `None`: the option is required.
    pub default: Option<OptionDefault>,
}

#[derive(Clone, Copy)]
pub enum OptionKind {
    Bool,
    Count,
    Text,
    Regex,
    Choice(&'static [&'static str]),
}

#[derive(Clone, Copy)]
pub enum OptionDefault {
    Bool(bool),
    Count(usize),
    Text(&'static str),
}

/// An option's value, validated against its [`OptionKind`].
#[derive(Debug, Clone)]
pub enum OptionValue {
    Bool(bool),
    Count(usize),
    Text(String),
    Regex(Regex),
}

pub static KINDS: &[MatcherKind] = &[
    MatcherKind {
        name: "containment",
        summary: "the text contains any needle, case-insensitively; needles shorter than `min_chars` characters never match",
        inputs: &[("text", Param::Str), ("needles", Param::Any)],
        options: &[
            OptionDef { name: "min_chars", kind: OptionKind::Count, default: Some(OptionDefault::Count(5)) },
            OptionDef { name: "when_empty", kind: OptionKind::Bool, default: Some(OptionDefault::Bool(true)) },
            OptionDef { name: "when_missing", kind: OptionKind::Bool, default: Some(OptionDefault::Bool(false)) },
        ],
        returns: || Type::Bool,
    },
    MatcherKind {
        name: "citation_scope",
        summary: "the cited ids are a list, all inside the scope, and overlap the gold ids",
        inputs: &[("cited", Param::Any), ("scope", Param::List), ("gold", Param::List)],
        options: &[OptionDef {
            name: "when_gold_empty",
            kind: OptionKind::Choice(&["require_no_citations", "pass", "fail"]),
            default: Some(OptionDefault::Text("require_no_citations")),
        }],
        returns: || Type::Bool,
    },
    MatcherKind {
        name: "constraint_echo",
        summary: "the echoed constraints equal the locked set, in any order; true when nothing is locked",
        inputs: &[("echo", Param::Any), ("locked", Param::List)],
        options: &[],
        returns: || Type::Bool,
    },
    MatcherKind {
        name: "refusal",
        summary: "the text equals the refusal token after trimming and lower-casing",
        inputs: &[("text", Param::Str)],
        options: &[OptionDef { name: "token", kind: OptionKind::Text, default: Some(OptionDefault::Text("not in context")) }],
        returns: || Type::Bool,
    },
    MatcherKind {
        name: "regex_extract",
        summary: "ids pulled out of free text: the first match's capture group, split on `split`, trimmed, empties dropped",
        inputs: &[("text", Param::Str)],
        options: &[
            OptionDef { name: "pattern", kind: OptionKind::Regex, default: None },
            OptionDef { name: "split", kind: OptionKind::Regex, default: Some(OptionDefault::Text(r"[,\s\x1c-\x1f]+")) },
            OptionDef { name: "case_insensitive", kind: OptionKind::Bool, default: Some(OptionDefault::Bool(true)) },
        ],
        returns: || Type::list_of(Type::Str),
    },
    MatcherKind {
        name: "regex_match",
        summary: "the text matches the regex anywhere",
        inputs: &[("text", Param::Str)],
        options: &[
            OptionDef { name: "pattern", kind: OptionKind::Regex, default: None },
            OptionDef { name: "case_insensitive", kind: OptionKind::Bool, default: Some(OptionDefault::Bool(false)) },
        ],
        returns: || Type::Bool,
    },
    MatcherKind {
        name: "phrase_containment",
        summary: "some phrase of the lower-cased claim (each match of `pattern`, trimmed, at least `min_chars` characters) occurs in the lower-cased text; false for an empty claim",
        inputs: &[("text", Param::Str), ("claim", Param::Any)],
        options: &[
            OptionDef { name: "pattern", kind: OptionKind::Regex, default: Some(OptionDefault::Text(r"[a-z0-9][a-z0-9\-\s\x1c-\x1f]{4,}")) },
            OptionDef { name: "min_chars", kind: OptionKind::Count, default: Some(OptionDefault::Count(5)) },
        ],
        returns: || Type::Bool,
    },
];

pub const KIND_NAMES: &[&str] = &[
    "containment",
    "citation_scope",
    "constraint_echo",
    "refusal",
    "regex_extract",
    "regex_match",
    "phrase_containment",
];

pub fn kind(name: &str) -> Option<&'static MatcherKind> {
    KINDS.iter().find(|k| k.name == name)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GoldEmpty {
    RequireNoCitations,
    Pass,
    Fail,
}

#[derive(Debug)]
pub enum Matcher {
    Containment {
        min_chars: usize,
        when_empty: bool,
        when_missing: bool,
    },
    CitationScope {
        when_gold_empty: GoldEmpty,
    },
    ConstraintEcho,
    Refusal {
        token: String,
    },
    RegexExtract {
        pattern: Regex,
        split: Regex,
    },
    RegexMatch {
        pattern: Regex,
    },
    PhraseContainment {
        pattern: Regex,
        min_chars: usize,
    },
}

impl Matcher {
    /// Builds a matcher from validated options, given in the kind's option order.
    pub fn build(kind: &MatcherKind, options: &[OptionValue]) -> Result<Matcher, String> {
        let bool_at = |i: usize| matches!(options[i], OptionValue::Bool(true));
        let text_at = |i: usize| match &options[i] {
            OptionValue::Text(t) => t.clone(),
            _ => String::new(),
        };
        Ok(match kind.name {
            "containment" => Matcher::Containment {
                min_chars: match options[0] {
                    OptionValue::Count(n) => n,
                    _ => 0,
                },
                when_empty: bool_at(1),
                when_missing: bool_at(2),
            },
            "citation_scope" => Matcher::CitationScope {
                when_gold_empty: match text_at(0).as_str() {
                    "pass" => GoldEmpty::Pass,
                    "fail" => GoldEmpty::Fail,
                    _ => GoldEmpty::RequireNoCitations,
                },
            },
            "constraint_echo" => Matcher::ConstraintEcho,
            "refusal" => Matcher::Refusal {
                token: text_at(0).to_lowercase(),
            },
            "regex_extract" => {
                let (OptionValue::Regex(pattern), OptionValue::Regex(split)) =
                    (&options[0], &options[1])
                else {
                    return Err("regex_extract needs `pattern` and `split` regexes".into());
                };
                if pattern.captures_len() > 2 {
                    return Err("`pattern` may have at most one capture group (the ids)".into());
                }
                let pattern = if bool_at(2) {
                    Regex::new(&format!("(?i){}", pattern.as_str())).map_err(|e| e.to_string())?
                } else {
                    pattern.clone()
                };
                Matcher::RegexExtract {
                    pattern,
                    split: split.clone(),
                }
            }
            "regex_match" => {
                let OptionValue::Regex(pattern) = &options[0] else {
                    return Err("regex_match needs a `pattern` regex".into());
                };
                let pattern = if bool_at(1) {
                    Regex::new(&format!("(?i){}", pattern.as_str())).map_err(|e| e.to_string())?
                } else {
                    pattern.clone()
                };
                Matcher::RegexMatch { pattern }
            }
            "phrase_containment" => {
                let (OptionValue::Regex(pattern), OptionValue::Count(min_chars)) =
                    (&options[0], &options[1])
                else {
                    return Err("phrase_containment needs `pattern` and `min_chars`".into());
                };
                Matcher::PhraseContainment {
                    pattern: pattern.clone(),
                    min_chars: *min_chars,
                }
            }
            other => return Err(format!("unknown matcher kind `{other}`")),
        })
    }

    pub fn apply(&self, inputs: &[&Value]) -> Result<Value, RuntimeErrorKind> {
        match self {
            Matcher::Containment {
                min_chars,
                when_empty,
                when_missing,
            } => containment(inputs[0], inputs[1], *min_chars, *when_empty, *when_missing)
                .map(Value::Bool),
            Matcher::CitationScope { when_gold_empty } => {
                citation_scope(inputs[0], inputs[1], inputs[2], *when_gold_empty).map(Value::Bool)
            }
            Matcher::ConstraintEcho => Ok(Value::Bool(constraint_echo(inputs[0], inputs[1]))),
            Matcher::Refusal { token } => Ok(Value::Bool(match &inputs[0] {
                Value::String(text) => is_token(python_strip(text), token),
                _ => token.is_empty(),
            })),
            Matcher::RegexExtract { pattern, split } => {
                Ok(regex_extract(inputs[0], pattern, split))
            }
            Matcher::RegexMatch { pattern } => Ok(Value::Bool(match &inputs[0] {
                Value::String(text) => pattern.is_match(text),
                _ => false,
            })),
            Matcher::PhraseContainment { pattern, min_chars } => Ok(Value::Bool(
                phrase_containment(inputs[0], inputs[1], pattern, *min_chars),
            )),
        }
    }
}

/// Whether `text` lowercased is `token` (already lowercase). An ASCII text
/// lowercases to the same length, so most answers (longer than the token) are
/// told apart without building their lowercase.
fn is_token(text: &str, token: &str) -> bool {
    if text.is_ascii() {
        return text.len() == token.len() && text.eq_ignore_ascii_case(token);
    }
    // A char takes at most four bytes and lowercases to at least one: a text
    // of more than four bytes per byte of the token cannot become it.
    if text.len() > 4 * token.len() {
        return false;
    }
    text.to_lowercase() == token
}

fn containment(
    text: &Value,
    needles: &Value,
    min_chars: usize,
    when_empty: bool,
    when_missing: bool,
) -> Result<bool, RuntimeErrorKind> {
    let needles = match needles {
        Value::Null => return Ok(when_missing),
        Value::List(needles) if needles.is_empty() => return Ok(when_empty),
        Value::List(needles) => needles,
        other => {
            return Err(RuntimeErrorKind::NeedlesNotList {
                found: other.clone(),
            })
        }
    };
    // The lowercase texts are written into buffers kept per thread: two
    // `String`s per item were an allocation and a free each.
    thread_local! {
        static LOWERCASE: std::cell::RefCell<(String, String)> = Default::default();
    }
    LOWERCASE.with_borrow_mut(|(haystack, needle_text)| {
        match text {
            Value::String(s) => lowercase_into(s, haystack),
            _ => haystack.clear(),
        }
        for needle in needles.iter() {
            let Value::String(needle) = needle else {
                return Err(RuntimeErrorKind::NeedleNotString {
                    found: needle.clone(),
                });
            };
            lowercase_into(needle, needle_text);
            let long_enough = match needle_text.is_ascii() {
                true => needle_text.len() >= min_chars,
                false => needle_text.chars().count() >= min_chars,
            };
            if long_enough && haystack.contains(needle_text.as_str()) {
                return Ok(true);
            }
        }
        Ok(false)
    })
}

/// Writes `s.to_lowercase()` into `out`, replacing what it held: runs of ASCII
/// copied and lowercased in place, any other char by its own mapping, except
/// that a text with a capital sigma (lowercased by its place in a word) takes
/// `to_lowercase` whole.
fn lowercase_into(s: &str, out: &mut String) {
    out.clear();
    if s.is_ascii() {
        out.push_str(s);
        out.make_ascii_lowercase();
    } else if s.contains('Σ') {
        out.push_str(&s.to_lowercase());
    } else {
        let mut rest = s;
        while !rest.is_empty() {
            let ascii = rest
                .bytes()
                .position(|b| !b.is_ascii())
                .unwrap_or(rest.len());
            let start = out.len();
            out.push_str(&rest[..ascii]);
            out[start..].make_ascii_lowercase();
            rest = &rest[ascii..];
            if let Some(c) = rest.chars().next() {
                out.extend(c.to_lowercase());
                rest = &rest[c.len_utf8()..];
            }
        }
    }
}

fn citation_scope(
    cited: &Value,
    scope: &Value,
    gold: &Value,
    when_gold_empty: GoldEmpty,
) -> Result<bool, RuntimeErrorKind> {
    let Value::List(cited) = cited else {
        return Ok(false);
    };
    let scope: &[Value] = match scope {
        Value::List(scope) => scope,
        _ => &[],
    };
    if !cited.iter().all(|c| scope.contains(c)) {
        return Ok(false);
    }
    match gold {
        Value::List(gold) if !gold.is_empty() => Ok(cited.iter().any(|c| gold.contains(c))),
        _ => Ok(match when_gold_empty {
            GoldEmpty::RequireNoCitations => cited.is_empty(),
            GoldEmpty::Pass => true,
            GoldEmpty::Fail => false,
        }),
    }
}

fn constraint_echo(echo: &Value, locked: &Value) -> bool {
    let locked: &[Value] = match locked {
        Value::List(locked) if !locked.is_empty() => locked,
        _ => return true,
    };
    let echo: &[Value] = match echo {
        Value::List(echo) => echo,
        Value::Null => &[],
        _ => return false,
    };
    echo.iter().all(|e| locked.contains(e)) && locked.iter().all(|l| echo.contains(l))
}

fn regex_extract(text: &Value, pattern: &Regex, split: &Regex) -> Value {
    let Value::String(text) = text else {
        return Value::list(Vec::new());
    };
    let Some(captures) = pattern.captures(text) else {
        return Value::list(Vec::new());
    };
    let raw = captures
        .get(1)
        .or_else(|| captures.get(0))
        .map_or("", |m| m.as_str());
    let raw = python_strip(raw);
    Value::list(
        split
            .split(raw)
            .map(python_strip)
            .filter(|part| !part.is_empty())
            .map(Value::from)
            .collect(),
    )
}

/// Claim containment by phrases: any phrase of the claim (split by the pattern,
/// at least `min_chars` long) appears in the answer.
fn phrase_containment(text: &Value, claim: &Value, pattern: &Regex, min_chars: usize) -> bool {
    let Value::String(claim) = claim else {
        return false;
    };
    if claim.is_empty() {
        return false;
    }
    let claim = claim.to_lowercase();
    let text = match text {
        Value::String(s) => s.to_lowercase(),
        _ => String::new(),
    };
    pattern.find_iter(&claim).any(|m| {
        let phrase = python_strip(m.as_str());
        phrase.chars().count() >= min_chars && text.contains(phrase)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strs(items: &[&str]) -> Value {
        Value::list(items.iter().map(|s| Value::from(*s)).collect())
    }

    proptest::proptest! {
        /// Any text, with capital sigmas and letters that lowercase to two
        /// chars among ASCII: what `to_lowercase` makes of it.
        #[test]
        fn lowercase_into_is_to_lowercase(
            text in "[a-zA-Z .ΣσİÉéẞ\u{10400}]{0,24}",
            held in "[a-z]{0,8}",
        ) {
            let mut out = held;
            lowercase_into(&text, &mut out);
            proptest::prop_assert_eq!(out, text.to_lowercase());
        }
    }

    #[test]
    fn containment_counts_characters_not_bytes() {
        let text = Value::from("Le café est fermé");
        // "fermé" is five characters but six bytes.
        assert!(containment(&text, &strs(&["FERMÉ"]), 5, true, false).unwrap());
        assert!(!containment(&text, &strs(&["café"]), 5, true, false).unwrap());
        assert!(containment(&text, &strs(&[]), 5, true, false).unwrap());
        assert!(!containment(&text, &Value::Null, 5, true, false).unwrap());
        assert!(containment(&text, &Value::from("x"), 5, true, false).is_err());
    }

    #[test]
    fn citation_scope_policies() {
        let scope = strs(&["p1", "p2"]);
        assert!(citation_scope(
            &strs(&["p1"]),
            &scope,
            &strs(&["p1", "p9"]),
            GoldEmpty::Fail
        )
        .unwrap());
        assert!(!citation_scope(&strs(&["p3"]), &scope, &strs(&["p3"]), GoldEmpty::Fail).unwrap());
        assert!(
            !citation_scope(&Value::from("p1"), &scope, &strs(&["p1"]), GoldEmpty::Pass).unwrap()
        );
        assert!(citation_scope(
            &strs(&[]),
            &scope,
            &Value::Null,
            GoldEmpty::RequireNoCitations
        )
        .unwrap());
        assert!(!citation_scope(
            &strs(&["p1"]),
            &scope,
            &strs(&[]),
            GoldEmpty::RequireNoCitations
        )
        .unwrap());
        assert!(citation_scope(&strs(&["p1"]), &scope, &strs(&[]), GoldEmpty::Pass).unwrap());
    }

    #[test]
    fn constraint_echo_is_order_insensitive() {
        assert!(constraint_echo(&strs(&["b", "a"]), &strs(&["a", "b"])));
        assert!(!constraint_echo(&strs(&["a"]), &strs(&["a", "b"])));
        assert!(!constraint_echo(&Value::Null, &strs(&["a"])));
        assert!(constraint_echo(&Value::Null, &Value::Null));
    }

    #[test]
    fn phrase_containment_finds_long_enough_phrases() {
        let pattern = Regex::new(r"[a-z0-9][a-z0-9\-\s\x1c-\x1f]{4,}").unwrap();
        let claim = Value::from("X is a constrained mapping.");
        let yes = Value::from("We know that X IS A CONSTRAINED MAPPING here");
        assert!(phrase_containment(&yes, &claim, &pattern, 5));
        // The only phrase is the whole claim up to the full stop.
        assert!(!phrase_containment(
            &Value::from("a constrained mapping"),
            &claim,
            &pattern,
            5
        ));
        assert!(!phrase_containment(&yes, &Value::from(""), &pattern, 5));
        assert!(!phrase_containment(&yes, &Value::Null, &pattern, 5));
    }

    #[test]
    fn regex_extract_reads_inline_citations() {
        let pattern = Regex::new(r"(?i)citations\s*:\s*\[([^\]]*)\]").unwrap();
        let split = Regex::new(r"[,\s]+").unwrap();
        let text = Value::from("- claim\n- Citations: [p1#1, p2#3 ]");
        assert_eq!(
            regex_extract(&text, &pattern, &split),
            strs(&["p1#1", "p2#3"])
        );
        assert_eq!(
            regex_extract(&Value::from("citations: []"), &pattern, &split),
            strs(&[])
        );
    }

    proptest::proptest! {
        /// The ASCII shortcut decides as lowercasing the whole text does.
        #[test]
        fn a_token_is_told_as_by_lowercasing(
            text in "(?i:not in context)|[a-zA-Z ]{0,16}|[a-zİıΣσςK\u{212A}\u{10400} ]{0,6}",
            token in "not in context|n|ı|σ|k|kk|\u{10428}|",
        ) {
            let token = token.to_lowercase();
            proptest::prop_assert_eq!(is_token(&text, &token), text.to_lowercase() == token);
        }
    }

    #[test]
    fn a_refusal_is_its_token_in_any_case() {
        assert!(is_token("NOT in Context", "not in context"));
        assert!(!is_token("not in context.", "not in context"));
        assert!(is_token("İ", &"İ".to_lowercase()));
        // Three bytes that lowercase to one (the Kelvin sign), four to four.
        assert!(is_token("\u{212A}", "k"));
        assert!(is_token("\u{10400}", "\u{10428}"));
    }
}
