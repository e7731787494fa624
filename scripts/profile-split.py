#!/usr/bin/env python3
"""Splits a `perf script` dump (recorded with --call-graph dwarf) into where the time goes, for profile-mix.sh.

Each sample is put in one group by the library its innermost frame is in:
  OpenAL Soft, mixing     inside libopenal under alcRenderSamplesSOFT (mixing, resampling, panning, the limiter)
  OpenAL Soft, API calls  inside libopenal under any other al*/alc* call (state, locking, property updates)
  engine (Ambience)       the engine's own code (the facade Ambience and its layer modules, linked into the executable)
  scene driver            the bench's game side (modules AmbienceBench, AmbienceTool): what a game would do
  Swift runtime           libswiftCore and the other Swift and Foundation libraries (retain/release, allocation)
  libc                    libc, libm, the dynamic loader, libstdc++, libgcc
  kernel                  [kernel.kallsyms] (page faults, system calls, timer ticks)
  other                   everything else (SDL, decoders, ...)
Debian's libopenal.so.1 has no symbol table (its -dbgsym is in the debug archive, not the main one), so OpenAL
Soft's internal functions are named by their start address (from .eh_frame) and by the API call they run under.

Only the samples of the measured loop count: those with a frame of the engine's render or update or the scene
driver's restarts (Ambience), or of raw OpenAL Soft's loop (its render, state polls and restarts, called from
RawOpenAL.run). Set-up (dynamic linking, making the scene, opening devices, the first touch of OpenAL's voice
memory) and teardown are left out, as the bench's own clock leaves them out.

Usage: profile-split.py TITLE PERF_SCRIPT_OUTPUT [TOP]   (prints Markdown)
"""
import collections
import re
import subprocess
import sys

# Mangled module prefixes ("$s" + the name's length + the name): the facade and every layer below it (issue #30).
ENGINE_MODULES = ("Ambience", "AmbienceCore", "AmbiencePlatform", "AmbienceDecoding", "AmbienceMixer", "AmbienceMusic",
                  "AmbienceOutput", "AmbienceDesktop", "AmbienceLibrary", "AmbienceHost")
ENGINE_PREFIXES = tuple(f"$s{len(name)}{name}" for name in ENGINE_MODULES)
DRIVER_PREFIXES = ("$s13AmbienceBench", "$s12AmbienceTool", "$s11AmbienceCLI")
SWIFT_LIBS = ("libswift", "libFoundation", "lib_Foundation", "libdispatch", "libBlocksRuntime")
LIBC_LIBS = ("libc.so", "libm.so", "ld-linux", "libstdc++", "libgcc_s", "libpthread", "[vdso]")

FRAME = re.compile(r"^\s*([0-9a-f]+)\s+(.*?)\s+\((.*)\)\s*$")


def function_starts(library):
    """Start addresses of the functions in `library`, from its unwind tables."""
    starts = []
    try:
        text = subprocess.run(["readelf", "--debug-dump=frames", library], capture_output=True, text=True).stdout
    except OSError:
        return starts
    for match in re.finditer(r"FDE cie=\w+ pc=([0-9a-f]+)\.\.", text):
        starts.append(int(match.group(1), 16))
    return sorted(set(starts))


def samples(path):
    """Yields each sample's frames, innermost first, as (address, symbol, dso)."""
    frames = []
    with open(path, errors="replace") as dump:
        for line in dump:
            if not line.strip():
                if frames:
                    yield frames
                frames = []
                continue
            match = FRAME.match(line)
            if match:
                frames.append((int(match.group(1), 16), match.group(2), match.group(3)))
    if frames:
        yield frames


def symbol_name(symbol):
    return re.sub(r"\+0x[0-9a-f]+$", "", symbol)


def demangled(names):
    """Swift names, simplified, for the report."""
    names = list(names)
    if not names:
        return {}
    try:
        out = subprocess.run(
            ["swift", "demangle", "--simplified", "--compact"], input="\n".join(names), capture_output=True, text=True
        ).stdout.splitlines()
    except OSError:
        return {n: n for n in names}
    if len(out) != len(names):
        return {n: n for n in names}
    return dict(zip(names, out))


LOOP_MARKERS = ("AudioEngine.render(into:", "AudioEngine.update()", "StressCrowd.handle(")
RAW_LOOP_CALLS = ("alcRenderSamplesSOFT", "alGetSourcei", "alSourcePlay")


def in_loop(frames, pretty):
    names = [pretty.get(symbol_name(s), symbol_name(s)) for _, s, _ in frames]
    if any(marker in name for name in names for marker in LOOP_MARKERS):
        return True
    if not any("RawOpenAL.run(" in name for name in names):
        return False
    entry = next((symbol_name(s) for _, s, d in reversed(frames) if "libopenal" in d and s != "[unknown]"), None)
    if entry is not None:
        return entry in RAW_LOOP_CALLS
    # The loop's own code: the block's sum of squares and the clock.
    return any(("closure #2 in static RawOpenAL.run" in n or "monotonicNanoseconds" in n) for n in names[:3])


def main():
    title, path = sys.argv[1], sys.argv[2]
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 6
    groups = collections.Counter()
    functions = collections.defaultdict(collections.Counter)
    openal_calls = collections.Counter()
    openal_library = None
    total = 0
    starts_cache = {}

    def openal_function(address, dso):
        if dso not in starts_cache:
            starts_cache[dso] = function_starts(dso)
        starts = starts_cache[dso]
        lo, hi = 0, len(starts)
        while lo < hi:
            mid = (lo + hi) // 2
            if starts[mid] <= address:
                lo = mid + 1
            else:
                hi = mid
        return starts[lo - 1] if lo > 0 else address

    all_samples = list(samples(path))
    pretty = demangled(sorted({symbol_name(s) for frames in all_samples for _, s, _ in frames if s.startswith("$s")}))
    recorded = len(all_samples)
    for frames in all_samples:
        if not in_loop(frames, pretty):
            continue
        total += 1
        # An inlined frame names no library: it is in the one of the next real frame.
        resolved, pending = [], []
        for address, symbol, dso in frames:
            pending.append((address, symbol))
            if dso != "inlined":
                resolved += [(a, s, dso) for a, s in pending]
                pending = []
        frames = resolved or frames
        address, symbol, dso = frames[0]
        name = symbol_name(symbol)
        if "kernel" in dso:
            group = "kernel"
            user = " ← ".join(
                [symbol_name(s) for _, s, d in frames if "kernel" not in d and s != "[unknown]"][:2]) or "?"
            key = f"{name} (from {user})"
        elif "libopenal" in dso:
            openal_library = dso
            # The API call this time runs under: the outermost named OpenAL frame.
            entry = next(
                (symbol_name(s) for _, s, d in reversed(frames) if "libopenal" in d and s != "[unknown]"), "?"
            )
            group = "OpenAL Soft, mixing" if entry == "alcRenderSamplesSOFT" else "OpenAL Soft, API calls"
            label = name if name != "[unknown]" else f"fn@0x{openal_function(address, dso):x}"
            key = f"{label} (under {entry})"
            openal_calls[entry] += 1
        elif any(lib in dso for lib in SWIFT_LIBS):
            group = "Swift runtime"
            caller = next(
                (symbol_name(s) for _, s, d in frames if s.startswith(ENGINE_PREFIXES + DRIVER_PREFIXES)), "?"
            )
            key = f"{name} (from {caller})"
        elif any(lib in dso for lib in LIBC_LIBS):
            group = "libc"
            caller = next(
                (symbol_name(s) for _, s, d in frames if s.startswith(ENGINE_PREFIXES + DRIVER_PREFIXES)), "?"
            )
            key = f"{name} (from {caller})"
        elif dso.endswith("/ambience"):
            owner = next((symbol_name(s) for _, s, _ in frames if s.startswith(ENGINE_PREFIXES + DRIVER_PREFIXES)), "")
            group = "scene driver" if owner.startswith(DRIVER_PREFIXES) else "engine (Ambience)"
            key = name
        else:
            group = "other"
            key = f"{name} ({dso.split('/')[-1]})"
        groups[group] += 1
        functions[group][key] += 1

    if total == 0:
        print(f"### {title}\n\nno samples\n")
        return
    def readable(key):
        text = re.sub(r"\$s[\w$]+", lambda m: pretty.get(m.group(0), m.group(0)), key)
        return text if len(text) <= 120 else text[:117] + "..."

    order = [
        "OpenAL Soft, mixing", "OpenAL Soft, API calls", "engine (Ambience)", "scene driver", "Swift runtime", "libc",
        "kernel", "other",
    ]
    print(f"### {title}\n")
    print(f"{total} samples in the measured loop, of {recorded} recorded.\n")
    print("| where | share | top functions (share of all samples) |")
    print("|---|---:|---|")
    for group in order:
        if not groups[group]:
            continue
        tops = "; ".join(
            f"{readable(k)} {100 * n / total:.1f} %" for k, n in functions[group].most_common(top)
        ).replace("|", "\\|")
        print(f"| {group} | {100 * groups[group] / total:.1f} % | {tops} |")
    if openal_calls:
        calls = ", ".join(f"{k} {100 * n / total:.1f} %" for k, n in openal_calls.most_common(8))
        print(f"\nInside OpenAL Soft, by API call: {calls}.")
    print()


if __name__ == "__main__":
    main()
