#!/usr/bin/env bash
# Installs Ambience for C programs and for the command line, or removes exactly what an install put there.
#
#   scripts/install.sh [--prefix DIR] [--debug] [--no-build]   build in release (or debug) and install into DIR
#   scripts/install.sh --uninstall [--prefix DIR]              remove what the install into DIR put there
#
# DIR defaults to /usr/local; sudo is used when DIR is not writable. What goes where:
#   lib/libambience.so.MAJOR.MINOR.PATCH   the C library (SwiftPM's libambience-c.so), soname libambience.so.MAJOR,
#   lib/libambience.so.MAJOR, lib/libambience.so   the usual symlinks
#   lib/ambience/                          the Swift runtime libraries it needs, found through RUNPATH $ORIGIN/ambience
#   include/ambience.h and include/ambience_version.h, lib/pkgconfig/ambience.pc
#   bin/ambience                           the command (RUNPATH $ORIGIN/../lib/ambience), and its man page
#   lib/ambience/sdl2-mixer/libSDL2_mixer-2.0.so.0
#                                          the SDL_mixer stand-in (the SDL2_mixer product, RUNPATH $ORIGIN/..), which
#                                          `ambience run` puts in front of a program; in a folder of its own, never in
#                                          place of the system's SDL_mixer, so no other program loads it
#   share/ambience/install-manifest        every file, link and folder the install made, which --uninstall reads
#
# Why the Swift runtime is installed beside the library: a Swift shared library needs libswiftCore and friends at
# run time, and the toolchain's copy, which the build links against, is not on a player's machine. The copy in
# lib/ambience is private to Ambience, so it never shadows another Swift program's runtime.
#
# Why patchelf sets the soname after the build rather than a linker flag in Package.swift: the flag needs
# unsafeFlags, and a package with unsafeFlags cannot be used as a dependency by other packages.
set -euo pipefail
cd "$(dirname "$0")/.."

prefix=/usr/local
configuration=release
build=1
uninstall=0
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) [ $# -ge 2 ] || { echo "install.sh: --prefix needs a folder" >&2; exit 2; }; prefix=$2; shift 2 ;;
    --prefix=*) prefix=${1#--prefix=}; shift ;;
    --debug) configuration=debug; shift ;;
    --no-build) build=0; shift ;;
    --uninstall) uninstall=1; shift ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
done
[ -n "$prefix" ] || { echo "install.sh: --prefix is empty" >&2; exit 2; }
case "$prefix" in /*) ;; *) prefix="$PWD/$prefix" ;; esac
prefix=${prefix%/}
[ -n "$prefix" ] || prefix=/

manifest_dir="$prefix/share/ambience"
manifest="$manifest_dir/install-manifest"

# sudo only when the prefix (or the nearest folder above it that exists) is not ours to write.
sudo=""
existing=$prefix
while [ ! -e "$existing" ]; do existing=$(dirname "$existing"); done
if [ ! -w "$existing" ] && [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install.sh: $existing is not writable and there is no sudo" >&2; exit 1; }
  sudo="sudo"
fi

if [ "$uninstall" -eq 1 ]; then
  [ -f "$manifest" ] || { echo "install.sh: nothing to uninstall: $manifest does not exist" >&2; exit 1; }
  # Files and links first, then the folders the install made, deepest first, each only if it is now empty.
  while IFS=' ' read -r kind path; do
    case "$kind" in file|link) $sudo rm -f -- "$path" ;; esac
  done < "$manifest"
  folders=$(sed -n 's/^dir //p' "$manifest" | sort -r)
  $sudo rm -f -- "$manifest"
  while IFS= read -r folder; do
    [ -z "$folder" ] || $sudo rmdir -- "$folder" 2>/dev/null || true
  done <<< "$folders"
  if [ "$(id -u)" -eq 0 ] || [ -n "$sudo" ]; then
    case "$prefix" in /usr|/usr/local) $sudo ldconfig ;; esac
  fi
  echo "install.sh: removed Ambience from $prefix"
  exit 0
fi

for tool in patchelf ldd readelf; do
  command -v "$tool" >/dev/null || { echo "install.sh: needs $tool (Debian: apt-get install patchelf binutils)" >&2; exit 1; }
done
[ ! -f "$manifest" ] || { echo "install.sh: Ambience is already installed in $prefix: run --uninstall first" >&2; exit 1; }

# The version: ambience_version.h's macros (which ambience.h includes) are its one source.
header=include/ambience.h
version_header=include/ambience_version.h
version_part() { sed -n "s/^#define AMBIENCE_VERSION_$1 \([0-9][0-9]*\)\$/\1/p" "$version_header"; }
major=$(version_part MAJOR) minor=$(version_part MINOR) patch=$(version_part PATCH)
[ -n "$major" ] && [ -n "$minor" ] && [ -n "$patch" ] || { echo "install.sh: no AMBIENCE_VERSION_* in $version_header" >&2; exit 1; }
version="$major.$minor.$patch"

# The SDL_mixer stand-in, when the package has it (the product SDL2_mixer).
standin_products=()
standin=""
if grep -q 'name: "SDL2_mixer"' Package.swift; then standin_products=(SDL2_mixer); standin=libSDL2_mixer.so; fi
if [ "$build" -eq 1 ]; then
  swift build -c "$configuration" --product ambience-c
  swift build -c "$configuration" --product ambience
  for product in "${standin_products[@]}"; do swift build -c "$configuration" --product "$product"; done
fi
products=".build/$configuration"
for product in libambience-c.so ambience $standin; do
  [ -f "$products/$product" ] || { echo "install.sh: $products/$product is not built" >&2; exit 1; }
done

# Stage everything in a scratch folder first, so a failure leaves the prefix untouched.
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

# The Swift runtime: every library the two products load from the toolchain's runtime folder.
runtime_dir=$(ldd "$products/libambience-c.so" | awk '$1 == "libswiftCore.so" { print $3 }' | xargs -r dirname)
[ -n "$runtime_dir" ] || { echo "install.sh: cannot find the Swift runtime libambience-c.so uses (ldd)" >&2; exit 1; }
runtime_libs=$( { ldd "$products/libambience-c.so"; ldd "$products/ambience"; [ -z "$standin" ] || ldd "$products/$standin"; } |
  awk -v dir="$runtime_dir/" 'index($3, dir) == 1 { print $3 }' | sort -u)

library="libambience.so.$version"
mkdir -p "$stage/lib/ambience" "$stage/include" "$stage/lib/pkgconfig" "$stage/bin" "$stage/share/man/man1"
cp "$products/libambience-c.so" "$stage/lib/$library"
# Two calls: patchelf 0.14 applies only the first of --set-soname and --set-rpath given together.
patchelf --set-soname "libambience.so.$major" "$stage/lib/$library"
patchelf --set-rpath '$ORIGIN/ambience' "$stage/lib/$library"
for lib in $runtime_libs; do cp -L "$lib" "$stage/lib/ambience/"; done
cp "$products/ambience" "$stage/bin/ambience"
patchelf --set-rpath '$ORIGIN/../lib/ambience' "$stage/bin/ambience"
cp "$header" "$stage/include/ambience.h"
cp "$version_header" "$stage/include/ambience_version.h"
if [ -n "$standin" ]; then
  mkdir -p "$stage/lib/ambience/sdl2-mixer"
  cp "$products/$standin" "$stage/lib/ambience/sdl2-mixer/libSDL2_mixer-2.0.so.0"
  patchelf --set-rpath '$ORIGIN/..' "$stage/lib/ambience/sdl2-mixer/libSDL2_mixer-2.0.so.0"
fi

# A game built against a prefix the dynamic loader does not search finds the library through an rpath; /usr is
# searched anyway (and an rpath to it is frowned upon).
rpath="-Wl,-rpath,\${libdir} "
[ "$prefix" != /usr ] || rpath=""
cat > "$stage/lib/pkgconfig/ambience.pc" <<EOF
prefix=$prefix
exec_prefix=\${prefix}
libdir=\${exec_prefix}/lib
includedir=\${prefix}/include

Name: ambience
Description: Game-audio engine for Linux: sounds, music, the audio session (C API)
Version: $version
Libs: -L\${libdir} ${rpath}-Wl,-rpath-link,\${libdir}/ambience -lambience
Cflags: -I\${includedir}
EOF

# The man page is the command's own --help texts, so it cannot drift from them.
{
  echo ".TH AMBIENCE 1 \"\" \"ambience $version\" \"User Commands\""
  echo ".SH NAME"
  echo "ambience \\- decode, render, play and inspect audio with the Ambience engine"
  echo ".SH DESCRIPTION"
  echo ".nf"
  "$stage/bin/ambience" --help | sed 's/\\/\\e/g; s/^\./\\\&./'
  echo ".fi"
  for command in $("$stage/bin/ambience" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }'); do
    echo ".SS $command"
    echo ".nf"
    "$stage/bin/ambience" "$command" --help | sed 's/\\/\\e/g; s/^\./\\\&./'
    echo ".fi"
  done
  echo ".SH ENVIRONMENT"
  echo "AMBIENCE_LOG: error, warning (the default), info or debug: how much the engine reports on stderr."
} > "$stage/share/man/man1/ambience.1"
installed_version=$("$stage/bin/ambience" --version)
[ "$installed_version" = "ambience $version" ] || {
  echo "install.sh: the command says '$installed_version', the header $version" >&2; exit 1; }

# Copy the stage into the prefix, writing down each folder made and each file and link put there.
record=$(mktemp)
trap 'rm -rf "$stage" "$record"' EXIT
make_dir() {
  local dir=$1 parent
  [ -d "$dir" ] && return 0
  parent=$(dirname "$dir")
  make_dir "$parent"
  $sudo mkdir -- "$dir"
  echo "dir $dir" >> "$record"
}
put() {  # put SOURCE-IN-STAGE MODE
  local relative=$1 mode=$2 target="$prefix/$1"
  make_dir "$(dirname "$target")"
  $sudo install -m "$mode" -- "$stage/$relative" "$target"
  echo "file $target" >> "$record"
}
put "lib/$library" 755
for lib in "$stage"/lib/ambience/*; do [ ! -f "$lib" ] || put "lib/ambience/$(basename "$lib")" 644; done
[ -z "$standin" ] || put lib/ambience/sdl2-mixer/libSDL2_mixer-2.0.so.0 755
$sudo ln -sfn "$library" "$prefix/lib/libambience.so.$major"; echo "link $prefix/lib/libambience.so.$major" >> "$record"
$sudo ln -sfn "libambience.so.$major" "$prefix/lib/libambience.so"; echo "link $prefix/lib/libambience.so" >> "$record"
put include/ambience.h 644
put include/ambience_version.h 644
put lib/pkgconfig/ambience.pc 644
put bin/ambience 755
put share/man/man1/ambience.1 644
make_dir "$manifest_dir"
$sudo install -m 644 -- "$record" "$manifest"

# The loader's cache knows /usr/local/lib only after ldconfig.
if [ "$(id -u)" -eq 0 ] || [ -n "$sudo" ]; then
  case "$prefix" in /usr|/usr/local) $sudo ldconfig ;; esac
fi
echo "install.sh: installed Ambience $version into $prefix"
echo "  build a C game with: cc game.c \$(pkg-config --cflags --libs ambience)"
[ "$prefix" = /usr ] || [ "$prefix" = /usr/local ] ||
  echo "  (first: export PKG_CONFIG_PATH=$prefix/lib/pkgconfig)"
