#!/usr/bin/env python3
"""The arithmetic of bench-compare.sh: reads the runs' JSON and load averages and prints Markdown.

Rows by the JSON's shape:
  "scenes" (`bench`)            per scene: Ambience's rtf, Ambience / raw OpenAL Soft, Ambience / SDL_mixer, and where
                                the scene has a real set, Ambience / raw OpenAL on it and Ambience / itself on it;
                                then play()'s median and the music stream's CPU
  "formats" (`bench --formats`) per format: Ambience's rtf and Ambience / SDL_mixer
  anything else                 every number in the JSON, by its path
Every figure is lower-is-better. Per row: the medians of the before and after runs, the median of the paired ratios
after/before, their spread (lowest to highest), how many pairs came out worse, and the verdict by a sign test on the
pairs: worse where so many pairs came out worse that a coin would do it less than once in 20 (one-sided; 7 of 7
pairs, 8 of 9), better the other way, else within noise. Fewer than 5 pairs can reach no verdict (a warning says so).

Chance verdicts: each row gets two one-sided tests, each wrong by chance at most once in 20, so a row that did not
change gets a verdict at most about once in 10 (the tests are discrete: at 9 pairs 2 x 10/512, about 1 in 26; at 7
pairs 2/128, 1 in 64). A table of ~19 rows at 9 pairs shows at least one chance verdict in about half of the runs
(1 - (1 - 0.039)^19 = 0.53). A verdict on one row in one run is a reason to measure that row again, not a finding:
trust one that holds in separate runs.

Rows are keyed by title; two rows with one title in a run are an error, never one overwriting the other. A median
with no figure is written as null in the JSON (never NaN).

Usage: bench-compare.py --runs DIR --pairs N --before TEXT --after TEXT --arguments TEXT [--json FILE]
       bench-compare.py --from-json FILE [--json OUT]
           the tables again from a --json file, or from a file holding several under keys of its own (as
           docs/bench/layers.json); with --json, the same file with every summary made again by this script
"""
import argparse
import json
import math
import os
import statistics
import sys
import tempfile


def scene_rows(report):
    """(row title, value) for a `bench --json` report."""
    rows = []
    for scene in report["scenes"]:
        title = f"{scene['voices']:,} voices" + (", pitch 1" if scene.get("unitPitch") else "")
        if scene.get("realSetVoices", 0) > 0:
            title += f" ({scene.get('ambienceRealVoices', 0):,} real)"
        systems, ratios = scene.get("systems", {}), scene.get("ratios", {})
        rows.append((f"{title}: Ambience rtf", systems.get("ambience", {}).get("rtf")))
        rows.append((f"{title}: Ambience / OpenAL", ratios.get("ambienceOverOpenAL")))
        rows.append((f"{title}: Ambience / SDL_mixer", ratios.get("ambienceOverSDLMixer")))
        if "ambienceOverOpenALRealSet" in ratios:
            rows.append((f"{title}: Ambience / OpenAL on its real set", ratios.get("ambienceOverOpenALRealSet")))
            rows.append((f"{title}: Ambience / itself on its real set", ratios.get("ambienceOverAmbienceRealSet")))
        if "ambienceHDROverAmbience" in ratios:
            rows.append((f"{title}: HDR / without", ratios.get("ambienceHDROverAmbience")))
    rows.append(("play() median ns", report.get("playCallNs")))
    rows.append(("music stream, % of a core", report.get("musicStreamCpuPercent")))
    return rows


def format_rows(report):
    """(row title, value) for a `bench --formats --json` report."""
    rows = []
    for row in report["formats"]:
        rows.append((f"{row['format']}: Ambience rtf", row.get("ambience")))
        rows.append((f"{row['format']}: Ambience / SDL_mixer", row.get("ambienceOverSDLMixer")))
    return rows


def number_rows(value, path=""):
    """Every number in any other JSON, by its path."""
    if isinstance(value, dict):
        return [row for key, item in value.items() for row in number_rows(item, f"{path}.{key}" if path else key)]
    if isinstance(value, list):
        return [row for index, item in enumerate(value) for row in number_rows(item, f"{path}[{index}]")]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [(path, float(value))]
    return []


def rows_of(report):
    if isinstance(report, dict) and "scenes" in report:
        return scene_rows(report)
    if isinstance(report, dict) and "formats" in report:
        return format_rows(report)
    return number_rows(report)


class DuplicateRow(Exception):
    pass


def usable(value):
    return isinstance(value, (int, float)) and value > 0 and value == value and value != float("inf")


def sign_test(hits, pairs):
    """The chance of at least `hits` heads in `pairs` tosses of a fair coin."""
    return sum(math.comb(pairs, k) for k in range(hits, pairs + 1)) / 2**pairs


def summarize(runs, pairs):
    """Per row, in the order of the first run: medians, paired ratios and the verdict."""
    titles, values = [], {}
    for i in range(1, pairs + 1):
        for side in ("before", "after"):
            seen = set()
            for title, value in rows_of(runs[i][side]["report"]):
                if title in seen:
                    raise DuplicateRow(f"two rows titled '{title}' in the {side} run of pair {i}")
                seen.add(title)
                if title not in values:
                    titles.append(title)
                    values[title] = {"before": {}, "after": {}}
                values[title][side][i] = value
    summary = []
    for title in titles:
        before, after = values[title]["before"], values[title]["after"]
        ratios = [after[i] / before[i] for i in range(1, pairs + 1)
                  if usable(before.get(i)) and usable(after.get(i))]
        row = {
            "row": title,
            "before": median_or_none([v for v in before.values() if usable(v)]),
            "after": median_or_none([v for v in after.values() if usable(v)]),
            "pairedRatios": ratios,
        }
        if ratios:
            row["medianRatio"] = statistics.median(ratios)
            row["lowest"], row["highest"] = min(ratios), max(ratios)
            worse, better = sum(ratio > 1 for ratio in ratios), sum(ratio < 1 for ratio in ratios)
            row["pairsWorse"] = worse
            row["verdict"] = ("worse" if sign_test(worse, len(ratios)) < 0.05
                              else "better" if sign_test(better, len(ratios)) < 0.05 else "within noise")
        elif any(usable(v) for v in after.values()):
            row["verdict"] = "after only"
        elif any(usable(v) for v in before.values()):
            row["verdict"] = "before only"
        else:
            row["verdict"] = "no figure"
        summary.append(row)
    return summary


def median_or_none(values):
    return statistics.median(values) if values else None


def figure(value):
    if value is None or value != value:
        return "—"
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.4g}" if value < 1 else f"{value:.3f}"


def comparisons(document, path=None):
    """(path, comparison) for a --json file: itself (path None), or every comparison it holds at any depth, by the
    keys that lead to it ("experiments.withLockSlot")."""
    if "runs" in document:
        return [(path, document)]
    return [found for key, value in document.items() if isinstance(value, dict)
            for found in comparisons(value, f"{path}.{key}" if path else key)]


def runs_of(comparison):
    runs = {}
    for run in comparison["runs"]:
        runs.setdefault(run["pair"], {})[run["side"]] = {"load": run["loadAverage"], "report": run["report"]}
    return runs


def print_table(before, after, arguments, pairs, runs, summary):
    loads = [runs[i][side]["load"][0] for i in runs for side in ("before", "after")]
    print(f"before: {before}; after: {after}; `{arguments}`, {pairs} pairs in turns (the order swapped every pair)")
    print(f"load average (1 min) at the runs' starts: {min(loads):.2f} to {max(loads):.2f}, median "
          f"{statistics.median(loads):.2f}; per pair (before, after): "
          + ", ".join(f"{runs[i]['before']['load'][0]:.2f}/{runs[i]['after']['load'][0]:.2f}" for i in runs))
    print()
    print("| row | before | after | after / before (median of pairs) | spread of pairs | pairs worse | verdict |")
    print("|---|---|---|---|---|---|---|")
    for row in summary:
        if "medianRatio" in row:
            worse = row["pairsWorse"]
            print(f"| {row['row']} | {figure(row['before'])} | {figure(row['after'])} | {row['medianRatio']:.3f} | "
                  f"{row['lowest']:.3f}–{row['highest']:.3f} | {worse} of {len(row['pairedRatios'])} | "
                  f"{row['verdict']} |")
        else:
            print(f"| {row['row']} | {figure(row['before'])} | {figure(row['after'])} | — | — | — | {row['verdict']} |")


def warn_if_few(pairs):
    if pairs < 5:
        print(f"bench-compare.py: {pairs} pairs can reach no verdict (the sign test needs 5 pairs all one way: "
              "1 in 32); every row will read within noise", file=sys.stderr)


def write_json(document, path):
    folder = os.path.dirname(os.path.abspath(path))
    # Written to a temporary file beside it, then renamed, so that a stopped run leaves no half a file. No NaN or
    # infinity: JSON has none (a missing figure is null).
    with tempfile.NamedTemporaryFile("w", dir=folder, delete=False, suffix=".tmp") as file:
        json.dump(document, file, indent=1, allow_nan=False)
        file.write("\n")
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(file.name, 0o666 & ~umask)  # a temporary file is made private; the output is not
    os.replace(file.name, path)


def main():
    parser = argparse.ArgumentParser()
    for name in ("--runs", "--before", "--after", "--arguments", "--json", "--from-json"):
        parser.add_argument(name)
    parser.add_argument("--pairs", type=int)
    options = parser.parse_args()
    try:
        if options.from_json:
            with open(options.from_json) as file:
                document = json.load(file)
            found = comparisons(document)
            if not found:
                parser.error(f"{options.from_json} holds no comparison (no \"runs\")")
            for key, comparison in found:
                if key is not None:
                    print(f"## {key}\n")
                runs = runs_of(comparison)
                warn_if_few(comparison["pairs"])
                comparison["summary"] = summarize(runs, comparison["pairs"])
                print_table(comparison["before"], comparison["after"], comparison["arguments"], comparison["pairs"],
                            runs, comparison["summary"])
                print()
            if options.json:
                write_json(document, options.json)
            return 0
        if not (options.runs and options.pairs and options.before and options.after and options.arguments):
            parser.error("give --from-json, or --runs, --pairs, --before, --after and --arguments")
        warn_if_few(options.pairs)
        runs = {}
        for i in range(1, options.pairs + 1):
            runs[i] = {}
            for side in ("before", "after"):
                base = os.path.join(options.runs, f"{i}-{side}")
                with open(base + ".load") as file:
                    load = [float(part) for part in file.read().split()]
                with open(base + ".json") as file:
                    runs[i][side] = {"load": load, "report": json.load(file)}
        summary = summarize(runs, options.pairs)
    except DuplicateRow as problem:
        print(f"bench-compare.py: {problem}", file=sys.stderr)
        return 1
    print_table(options.before, options.after, options.arguments, options.pairs, runs, summary)
    if options.json:
        write_json({
            "before": options.before, "after": options.after, "arguments": options.arguments,
            "pairs": options.pairs, "summary": summary,
            "runs": [{"pair": i, "side": side, "loadAverage": runs[i][side]["load"], "report": runs[i][side]["report"]}
                     for i in runs for side in (("before", "after") if i % 2 else ("after", "before"))],
        }, options.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
