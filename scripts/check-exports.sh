#!/usr/bin/env bash
# scripts/check-exports.sh LIBRARY [HEADER]: the C ABI check. Every function ambience.h declares is exported by the
# shared library (nm -D --defined-only), and every ambience_* function the library exports is declared in the header:
# nothing a C program needs is missing, and nothing slips into the ABI (and so under the soname) by accident.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: check-exports.sh LIBRARY [HEADER]" >&2; exit 2; }
library=$1
header=${2:-"$(dirname "$0")/../include/ambience.h"}
[ -f "$library" ] || { echo "check-exports.sh: no library at $library" >&2; exit 1; }
[ -f "$header" ] || { echo "check-exports.sh: no header at $header" >&2; exit 1; }

# Declarations start at the line's start with their return type; typedefs (callback types), macros and comment lines
# do not. The function's name is the first ambience_ word followed by "(".
declared=$(grep -P '^(?!typedef\b)[A-Za-z_]' "$header" | grep -oP '\bambience_\w+(?=\s*\()' | sort -u)
exported=$(nm -D --defined-only "$library" | awk '($2 == "T" || $2 == "W") && $3 ~ /^ambience_/ { print $3 }' | sort -u)

status=0
missing=$(comm -23 <(echo "$declared") <(echo "$exported"))
extra=$(comm -13 <(echo "$declared") <(echo "$exported"))
[ -z "$missing" ] || { echo "check-exports.sh: declared in $(basename "$header") but not exported by $(basename "$library"):" >&2; echo "$missing" | sed 's/^/  /' >&2; status=1; }
[ -z "$extra" ] || { echo "check-exports.sh: exported by $(basename "$library") but not declared in $(basename "$header"):" >&2; echo "$extra" | sed 's/^/  /' >&2; status=1; }
count=$(echo "$declared" | grep -c . || true)
[ "$count" -ge 100 ] || { echo "check-exports.sh: only $count declarations found in $header: is the pattern still right?" >&2; status=1; }
[ "$status" -ne 0 ] || echo "check-exports.sh: $count functions, declared and exported alike"
exit "$status"
