//! Embeds `ECNLAB_SOURCE_HASH`: a hash of the simulator's and the bindings' source files, so
//! a stored result can tell which build of the simulator made it (the version number stays
//! the same while the code changes).

use std::fs;
use std::path::{Path, PathBuf};

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

fn fnv1a(mut h: u64, bytes: &[u8]) -> u64 {
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(FNV_PRIME);
    }
    h
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs" || x == "toml") {
            out.push(p);
        }
    }
}

fn main() {
    let here =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let roots = [
        here.join("src"),
        here.join("../ecnlab/src"),
        here.join("../ecnlab/Cargo.toml"),
        here.join("Cargo.toml"),
    ];
    let mut files = Vec::new();
    for r in &roots {
        println!("cargo:rerun-if-changed={}", r.display());
        if r.is_dir() {
            sources(r, &mut files);
        } else {
            files.push(r.clone());
        }
    }
    files.sort();
    let mut h = FNV_OFFSET;
    for f in &files {
        let rel = f.strip_prefix(&here).unwrap_or(f);
        h = fnv1a(h, rel.to_string_lossy().as_bytes());
        h = fnv1a(h, &fs::read(f).unwrap_or_default());
    }
    println!("cargo:rustc-env=ECNLAB_SOURCE_HASH={h:016x}");
}
