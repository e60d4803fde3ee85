//! The README's commands are true: every `cargo run --release -- …` line in it runs
//! and exits 0 on the shipped data, every command of its tour runs with the exit
//! status it states and prints what the tour shows, and its contents list names
//! every section.

use std::path::Path;

use crate::support::{evalspec, repo_root};

#[test]
fn readme_run_commands_work() {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let first_lines: Vec<&str> = readme.lines().take(12).collect();
    assert!(
        first_lines
            .iter()
            .any(|l| l.contains("cargo run --release -- run specs/rag-precision.yaml")),
        "the README starts with the main command"
    );
    assert!(
        first_lines
            .iter()
            .any(|l| l.contains("cargo test --locked")),
        "the README starts with the test command"
    );
    let commands: Vec<&str> = readme
        .lines()
        .filter_map(|l| l.trim().strip_prefix("cargo run --release -- "))
        .collect();
    assert!(commands.len() >= 2, "{commands:?}");
    let out_dir = tempfile::tempdir().unwrap();
    for command in commands {
        let command = command.split(" #").next().unwrap_or(command);
        let mut args: Vec<&str> = command.split_whitespace().collect();
        if args[0] == "run" {
            args.extend(["--out", out_dir.path().to_str().unwrap()]);
        }
        let out = evalspec(&repo_root(), &args);
        assert_eq!(
            out.code, 0,
            "`{command}` from the README: {}{}",
            out.stdout, out.stderr
        );
    }
}

#[test]
fn the_grammar_reference_lists_every_builtin_and_aggregate() {
    let reference = std::fs::read_to_string(repo_root().join("grammar/README.md")).unwrap();
    for builtin in evalspec::library::builtins::BUILTINS {
        assert!(
            reference.contains(&format!("| `{}(", builtin.name)),
            "grammar/README.md misses `{}`",
            builtin.name
        );
    }
    let aggregates = evalspec::library::aggregates::AGGREGATES.iter();
    for name in aggregates.map(|a| a.name).chain(["if"]) {
        assert!(
            reference.contains(&format!("`{name}(")),
            "grammar/README.md misses `{name}`"
        );
    }
}

fn readme() -> String {
    std::fs::read_to_string(repo_root().join("README.md")).unwrap()
}

/// The text of the section under `## {heading}`, up to the next `## `.
fn section(readme: &str, heading: &str) -> String {
    let start = (readme.find(&format!("\n## {heading}\n")))
        .unwrap_or_else(|| panic!("README has no section `## {heading}`"));
    let end = readme[start + 1..]
        .find("\n## ")
        .map_or(readme.len(), |end| start + 1 + end);
    readme[start..end].to_string()
}

/// The fenced blocks of `text` in order: (language, body lines).
fn fenced_blocks(text: &str) -> Vec<(String, Vec<String>)> {
    let mut blocks = Vec::new();
    let mut open: Option<(String, Vec<String>)> = None;
    for line in text.lines() {
        match (open.take(), line.strip_prefix("```")) {
            (None, Some(language)) => open = Some((language.to_string(), Vec::new())),
            (None, None) => {}
            (Some(block), Some(_)) => blocks.push(block),
            (Some((language, mut body)), None) => {
                body.push(line.to_string());
                open = Some((language, body));
            }
        }
    }
    assert!(open.is_none(), "an unclosed code block");
    blocks
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// `line` without its leading and trailing space, every run of spaces one space.
fn squeezed(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether `line` is what the excerpt line `shown` shows: the parts of `shown`
/// between `…` in `line` in order, the first starting it and the last ending it.
fn shows(shown: &str, line: &str) -> bool {
    let (shown, line) = (squeezed(shown), squeezed(line));
    let parts: Vec<&str> = shown.split('…').map(str::trim).collect();
    if parts.len() == 1 {
        return line == shown;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !line.starts_with(first) || !line.ends_with(last) || line.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &line[first.len()..line.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

/// The tour, run as a newcomer would from a clone: each `sh` line (a trailing `\`
/// continues it) is an `evalspec` command whose `# exit N` comment is its exit
/// status; each `text` block is an excerpt, in order, of what the last command
/// before it printed.
#[test]
fn the_tour_runs_as_the_readme_says() {
    let tour = section(&readme(), "A 10-minute tour");
    let workspace = tempfile::tempdir().unwrap();
    copy_dir(&repo_root().join("specs"), &workspace.path().join("specs"));
    let mut ran: Vec<String> = Vec::new();
    let mut last_output: Option<String> = None;
    for (language, body) in fenced_blocks(&tour) {
        match language.as_str() {
            "sh" => {
                let joined = body.join("\n").replace("\\\n", " ");
                for line in joined.lines().filter(|l| !l.trim().is_empty()) {
                    let (command, comment) = line.split_once(" #").unwrap_or((line, ""));
                    let command = command.trim();
                    let expected: i32 = (comment.trim().strip_prefix("exit "))
                        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
                        .and_then(|code| code.parse().ok())
                        .unwrap_or_else(|| panic!("`{line}`: no `# exit N` comment"));
                    assert!(
                        !command.contains(['"', '\'', '$', '|', '>', '<', '&', ';']),
                        "`{command}`: the test splits commands on spaces only"
                    );
                    let words: Vec<&str> = command.split_whitespace().collect();
                    assert_eq!(words[0], "evalspec", "`{line}`");
                    let out = evalspec(workspace.path(), &words[1..]);
                    assert_eq!(
                        out.code, expected,
                        "`{command}` from the README's tour: {}{}",
                        out.stdout, out.stderr
                    );
                    ran.push(words[1].to_string());
                    last_output = Some(out.stdout);
                }
            }
            "text" => {
                let printed = (last_output.as_deref()).expect("a `text` block after a command");
                let lines: Vec<&str> = printed.lines().collect();
                let mut from = 0;
                for shown in body.iter().filter(|l| !l.trim().is_empty()) {
                    let found = (lines[from..].iter().position(|line| shows(shown, line)))
                        .unwrap_or_else(|| {
                            panic!("the README's tour shows `{shown}`, not printed (in this order) by the command before it:\n{printed}")
                        });
                    from += found + 1;
                }
            }
            other => panic!("a `{other}` block in the tour: only sh and text are run"),
        }
    }
    let mut commands = ran.clone();
    commands.dedup();
    assert_eq!(commands, ["init", "check", "run", "diff"], "{ran:?}");
}

#[test]
fn the_contents_list_names_every_section() {
    let readme = readme();
    let contents = section(&readme, "Contents");
    let listed: Vec<&str> = (contents.lines())
        .filter_map(|line| line.strip_prefix("- "))
        .collect();
    let headings = (readme.lines())
        .filter_map(|line| line.strip_prefix("## "))
        .filter(|heading| *heading != "Contents");
    let expected: Vec<String> = headings
        .map(|heading| format!("[{heading}](#{})", anchor(heading)))
        .collect();
    assert_eq!(listed, expected, "README's contents list and its sections");
}

/// GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens.
fn anchor(heading: &str) -> String {
    (heading.trim().to_lowercase().chars())
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

#[test]
fn every_link_within_the_readme_lands_on_a_heading() {
    let readme = readme();
    let mut in_code = false;
    let mut anchors = Vec::new();
    for line in readme.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
        } else if !in_code && line.starts_with('#') {
            anchors.push(anchor(line.trim_start_matches('#')));
        }
    }
    let links: Vec<&str> = (readme.split("](#").skip(1))
        .map(|rest| &rest[..rest.find(')').unwrap()])
        .collect();
    assert!(links.len() > 20, "{links:?}");
    for link in links {
        assert!(
            anchors.iter().any(|a| a == link),
            "README links to #{link}, no heading"
        );
    }
}

#[test]
fn excerpts_match_lines_with_elisions() {
    assert!(shows(
        "PASS  scu …",
        "  PASS  scu   scu_violations == 0   value 0"
    ));
    assert!(shows(
        "FAIL  chr … — bad",
        "  FAIL  chr  chr >= min_chr  value 0.0  — bad"
    ));
    assert!(shows("gates", "gates"));
    assert!(!shows("gates", "gates x"));
    assert!(!shows("FAIL chr … bad", "FAIL chr_upper_at_k good"));
    assert!(!shows("a … b … c", "a c b"));
    assert!(shows("a … b … c", "a x b y c"));
    assert!(!shows("ab … ba", "aba"));
}
