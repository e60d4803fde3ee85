//! `confusion(truth, predicted)` in the reports: the Markdown section of the
//! shipped intent example, and a matrix of thousands of classes, which
//! report.json keeps whole (sparsely) and report.md/report.html cap.

use crate::support::{evalspec, repo_root, write};

/// The `## Confusion` section of a report.md, up to the next `## `.
fn confusion_section(md: &str) -> &str {
    let start = md.find("## Confusion").expect("a confusion section");
    let end = md[start + 3..]
        .find("\n## ")
        .map_or(md.len(), |i| start + 3 + i);
    &md[start..end]
}

#[test]
fn the_intent_example_shows_its_confusion_matrix() {
    let out = tempfile::tempdir().unwrap();
    let spec = repo_root().join("specs/intent-classification.yaml");
    let run = evalspec(
        &repo_root(),
        &[
            "run",
            spec.to_str().unwrap(),
            "--out",
            out.path().to_str().unwrap(),
        ],
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let md = std::fs::read_to_string(out.path().join("report.md")).unwrap();
    insta::assert_snapshot!("intent_confusion_md", confusion_section(&md));
}

#[test]
fn thousands_of_classes_stay_sparse_and_the_reports_show_the_top() {
    let dir = tempfile::tempdir().unwrap();
    // 3,000 classes, each true twice: once right, once taken for the next class.
    let classes = 3000;
    let mut items = String::new();
    for i in 0..classes {
        let next = (i + 1) % classes;
        items.push_str(&format!(
            "{{\"id\": {}, \"t\": \"c{i}\", \"p\": \"c{i}\"}}\n",
            2 * i
        ));
        items.push_str(&format!(
            "{{\"id\": {}, \"t\": \"c{i}\", \"p\": \"c{next}\"}}\n",
            2 * i + 1
        ));
    }
    write(dir.path(), "items.jsonl", &items);
    write(
        dir.path(),
        "spec.yaml",
        "name: many\nversion: 1.0.0\nitems: items\ndatasets:\n  items: {path: items.jsonl, key: id}\nmetrics:\n  matrix: confusion(items.t, items.p)\n  macro: macro_f1(items.t, items.p)\nreports: [markdown, html]\n",
    );
    let run = evalspec(dir.path(), &["run", "spec.yaml", "--out", "out"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/report.json")).unwrap())
            .unwrap();
    let matrix = &report["confusion"][0];
    assert_eq!(matrix["items"], 6000);
    assert_eq!(matrix["correct"], 3000);
    assert_eq!(matrix["classes"].as_array().unwrap().len(), classes);
    assert_eq!(matrix["confusions"].as_array().unwrap().len(), classes);
    // Every class: precision = recall = F1 = 1/2.
    assert_eq!(report["metrics"]["macro"], 0.5);
    let md = std::fs::read_to_string(dir.path().join("out/report.md")).unwrap();
    let section = confusion_section(&md);
    let rows = section
        .lines()
        .filter(|l| {
            l.strip_prefix("| c")
                .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
        })
        .count();
    assert_eq!(rows, 50 + 20, "{section}");
    assert!(section.contains("… and 2950 more classes (all are in report.json)."));
    assert!(section.contains("… and 2980 more (all are in report.json)."));
    // Natural order: c1, c2, …, c9, c10, not c1, c10, c100.
    assert!(section.contains("| c0 | 2 |") && section.contains("| c9 | 2 |"));
    assert!(!section.contains("| c100 |"), "{section}");
    let html = std::fs::read_to_string(dir.path().join("out/report.html")).unwrap();
    assert_eq!(html.matches("<tr><td>c").count(), 50 + 20);
}
