#!/usr/bin/env bash
# Builds one libFuzzer binary over Ambience's parsers and runs each target for a while.
#   Tests/Fuzz/run.sh [SECONDS] [TARGET...]     (default: 240 s; every target)
# SECONDS is the fuzzing's whole wall time, shared: the targets run as many at a time as there are cores (at most
# 2 here), and each gets SECONDS × jobs / targets (at least 10 s). CI gives it 180 s: 15 targets, 24 s each.
# Targets (FuzzTarget in Tests/AmbienceIntegrationSupport/FuzzDrivers.swift): wav, ogg, mp3, flac, opus, mp4 (one
# format's decoding path),
# picture (picture blocks and covers through SDL2_image), sfx (the `--sfx` parser), m3u (playlists), pipeline (any
# bytes through detection, decoding, resampling, `info`, and offline rendering as a sound and as music) and capi
# (a byte string read as C API calls on an offline engine), loudness (ReplayGain/R128 tag text and the gain rule),
# bus (any bytes as one D-Bus message, through the connection's checks, the MPRIS server and client).
# Seeds come from the bundled assets and small generated files; crashes are kept in Tests/Fuzz/crashes/ and
# fail the run. Fixed crashes become regression inputs in Tests/Fuzz/regressions/, replayed on every run.
set -euo pipefail
cd "$(dirname "$0")/../.."
total=${1:-240}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(wav ogg mp3 picture sfx m3u pipeline capi
                                     flac opus mp4 loudness bus module midi)
jobs=$(( $(nproc) < 2 ? 1 : 2 ))
seconds=$(( total * jobs / ${#targets[@]} ))
[ "$seconds" -ge 10 ] || seconds=10

work=$(mktemp -d /tmp/ambience-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT
binary="$work/ambience-fuzz"

# The whole engine, module by module as SwiftPM builds it, with libFuzzer's coverage and AddressSanitizer; then the
# entry point with the drivers the test suite shares (Tests/AmbienceIntegrationSupport/FuzzDrivers.swift).
build="$work/build"
mkdir -p "$build"
flags=(-sanitize=fuzzer,address -parse-as-library -package-name Ambience -O -g -wmo -enable-testing -I "$build"
       -I include $(for c in Sources/C*/; do echo "-I $c"; done) $(pkg-config --cflags-only-I dbus-1 | sed 's/-I/-Xcc -I/g'))
# libopusfile's header includes <opus_multistream.h> from /usr/include/opus.
flags+=($(pkg-config --cflags-only-I opusfile | sed 's/-I/-Xcc -I/g'))
module() {  # NAME SOURCES...: compiles one module into $build/NAME.o and NAME.swiftmodule
  local name=$1
  shift
  swiftc "${flags[@]}" -module-name "$name" -emit-module-path "$build/$name.swiftmodule" -c -o "$build/$name.o" "$@" \
    2> "$work/build-$name.log" || { cat "$work/build-$name.log" >&2; exit 1; }
}
module AmbiencePlatform Sources/AmbiencePlatform/*.swift
module AmbienceCore $(find Sources/AmbienceCore -name '*.swift')
module AmbienceDecoding Sources/AmbienceDecoding/*.swift
module AmbienceMixer $(find Sources/AmbienceMixer -name '*.swift')
module AmbienceLibrary Sources/AmbienceLibrary/*.swift
module AmbienceDesktop $(find Sources/AmbienceDesktop -name '*.swift')
module AmbienceOutput $(find Sources/AmbienceOutput -name '*.swift')
module AmbienceMusic Sources/AmbienceMusic/*.swift
module Ambience $(find Sources/Ambience -name '*.swift')
module AmbienceBench Sources/AmbienceBench/*.swift
module AmbienceTool Sources/AmbienceTool/*.swift
module AmbienceC Sources/AmbienceC/*.swift
swiftc "${flags[@]}" -module-name AmbienceFuzz Tests/Fuzz/Main.swift Tests/AmbienceIntegrationSupport/FuzzDrivers.swift \
  Tests/AmbienceIntegrationSupport/BusFuzzDriver.swift \
  "$build"/*.o -lopenal -lSDL2 -lSDL2_image -lSDL2_mixer -lvorbisfile -lvorbis -logg -lmpg123 -lpulse -ldbus-1 -lsqlite3 -lz \
  -lFLAC -lopusfile -lopus \
  -lsndfile -lavformat -lavcodec -lavutil \
  -o "$binary" 2> "$work/build.log" || { cat "$work/build.log" >&2; exit 1; }
# swiftc leaves the entry module's partial module files in the working folder; they are not the project's.
rm -f AmbienceFuzz-*.swiftdoc AmbienceFuzz-*.swiftmodule AmbienceFuzz-*.swiftsourceinfo

# Seed corpora: real files of every format and variant the engine reads, whole.
seeds="$work/seeds"
mkdir -p "$seeds"/{wav,ogg,mp3,picture,sfx,m3u,pipeline,capi}
mkdir -p "$seeds"/{flac,opus,mp4,loudness,bus,module,midi}
# Modules and MIDI files from Debian's packages (scripts/install-deps.sh), and the kept inputs.
cp /usr/share/games/tecnoballz/musics/high-score.mod /usr/share/games/ballz/finalman-quickie.xm \
  /usr/share/games/pingus/data/music/gd-giirm.s3m /usr/share/games/pingus/data/music/gd-matth.it "$seeds/module/"
cp /usr/share/games/openttd/baseset/openmsx/train_filled_with_cash.mid Tests/Fuzz/regressions/midi/* "$seeds/midi/"
cp Assets/SFX/*.wav "$seeds/wav/"
sox -n -r 8000 -c 1 -b 8 -e unsigned-integer "$seeds/wav/u8.wav" synth 0.01 sine 440
sox -n -r 8000 -c 2 -b 24 "$seeds/wav/s24-extensible.wav" synth 0.01 sine 440
sox -n -r 22050 -c 1 -b 32 -e signed-integer "$seeds/wav/s32.wav" synth 0.01 sine 440
sox -n -r 8000 -c 1 -e floating-point -b 32 "$seeds/wav/float32.wav" synth 0.01 sine 440
sox -n -r 8000 -c 1 -e floating-point -b 64 "$seeds/wav/float64.wav" synth 0.01 sine 440
sox -n -r 8000 -c 6 -b 16 "$seeds/wav/six-channels.wav" synth 0.01 sine 440
sox -n -r 8000 -c 1 -b 16 "$work/t.wav" synth 0.2 sine 440
sox "$work/t.wav" --comment "Tëst" "$seeds/wav/list-info.wav"
# Every WAV codec libsndfile reads.
for codec in ms-adpcm ima-adpcm a-law u-law gsm; do sox "$work/t.wav" -e "$codec" "$seeds/wav/$codec.wav"; done
# AAC and ALAC in MP4, with tags and a cover.
ffmpeg -v error -i "$work/t.wav" -c:a aac -b:a 32k -metadata title="Seed" -metadata artist="Fuzz" -metadata track=3/9 "$seeds/mp4/aac.m4a"
ffmpeg -v error -i "$work/t.wav" -c:a alac "$seeds/mp4/alac.m4a"
ffmpeg -v error -i "$work/t.wav" -i Assets/Music/cover.png -map 0 -map 1 -c:a aac -b:a 32k -c:v copy -disposition:v attached_pic \
  "$seeds/mp4/cover.m4a"
# RF64: the same PCM under an RF64 header with its ds64 chunk.
python3 - "$work/t.wav" "$seeds/wav/rf64.wav" <<'PY'
import struct, sys
wav = open(sys.argv[1], "rb").read()
fmt_at = wav.index(b"fmt "); data_at = wav.index(b"data")
fmt = wav[fmt_at:fmt_at + 8 + struct.unpack("<I", wav[fmt_at + 4:fmt_at + 8])[0]]
data = wav[data_at + 8:]
ds64 = b"ds64" + struct.pack("<IQQQI", 28, 4 + 36 + len(fmt) + 8 + len(data), len(data), len(data) // 2, 0)
open(sys.argv[2], "wb").write(b"RF64\xff\xff\xff\xffWAVE" + ds64 + fmt + b"data\xff\xff\xff\xff" + data)
PY
oggenc -Q -q 0 -t "Seed" -a "Fuzz" -o "$seeds/ogg/tiny.ogg" "$work/t.wav"
cp Assets/Music/gravity-wave-theme.ogg "$seeds/ogg/"
lame --quiet -b 32 --tt "Seed" --ta "Fuzz" --add-id3v2 "$work/t.wav" "$seeds/mp3/tiny.mp3"
lame --quiet -b 32 --tt "Seed" --ta "Fuzz" --tn 3 --tg Rock --id3v1-only "$work/t.wav" "$seeds/mp3/id3v1.mp3"
lame --quiet -b 32 --ti Assets/Music/cover.png "$work/t.wav" "$seeds/mp3/art.mp3"
cp Assets/Music/orbit-lullaby.mp3 "$seeds/mp3/"
# A FLAC picture block (as in METADATA_BLOCK_PICTURE) around the bundled cover, alone and inside a Vorbis comment;
# covers as PNG, JPEG, BMP and GIF.
python3 - "$seeds/picture/cover.bin" Assets/Music/cover.png <<'PY'
import struct, sys
png = open(sys.argv[2], "rb").read()
mime, desc = b"image/png", b"cover"
block = struct.pack(">I", 3) + struct.pack(">I", len(mime)) + mime + struct.pack(">I", len(desc)) + desc
block += struct.pack(">IIIII", 32, 32, 24, 0, len(png)) + png
open(sys.argv[1], "wb").write(block)
PY
printf '\x00\x00\x00\x03\x00\x00\x00\x09image/png\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00\x20\x00\x00\x00\x00\x00\x00\x00\x04\x89PNG' > "$seeds/picture/block.bin"
cp Assets/Music/cover.png "$seeds/picture/"
python3 - "$seeds/picture" <<'PY'
import struct, sys
w = h = 4   # a 4×4 24-bit BMP, and the smallest GIF (1×1, one colour)
pixels = b"".join(bytes([x * 60, y * 60, 128]) for y in range(h) for x in range(w))
open(sys.argv[1] + "/cover.bmp", "wb").write(b"BM" + struct.pack("<IHHI", 54 + len(pixels), 0, 0, 54)
    + struct.pack("<IiiHHIIiiII", 40, w, h, 1, 24, 0, len(pixels), 2835, 2835, 0, 0) + pixels)
open(sys.argv[1] + "/cover.gif", "wb").write(b"GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\x00\x00\x00\x00\x00"
    b",\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;")
PY
oggenc -Q -q 0 -c "METADATA_BLOCK_PICTURE=$(base64 -w0 "$seeds/picture/cover.bin")" -o "$seeds/ogg/art.ogg" "$work/t.wav"
# FLAC at 16, 24 and 32 bits, with tags and a picture, and one of unknown length; Ogg Opus mono, stereo, 5.1, tagged.
flac -s --tag=TITLE=Seed --tag=ARTIST=Fuzz "$work/t.wav" -o "$seeds/flac/s16.flac"
sox -n -r 96000 -c 2 -b 24 "$work/t24.wav" synth 0.05 sine 440 && flac -s "$work/t24.wav" -o "$seeds/flac/s24.flac"
sox -n -r 48000 -c 1 -b 32 -e signed-integer "$work/t32.wav" synth 0.05 sine 440 && flac -s "$work/t32.wav" -o "$seeds/flac/s32.flac"
flac -s --picture="3||||Assets/Music/cover.png" "$work/t.wav" -o "$seeds/flac/art.flac"
sox "$work/t.wav" -t raw - | flac -s --force-raw-format --endian=little --sign=signed --channels=1 --bps=16 \
  --sample-rate=8000 - -o - > "$seeds/flac/unknown-length.flac"
opusenc --quiet --bitrate 16 --title Seed --artist Fuzz --picture Assets/Music/cover.png "$work/t.wav" "$seeds/opus/mono.opus"
sox -n -r 48000 -c 2 -b 16 "$work/t2.wav" synth 0.05 sine 440 && opusenc --quiet --bitrate 32 "$work/t2.wav" "$seeds/opus/stereo.opus"
sox -n -r 48000 -c 6 -b 16 "$work/t6.wav" synth 0.05 sine 440 && opusenc --quiet --bitrate 64 "$work/t6.wav" "$seeds/opus/surround.opus"
printf 'laser.wav@1.5,gain=0.8,pan=-1,pitch=1.2' > "$seeds/sfx/cue.txt"
printf 'a@b,c.wav@0' > "$seeds/sfx/odd.txt"
cp Tests/Fuzz/regressions/loudness/* "$seeds/loudness/"
printf '#EXTM3U\n#EXTINF:12,Artist - Title\nmusic/a.ogg\n../outside.mp3\n/abs/path.wav\n' > "$seeds/m3u/list.m3u"
# The pipeline starts from every audio seed; the C API from its kept call sequences.
cp "$seeds"/wav/* "$seeds"/ogg/* "$seeds"/mp3/* "$seeds/pipeline/"
cp "$seeds"/flac/* "$seeds"/opus/* "$seeds"/mp4/* "$seeds/pipeline/"
cp Tests/Fuzz/regressions/capi/* "$seeds/capi/"
# D-Bus messages in wire format, as players, screensavers and callers send them (made by Tests/Fuzz/bus-seeds.py).
cp Tests/Fuzz/regressions/bus/* "$seeds/bus/"

mkdir -p Tests/Fuzz/crashes
status=0
# The bus target answers and reads on a private session bus of its own, never the user's.
session_bus() { if [ "$1" = bus ]; then dbus-run-session -- "${@:2}"; else "${@:2}"; fi; }
# libFuzzer and ASan report a crash themselves; Swift's own backtracer, started on top of ASan, can hang for minutes.
export SWIFT_BACKTRACE=enable=no
# fuzz_one TARGET: replays its kept regressions, then fuzzes it for $seconds; a failure leaves TARGET.failed.
fuzz_one() {
  local target=$1 corpus="$work/corpus-$1" regressions=Tests/Fuzz/regressions/$1 runs
  mkdir -p "$corpus"
  # Replay every kept regression input first: each must now pass.
  if [ -d "$regressions" ] && [ -n "$(ls -A "$regressions")" ]; then
    AMBIENCE_FUZZ_TARGET=$target session_bus "$target" "$binary" "$regressions"/* > "$work/replay-$target.log" 2>&1 || {
      echo "fuzz: $target: a regression input fails again" >&2; tail -30 "$work/replay-$target.log" >&2
      touch "$work/$target.failed"; }
  fi
  # No length cap beyond the largest seed (libFuzzer's default); memory is bounded by libFuzzer's own limits.
  AMBIENCE_FUZZ_TARGET=$target session_bus "$target" "$binary" "$corpus" "$seeds/$target" -max_total_time="$seconds" \
    -timeout=20 -rss_limit_mb=2048 -malloc_limit_mb=1024 -artifact_prefix="Tests/Fuzz/crashes/$target-" -print_final_stats=1 \
    > "$work/fuzz-$target.log" 2>&1 || { echo "fuzz: $target found a crash:" >&2; tail -40 "$work/fuzz-$target.log" >&2
                                         touch "$work/$target.failed"; }
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/fuzz-$target.log" | grep -o '[0-9]*$' || echo 0)
  echo "fuzz: $target: $runs inputs in ${seconds}s, $(ls "$corpus" | wc -l) in corpus"
}
echo "fuzz: ${#targets[@]} targets, $jobs at a time, ${seconds}s each"
running=0
for target in "${targets[@]}"; do
  if [ "$running" -ge "$jobs" ]; then wait -n || true; running=$((running - 1)); fi
  fuzz_one "$target" &
  running=$((running + 1))
done
wait
for target in "${targets[@]}"; do [ ! -e "$work/$target.failed" ] || status=1; done
exit $status
