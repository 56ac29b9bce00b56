//! The crate's modules import downwards only:
//!
//! `units < config < flows, record < net < policy < transport, control < engine | flowlevel < validate < lib`
//!
//! Every `crate::` path in the code of a file under `src` (in `use` lines and inline; comments and string
//! literals are skipped) must name a module below the file's own, or its own (files of one folder use each
//! other freely). Modules on one level (`flows` and `record`, `transport` and `control`) may use each other,
//! except `engine` and `flowlevel`, which never import each other. A module missing from the order fails the
//! test, so that a new one is placed on purpose.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The order, lowest first; names on one level share it. `lib` stands for `src/lib.rs` and `src/bin`.
const LEVELS: &[&[&str]] = &[
    &["units"],
    &["config"],
    &["flows", "record"],
    &["net"],
    &["policy"],
    &["transport", "control"],
    &["engine", "flowlevel"],
    &["validate"],
    &["lib"],
];

/// Modules on one level that still may not import each other.
const NEVER: &[(&str, &str)] = &[("engine", "flowlevel"), ("flowlevel", "engine")];

/// Imports against the order that are allowed, as (from, to) modules: none. An edge that has to exist for a
/// while (a move in several steps) is listed here with the files that make it, and removed when the move lands;
/// any edge not listed fails the test, and so does a listed edge that no file makes any more.
const ALLOWED_FOR_NOW: &[(&str, &str)] = &[];

fn level(module: &str) -> Option<usize> {
    LEVELS.iter().position(|l| l.contains(&module))
}

/// The module a source file belongs to (its top folder or file under `src`).
fn module_of(rel: &Path) -> String {
    let first = rel.components().next().unwrap().as_os_str().to_string_lossy().to_string();
    match first.as_str() {
        "lib.rs" | "bin" => "lib".to_string(),
        f => f.trim_end_matches(".rs").to_string(),
    }
}

/// The code of a Rust file with comments and string and character literals blanked out.
fn code_only(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if c == 'r' && (next == Some('"') || next == Some('#')) && !prev_is_ident(&b, i) {
            // a raw string: r"..." or r#"..."#
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == '"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            i = j;
            out.push_str("\"\"");
        } else if c == '"' {
            i += 1;
            while i < b.len() && b[i] != '"' {
                if b[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' && is_char_literal(&b, i) {
            // 'x' or '\n' (not a lifetime)
            i += 1;
            if b[i] == '\\' {
                i += 1;
            }
            while i < b.len() && b[i] != '\'' {
                i += 1;
            }
            i += 1;
            out.push_str("' '");
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn prev_is_ident(b: &[char], i: usize) -> bool {
    i > 0 && (b[i - 1].is_alphanumeric() || b[i - 1] == '_')
}

fn is_char_literal(b: &[char], i: usize) -> bool {
    match (b.get(i + 1), b.get(i + 2), b.get(i + 3)) {
        (Some('\\'), _, _) => true,
        (Some(_), Some('\''), _) => true,
        _ => false,
    }
}

/// The top-level modules a file's code names through `crate::`, in `use crate::{a::X, b}` groups too.
fn imports(code: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let ident = |s: &str| -> String { s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect() };
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().last();
        rest = &rest[at + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        let rest_trim = rest.trim_start();
        if let Some(group) = rest_trim.strip_prefix('{') {
            // the group's top-level items, up to its closing brace
            let mut depth = 0;
            let mut item_start = true;
            for (k, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if item_start && !c.is_whitespace() => {
                        item_start = false;
                        let name = ident(&group[k..]);
                        if !name.is_empty() && name != "self" {
                            found.insert(name);
                        }
                    }
                    _ => {}
                }
            }
        } else {
            let name = ident(rest_trim);
            if !name.is_empty() {
                found.insert(name);
            }
        }
    }
    found
}

/// The imports of one file that go against the order: (from, to) module pairs.
fn violations(rel: &Path, text: &str) -> Vec<(String, String)> {
    let from = module_of(rel);
    let from_level = level(&from).unwrap_or_else(|| panic!("{}: module {from} is not in the order", rel.display()));
    let mut bad = Vec::new();
    for to in imports(&code_only(text)) {
        if to == from {
            continue;
        }
        let Some(to_level) = level(&to) else {
            // an item of lib.rs itself (a re-export such as `crate::Config`) counts as lib
            bad.push((from.clone(), to));
            continue;
        };
        let never = NEVER.iter().any(|&(a, b)| a == from && b == to);
        if to_level > from_level || never {
            bad.push((from.clone(), to));
        }
    }
    bad
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn imports_point_down() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(files.len() > 20, "found only {} files under {}", files.len(), src.display());
    let mut unexpected = Vec::new();
    let mut used: BTreeSet<(String, String)> = BTreeSet::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap();
        let text = std::fs::read_to_string(f).unwrap();
        for (from, to) in violations(rel, &text) {
            if ALLOWED_FOR_NOW.iter().any(|&(a, b)| a == from && b == to) {
                used.insert((from, to));
            } else {
                unexpected.push(format!("{}: imports crate::{to} ({from} may not use {to})", rel.display()));
            }
        }
    }
    assert!(unexpected.is_empty(), "imports against the order:\n{}", unexpected.join("\n"));
    // an allowance nobody needs any more is removed, so that the list only shrinks
    let stale: Vec<_> =
        ALLOWED_FOR_NOW.iter().filter(|&&(a, b)| !used.contains(&(a.to_string(), b.to_string()))).collect();
    assert!(stale.is_empty(), "ALLOWED_FOR_NOW lists edges no file has any more: {stale:?}");
}

#[test]
fn the_check_catches_an_import_upwards() {
    let bad = "use crate::units::Ps;\nuse crate::engine::RunStats;\n";
    assert_eq!(violations(Path::new("config/mod.rs"), bad), [("config".to_string(), "engine".to_string())]);
    let grouped = "use crate::{flows::FlowSet, net::Network};\nfn f() { crate::validate::check(x); }\n";
    let v = violations(Path::new("net/port.rs"), grouped);
    assert_eq!(v, [("net".to_string(), "validate".to_string())]);
    // engine and flowlevel share a level and still may not meet
    let v = violations(Path::new("engine/mod.rs"), "fn f() { crate::flowlevel::run(c, f) }");
    assert_eq!(v, [("engine".to_string(), "flowlevel".to_string())]);
    // comments, strings and the file's own module do not count
    let fine = "// crate::engine\n/// [`crate::engine::run`]\nlet s = \"crate::engine\"; use crate::config::X; \
                let r = r#\"crate::lib\"#; let c = '\"'; use crate::net::port;";
    assert!(violations(Path::new("net/mod.rs"), fine).is_empty());
    // every level above may use what is below
    assert!(violations(Path::new("validate.rs"), "use crate::flowlevel; use crate::net::jellyfish;").is_empty());
    assert!(violations(Path::new("lib.rs"), "pub use crate::validate::config_from_json;").is_empty());
}
