//! The repository stands alone: a fresh clone with nothing beside it passes
//! the README's commands. So no tracked file names a path outside the
//! checkout (a folder beside it, a machine's absolute path), and every
//! `docs/...` path and relative Markdown link a tracked file cites exists.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("scenarios/ has a parent")
        .to_path_buf()
}

/// The tracked files (`git ls-files`), or, outside a git checkout, every
/// file under the root but build output.
fn tracked() -> Vec<PathBuf> {
    let out = Command::new("git")
        .arg("ls-files")
        .arg("-z")
        .current_dir(root())
        .output();
    if let Some(out) = out.ok().filter(|o| o.status.success() && !o.stdout.is_empty()) {
        return out
            .stdout
            .split(|&b| b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| PathBuf::from(String::from_utf8_lossy(p).into_owned()))
            .filter(|p| root().join(p).is_file())
            .collect();
    }
    let mut files = Vec::new();
    let mut dirs = vec![PathBuf::new()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(root().join(&dir))
            .expect("readable checkout")
            .flatten()
        {
            let rel = dir.join(entry.file_name());
            let name = entry.file_name().to_string_lossy().into_owned();
            if ["target", ".git", "store", "out"].contains(&name.as_str()) {
                continue;
            }
            if entry.path().is_dir() {
                dirs.push(rel);
            } else {
                files.push(rel);
            }
        }
    }
    files
}

/// Text files only: the third-party corpus is data, and binaries are skipped.
fn texts() -> Vec<(PathBuf, String)> {
    tracked()
        .into_iter()
        .filter(|p| !p.starts_with("checker/tests/corpora"))
        // This file shows the scanners made-up citations (their own test).
        .filter(|p| !p.ends_with("scenarios/tests/standalone.rs"))
        .filter_map(|p| Some((p.clone(), String::from_utf8(std::fs::read(root().join(&p)).ok()?).ok()?)))
        .collect()
}

/// Paths that point outside the checkout. Built at run time so that this
/// file does not name them itself.
fn outside_markers() -> Vec<String> {
    let up = "..";
    vec![
        format!("{up}/shared"),
        format!("shared/{}", "corpora"),
        format!("shared/{}", "docs"),
        format!("/{}/", "work"),
        format!("/{}/", "root"),
    ]
}

#[test]
fn no_tracked_file_names_a_path_outside_the_checkout() {
    let texts = texts();
    assert!(texts.len() > 100, "found only {} tracked text files", texts.len());
    let markers = outside_markers();
    let mut found = Vec::new();
    for (path, text) in &texts {
        for (n, line) in text.lines().enumerate() {
            for m in &markers {
                if line.contains(m.as_str()) {
                    found.push(format!("{}:{}: names `{m}`: {}", path.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(found.is_empty(), "paths outside the repository:\n{}", found.join("\n"));
}

/// `docs/...` as a file cites it: up to the first character a path does
/// not contain, without trailing punctuation.
fn cited_docs_paths(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let bytes = text.as_bytes();
    let mut at = 0;
    while let Some(i) = text[at..].find("docs/") {
        let start = at + i;
        at = start + 5;
        // `docs/` must begin a path, not end a longer word (`rustdocs/`).
        if start > 0 && (bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_') {
            continue;
        }
        let end = text[start..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || "/._-".contains(c)))
            .map_or(text.len(), |e| start + e);
        let path = text[start..end].trim_end_matches(['.', '/']);
        if path.len() > "docs/".len() && path.contains('.') {
            out.insert(path.to_string());
        }
    }
    out
}

/// Relative targets of Markdown links `[text](target)`, without anchors.
fn markdown_links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(i) = text[at..].find("](") {
        let start = at + i + 2;
        at = start;
        let Some(len) = text[start..].find(')') else { break };
        let target = text[start..start + len].split('#').next().unwrap_or("").trim();
        if target.is_empty() || target.contains("://") || target.starts_with("mailto:") || target.contains(' ') {
            continue;
        }
        out.push(target.to_string());
    }
    out
}

#[test]
fn every_cited_docs_path_and_markdown_link_exists() {
    let mut missing = Vec::new();
    for (path, text) in texts() {
        for cited in cited_docs_paths(&text) {
            if !root().join(&cited).exists() {
                missing.push(format!("{}: cites {cited}", path.display()));
            }
        }
        if path.extension().is_some_and(|e| e == "md") {
            let dir = root().join(&path).parent().map(Path::to_path_buf).unwrap_or_else(root);
            for link in markdown_links(&text) {
                if !dir.join(&link).exists() {
                    missing.push(format!("{}: links {link}", path.display()));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "cited paths that do not exist:\n{}",
        missing.join("\n")
    );
}

#[test]
fn the_scanners_see_what_they_look_for() {
    let cites = cited_docs_paths("see `docs/bug-catalogue.md`, and docs/determinism.md. not rustdocs/x.md");
    assert_eq!(
        cites.into_iter().collect::<Vec<_>>(),
        vec!["docs/bug-catalogue.md", "docs/determinism.md"]
    );
    assert_eq!(
        markdown_links("[a](docs/x.md#y) [b](https://e.org) [c](../up.md)"),
        vec!["docs/x.md", "../up.md"]
    );
    let line = format!("see {}/corpora/porcupine", [".."; 1].join("") + "/shared");
    assert!(outside_markers().iter().any(|m| line.contains(m.as_str())));
}
