#!/usr/bin/env python3
"""A scene's steady state by callgrind: the difference of two runs of one release binary that differ only in length.

Callgrind counts exactly, whatever the load, but a run also counts its start (the sounds made, the crowd's first
starts). Two runs of the same scene, one longer (`--seconds 6` against `--seconds 2`), differ by the steady state
alone: this prints, per function, that difference (inclusive and self instructions, and calls), and the same per
`unit`, the calls of a function named in --per (default: the scene's restarts, `StressCrowd.play`).

    valgrind --tool=callgrind --callgrind-out-file=short.out ambience bench --voices 10000 --systems ambience \
        --runs 1 --seconds 2
    (the same with --seconds 6 into long.out)
    scripts/callgrind-steady.py short.out long.out [--top 60] [--per StressCrowdC4play] [--callees NAME]

--callees NAME lists what the functions whose mangled name holds NAME call, per unit. Only the first event (Ir)
is read. docs/bench/profile.md, "The end and restart of a virtual one-shot".
"""
import argparse
import collections
import re
import subprocess


def parse(path):
    """(self, inclusive, calls, cost of each caller→callee pair) by function, from a callgrind out file."""
    names = {}
    self_cost = collections.Counter()
    called_cost = collections.Counter()
    calls = collections.Counter()
    pair_cost = collections.Counter()
    function = callee = None
    pending = None

    def name(token):
        match = re.match(r'\((\d+)\)(?:\s+(.*))?', token)
        if not match:
            return token
        if match.group(2):
            names[match.group(1)] = match.group(2)
        return names[match.group(1)]

    with open(path, errors='replace') as lines:
        for line in lines:
            line = line.rstrip('\n')
            if line.startswith('fn='):
                function = name(line[3:])
            elif line.startswith('cfn='):
                callee = name(line[4:])
            elif line.startswith('calls='):
                pending = (callee, int(line[6:].split()[0]))
            elif line and line[0] in '0123456789+-*' and len(line.split()) > 1:
                cost = int(line.split()[1])
                if pending:
                    target, count = pending
                    pending = None
                    calls[target] += count
                    pair_cost[(function, target)] += cost
                    if target != function:
                        called_cost[function] += cost
                else:
                    self_cost[function] += cost
    inclusive = {f: self_cost[f] + called_cost[f] for f in set(self_cost) | set(called_cost)}
    return self_cost, inclusive, calls, pair_cost


def demangled(symbols):
    out = subprocess.run(['swift', 'demangle', '--simplified'], input='\n'.join(symbols), capture_output=True,
                         text=True, check=False).stdout.split('\n')
    return dict(zip(symbols, out))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('short')
    parser.add_argument('long')
    parser.add_argument('--top', type=int, default=60)
    parser.add_argument('--per', default='StressCrowdC4play')
    parser.add_argument('--callees')
    args = parser.parse_args()
    short, long = parse(args.short), parse(args.long)
    functions = set(short[1]) | set(long[1])

    def delta(index, key):
        return long[index].get(key, 0) - short[index].get(key, 0)

    units = sum(delta(2, f) for f in functions if args.per in f)
    if units <= 0:
        raise SystemExit(f'no calls of a function named like {args.per!r} in the difference')
    print(f'steady state: {sum(delta(0, f) for f in functions):,} instructions, {units:,} units ({args.per})')
    if args.callees:
        pairs = {p: long[3][p] - short[3].get(p, 0) for p in long[3] if args.callees in p[0]}
        names = demangled(sorted({callee for _, callee in pairs}))
        for (_, callee), cost in sorted(pairs.items(), key=lambda item: -item[1])[:args.top]:
            if cost:
                print(f'{cost:>14,} {cost / units:>9.1f}  {names[callee][:140]}')
        return
    top = sorted(functions, key=lambda f: -abs(delta(1, f)))[:args.top]
    names = demangled(top)
    print(f"{'inclusive':>14} {'self':>14} {'calls':>10} {'incl/unit':>9} {'self/unit':>9}")
    for f in top:
        print(f'{delta(1, f):>14,} {delta(0, f):>14,} {delta(2, f):>10,} {delta(1, f) / units:>9.1f} '
              f'{delta(0, f) / units:>9.1f}  {names[f][:140]}')


if __name__ == '__main__':
    main()
