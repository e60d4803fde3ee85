//! A runtime error: what failed ([`RuntimeErrorKind`], whose words live in the
//! library) and where the failing expression is written.
//!
//! The ops that can fail carry an [`ExprAt`]; the op that fails attaches its own
//! as the error is made, and the ops around it pass the error on untouched, so
//! the innermost expression wins. Nothing is looked up on the success path: the
//! id is resolved to a [`Location`] only when the error is reported.

use std::fmt;

use crate::base::diagnostic::{Cause, Location};
use crate::base::value::ValueError;
use crate::ir::ids::{ExprAt, ExprLocations};
use crate::library::error::RuntimeErrorKind;

/// Boxed, so that `Result<Value, RuntimeError>` is no larger than a value.
#[derive(Debug, Clone)]
pub struct RuntimeError {
    pub kind: Box<RuntimeErrorKind>,
    /// The expression that failed; `None` when no op made the error (a key that
    /// is a list, an aggregate fed the wrong type) and its caller has not placed it.
    pub at: Option<ExprAt>,
}

impl RuntimeError {
    /// An error at the expression `at`.
    #[cold]
    pub fn located(kind: impl Into<RuntimeErrorKind>, at: ExprAt) -> Self {
        RuntimeError {
            kind: Box::new(kind.into()),
            at: Some(at),
        }
    }

    /// Places an error that has no place yet; an inner place wins.
    #[must_use]
    pub fn or_at(mut self, at: Option<ExprAt>) -> Self {
        self.at = self.at.or(at);
        self
    }

    /// The kind's stable name, e.g. `not_needs_bool`.
    pub fn code(&self) -> &'static str {
        use crate::base::diagnostic::Kind;
        self.kind.code()
    }

    /// Where the failing expression is written, from the plan's table.
    pub fn location<'a>(&self, locations: &'a ExprLocations) -> Option<&'a Location> {
        self.at.map(|at| locations.get(at))
    }

    /// The error as a diagnostic's [`Cause`]: its code and its place.
    pub fn cause(&self, locations: &ExprLocations) -> Cause {
        Cause {
            code: self.code(),
            at: self.location(locations).cloned(),
        }
    }
}

impl From<RuntimeErrorKind> for RuntimeError {
    #[cold]
    fn from(kind: RuntimeErrorKind) -> Self {
        RuntimeError {
            kind: Box::new(kind),
            at: None,
        }
    }
}

impl From<ValueError> for RuntimeError {
    #[cold]
    fn from(error: ValueError) -> Self {
        RuntimeErrorKind::Value(error).into()
    }
}

/// The message: the kind's words (the place is shown by whoever reports it).
impl fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.kind.fmt(f)
    }
}
