#!/usr/bin/env bash
# Builds one libFuzzer binary over Ambience's parsers and runs each target for a while.
#   Tests/Fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]     (default: 30 s; every target)
# Targets: wav, ogg, mp3 (the whole decoding path: sniffing, tags, integrity checks, reading, seeking), picture
# (FLAC picture blocks), sfx (the `ambience render --sfx` parser), m3u (playlists).
# Seeds come from the bundled assets and small generated files; crashes are kept in Tests/Fuzz/crashes/ and
# fail the run. Fixed crashes become regression inputs in Tests/Fuzz/regressions/, replayed on every run.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-30}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(wav ogg mp3 picture sfx m3u)

work=$(mktemp -d /tmp/ambience-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT
binary="$work/ambience-fuzz"

sources=(Sources/Ambience/Decoding/*.swift Sources/Ambience/Platform/*.swift Sources/AmbienceTool/SFXCue.swift
         Sources/AmbienceTool/UsageError.swift Sources/Ambience/Library/Playlist.swift Tests/Fuzz/*.swift)
swiftc -sanitize=fuzzer,address -parse-as-library -module-name AmbienceFuzz -package-name Ambience -O -g \
  -I Sources/CVorbisFile -I Sources/CMPG123 -lvorbisfile -lvorbis -logg -lmpg123 \
  "${sources[@]}" -o "$binary" 2> "$work/build.log" || { cat "$work/build.log" >&2; exit 1; }

# Seed corpora.
seeds="$work/seeds"
mkdir -p "$seeds"/{wav,ogg,mp3,picture,sfx,m3u}
cp Assets/SFX/*.wav "$seeds/wav/"
sox -n -r 8000 -c 2 -b 24 "$seeds/wav/tiny24.wav" synth 0.01 sine 440 2>/dev/null
sox -n -r 8000 -c 1 -e floating-point -b 32 "$seeds/wav/tinyfloat.wav" synth 0.01 sine 440
sox -n -r 8000 -c 1 -b 16 "$work/t.wav" synth 0.2 sine 440
oggenc -Q -q 0 -t "Seed" -a "Fuzz" -o "$seeds/ogg/tiny.ogg" "$work/t.wav"
lame --quiet -b 32 --tt "Seed" --ta "Fuzz" --add-id3v2 "$work/t.wav" "$seeds/mp3/tiny.mp3"
lame --quiet -b 32 --tt "Seed" --ta "Fuzz" --tn 3 --tg Rock --id3v1-only "$work/t.wav" "$seeds/mp3/id3v1.mp3"
lame --quiet -b 32 --ti Assets/Music/cover.png "$work/t.wav" "$seeds/mp3/art.mp3"
# The bundled music, cut to the first 64 KB (the longest input a run tries).
head -c 65536 Assets/Music/gravity-wave-theme.ogg > "$seeds/ogg/theme-head.ogg"
head -c 65536 Assets/Music/orbit-lullaby.mp3 > "$seeds/mp3/lullaby-head.mp3"
# A FLAC picture block (as in METADATA_BLOCK_PICTURE) around the bundled cover, alone and inside a Vorbis comment.
python3 - "$seeds/picture/cover.bin" Assets/Music/cover.png <<'PY'
import struct, sys
png = open(sys.argv[2], "rb").read()
mime, desc = b"image/png", b"cover"
block = struct.pack(">I", 3) + struct.pack(">I", len(mime)) + mime + struct.pack(">I", len(desc)) + desc
block += struct.pack(">IIIII", 32, 32, 24, 0, len(png)) + png
open(sys.argv[1], "wb").write(block)
PY
printf '\x00\x00\x00\x03\x00\x00\x00\x09image/png\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00\x20\x00\x00\x00\x00\x00\x00\x00\x04\x89PNG' > "$seeds/picture/block.bin"
oggenc -Q -q 0 -c "METADATA_BLOCK_PICTURE=$(base64 -w0 "$seeds/picture/cover.bin")" -o "$seeds/ogg/art.ogg" "$work/t.wav"
printf 'laser.wav@1.5,gain=0.8,pan=-1,pitch=1.2' > "$seeds/sfx/cue.txt"
printf 'a@b,c.wav@0' > "$seeds/sfx/odd.txt"
printf '#EXTM3U\n#EXTINF:12,Artist - Title\nmusic/a.ogg\n../outside.mp3\n/abs/path.wav\n' > "$seeds/m3u/list.m3u"

mkdir -p Tests/Fuzz/crashes
status=0
for target in "${targets[@]}"; do
  corpus="$work/corpus-$target"
  mkdir -p "$corpus"
  regressions=Tests/Fuzz/regressions/$target
  # Replay every kept regression input first: each must now pass.
  if [ -d "$regressions" ] && [ -n "$(ls -A "$regressions")" ]; then
    AMBIENCE_FUZZ_TARGET=$target "$binary" "$regressions"/* > "$work/replay-$target.log" 2>&1 || {
      echo "fuzz: $target: a regression input fails again" >&2; tail -30 "$work/replay-$target.log" >&2; status=1; }
  fi
  decodeTarget=$target
  AMBIENCE_FUZZ_TARGET=$decodeTarget "$binary" "$corpus" "$seeds/$target" -max_total_time="$seconds" -max_len=65536 \
    -timeout=10 -rss_limit_mb=2048 -artifact_prefix="Tests/Fuzz/crashes/$target-" -print_final_stats=1 \
    > "$work/fuzz-$target.log" 2>&1 || { echo "fuzz: $target found a crash:" >&2; tail -40 "$work/fuzz-$target.log" >&2; status=1; }
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/fuzz-$target.log" | grep -o '[0-9]*$' || echo 0)
  echo "fuzz: $target: $runs inputs in ${seconds}s, $(ls "$corpus" | wc -l) in corpus"
done
exit $status
