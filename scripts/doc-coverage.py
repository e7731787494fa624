#!/usr/bin/env python3
"""Documentation coverage of a module's public API, from its symbol graph.

    doc-coverage.py SYMBOL_GRAPH_DIR MODULE [REEXPORTED,...]

Reads MODULE.symbols.json and MODULE@*.symbols.json (extensions of other modules' types) as
`swift-symbolgraph-extract -skip-synthesized-members` writes them (scripts/docs.sh): public and open symbols only,
without the members a type only inherits from a protocol's default implementation. A symbol is documented when it has
a doc comment of its own. An implementation of another module's protocol requirement that has none (`description`,
`init(rawValue:)`, `==`, `hash(into:)`) shows the requirement's comment, which the compiler copies into the graph
with that module's name: it is counted apart, as inherited, and not as missing. The modules MODULE re-exports
(`@_exported import`, their symbols extracted with `-experimental-allowed-reexported-modules`) are its own: a comment
written in one of them counts as the symbol's own.

Prints the totals, by kind, and every undocumented symbol with its file and line; exits 1 below 100 %.
"""
import collections
import glob
import json
import os
import sys


def load(directory, module):
    paths = [os.path.join(directory, f"{module}.symbols.json")]
    paths += sorted(glob.glob(os.path.join(directory, f"{module}@*.symbols.json")))
    symbols = {}
    for path in paths:
        if not os.path.exists(path):
            sys.exit(f"doc-coverage: {path}: no symbol graph (run scripts/docs.sh)")
        with open(path, encoding="utf-8") as f:
            graph = json.load(f)
        for symbol in graph.get("symbols", []):
            symbols[symbol["identifier"]["precise"]] = symbol
    return symbols


def has_text(doc):
    return any(line.get("text", "").strip() for line in doc.get("lines", []))


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: doc-coverage.py SYMBOL_GRAPH_DIR MODULE [REEXPORTED,...]")
    directory, module = sys.argv[1], sys.argv[2]
    own_modules = {module} | set(filter(None, sys.argv[3].split(","))) if len(sys.argv) == 4 else {module}
    symbols = load(directory, module)
    if not symbols:
        sys.exit(f"doc-coverage: {module}: the symbol graph holds no public symbols")
    own, inherited, missing = [], [], []
    for symbol in symbols.values():
        doc = symbol.get("docComment")
        if doc and has_text(doc) and doc.get("module", module) in own_modules:
            own.append(symbol)
        elif doc and has_text(doc):
            inherited.append(symbol)
        else:
            missing.append(symbol)

    total = len(symbols)
    covered = len(own) + len(inherited)
    percent = 100.0 * covered / total
    print(f"doc-coverage: {module}: {covered} of {total} public symbols documented ({percent:.1f} %): "
          f"{len(own)} with a comment of their own, {len(inherited)} with their protocol requirement's")
    kinds = collections.Counter(s["kind"]["displayName"] for s in symbols.values())
    missing_kinds = collections.Counter(s["kind"]["displayName"] for s in missing)
    for kind, count in sorted(kinds.items()):
        print(f"  {kind:<20} {count - missing_kinds[kind]:>4} / {count}")

    def where(symbol):
        location = symbol.get("location", {})
        uri = location.get("uri", "").removeprefix("file://")
        return (os.path.relpath(uri) if uri else "?", location.get("position", {}).get("line", -1) + 1)

    for symbol in sorted(missing, key=where):
        path, line = where(symbol)
        name = ".".join(symbol["pathComponents"])
        print(f"{path}:{line}: undocumented public {symbol['kind']['displayName'].lower()} {name}")
    if missing:
        print(f"doc-coverage: {len(missing)} public symbols of {module} have no doc comment", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
