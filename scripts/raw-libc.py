#!/usr/bin/env python3
"""Raw libc calls outside AmbiencePlatform: the lint that keeps Sources/AmbiencePlatform the one gateway to the OS,
for the engine and the demos alike.

A call is an identifier followed by `(` that libc.so.6 or libm.so.6 exports (`nm -D --defined-only`), written
bare or as `Glibc.name(` / `Foundation.name(`; a read or write of `errno` counts too. The module-prefixed form
always counts. A bare call does not count when it is: a math or memory function (pure, no OS state: `strdup`
included, the C string a C caller frees or keeps); a method
(`.name(`); a function the file declares itself (`func name`); a call with an argument label (C functions have
none: that is a Swift wrapper of the same name); or one of close, signal, read, write, send, wait (names the
engine's own types use for methods, like `close()` on a connection) with another number of arguments than the
C function takes (a trailing closure counts as one). `errno:` right after `(` or `,` is an argument label, not a
use. Comments (block comments nest) and the text of string literals (`"..."`, `\"\"\"...\"\"\"`, raw `#"..."#`) are
not code; an interpolation `\\( ... )` in a string is.

Scope: every Swift file under Sources/ and Demos/ except Sources/AmbiencePlatform/ (the gateway) and the C targets
(a folder named C and a capital, `Sources/CIntl`, `Demos/CGameLoop`). There is no allowlist: every hit is printed
as `path:line: call` and fails (exit 1). A call that is missing goes into AmbiencePlatform as a wrapper.

  python3 scripts/raw-libc.py             lint (CI)
  python3 scripts/raw-libc.py --count     the number of hits and files
  python3 scripts/raw-libc.py --all       every hit
  python3 scripts/raw-libc.py --self-test checks the scanner on small fixtures
"""
import bisect
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GATEWAY = "Sources/AmbiencePlatform/"
# The folders scanned: the engine's targets and the demos (each of them an executable or a library of the package).
SCANNED = ("Sources", "Demos")
# The engine's targets above the gateway, for --count's second line (the facade's folder is the last one left).
ENGINE = ("Sources/AmbienceCore/", "Sources/AmbienceDecoding/", "Sources/AmbienceMixer/", "Sources/AmbienceLibrary/",
          "Sources/AmbienceOutput/", "Sources/AmbienceDesktop/", "Sources/AmbienceMusic/",
          "Sources/Ambience/")
LIBRARIES = ["libc.so.6", "libm.so.6"]
FOLDERS = ["/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64"]

# Pure functions: no file, process, thread, clock or environment behind them.
PURE = set(
    """sin cos tan sqrt exp log log10 log2 pow floor ceil round fabs fmin fmax atan2 tanh sinh cosh asin acos atan
    fmod exp2 expm1 log1p lround lrint trunc hypot cbrt remainder copysign nearbyint rint scalbn ldexp frexp modf
    sinf cosf tanf sqrtf powf expf logf log10f log2f floorf ceilf roundf fabsf truncf fminf fmaxf atan2f exp2f
    abs labs llabs memcpy memset memmove memcmp memchr strlen strcmp strncmp strchr strrchr strstr strnlen
    free malloc calloc realloc strdup strndup""".split())
# Swift keywords and standard-library functions that share a name with a libc symbol.
SWIFT = set("""if guard while for switch return init print min max type repeat catch swap index random""".split())
# Names the engine's own types use for methods (`close()` on a connection, called without `self.` inside it), with
# the number of arguments the C function takes: a bare call with another number of arguments is the method.
OWN_METHODS = {"close": 1, "signal": 2, "read": 3, "write": 3, "send": 4, "wait": 1}

# `Glibc.name(` and `Foundation.name(` (Foundation re-exports Glibc) name libc whatever the file declares.
CALL = re.compile(r"(?<![.\w])((?:Glibc|Foundation)\.)?([A-Za-z_][A-Za-z0-9_]*)[ \t]*\(")
ERRNO = re.compile(r"(?<![.\w])((?:Glibc|Foundation)\.)?errno\b")
LABEL = re.compile(r"\s*[A-Za-z_][A-Za-z0-9_]*\s*:(?!:)")
COLON = re.compile(r"\s*:(?!:)")
DECLARATION = re.compile(r"\b(?:func|case)\s*$")
TRAILING_CLOSURE = re.compile(r"[ \t]*\{")
STRING_OPEN = re.compile(r'(#*)("""|")')


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


def code_text(text):
    """The file's text with comments and the contents of string literals blanked to spaces, in one left-to-right
    pass; line breaks are kept, so offsets and line numbers stay. Block comments nest. Strings: `"..."`,
    multi-line `\"\"\"...\"\"\"`, raw `#"..."#` (any number of `#`); their quotes are kept, and the code of an
    interpolation `\\( ... )` (`\\#( ... )` in a raw string) is kept as code, up to its balancing `)`."""
    out = list(text)
    size = len(text)

    def blank(start, end):
        for k in range(start, end):
            if out[k] != "\n":
                out[k] = " "

    def code(i, interpolation):
        """Code from i to the end of the text, or in an interpolation to the index after its closing `)`."""
        depth = 0
        while i < size:
            c = text[i]
            if text.startswith("//", i):
                end = text.find("\n", i)
                end = size if end < 0 else end
                blank(i, end)
                i = end
            elif text.startswith("/*", i):
                i = block_comment(i)
            elif c in '#"' and STRING_OPEN.match(text, i):
                i = string(i)
            elif interpolation and c == "(":
                depth, i = depth + 1, i + 1
            elif interpolation and c == ")":
                if depth == 0:
                    return i + 1
                depth, i = depth - 1, i + 1
            else:
                i += 1
        return size

    def block_comment(i):
        start, depth = i, 0
        while i < size:
            if text.startswith("/*", i):
                depth, i = depth + 1, i + 2
            elif text.startswith("*/", i):
                depth, i = depth - 1, i + 2
                if depth == 0:
                    break
            else:
                i += 1
        blank(start, i)
        return i

    def string(i):
        opening = STRING_OPEN.match(text, i)
        hashes, quote = opening.group(1), opening.group(2)
        blank(i, i + len(hashes))
        closing, escape = quote + hashes, "\\" + hashes
        j = opening.end()
        while j < size:
            if text.startswith(closing, j):
                blank(j + len(quote), j + len(closing))
                return j + len(closing)
            if text.startswith(escape, j):
                k = j + len(escape)
                if k < size and text[k] == "(":
                    blank(j, k)  # `\` and its `#`s; the parentheses and the code between stay
                    j = code(k + 1, interpolation=True)
                else:
                    blank(j, k + 1)  # an escaped character: `\"` does not end the string
                    j = k + 1
            elif text[j] == "\n" and quote == '"':
                return j  # an unterminated one-line string ends with its line
            else:
                blank(j, j + 1)
                j += 1
        return size

    code(0, interpolation=False)
    return "".join(out)


def arguments(code, start):
    """The top-level arguments of the call whose `(` is at start (a trailing closure counts as one)."""
    depth, parts, begin, end = 0, [], start + 1, len(code)
    for k in range(start, len(code)):
        c = code[k]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                parts.append(code[begin:k])
                end = k + 1
                break
        elif c == "," and depth == 1:
            parts.append(code[begin:k])
            begin = k + 1
    if parts == [] or parts == [""] or (len(parts) == 1 and not parts[0].strip()):
        parts = []
    if TRAILING_CLOSURE.match(code, end):
        parts.append("{")
    return parts


def scan_text(text, symbols):
    """(line, call) for every raw call in one file's text."""
    code = code_text(text)
    breaks = [k for k, c in enumerate(code) if c == "\n"]
    line_of = lambda offset: bisect.bisect_left(breaks, offset) + 1
    declared = set(re.findall(r"\bfunc\s+([A-Za-z_][A-Za-z0-9_]*)", code))
    hits = []
    for match in CALL.finditer(code):
        prefixed, name = match.group(1), match.group(2)
        if name not in symbols:
            continue
        if not prefixed:
            if name in declared:
                continue
            # `func name(` and `case name(` declare, they do not call.
            if DECLARATION.search(code, max(0, match.start() - 40), match.start()):
                continue
            parts = arguments(code, match.end() - 1)
            # C functions come into Swift without argument labels: `sleep(milliseconds: 5)` is a wrapper.
            if any(LABEL.match(part) for part in parts):
                continue
            if name in OWN_METHODS and len(parts) != OWN_METHODS[name]:
                continue
        hits.append((match.start(), name))
    for match in ERRNO.finditer(code):
        if not match.group(1) and COLON.match(code, match.end()):
            # `errno:` right after `(` or `,` is an argument label (`.unreadable(path, errno: code)`), not a use;
            # after anything else (`failed ? errno : 0`) it is.
            before = code[: match.start()].rstrip()
            if before.endswith("(") or before.endswith(","):
                continue
        hits.append((match.start(), "errno"))
    return [(line_of(offset), name) for offset, name in sorted(hits)]


def scanned_files(root=ROOT):
    """The Swift files under `SCANNED` in `root`, relative to it, but the gateway's and the C targets'."""
    for scanned in SCANNED:
        for folder, subfolders, files in os.walk(os.path.join(root, scanned)):
            subfolders.sort()
            relative = os.path.relpath(folder, root) + "/"
            if relative.startswith(GATEWAY):
                continue
            top = relative.split("/")[1]
            if top.startswith("C") and top[1:2].isupper():
                continue  # a C target
            for name in sorted(files):
                if name.endswith(".swift"):
                    yield relative + name


def verdict(hits):
    """(messages, exit status) of the lint: any hit fails, named with its file, line and call."""
    messages = [f"{path}:{line}: {call}: raw libc call outside {GATEWAY} (add or use a wrapper there)"
                for path, line, call in hits]
    return messages, 1 if hits else 0


# --self-test: (what the case checks, fixture, the hits expected). Each case but the first fails on the scanner as
# it was before the review's fixes (comments stripped before strings, own-method names always dropped, ...).
SELF_TESTS = [
    ("baseline", '''
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
    ''', [(6, "getpid"), (7, "getenv"), (12, "errno")]),
    ("Glibc. and Foundation. name libc even where the file declares a method of that name", '''
    func close() {}
    func read(into buffer: inout [UInt8]) {}
    Glibc.close(fd)
    _ = Glibc.read(fd, &buffer, 3)
    Foundation.exit(1)
    close()
    ''', [(4, "close"), (5, "read"), (6, "exit")]),
    ("own-method names: a bare call with the C function's argument count is libc", '''
    signal(SIGPIPE, SIG_IGN)
    signal(SIGINT) { _ in }
    line.withUnsafeBytes { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
    let got = read(STDIN_FILENO, &buffer, buffer.count)
    close(fd)
    _ = send(socket, bytes, count, 0)
    _ = wait(&status)
    self.close()
    stream.write(text)
    close()
    write(line)
    read([name])
    wait()
    send(.pause, to: name)
    read(fd, into: &buffer, count: 3)
    ''', [(2, "signal"), (3, "signal"), (4, "write"), (5, "read"), (6, "close"), (7, "send"), (8, "wait")]),
    ("a `//` inside a string does not start a comment", '''
    let url = "file://" + String(getpid())
    ''', [(2, "getpid")]),
    ("a `/*` inside a string does not start a block comment", '''
    let pattern = "/*"
    let pid = getpid()
    ''', [(3, "getpid")]),
    ("string interpolations are code, nested strings and parentheses in them included", '''
    let name = "instance\\(getpid())"
    let message = "\\(path): \\(String(cString: strerror(errno)))"
    let home = "\\(String(cString: getenv("HOME")!)) and getuid() \\" geteuid() "
    ''', [(2, "getpid"), (3, "strerror"), (3, "errno"), (4, "getenv")]),
    ("multi-line and raw strings: text is not code, interpolations are", '''
    let text = """
        usleep(1) is text, "quoted" too
        \\(getppid()) is code
        """
    let raw = #"getpid() and \\(getuid()) are text, \\#(geteuid()) is code, "# + String(getpgrp())
    let rawer = ##"a "# inside getpid()"## + String(getsid(0))
    ''', [(4, "getppid"), (6, "geteuid"), (6, "getpgrp"), (7, "getsid")]),
    ("block comments nest", '''
    /* outer /* inner */ getpid() still in the outer comment */
    let pid = getpid()
    ''', [(3, "getpid")]),
    ("a ternary's colon after errno is a use; only an argument label is not", '''
    let code = failed ? errno : 0
    throw .unreadable(path, errno: code)
    report(
        errno: code)
    ''', [(2, "errno")]),
    ("strdup is a memory function: the C string a C caller frees or keeps", '''
    let copy = message.withCString { strdup($0) }
    free(copy)
    let pid = getpid()
    ''', [(4, "getpid")]),
]


def self_test(symbols):
    failures = []
    for title, fixture, expected in SELF_TESTS:
        found = scan_text(fixture, symbols)
        if found != expected:
            failures.append(f"{title}: found {found}, expected {expected}")
    # A hit fails the lint, naming the file, the line and the call; no hit passes.
    messages, status = verdict([("Sources/X/A.swift", 3, "getpid")])
    if status != 1 or messages != [f"Sources/X/A.swift:3: getpid: raw libc call outside {GATEWAY} (add or use a"
                                   " wrapper there)"]:
        failures.append(f"one hit: exit {status}, messages {messages}, expected exit 1 naming the file and call")
    messages, status = verdict([])
    if status != 0 or messages:
        failures.append(f"no hit: exit {status}, messages {messages}, expected exit 0 and no message")
    # The scope: Sources/ and Demos/, without the gateway, the C targets and anything else (Tests/).
    with tempfile.TemporaryDirectory() as root:
        tree = ["Sources/AmbiencePlatform/Gate.swift", "Sources/CIntl/Shim.swift", "Sources/AmbienceCore/Core.swift",
                "Sources/AmbienceCore/notes.md", "Demos/CGameLoop/Loop.swift", "Demos/GravityWave/main.swift",
                "Demos/GravityWave/Core/Settings.swift", "Demos/MixerStress/main.swift", "Tests/T/Test.swift"]
        for path in tree:
            os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
            open(os.path.join(root, path), "w").close()
        scanned = list(scanned_files(root))
    expected = ["Sources/AmbienceCore/Core.swift", "Demos/GravityWave/main.swift",
                "Demos/GravityWave/Core/Settings.swift", "Demos/MixerStress/main.swift"]
    if scanned != expected:
        failures.append(f"scope: scanned {scanned}, expected {expected}")
    if failures:
        sys.exit("raw-libc: self-test failed:\n  " + "\n  ".join(failures))
    print(f"raw-libc: self-test passed ({len(SELF_TESTS) + 3} cases)")


def main(arguments):
    symbols = exported_symbols()
    if "--self-test" in arguments:
        self_test(symbols)
        return 0
    hits = []
    for path in scanned_files():
        with open(os.path.join(ROOT, path), encoding="utf-8") as source:
            hits += [(path, line, call) for line, call in scan_text(source.read(), symbols)]
    if "--count" in arguments:
        print(f"{len(hits)} raw libc calls in {len({h[0] for h in hits})} files outside {GATEWAY}")
        engine = [h for h in hits if h[0].startswith(ENGINE)]
        folders = ", ".join(folder.rstrip("/") for folder in ENGINE)
        print(f"{len(engine)} of them in {len({h[0] for h in engine})} files of the engine ({folders})")
        return 0
    if "--all" in arguments:
        for path, line, call in hits:
            print(f"{path}:{line}: {call}")
        return 0
    messages, status = verdict(hits)
    for message in messages:
        print(message)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
