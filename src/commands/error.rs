//! The few errors a command reports itself (the layers below report the rest), as
//! data; their words are written here and nowhere else.

use crate::base::diagnostic::{Kind, Words};

#[derive(Debug)]
pub enum CommandError {
    /// `verify` on a spec that has no lock.
    NotFrozen {
        spec: String,
        lock: String,
    },
    /// `init` into a folder that has one of its files already.
    InitFileExists {
        path: String,
    },
    InitCannotWrite {
        path: String,
        error: String,
    },
    ManCannotWrite {
        dir: String,
        error: String,
    },
}

impl Kind for CommandError {
    fn code(&self) -> &'static str {
        match self {
            CommandError::NotFrozen { .. } => "not_frozen",
            CommandError::InitFileExists { .. } => "init_file_exists",
            CommandError::InitCannotWrite { .. } => "init_cannot_write",
            CommandError::ManCannotWrite { .. } => "man_cannot_write",
        }
    }

    fn describe(&self) -> Words {
        match self {
            CommandError::NotFrozen { spec, lock } => {
                Words::new(format!("spec `{spec}` is not frozen: there is no {lock}"))
                    .help(format!("run `evalspec freeze {spec}`"))
            }
            CommandError::InitFileExists { path } => Words::new(format!("`{path}` exists already"))
                .help("init writes only into a folder without these files; pick another DIR"),
            CommandError::InitCannotWrite { path, error } => {
                Words::new(format!("cannot write `{path}`: {error}"))
            }
            CommandError::ManCannotWrite { dir, error } => {
                Words::new(format!("cannot write the man pages into `{dir}`: {error}"))
            }
        }
    }
}
