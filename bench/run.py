#!/usr/bin/env python3
"""Runs the speed benchmark (python/ecnlab/bench.py) without installing anything:
python3 bench/run.py --help"""

import importlib.util
import sys
from pathlib import Path

path = Path(__file__).resolve().parent.parent / "python" / "ecnlab" / "bench.py"
spec = importlib.util.spec_from_file_location("_ecnlab_bench", path)
bench = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = bench  # dataclasses look their module up here
spec.loader.exec_module(bench)
sys.exit(bench.main())
