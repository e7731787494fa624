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
pairs, 8 of 9), better the other way, else within noise.

Usage: bench-compare.py --runs DIR --pairs N --before TEXT --after TEXT --arguments TEXT [--json FILE]
       bench-compare.py --from-json FILE      (the table again from a --json file)
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
            for title, value in rows_of(runs[i][side]["report"]):
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
            "before": statistics.median([v for v in before.values() if usable(v)] or [float("nan")]),
            "after": statistics.median([v for v in after.values() if usable(v)] or [float("nan")]),
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


def figure(value):
    if value != value:
        return "—"
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.4g}" if value < 1 else f"{value:.3f}"


def main():
    parser = argparse.ArgumentParser()
    for name in ("--runs", "--before", "--after", "--arguments", "--json", "--from-json"):
        parser.add_argument(name)
    parser.add_argument("--pairs", type=int)
    options = parser.parse_args()
    runs = {}
    if options.from_json:
        with open(options.from_json) as file:
            document = json.load(file)
        options.before, options.after = document["before"], document["after"]
        options.arguments, options.pairs = document["arguments"], document["pairs"]
        for run in document["runs"]:
            runs.setdefault(run["pair"], {})[run["side"]] = {"load": run["loadAverage"], "report": run["report"]}
    elif options.runs and options.pairs and options.before and options.after and options.arguments:
        for i in range(1, options.pairs + 1):
            runs[i] = {}
            for side in ("before", "after"):
                base = os.path.join(options.runs, f"{i}-{side}")
                with open(base + ".load") as file:
                    load = [float(part) for part in file.read().split()]
                with open(base + ".json") as file:
                    runs[i][side] = {"load": load, "report": json.load(file)}
    else:
        parser.error("give --from-json, or --runs, --pairs, --before, --after and --arguments")
    summary = summarize(runs, options.pairs)
    loads = [runs[i][side]["load"][0] for i in runs for side in ("before", "after")]
    print(f"before: {options.before}; after: {options.after}; `{options.arguments}`, {options.pairs} pairs in turns "
          "(the order swapped every pair)")
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
    if options.json and not options.from_json:
        document = {
            "before": options.before, "after": options.after, "arguments": options.arguments,
            "pairs": options.pairs, "summary": summary,
            "runs": [{"pair": i, "side": side, "loadAverage": runs[i][side]["load"], "report": runs[i][side]["report"]}
                     for i in runs for side in (("before", "after") if i % 2 else ("after", "before"))],
        }
        folder = os.path.dirname(os.path.abspath(options.json))
        # Written to a temporary file beside it, then renamed, so that a stopped run leaves no half a file.
        with tempfile.NamedTemporaryFile("w", dir=folder, delete=False, suffix=".tmp") as file:
            json.dump(document, file, indent=1)
            file.write("\n")
        os.replace(file.name, options.json)


if __name__ == "__main__":
    sys.exit(main())
