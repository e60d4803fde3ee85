//! The scores of a confusion table (first × second labels, truth × predicted):
//! Cohen's kappa and agreement, and the F1s as scikit-learn defines them with
//! `zero_division=0`. The classes are the labels either side used, so every
//! class has a true or a predicted item; per class, F1 is `2·tp / (true +
//! predicted)` (scikit-learn's own form, one division of exact integers), and
//! the averages add those with an exact sum.
//!
//! Every score is a function of the classes' counts (`ClassTable`), which a
//! run's table and a bootstrap replicate's (`resample`) both reduce to.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::base::exact_sum::ExactSum;
use crate::base::natural::natural_cmp;
use crate::base::value::Value;
use crate::library::aggregates::AggregateFn;
use crate::stats::aggregate::Confusion;

/// One class: its items by truth, by prediction, and those in both.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClassCounts {
    /// Items whose truth is the class (scikit-learn's `support`).
    pub support: u64,
    pub predicted: u64,
    /// Items whose truth and prediction are the class.
    pub correct: u64,
}

impl ClassCounts {
    /// `tp / predicted`, 0 when nothing was predicted as the class.
    pub fn precision(&self) -> f64 {
        ratio(self.correct, self.predicted)
    }

    /// `tp / support`, 0 when no item is truly the class.
    pub fn recall(&self) -> f64 {
        ratio(self.correct, self.support)
    }

    /// `2·tp / (support + predicted)`: the harmonic mean of precision and recall,
    /// 0 when both are.
    pub fn f1(&self) -> f64 {
        ratio(2 * self.correct, self.support + self.predicted)
    }
}

fn ratio(numerator: u64, denominator: u64) -> f64 {
    if denominator == 0 {
        0.0
    } else {
        numerator as f64 / denominator as f64
    }
}

impl Confusion {
    /// Every class with its counts, in natural order of the labels.
    pub fn classes(&self) -> Vec<(Arc<str>, ClassCounts)> {
        let mut classes: BTreeMap<Arc<str>, ClassCounts> = BTreeMap::new();
        for ((truth, predicted), &n) in self.cells() {
            classes.entry(truth.clone()).or_default().support += n;
            classes.entry(predicted.clone()).or_default().predicted += n;
            if truth == predicted {
                classes.entry(truth.clone()).or_default().correct += n;
            }
        }
        let mut classes: Vec<_> = classes.into_iter().collect();
        classes.sort_by(|(a, _), (b, _)| natural_cmp(a, b));
        classes
    }

    /// The classes' counts the table's scores are computed from.
    pub fn table(&self) -> ClassTable {
        ClassTable(self.classes().into_iter().map(|(_, c)| c).collect())
    }
}

/// Each class's counts, in natural order of their labels: every class a cell
/// of the table names, none other.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClassTable(pub Vec<ClassCounts>);

impl ClassTable {
    /// The value of an aggregate folded into a table: `kappa`, an F1,
    /// `confusion` (the items in it), or `agreement` (any other function).
    pub fn value(&self, function: AggregateFn) -> Value {
        let value = match function {
            AggregateFn::Kappa => self.kappa(),
            AggregateFn::MacroF1 => self.macro_f1(),
            AggregateFn::MicroF1 => self.micro_f1(),
            AggregateFn::WeightedF1 => self.weighted_f1(),
            AggregateFn::Confusion => Some(self.total() as f64),
            _ => self.agreement(),
        };
        value.map_or(Value::Null, Value::Number)
    }

    /// Items in the table: each has one truth.
    pub fn total(&self) -> u64 {
        self.0.iter().map(|c| c.support).sum()
    }

    /// Items whose two labels are the same.
    fn agreeing(&self) -> u64 {
        self.0.iter().map(|c| c.correct).sum()
    }

    /// Observed agreement `p_o`: the share of items with the same two labels.
    pub fn agreement(&self) -> Option<f64> {
        let n = self.total();
        (n > 0).then(|| self.agreeing() as f64 / n as f64)
    }

    /// Expected agreement `p_e` by chance: `Σ_k (a_k/n)(b_k/n)` over the label
    /// marginals of each side.
    pub fn expected(&self) -> Option<f64> {
        let n = self.total();
        (n > 0).then(|| self.marginal_products() as f64 / (n as f64 * n as f64))
    }

    /// Cohen's kappa `(p_o − p_e) / (1 − p_e)`, computed exactly in integers as
    /// `(n·agree − Σ a_k b_k) / (n² − Σ a_k b_k)`. Undefined (null) without items
    /// and when `p_e = 1`: both sides put every item in one and the same class.
    pub fn kappa(&self) -> Option<f64> {
        let n = u128::from(self.total());
        let chance = self.marginal_products();
        let denominator = n * n - chance;
        if n == 0 || denominator == 0 {
            return None;
        }
        let numerator = (n * u128::from(self.agreeing())) as i128 - chance as i128;
        Some(numerator as f64 / denominator as f64)
    }

    /// `Σ_k a_k · b_k`, the label marginals of both sides multiplied: a
    /// class's support and its predictions.
    fn marginal_products(&self) -> u128 {
        (self.0.iter())
            .map(|c| u128::from(c.support) * u128::from(c.predicted))
            .sum()
    }

    /// The mean of the classes' F1 (`average="macro"`); null without items.
    pub fn macro_f1(&self) -> Option<f64> {
        if self.0.is_empty() {
            return None;
        }
        let mut sum = ExactSum::default();
        self.0.iter().for_each(|c| sum.add(c.f1()));
        Some(sum.total() / self.0.len() as f64)
    }

    /// F1 of the counts pooled over classes (`average="micro"`): with one label
    /// per item, pooled precision and recall are both the share of items whose
    /// labels agree, and so is their F1.
    pub fn micro_f1(&self) -> Option<f64> {
        self.agreement()
    }

    /// The classes' F1 weighted by their support (`average="weighted"`); null
    /// without items.
    pub fn weighted_f1(&self) -> Option<f64> {
        let n = self.total();
        if n == 0 {
            return None;
        }
        let mut sum = ExactSum::default();
        for c in &self.0 {
            sum.add(c.f1() * c.support as f64);
        }
        Some(sum.total() / n as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn confusion(pairs: &[(&str, &str, u64)]) -> ClassTable {
        confusion_table(pairs).table()
    }

    fn confusion_table(pairs: &[(&str, &str, u64)]) -> Confusion {
        let mut c = Confusion::default();
        for &(truth, predicted, n) in pairs {
            for _ in 0..n {
                c.add(Arc::from(truth), Arc::from(predicted));
            }
        }
        c
    }

    #[test]
    fn f1_by_hand_with_a_class_never_predicted_and_one_never_true() {
        // a: 3 true, 2 predicted right, 1 predicted b; c: never true, predicted once
        // (for a b). b: 2 true, 1 right. Per class: a 2·2/(3+2) = 0.8,
        // b 2·1/(2+2) = 0.5, c 0/(0+1) = 0.
        let c = confusion_table(&[("a", "a", 2), ("a", "b", 1), ("b", "b", 1), ("b", "c", 1)]);
        let classes = c.classes();
        let names: Vec<&str> = classes.iter().map(|(l, _)| l.as_ref()).collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert_eq!(classes[0].1.f1(), 0.8);
        assert_eq!(classes[1].1.f1(), 0.5);
        assert_eq!(classes[2].1.f1(), 0.0);
        assert_eq!(classes[2].1.recall(), 0.0);
        let c = c.table();
        assert_eq!(c.macro_f1(), Some((0.8 + 0.5) / 3.0));
        assert_eq!(c.micro_f1(), Some(3.0 / 5.0));
        // Weighted by support 3, 2, 0: (0.8·3 + 0.5·2) / 5.
        assert_eq!(c.weighted_f1(), Some((0.8 * 3.0 + 0.5 * 2.0) / 5.0));
    }

    #[test]
    fn kappa_is_one_for_perfect_agreement_and_zero_at_chance() {
        let perfect = confusion(&[("yes", "yes", 2), ("no", "no", 1)]);
        assert_eq!(perfect.agreement(), Some(1.0));
        assert_eq!(perfect.kappa(), Some(1.0));
        // Each side says yes half the time, independently: p_o = p_e = 0.5.
        let chance = confusion(&[
            ("yes", "yes", 1),
            ("yes", "no", 1),
            ("no", "yes", 1),
            ("no", "no", 1),
        ]);
        assert_eq!(chance.agreement(), Some(0.5));
        assert_eq!(chance.expected(), Some(0.5));
        assert_eq!(chance.kappa(), Some(0.0));
        // Always disagreeing on two balanced classes: p_o = 0, p_e = 0.5, κ = −1.
        let opposite = confusion(&[("yes", "no", 1), ("no", "yes", 1)]);
        assert_eq!(opposite.kappa(), Some(-1.0));
    }

    #[test]
    fn kappa_is_undefined_when_every_item_is_in_one_class() {
        // p_e = 1: both sides said `yes` to everything. Agreement is perfect, kappa 0/0.
        let one_class = confusion(&[("yes", "yes", 2)]);
        assert_eq!(one_class.expected(), Some(1.0));
        assert_eq!(one_class.agreement(), Some(1.0));
        assert_eq!(one_class.kappa(), None);
        // One side in one class, the other not: p_e < 1, kappa is defined (and 0).
        let one_sided = confusion(&[("yes", "yes", 1), ("yes", "no", 1)]);
        assert_eq!(one_sided.kappa(), Some(0.0));
        assert_eq!(ClassTable::default().kappa(), None);
        assert_eq!(ClassTable::default().agreement(), None);
    }

    #[test]
    fn kappa_matches_a_hand_computed_table() {
        // 8 items: refuse 2/2, supported 5 (auditor 6), unsupported 1 (auditor 0);
        // 7 agree. Σ a_k·b_k = 2·2 + 5·6 + 1·0 = 34: κ = (8·7 − 34) / (64 − 34) = 22/30.
        let c = confusion(&[
            ("refuse", "refuse", 2),
            ("supported", "supported", 5),
            ("unsupported", "supported", 1),
        ]);
        assert_eq!(c.expected(), Some(34.0 / 64.0));
        assert_eq!(c.kappa(), Some(22.0 / 30.0));
    }

    #[test]
    fn one_class_scores_one_and_no_items_score_nothing() {
        let one = confusion(&[("x", "x", 4)]);
        assert_eq!(one.macro_f1(), Some(1.0));
        assert_eq!(one.weighted_f1(), Some(1.0));
        assert_eq!(one.micro_f1(), Some(1.0));
        let none = ClassTable::default();
        assert_eq!(none.macro_f1(), None);
        assert_eq!(none.micro_f1(), None);
        assert_eq!(none.weighted_f1(), None);
        // Every prediction wrong: every class scores 0.
        let wrong = confusion(&[("x", "y", 2), ("y", "x", 1)]);
        assert_eq!(wrong.macro_f1(), Some(0.0));
    }
}
