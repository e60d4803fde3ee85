//! Every error reading, checking or writing a lock reports, as data; their words
//! (and the notes shown under them: changes, diffs, lines) are written here and
//! nowhere else. A site builds a [`LockError`] and places it
//! (`kind.diagnostic().at(location)`).

use crate::base::diagnostic::{Diagnostic, Kind, Words};

#[derive(Debug)]
pub enum LockError {
    CannotRead {
        path: String,
        error: String,
    },
    Invalid {
        path: String,
        error: String,
    },
    UnknownFormat {
        path: String,
        found: u32,
        expected: u32,
    },
    CannotWrite {
        path: String,
        error: String,
    },
    /// A file the lock pins (a template, a template folder).
    CannotReadPinned {
        path: String,
        error: String,
    },
    CannotReadFrozenDataset {
        dataset: String,
        display: String,
        error: String,
    },
    /// Re-freezing changed files under the version frozen before.
    VersionNotBumped {
        name: String,
        frozen: String,
        version: String,
        changes: Vec<String>,
    },
    VersionLowered {
        version: String,
        frozen: String,
    },
    NeedsReason {
        name: String,
        version: String,
        changes: Vec<String>,
    },
    BlankReason,
    /// The lock's own digest does not match the pins it lists: edited by hand.
    DigestMismatch {
        path: String,
    },
    /// A file differs from the lock (`summary` says how: `Drift::summary`).
    Drift {
        lock: String,
        summary: String,
        shown: DriftShown,
        /// The last drift of a run it stops: says how to go on.
        stops_run: bool,
    },
}

/// What a drift shows under its message.
#[derive(Debug)]
pub enum DriftShown {
    Nothing,
    /// A text file: the diff from the frozen version to the file now.
    Diff {
        old_path: String,
        old_text: String,
        new_path: String,
        new_text: String,
    },
    /// A dataset: its first differing line as it is now (`None`: past its end).
    LineNow(Option<String>),
}

impl LockError {
    /// The lines shown under the location, if any: what changed.
    pub fn note(&self) -> String {
        match self {
            LockError::VersionNotBumped { changes, .. }
            | LockError::NeedsReason { changes, .. } => changes.join("\n"),
            LockError::Drift { shown, .. } => match shown {
                DriftShown::Nothing => String::new(),
                DriftShown::Diff {
                    old_path,
                    old_text,
                    new_path,
                    new_text,
                } => similar::TextDiff::from_lines(old_text, new_text)
                    .unified_diff()
                    .context_radius(3)
                    .header(
                        &format!("{old_path} (frozen)"),
                        &format!("{new_path} (now)"),
                    )
                    .to_string(),
                DriftShown::LineNow(Some(text)) => {
                    let short: String = text.chars().take(200).collect();
                    let more = if short.len() < text.len() { "…" } else { "" };
                    format!("now: {short}{more}")
                }
                DriftShown::LineNow(None) => "now: the file ends before this line".into(),
            },
            _ => String::new(),
        }
    }

    /// The diagnostic of this error: its words and its note.
    pub fn diagnostic(&self) -> Diagnostic {
        Diagnostic::of(self).note(self.note())
    }
}

impl Kind for LockError {
    fn code(&self) -> &'static str {
        use LockError as E;
        match self {
            E::CannotRead { .. } => "cannot_read_lock",
            E::Invalid { .. } => "invalid_lock",
            E::UnknownFormat { .. } => "lock_format",
            E::CannotWrite { .. } => "cannot_write_lock",
            E::CannotReadPinned { .. } => "cannot_read_pinned",
            E::CannotReadFrozenDataset { .. } => "cannot_read_frozen_dataset",
            E::VersionNotBumped { .. } => "version_not_bumped",
            E::VersionLowered { .. } => "version_lowered",
            E::NeedsReason { .. } => "freeze_needs_reason",
            E::BlankReason => "blank_reason",
            E::DigestMismatch { .. } => "lock_digest_mismatch",
            E::Drift { .. } => "drift",
        }
    }

    fn describe(&self) -> Words {
        use LockError as E;
        match self {
            E::CannotRead { path, error } => Words::new(format!("cannot read lock `{path}`: {error}")),
            E::Invalid { path, error } => Words::new(format!(
                "lock `{path}` is not a valid lock: {error}"
            ))
            .help("restore it from version control, or delete it and run `evalspec freeze` again"),
            E::UnknownFormat { path, found, expected } => Words::new(format!(
                "lock `{path}` has format {found}, this evalspec reads format {expected}"
            )),
            E::CannotWrite { path, error } => {
                Words::new(format!("cannot write lock `{path}`: {error}"))
            }
            E::CannotReadPinned { path, error } => {
                Words::new(format!("cannot read `{path}`: {error}"))
            }
            E::CannotReadFrozenDataset { dataset, display, error } => Words::new(format!(
                "cannot read frozen dataset `{dataset}` from `{display}`: {error}"
            )),
            E::VersionNotBumped { name, frozen, version, .. } => Words::new(format!(
                "spec `{name}` changed since version {frozen} was frozen, but its version is still {version}"
            ))
            .help("a frozen version is never edited: bump `version` (e.g. to the next patch) and freeze again"),
            E::VersionLowered { version, frozen } => Words::new(format!(
                "version {version} is lower than the frozen version {frozen}"
            ))
            .help("a new freeze needs a higher version"),
            E::NeedsReason { name, version, .. } => Words::new(format!(
                "re-freezing `{name}` at version {version} needs a reason"
            ))
            .help("say who signed off and why: `--reason \"…\"`; it is kept in the lock's history"),
            E::BlankReason => Words::new("`--reason` is blank")
                .help("say who signed off and why: `--reason \"…\"`; it is kept in the lock's history"),
            E::DigestMismatch { path } => Words::new(format!(
                "`{path}` does not match its own digest: its pins or version were edited by hand"
            ))
            .help("restore the lock from version control, or freeze the spec again"),
            E::Drift { lock, summary, stops_run, .. } => {
                Words::new(format!("drift from `{lock}`: {summary}")).maybe_help(stops_run.then(|| {
                    "bump the spec's version and `evalspec freeze --reason …` it, restore the frozen files, or pass --allow-drift".into()
                }))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::inputs::{gather, Overrides};
    use crate::lock::{freeze, read, verify, Frozen};
    use crate::plan::Plan;

    fn plan(spec: &Path) -> Plan {
        let spec = crate::spec::load(spec).unwrap();
        let (inputs, _) = gather(&spec, &Overrides::default());
        crate::plan::compile(&spec, &[], inputs).unwrap()
    }

    fn write_spec(path: &Path, version: &str, metric: &str) {
        let text = format!(
            "name: t\nversion: {version}\ndatasets:\n  gold: {{path: g.jsonl, key: id}}\nmetrics:\n  m: {metric}\n"
        );
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn a_lock_that_does_not_parse_or_has_another_format_is_a_kind() {
        let dir = tempfile::tempdir().unwrap();
        let spec = dir.path().join("spec.yaml");
        let lock = dir.path().join("spec.yaml.lock");
        assert!(read(&spec).unwrap().is_none());
        std::fs::write(&lock, "{ not json").unwrap();
        assert_eq!(read(&spec).unwrap_err().code, "invalid_lock");
        let other = r#"{"evalspec_lock": 2, "name": "t", "version": "1.0.0", "evalspec": "0",
            "sha256": "x", "files": [], "datasets": [], "history": []}"#;
        std::fs::write(&lock, other).unwrap();
        assert_eq!(read(&spec).unwrap_err().code, "lock_format");
    }

    #[test]
    fn refreezing_errors_and_drift_are_kinds() {
        let dir = tempfile::tempdir().unwrap();
        let spec = dir.path().join("spec.yaml");
        let code = |reason: Option<&str>| freeze(&plan(&spec), reason).err().map(|d| d.code);
        write_spec(&spec, "1.1.0", "count(gold.ok)");
        assert!(matches!(
            freeze(&plan(&spec), None),
            Ok(Frozen::Written { .. })
        ));
        write_spec(&spec, "1.1.0", "ratio(gold.ok)");
        assert_eq!(code(Some("why")), Some("version_not_bumped"));
        let (_, drift) = verify(&plan(&spec)).unwrap().unwrap();
        let d = drift[0].diagnostic("spec.yaml.lock", |_| None, true);
        assert_eq!(d.code, "drift");
        assert!(d.note.is_some() && d.help.is_some());
        write_spec(&spec, "1.0.9", "ratio(gold.ok)");
        assert_eq!(code(Some("why")), Some("version_lowered"));
        write_spec(&spec, "1.2.0", "ratio(gold.ok)");
        assert_eq!(code(None), Some("freeze_needs_reason"));
        assert_eq!(code(Some("why")), None);
    }
}
