#!/usr/bin/env python3
"""Raw libc calls outside Platform/: the lint that keeps Sources/Ambience/Platform the one gateway to the OS.

A call is an identifier followed by `(` that libc.so.6 or libm.so.6 exports (`nm -D --defined-only`), written
bare or as `Glibc.name(`; a read or write of `errno` counts too. Not counted: math and memory functions (pure, no
OS state), methods (`.name(`), functions the file declares itself (`func name`), names the engine's own types
use for their methods (`close()` on a connection), calls with an argument label (C functions have none: that is
a Swift wrapper of the same name), comments and string literals.

Scope: every Swift file under Sources/ except Sources/Ambience/Platform/ (the gateway) and the C targets. A hit
listed in scripts/raw-libc-allowed.txt (`path: call`, one a line) is tolerated: the list names what is left in
files not converted yet, and may only shrink. Any other hit is printed as `path:line: call` and fails (exit 1).

  python3 scripts/raw-libc.py             lint (CI)
  python3 scripts/raw-libc.py --count     the number of hits and files, allowed or not
  python3 scripts/raw-libc.py --all       every hit, allowed or not
  python3 scripts/raw-libc.py --self-test checks the scanner on a small fixture
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GATEWAY = "Sources/Ambience/Platform/"
ALLOWED = os.path.join(ROOT, "scripts", "raw-libc-allowed.txt")
LIBRARIES = ["libc.so.6", "libm.so.6"]
FOLDERS = ["/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64"]

# Pure functions: no file, process, thread, clock or environment behind them.
PURE = set(
    """sin cos tan sqrt exp log log10 log2 pow floor ceil round fabs fmin fmax atan2 tanh sinh cosh asin acos atan
    fmod exp2 expm1 log1p lround lrint trunc hypot cbrt remainder copysign nearbyint rint scalbn ldexp frexp modf
    sinf cosf tanf sqrtf powf expf logf log10f log2f floorf ceilf roundf fabsf truncf fminf fmaxf atan2f exp2f
    abs labs llabs memcpy memset memmove memcmp memchr strlen strcmp strncmp strchr strrchr strstr strnlen
    free malloc calloc realloc""".split())
# Swift keywords and standard-library functions that share a name with a libc symbol.
SWIFT = set("""if guard while for switch return init print min max type repeat catch swap index random""".split())
# Methods of the engine's own types, called without `self.` inside them.
OWN_METHODS = set("""close send read write wait signal""".split())

CALL = re.compile(r"(?<![.\w])(?:Glibc\.)?([A-Za-z_][A-Za-z0-9_]*)\s*\(")
ERRNO = re.compile(r"(?<![.\w])(?:Glibc\.)?errno\b(?!\s*:)")
LABEL = re.compile(r"\s*[A-Za-z_][A-Za-z0-9_]*\s*:(?!:)")
STRING = re.compile(r'"(?:\\.|[^"\\])*"')


def exported_symbols():
    names = set()
    for library in LIBRARIES:
        path = next((os.path.join(f, library) for f in FOLDERS if os.path.exists(os.path.join(f, library))), None)
        if path is None:
            sys.exit(f"raw-libc: {library} not found in {', '.join(FOLDERS)}")
        listing = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True, check=True)
        for line in listing.stdout.splitlines():
            fields = line.split()
            if len(fields) == 3 and fields[1] in "TtWwiI":
                names.add(fields[2].split("@")[0])
    return names - PURE - SWIFT


def code_lines(text):
    """The file's lines with comments and string literals blanked (a multi-line string or block comment too)."""
    in_block = in_multiline = False
    for line in text.splitlines():
        out = ""
        i = 0
        while i < len(line):
            if in_block:
                end = line.find("*/", i)
                if end < 0:
                    i = len(line)
                else:
                    in_block, i = False, end + 2
            elif in_multiline:
                end = line.find('"""', i)
                if end < 0:
                    i = len(line)
                else:
                    in_multiline, i = False, end + 3
            elif line.startswith("//", i):
                break
            elif line.startswith("/*", i):
                in_block, i = True, i + 2
            elif line.startswith('"""', i):
                in_multiline, i = True, i + 3
            else:
                out += line[i]
                i += 1
        yield STRING.sub('""', out)


def scan_text(text, symbols):
    """(line, call) for every raw call in one file's text."""
    lines = list(code_lines(text))
    declared = set(re.findall(r"\bfunc\s+([A-Za-z_][A-Za-z0-9_]*)", "\n".join(lines)))
    hits = []
    for number, code in enumerate(lines, 1):
        for match in CALL.finditer(code):
            name = match.group(1)
            if name in symbols and name not in declared and name not in OWN_METHODS:
                # `func name(` and argument labels (`name(` after `init` or in a call's label list) are no calls.
                before = code[: match.start()].rstrip()
                if before.endswith("func") or before.endswith("case"):
                    continue
                # C functions come into Swift without argument labels: `sleep(milliseconds: 5)` is a wrapper.
                if LABEL.match(code, match.end()):
                    continue
                hits.append((number, name))
        for _ in ERRNO.finditer(code):
            hits.append((number, "errno"))
    return hits


def scanned_files():
    for folder, subfolders, files in os.walk(os.path.join(ROOT, "Sources")):
        subfolders.sort()
        relative = os.path.relpath(folder, ROOT) + "/"
        if relative.startswith(GATEWAY):
            continue
        top = relative.split("/")[1]
        if top.startswith("C") and top[1:2].isupper():
            continue  # a C target
        for name in sorted(files):
            if name.endswith(".swift"):
                yield relative + name


def allowed():
    if not os.path.exists(ALLOWED):
        return set()
    entries = set()
    for line in open(ALLOWED):
        line = line.split("#")[0].strip()
        if line:
            path, _, call = line.partition(":")
            entries.add((path.strip(), call.strip()))
    return entries


def self_test(symbols):
    fixture = '''
    import Glibc
    // getpid() in a comment is no call
    func close() {}
    let text = "getenv(\\"HOME\\") in a string"
    let pid = getpid()
    let home = Glibc.getenv("HOME")
    connection.close()
    close()
    let x = sqrt(2.0)
    sleep(milliseconds: 5)
    if errno == EINTR { throw .unreadable(path, errno: code) }
    /* usleep(1) in a block comment */
    '''
    found = scan_text(fixture, symbols)
    expected = [(6, "getpid"), (7, "getenv"), (12, "errno")]
    if found != expected:
        sys.exit(f"raw-libc: self-test failed: found {found}, expected {expected}")
    print("raw-libc: self-test passed")


def main(arguments):
    symbols = exported_symbols()
    if "--self-test" in arguments:
        self_test(symbols)
        return 0
    tolerated = allowed()
    hits = []
    for path in scanned_files():
        with open(os.path.join(ROOT, path), encoding="utf-8") as source:
            hits += [(path, line, call) for line, call in scan_text(source.read(), symbols)]
    if "--count" in arguments:
        print(f"{len(hits)} raw libc calls in {len({h[0] for h in hits})} files outside {GATEWAY}")
        engine = [h for h in hits if h[0].startswith("Sources/Ambience/")]
        print(f"{len(engine)} of them in {len({h[0] for h in engine})} files of the engine (Sources/Ambience)")
        return 0
    if "--all" in arguments:
        for path, line, call in hits:
            print(f"{path}:{line}: {call}")
        return 0
    refused = [h for h in hits if (h[0], h[2]) not in tolerated]
    for path, line, call in refused:
        print(f"{path}:{line}: {call}: raw libc call outside {GATEWAY} (add or use a wrapper there)")
    stale = sorted(tolerated - {(h[0], h[2]) for h in hits})
    for path, call in stale:
        print(f"raw-libc: note: {path}: {call} is allowed but no longer called there: remove it from {ALLOWED}")
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
