#!/usr/bin/env python3
"""The Swift examples of a DocC catalog's articles, as one file for `swiftc -typecheck` against the module.

    doc-snippets.py CATALOG OUT.swift

Each ```swift block becomes the body of a function of its own, so that every example is checked as written: a call
renamed or a type changed in the API breaks the documentation build, not only the reader. The games the examples
stand in have names of their own (gameIsRunning, showAlert, …): they are declared here, and `engine` and `library`
are parameters unless the example makes its own. The Package.swift excerpt of GettingStarted.md is not Swift to
compile alone and is left out.
"""
import glob
import os
import re
import sys

GAME = """\
import Ambience

// What the examples leave to the game.
nonisolated(unsafe) var gameIsRunning = false
func showAlert(_ text: String) {}
func showAlert(_ text: String, resume: () -> Void, stop: () -> Void) {}
func showBanner(_ text: String) {}
func showNowPlaying(_ title: String?) {}
func log(_ text: String) {}
func handleInput() {}
func handle(_ event: AudioEvent) {}
func drawFrame() {}
"""


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: doc-snippets.py CATALOG OUT.swift")
    catalog, out = sys.argv[1], sys.argv[2]
    parts = [GAME]
    count = 0
    for article in sorted(glob.glob(os.path.join(catalog, "*.md"))):
        with open(article, encoding="utf-8") as f:
            text = f.read()
        for match in re.finditer(r"^```swift\n(.*?)\n```$", text, re.S | re.M):
            code = match.group(1)
            if code.startswith("// Package.swift"):
                continue
            line = text.count("\n", 0, match.start()) + 2
            body = "\n".join(l for l in code.split("\n") if l.strip() != "import Ambience")
            parameters = []
            if not re.search(r"\blet engine\b", body):
                parameters.append("engine: AudioEngine")
            if re.search(r"\blibrary\b", body) and not re.search(r"\blet library\b", body):
                parameters.append("library: MediaLibrary")
            count += 1
            parts.append(f"// {os.path.basename(article)}:{line}\n"
                         f"func example{count}({', '.join(parameters)}) throws {{\n{body}\n}}\n")
    if count == 0:
        sys.exit(f"doc-snippets: {catalog}: no Swift examples found")
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(parts))
    print(f"doc-snippets: {count} Swift examples from {catalog}")


if __name__ == "__main__":
    main()
