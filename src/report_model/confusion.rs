//! `confusion(truth, predicted)` in `report.json`: the matrix stored sparsely, so
//! that thousands of classes stay a list, not a square. Each class carries its
//! counts (the diagonal is `correct`) and scores; the cells off the diagonal
//! that hold items follow, most items first.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(expecting = "an object")]
pub struct ConfusionMatrix {
    /// The arguments as written, and each side alone.
    pub subject: String,
    pub truth: String,
    pub predicted: String,
    pub run: Option<String>,
    /// Items with both labels.
    pub items: u64,
    /// Items whose two labels are the same.
    pub correct: u64,
    /// Every label either side used, in natural order.
    pub classes: Vec<ClassScores>,
    /// Every (truth, predicted) pair of different labels that holds items: by
    /// items (most first), then truth, then predicted, in natural order.
    pub confusions: Vec<ConfusionCell>,
}

/// One class: scikit-learn's `classification_report` row (`zero_division=0`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(expecting = "an object")]
pub struct ClassScores {
    pub label: String,
    /// Items whose truth is the class.
    pub support: u64,
    /// Items predicted as the class.
    pub predicted: u64,
    /// Items whose truth and prediction are the class.
    pub correct: u64,
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(expecting = "an object")]
pub struct ConfusionCell {
    pub truth: String,
    pub predicted: String,
    pub items: u64,
}
