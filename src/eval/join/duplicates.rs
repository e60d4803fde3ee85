//! The duplicates policy, in one place: what happens to a record whose key an
//! earlier record of the same dataset already has. Every join asks this one
//! function, whether it meets a key's records one by one as they are read
//! (a table, a streamed chunk) or merges what two parts of a file kept of a
//! key (the earlier part's against the later one's).

use crate::spec::Duplicates;

/// Which dataset a record belongs to: the items, or a looked-up dataset (one
/// record per key).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::eval) enum Role {
    Items,
    LookedUp,
}

/// What a repeated key does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::eval) enum Repeat {
    /// Both records count (items under `keep`: every record is an item).
    Both,
    /// The earlier record is kept, the later one dropped.
    Earlier,
    /// The later record replaces the earlier one, at the earlier one's place.
    Later,
    /// An error at the later record, naming the earlier one's line.
    Error,
}

impl Repeat {
    /// Whether the later record is one more duplicate (dropped or replacing).
    pub(in crate::eval) fn counts(self) -> bool {
        matches!(self, Repeat::Earlier | Repeat::Later)
    }
}

/// What `policy` does with a repeated key of a dataset in `role`. A
/// looked-up dataset keeps one record per key, so `keep` keeps the first.
pub(in crate::eval) fn on_repeat(policy: Duplicates, role: Role) -> Repeat {
    match (policy, role) {
        (Duplicates::Keep, Role::Items) => Repeat::Both,
        (Duplicates::Keep | Duplicates::First, _) => Repeat::Earlier,
        (Duplicates::Last, _) => Repeat::Later,
        (Duplicates::Error, _) => Repeat::Error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keep_is_every_record_for_items_and_the_first_for_a_lookup() {
        assert_eq!(on_repeat(Duplicates::Keep, Role::Items), Repeat::Both);
        assert_eq!(on_repeat(Duplicates::Keep, Role::LookedUp), Repeat::Earlier);
        for role in [Role::Items, Role::LookedUp] {
            assert_eq!(on_repeat(Duplicates::First, role), Repeat::Earlier);
            assert_eq!(on_repeat(Duplicates::Last, role), Repeat::Later);
            assert_eq!(on_repeat(Duplicates::Error, role), Repeat::Error);
        }
        assert!(!Repeat::Both.counts() && !Repeat::Error.counts());
        assert!(Repeat::Earlier.counts() && Repeat::Later.counts());
    }
}
