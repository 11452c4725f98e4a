"""The test session's guard against a simulator built from other sources (conftest's
pytest_sessionstart): its hash of the tree is the one the build embeds."""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import BINDINGS, simulator_source_hash

from ecnlab import _core


def test_the_hash_of_the_tree_is_the_builds():
    # The session ran, so the two agree; asked here so a change to build.rs's hash that the
    # guard does not follow fails as a test rather than as every session refusing to start.
    assert simulator_source_hash() == _core.source_hash


def test_any_source_change_moves_the_hash(tmp_path: Path):
    crates = tmp_path / "crates"
    shutil.copytree(BINDINGS, crates / "ecnlab-py", ignore=shutil.ignore_patterns("target"))
    shutil.copytree(BINDINGS.parent / "ecnlab" / "src", crates / "ecnlab" / "src")
    shutil.copy(BINDINGS.parent / "ecnlab" / "Cargo.toml", crates / "ecnlab" / "Cargo.toml")
    here = crates / "ecnlab-py"
    assert simulator_source_hash(here) == _core.source_hash
    # MECN's codepoints as they were before the Table 1 fix: one byte in a constant.
    mod = crates / "ecnlab" / "src" / "schemes" / "mecn" / "mod.rs"
    mod.write_text(mod.read_text().replace("Ecn(CE_BIT);", "Ecn(0b10);", 1))
    assert simulator_source_hash(here) != _core.source_hash
    # A new file, even empty, and a moved one change it too (paths are hashed).
    mod.write_text(mod.read_text().replace("Ecn(0b10);", "Ecn(CE_BIT);", 1))
    assert simulator_source_hash(here) == _core.source_hash
    (here / "src" / "extra.rs").write_text("")
    assert simulator_source_hash(here) != _core.source_hash
