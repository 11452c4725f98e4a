//! The crate's modules are floors: a module may name modules on its own floor or below,
//! never above. The floors are declared here once, from the bottom up, and every `crate::`
//! path in the library's code (not its tests, not its doc comments) is checked against them,
//! so an import that runs back up fails here rather than being found later in a drawing.
//!
//! Modules on one floor must not name each other; none does today, and a pair that starts to
//! is a circle in the making.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// Bottom floor first. A module's floor is its index here.
const FLOORS: &[&[&str]] = &[
    &["time", "wire", "sysmem", "cache"],
    &["units", "engine", "stats", "packet"],
    &["aqm"],
    &["marker"],
    &["net", "ap"],
    &["cc", "app", "emu"],
    &["tcp"],
    &["schemes"],
    &["scenario"],
];

fn floor_of(module: &str) -> Option<usize> {
    FLOORS.iter().position(|f| f.contains(&module))
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("read src") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a source file belongs to (`tcp/conn/mod.rs` → `tcp`), or None for
/// the crate root and the binaries.
fn module_of(file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src_dir()).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (name != "lib" && name != "bin").then(|| name.to_string())
}

/// The library code of a file: its lines up to its test module, without comments. A file
/// that is itself a test module (`tests.rs`) has none.
fn library_lines(file: &Path, text: &str) -> Vec<(usize, String)> {
    if file.file_name().is_some_and(|n| n == "tests.rs") {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        if t.starts_with("#[cfg(test)]") {
            break;
        }
        if t.starts_with("//") {
            continue;
        }
        let code = match t.find("//") {
            Some(at) => &t[..at],
            None => t,
        };
        out.push((i + 1, code.to_string()));
    }
    out
}

/// Every module named by a `crate::` path in some code, with the byte offset where it is
/// named; `use crate::{a, b::{C, D}}` names `a` and `b`, over as many lines as it takes.
fn named_modules(code: &str) -> Vec<(usize, String)> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let after = &code[at + "crate::".len()..];
        if let Some(group) = after.strip_prefix('{') {
            // The top-level names of the group: those at brace depth 0.
            let mut depth = 0usize;
            let mut start = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => start = true,
                    c if start && !c.is_whitespace() => {
                        start = false;
                        let name = ident(&group[i..]);
                        if !name.is_empty() {
                            out.push((at, name));
                        }
                    }
                    _ => {}
                }
            }
        } else {
            let name = ident(after);
            if !name.is_empty() {
                out.push((at, name));
            }
        }
    }
    out
}

#[test]
fn every_module_has_a_floor() {
    let mut missing = Vec::new();
    for entry in fs::read_dir(src_dir()).expect("read src") {
        let path = entry.expect("dir entry").path();
        if let Some(m) = module_of(&path.join("x")).or_else(|| module_of(&path)) {
            if floor_of(&m).is_none() {
                missing.push(m);
            }
        }
    }
    assert!(
        missing.is_empty(),
        "modules without a floor in tests/layers.rs: {missing:?}"
    );
}

#[test]
fn imports_run_downward_only() {
    let mut files = Vec::new();
    rust_files(&src_dir(), &mut files);
    files.sort();
    let mut upward: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut checked = 0;
    for file in &files {
        let Some(module) = module_of(file) else {
            continue;
        };
        let Some(own) = floor_of(&module) else {
            continue;
        };
        let text = fs::read_to_string(file).expect("read source");
        let lines = library_lines(file, &text);
        let code: String = lines.iter().map(|(_, l)| format!("{l}\n")).collect();
        let mut line_at = Vec::new();
        let mut offset = 0;
        for (n, l) in &lines {
            line_at.push((offset, *n));
            offset += l.len() + 1;
        }
        for (at, named) in named_modules(&code) {
            if named == module {
                continue;
            }
            let Some(theirs) = floor_of(&named) else {
                continue;
            };
            checked += 1;
            if theirs >= own {
                let n = line_at
                    .iter()
                    .rev()
                    .find(|(o, _)| *o <= at)
                    .map_or(0, |(_, n)| *n);
                let rel = file.strip_prefix(src_dir()).unwrap().display().to_string();
                upward
                    .entry(format!("{module} (floor {own}) → {named} (floor {theirs})"))
                    .or_default()
                    .push(format!("{rel}:{n}"));
            }
        }
    }
    assert!(
        checked > 100,
        "only {checked} crate:: paths found: the scan is broken"
    );
    assert!(
        upward.is_empty(),
        "imports that do not run downward:\n{upward:#?}"
    );
}

#[test]
fn the_scan_sees_what_it_checks() {
    let names = |code: &str| {
        named_modules(code)
            .into_iter()
            .map(|(_, n)| n)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        names("use crate::{net::Sim, time::Time};"),
        vec!["net", "time"]
    );
    assert_eq!(
        names("use crate::{\n    aqm::{Limit, DropReason},\n    wire,\n};"),
        vec!["aqm", "wire"]
    );
    assert_eq!(names("fn f(x: &mut crate::net::Samples) {}"), vec!["net"]);
    let lines = library_lines(
        Path::new("a.rs"),
        "use crate::x;\n/// [`crate::y`]\n#[cfg(test)]\nuse crate::z;\n",
    );
    assert_eq!(lines.len(), 1);
    assert!(floor_of("tcp") > floor_of("cc") && floor_of("scenario") > floor_of("schemes"));
}
