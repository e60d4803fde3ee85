//! The sparse confusion matrix of each `confusion(truth, predicted)` subject (and
//! run), with every class's counts and scores, for `report.json` and the reports.

use crate::base::natural::natural_cmp;
use crate::eval::Outcome;
use crate::plan::Plan;
use crate::report::runs::split_pair;
use crate::report_model::{ClassScores, ConfusionCell, ConfusionMatrix};

pub fn matrices(plan: &Plan, outcome: &Outcome) -> Vec<ConfusionMatrix> {
    outcome
        .confusions
        .iter()
        .map(|table| {
            let aggregate = &plan.aggregates[table.aggregate];
            let (truth, predicted) = split_pair(&aggregate.subject);
            let classes: Vec<ClassScores> = table
                .confusion
                .classes()
                .into_iter()
                .map(|(label, counts)| ClassScores {
                    label: label.to_string(),
                    support: counts.support,
                    predicted: counts.predicted,
                    correct: counts.correct,
                    precision: counts.precision(),
                    recall: counts.recall(),
                    f1: counts.f1(),
                })
                .collect();
            let mut confusions: Vec<ConfusionCell> = table
                .confusion
                .cells()
                .filter(|((t, p), _)| t != p)
                .map(|((t, p), &items)| ConfusionCell {
                    truth: t.to_string(),
                    predicted: p.to_string(),
                    items,
                })
                .collect();
            confusions.sort_by(|a, b| {
                b.items
                    .cmp(&a.items)
                    .then_with(|| natural_cmp(&a.truth, &b.truth))
                    .then_with(|| natural_cmp(&a.predicted, &b.predicted))
            });
            ConfusionMatrix {
                subject: aggregate.subject.clone(),
                truth,
                predicted,
                run: table.run.as_deref().map(str::to_string),
                items: table.confusion.total(),
                correct: classes.iter().map(|c| c.correct).sum(),
                classes,
                confusions,
            }
        })
        .collect()
}
