#!/usr/bin/env bash
# The install, tested as a C game programmer meets it: scripts/install.sh into a temporary prefix; the C demo
# (Demos/CGameLoop/main.c) built with nothing but `pkg-config --cflags --libs ambience`; run headless (an offline
# render, then real time on SDL's dummy driver), once more with the toolchain's Swift runtime hidden (a private mount
# namespace) to show the installed copy is what it runs on; the soname, the version everywhere and the C ABI checked;
# `ambience run` finds the SDL_mixer stand-in the install put in lib/ambience/sdl2-mixer (or, in a package without it,
# refuses clearly) and the system's SDL_mixer is left alone; then --uninstall, after which the prefix holds nothing.
#
#   scripts/install-test.sh            the release build, as users install it (CI)
#   scripts/install-test.sh --debug    the debug build that `swift build --build-tests` already made (quicker)
set -euo pipefail
cd "$(dirname "$0")/.."
export LANG=C.UTF-8 LC_ALL=C.UTF-8

configuration=release
install_options=()
if [ "${1:-}" = --debug ]; then
  configuration=debug
  install_options=(--debug --no-build)
  [ -f .build/debug/libambience-c.so ] || { echo "install-test: run swift build --build-tests first" >&2; exit 1; }
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
prefix="$scratch/prefix"
mkdir -p "$prefix"
failures=0
check() {  # check DESCRIPTION COMMAND...
  local what=$1
  shift
  if "$@"; then echo "install-test: ok: $what"; else echo "install-test: FAILED: $what" >&2; failures=$((failures + 1)); fi
}

version_part() { sed -n "s/^#define AMBIENCE_VERSION_$1 \([0-9][0-9]*\)\$/\1/p" include/ambience_version.h; }
major=$(version_part MAJOR)
version="$major.$(version_part MINOR).$(version_part PATCH)"
echo "install-test: the header says $version"

# The system's SDL_mixer, which the install must leave alone (the stand-in goes in a folder of its own).
# awk reads to the end: an early exit would end ldconfig by SIGPIPE once its list outgrows one read, and pipefail
# would end this script with it (exit 141 in CI).
system_mixer=$(ldconfig -p | awk '$1 == "libSDL2_mixer-2.0.so.0" && !found { print $NF; found = 1 }')
system_mixer_sum=$( [ -z "$system_mixer" ] || sha256sum "$(readlink -f "$system_mixer")")

bash scripts/install.sh --prefix "$prefix" "${install_options[@]}"

lib="$prefix/lib/libambience.so.$version"
check "the library is installed as libambience.so.$version" test -f "$lib"
check "libambience.so.$major -> libambience.so.$version" test "$(readlink "$prefix/lib/libambience.so.$major")" = "libambience.so.$version"
check "libambience.so -> libambience.so.$major" test "$(readlink "$prefix/lib/libambience.so")" = "libambience.so.$major"
soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
check "the soname is libambience.so.$major (readelf: '$soname')" test "$soname" = "libambience.so.$major"
runpath=$(readelf -d "$lib" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
check "the library's RUNPATH is \$ORIGIN/ambience only (readelf: '$runpath')" test "$runpath" = '$ORIGIN/ambience'
check "the header is installed" cmp -s include/ambience.h "$prefix/include/ambience.h"
check "the version header is installed" cmp -s include/ambience_version.h "$prefix/include/ambience_version.h"
check "the man page is installed" grep -q '^\.TH AMBIENCE 1' "$prefix/share/man/man1/ambience.1"
check "the C ABI: the installed library exports exactly the header's functions" bash scripts/check-exports.sh "$lib" "$prefix/include/ambience.h"

# The README's packaging notes name the Debian package of every library the installed library links (the Swift
# runtime, shipped in lib/ambience, and glibc aside).
if command -v dpkg >/dev/null; then
  unlisted=""
  for needed in $(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    [ ! -e "$prefix/lib/ambience/$needed" ] || continue
    case "$needed" in libc.so.*|libm.so.*|ld-linux*|libpthread.so.*|libdl.so.*) continue ;; esac
    package=$(dpkg -S "*/$needed" 2>/dev/null | sed -n 1p | cut -d: -f1)
    grep -q "\`${package:-no package for $needed}\`" README.md || unlisted="$unlisted $needed (${package:-?})"
  done
  check "the README's packaging notes name the Debian package of every library it links${unlisted:+ (missing:$unlisted)}" test -z "$unlisted"
fi

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
check "pkg-config --modversion ambience is $version" test "$(pkg-config --modversion ambience)" = "$version"
check "ambience --version says $version" test "$("$prefix/bin/ambience" --version)" = "ambience $version"

# `ambience run` and the SDL_mixer stand-in: installed in lib/ambience/sdl2-mixer and found there, when the package has
# it; without it, a refusal that says where the command looked.
standin_folder="$prefix/lib/ambience/sdl2-mixer"
run_installed() { env -u AMBIENCE_SDL_MIXER DBUS_SESSION_BUS_ADDRESS= SDL_AUDIODRIVER=dummy "$prefix/bin/ambience" run "$@"; }
if grep -q 'name: "SDL2_mixer"' Package.swift; then
  standin_lib="$standin_folder/libSDL2_mixer-2.0.so.0"
  check "the stand-in is installed as lib/ambience/sdl2-mixer/libSDL2_mixer-2.0.so.0" test -f "$standin_lib"
  standin_soname=$(readelf -d "$standin_lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
  check "the stand-in's soname is libSDL2_mixer-2.0.so.0 (readelf: '$standin_soname')" test "$standin_soname" = libSDL2_mixer-2.0.so.0
  standin_runpath=$(readelf -d "$standin_lib" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
  check "the stand-in's RUNPATH is \$ORIGIN/.. (readelf: '$standin_runpath')" test "$standin_runpath" = '$ORIGIN/..'
  first=$(run_installed -- sh -c 'echo "${LD_LIBRARY_PATH%%:*}"' 2>/dev/null)
  check "ambience run puts the installed stand-in first on LD_LIBRARY_PATH ('$first')" test "$first" = "$standin_folder"
  # A program that asks the loader for SDL_mixer by its soname, as every SDL_mixer game does, gets the stand-in.
  maps=$(run_installed -- /usr/bin/python3 -c 'import ctypes; ctypes.CDLL("libSDL2_mixer-2.0.so.0"); print(open("/proc/self/maps").read())' 2>/dev/null)
  check "a program under ambience run loads the installed stand-in" grep -qF "$standin_lib" <<< "$maps"
else
  echo "install-test: this package has no SDL2_mixer product: ambience run must refuse"
  refusal=$(run_installed -- true 2>&1) && refused=0 || refused=$?
  check "without a stand-in, ambience run exits 1 ($refused) and names the install's folder" \
    bash -c '[ "$1" -eq 1 ] && grep -qF "$2/libSDL2_mixer-2.0.so.0" <<< "$3"' _ "$refused" "$standin_folder" "$refusal"
fi
check "the system's SDL_mixer ($system_mixer) is untouched" \
  test "$system_mixer_sum" = "$( [ -z "$system_mixer" ] || sha256sum "$(readlink -f "$system_mixer")")"

# The C demo, with the pkg-config flags and nothing else.
flags=$(pkg-config --cflags --libs ambience)
echo "install-test: cc -std=c99 -Wall -Wextra -Werror Demos/CGameLoop/main.c $flags -o cgameloop"
# shellcheck disable=SC2086  # the flags are words
cc -std=c99 -Wall -Wextra -Werror Demos/CGameLoop/main.c $(pkg-config --cflags --libs ambience) -o "$scratch/cgameloop"
resolved() { ldd "$1" | awk -v name="$2" '$1 == name { print $3 }'; }
check "the demo loads libambience.so.$major from the prefix" test "$(resolved "$scratch/cgameloop" "libambience.so.$major")" = "$prefix/lib/libambience.so.$major"
check "and the Swift runtime from the prefix's lib/ambience" test "$(resolved "$scratch/cgameloop" libswiftCore.so)" = "$prefix/lib/ambience/libswiftCore.so"

# Headless: off the desktop (no session bus), SDL's dummy driver for the real-time run.
run_demo() { env DBUS_SESSION_BUS_ADDRESS= SDL_AUDIODRIVER=dummy timeout 60 "$scratch/cgameloop" --assets Assets "$@"; }
check "the demo renders 2 s offline to a WAV" run_demo --seconds 2 --record "$scratch/render.wav"
size=$(stat -c %s "$scratch/render.wav" 2>/dev/null || echo 0)
check "the WAV holds 2 s of 48 kHz 16-bit stereo ($size bytes)" test "$size" -ge $((2 * 48000 * 4))
check "the demo plays 1 s in real time on the dummy driver" run_demo --seconds 1

# The toolchain hidden: an empty folder mounted over its runtime, in a namespace of this command's own.
toolchain_core=$(ldd ".build/$configuration/libambience-c.so" | awk '$1 == "libswiftCore.so" { print $3 }')
toolchain_runtime=$(dirname "${toolchain_core:-/nonexistent/x}")
if [ -n "$toolchain_core" ] && [ -d "$toolchain_runtime" ] && unshare -m true 2>/dev/null; then
  mkdir -p "$scratch/empty"
  check "the demo and the command run with the toolchain's runtime ($toolchain_runtime) hidden" \
    unshare -m bash -c 'mount --bind "$1" "$2" && ! ls "$2"/libswiftCore.so 2>/dev/null &&
      env DBUS_SESSION_BUS_ADDRESS= SDL_AUDIODRIVER=dummy timeout 60 "$3" --assets Assets --seconds 1 --record "$4" &&
      "$5" --version' _ "$scratch/empty" "$toolchain_runtime" "$scratch/cgameloop" "$scratch/hidden.wav" "$prefix/bin/ambience"
else
  echo "install-test: skipped: the run with the toolchain hidden (no unshare -m here)"
fi

bash scripts/install.sh --uninstall --prefix "$prefix"
left=$(find "$prefix" -mindepth 1 | sed "s|^$prefix/||")
check "the uninstall left the prefix empty${left:+ (left: $left)}" test -z "$left"
check "the demo no longer finds the library" bash -c '! "$1" --seconds 0 --record /dev/null 2>/dev/null' _ "$scratch/cgameloop"

if [ "$failures" -ne 0 ]; then
  echo "install-test: $failures checks failed" >&2
  exit 1
fi
echo "install-test: all checks passed"
