#!/usr/bin/env bash
# Fetches pygame 2.1.2's own tests, which Debian's python3-pygame (2.1.2) does not ship, for RealProgramsTests: the
# wheel from PyPI (pip download, checked against its SHA-256), of which only the pure-Python tests and the example
# sounds they load are kept. Nothing of it is committed; it is cached in FOLDER (default .build/pygame-tests) and
# fetched again only when missing.
#
#   scripts/fetch-pygame-tests.sh [FOLDER]
#
# Why the cp310 manylinux wheel: PyPI has no pygame 2.1.2 wheel for Debian 12's Python 3.11, and every wheel of a
# release holds the same tests. Its compiled modules and the SDL_mixer it bundles are never extracted: the tests run on
# Debian's pygame, which uses the system's libSDL2_mixer (or, under `ambience run`, the stand-in).
set -euo pipefail
cd "$(dirname "$0")/.."

folder=${1:-.build/pygame-tests}
wheel=pygame-2.1.2-cp310-cp310-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
sha256=754c2906f2ef47173a14493e1de116b2a56a2c8e1764f1202ba844d080248a5b
stamp="$folder/fetched-from"

[ "$(cat "$stamp" 2>/dev/null)" = "$wheel $sha256" ] && exit 0

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
echo "fetch-pygame-tests: downloading $wheel"
# Debian's own python3 and pip (python3-pip): another python3 on PATH (pyenv) may have no pip, or another one.
/usr/bin/python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.10 \
  --platform manylinux_2_17_x86_64 --dest "$scratch" pygame==2.1.2
echo "$sha256  $scratch/$wheel" | sha256sum --check --quiet
rm -rf "$folder"
mkdir -p "$folder"
/usr/bin/python3 - "$scratch/$wheel" "$folder" <<'PYTHON'
import sys, zipfile
wheel, folder = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as archive:
    kept = [name for name in archive.namelist()
            if (name.startswith("pygame/tests/") and name.endswith(".py"))
            or (name.startswith("pygame/examples/data/") and not name.endswith("/"))]
    archive.extractall(folder, kept)
print(f"fetch-pygame-tests: kept {len(kept)} files of the wheel in {folder}")
PYTHON
echo "$wheel $sha256" > "$stamp"
