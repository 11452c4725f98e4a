#!/usr/bin/env bash
# Compile the ns-3 reference programs in this folder against the `ns3` wheel from PyPI.
#
#   bench/ns3/build.sh            build into bench/ns3/build/ (skips if up to date)
#   bench/ns3/build.sh --force    rebuild
#
# Environment: PYTHON (default python3) is the interpreter whose site-packages hold the
# wheel; CXX (default g++) the compiler.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PYTHON="${PYTHON:-python3}"
CXX="${CXX:-g++}"
force=0
[[ "${1:-}" == "--force" ]] && force=1

# Locate the wheel's files without importing the (slow) ns3 Python bindings.
read -r prefix version < <("$PYTHON" - <<'PY'
import importlib.metadata as md, pathlib, sys
try:
    dist = md.distribution("ns3")
except md.PackageNotFoundError:
    sys.exit("the ns3 wheel is not installed (pip install -r bench/ns3/requirements.txt)")
for f in dist.files or []:
    if f.name == "simulator.h" and f.parent.name == "ns3":
        inc = pathlib.Path(dist.locate_file(f)).resolve().parent.parent
        print(inc.parent, dist.version)
        break
else:
    sys.exit("ns3 wheel found but its headers are missing")
PY
)
inc="$prefix/include"
lib="$prefix/lib64"
[[ -d "$lib" ]] || lib="$prefix/lib"
major="$(ls "$lib" | sed -n 's/^libns3\.\([0-9.]*\)-core\.so$/\1/p' | head -1)"
[[ -n "$major" ]] || { echo "no libns3.*-core.so in $lib" >&2; exit 1; }

mkdir -p "$here/build"
libs=""
for m in core network internet point-to-point applications traffic-control stats bridge mobility nix-vector-routing; do
    if [[ -f "$lib/libns3.$major-$m.so" ]]; then libs="$libs -lns3.$major-$m"; fi
done

# Same preprocessor setup the wheel's own libraries were built with (release profile).
defs="-D__LINUX__ -DNS3_BUILD_PROFILE_RELEASE -DNS3_LOG_ENABLE -DNS3_ASSERT_ENABLE"

for src in "$here"/*.cc; do
    name="$(basename "$src" .cc)"
    bin="$here/build/$name"
    stamp="$here/build/$name.stamp"
    want="$version|$inc|$CXX"
    if [[ $force -eq 0 && -x "$bin" && "$bin" -nt "$src" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
        continue
    fi
    echo "compiling $name against ns-3 $version ($prefix)" >&2
    # shellcheck disable=SC2086
    "$CXX" -std=c++20 -O2 -w $defs -DECNLAB_NS3_VERSION="\"$version\"" \
        -I"$inc" "$src" -o "$bin.tmp" \
        -L"$lib" -Wl,--no-as-needed $libs -Wl,-rpath,"$lib" -Wl,--as-needed
    mv "$bin.tmp" "$bin"
    echo "$want" > "$stamp"
done
echo "$here/build"
