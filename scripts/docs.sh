#!/usr/bin/env bash
# The API documentation of the Ambience module, built and checked (CI runs it after test.sh, whose build it reuses):
#   1. the module's symbol graph, public symbols only, with those of the engine targets it re-exports
#      (Sources/Ambience/Exports.swift: what `import Ambience` brings is the API) (a debug build, then
#      swift-symbolgraph-extract; `swift package dump-symbol-graph` has no option for re-exported modules);
#   2. its documentation coverage (scripts/doc-coverage.py): every public symbol needs a doc comment, else it fails
#      and lists the ones without;
#   3. the articles' Swift examples, type-checked against the module (scripts/doc-snippets.py);
#   4. the DocC catalog (Sources/Ambience/Ambience.docc) with that graph, by the toolchain's docc, warnings as errors:
#      a link to a symbol or article that does not resolve fails the build.
# The result is .build/documentation/Ambience.doccarchive: a static site. Open it with
#   python3 -m http.server --directory .build/documentation/Ambience.doccarchive 8000
# and http://localhost:8000/documentation/ambience, or `docc preview Sources/Ambience/Ambience.docc
# --additional-symbol-graph-dir .build/documentation/symbol-graphs`.
set -euo pipefail
cd "$(dirname "$0")/.."
export LANG=C.UTF-8 LC_ALL=C.UTF-8

out=.build/documentation
graphs=$out/symbol-graphs
archive=$out/Ambience.doccarchive
docc=$(command -v docc || true)
if [ -z "$docc" ]; then
  # The toolchain ships docc beside swift, which may not be on PATH itself.
  docc=$(dirname "$(readlink -f "$(command -v swift)")")/docc
fi
[ -x "$docc" ] || { echo "docs.sh: no docc in this toolchain (looked beside $(command -v swift))" >&2; exit 1; }
extract=$(command -v swift-symbolgraph-extract || true)
[ -n "$extract" ] || extract=$(dirname "$(readlink -f "$(command -v swift)")")/swift-symbolgraph-extract

# The modules a compiler needs beside the build's: Ambience imports the C system-library targets, so their module
# maps and the include folders of the libraries SwiftPM finds with pkg-config come along (steps 1 and 3).
clang_flags=()
for map in Sources/C*/module.modulemap include/module.modulemap; do clang_flags+=(-Xcc "-fmodule-map-file=$PWD/$map"); done
for include in $(pkg-config --cflags-only-I libmpg123 dbus-1 flac opusfile); do clang_flags+=(-Xcc "$include"); done

# 1. The symbol graph. The engine targets below the facade whose public types games use through `import Ambience`.
reexported=AmbiencePlatform,AmbienceCore,AmbienceMixer,AmbienceLibrary,AmbienceOutput,AmbienceDesktop,AmbienceMusic
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! swift build >"$log" 2>&1; then
  cat "$log" >&2
  echo "docs.sh: the build for the symbol graph failed" >&2
  exit 1
fi
bin=$(swift build --show-bin-path)
modules=$bin/Modules
triple=$(basename "$(dirname "$bin")")   # .build/<triple>/debug
rm -rf "$graphs"
mkdir -p "$graphs"
"$extract" -module-name Ambience -target "$triple" -I "$modules" "${clang_flags[@]}" \
  -minimum-access-level public -skip-synthesized-members -experimental-allowed-reexported-modules="$reexported" \
  -output-dir "$graphs"
[ -f "$graphs/Ambience.symbols.json" ] || { echo "docs.sh: no Ambience.symbols.json in $graphs" >&2; exit 1; }

# 2. Coverage: fails below 100 %.
python3 scripts/doc-coverage.py "$graphs" Ambience "$reexported"

# 3. The articles' Swift examples, type-checked against the module just built, warnings as errors.
examples=$out/examples.swift
python3 scripts/doc-snippets.py Sources/Ambience/Ambience.docc "$examples"
swiftc -typecheck -swift-version 6 -warnings-as-errors -I "$modules" "${clang_flags[@]}" "$examples"

# 4. The catalog. The render template (the HTML and JavaScript the archive is browsed with) comes with the toolchain
# in share/docc/render; DOCC_HTML_DIR points docc at it when docc does not find it by itself.
if [ -z "${DOCC_HTML_DIR:-}" ] && [ -d "$(dirname "$docc")/../share/docc/render" ]; then
  DOCC_HTML_DIR=$(readlink -f "$(dirname "$docc")/../share/docc/render")
  export DOCC_HTML_DIR
fi
rm -rf "$archive"
"$docc" convert Sources/Ambience/Ambience.docc \
  --additional-symbol-graph-dir "$graphs" \
  --fallback-display-name Ambience \
  --fallback-bundle-identifier org.ambience.Ambience \
  --fallback-default-module-kind Framework \
  --output-path "$archive" \
  --warnings-as-errors
[ -f "$archive/index.html" ] || { echo "docs.sh: $archive has no index.html (no render template?)" >&2; exit 1; }
[ -f "$archive/data/documentation/ambience.json" ] \
  || { echo "docs.sh: $archive has no page for the module" >&2; exit 1; }
echo "docs.sh: $archive"
echo "docs.sh: open it with: python3 -m http.server --directory $archive 8000 (http://localhost:8000/documentation/ambience)"
