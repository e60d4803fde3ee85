//! Classification scores of a confusion table (truth × predicted), defined as
//! scikit-learn defines them with `zero_division=0`. The classes are the labels
//! either side used, so every class has a true or a predicted item; per class,
//! F1 is `2·tp / (true + predicted)` (scikit-learn's own form, one division of
//! exact integers), and the averages add those with an exact sum.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::base::exact_sum::ExactSum;
use crate::base::natural::natural_cmp;
use crate::eval::aggregate::Confusion;

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

    /// The mean of the classes' F1 (`average="macro"`); null without items.
    pub fn macro_f1(&self) -> Option<f64> {
        let classes = self.classes();
        if classes.is_empty() {
            return None;
        }
        let mut sum = ExactSum::default();
        classes.iter().for_each(|(_, c)| sum.add(c.f1()));
        Some(sum.total() / classes.len() as f64)
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
        for (_, c) in self.classes() {
            sum.add(c.f1() * c.support as f64);
        }
        Some(sum.total() / n as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn confusion(pairs: &[(&str, &str, u64)]) -> Confusion {
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
        let c = confusion(&[("a", "a", 2), ("a", "b", 1), ("b", "b", 1), ("b", "c", 1)]);
        let classes = c.classes();
        let names: Vec<&str> = classes.iter().map(|(l, _)| l.as_ref()).collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert_eq!(classes[0].1.f1(), 0.8);
        assert_eq!(classes[1].1.f1(), 0.5);
        assert_eq!(classes[2].1.f1(), 0.0);
        assert_eq!(classes[2].1.recall(), 0.0);
        assert_eq!(c.macro_f1(), Some((0.8 + 0.5) / 3.0));
        assert_eq!(c.micro_f1(), Some(3.0 / 5.0));
        // Weighted by support 3, 2, 0: (0.8·3 + 0.5·2) / 5.
        assert_eq!(c.weighted_f1(), Some((0.8 * 3.0 + 0.5 * 2.0) / 5.0));
    }

    #[test]
    fn one_class_scores_one_and_no_items_score_nothing() {
        let one = confusion(&[("x", "x", 4)]);
        assert_eq!(one.macro_f1(), Some(1.0));
        assert_eq!(one.weighted_f1(), Some(1.0));
        assert_eq!(one.micro_f1(), Some(1.0));
        let none = Confusion::default();
        assert_eq!(none.macro_f1(), None);
        assert_eq!(none.micro_f1(), None);
        assert_eq!(none.weighted_f1(), None);
        // Every prediction wrong: every class scores 0.
        let wrong = confusion(&[("x", "y", 2), ("y", "x", 1)]);
        assert_eq!(wrong.macro_f1(), Some(0.0));
    }
}
