#!/usr/bin/env bash
# Installs the Debian packages Ambience builds, tests and runs with. Does nothing when they are all present.
set -euo pipefail

packages=(
  # C libraries the engine links
  libopenal-dev libsdl2-dev libvorbis-dev libogg-dev libmpg123-dev libdbus-1-dev libpulse-dev libsqlite3-dev zlib1g-dev
  # WAV (every codec) through libsndfile, AAC and ALAC in MP4 through FFmpeg; ffmpeg makes and checks test files
  libsndfile1-dev libavformat-dev libavcodec-dev libavutil-dev ffmpeg
  # the demo game
  libsdl2-image-dev libsdl2-ttf-dev fonts-dejavu-core
  # the demo game's translations: msgfmt, xgettext and msgcmp (the catalog test)
  gettext
  # the side-by-side benchmark
  libsdl2-mixer-dev
  # tools the tests use to make and inspect audio (sox, soxi, oggenc, vorbiscomment, lame)
  sox libsox-fmt-all vorbis-tools lame
  # FLAC and Ogg Opus: the C libraries the engine links, and the reference encoders and decoders the tests run
  # (flac, metaflac, opusenc, opusdec)
  libflac-dev libopusfile-dev flac opus-tools
  # tracker modules and MIDI: libopenmpt's and libfluidsynth's headers (the engine opens the libraries at run time),
  # the small General MIDI SoundFont (the default when fluid-soundfont-gm, 140 MB, is not installed), and the
  # reference renderers the tests compare with (openmpt123, fluidsynth)
  libopenmpt-dev libfluidsynth-dev timgm6mb-soundfont openmpt123 fluidsynth
  # the modules and MIDI files the tests play, from Debian: MOD (tecnoballz-data), XM (ballz-data), S3M and IT
  # (pingus-data), MIDI (openttd-openmsx)
  tecnoballz-data ballz-data pingus-data openttd-openmsx
  # loudness matching: EBU R128 analysis of files without ReplayGain or R128 tags
  libebur128-dev
  # the loudness tests write iTunes' `----:com.apple.iTunes:replaygain_*` atoms with mutagen (Debian's python3)
  python3-mutagen
  # the real services the tests run against, and their clients (pactl, paplay, pacat, playerctl, gdbus)
  pulseaudio pulseaudio-utils dbus mpv mpv-mpris playerctl libglib2.0-bin
  # the same tests on PipeWire (AMBIENCE_SOUND_SERVER=pipewire): the server, its session manager and its PulseAudio
  # server; installed beside pulseaudio, only the one scripts/with-services.sh starts runs
  pipewire pipewire-bin pipewire-pulse wireplumber
  # the audio thread's priority, asked of rtkit on a private system bus (scripts/with-services.sh); rtkit asks polkit
  rtkit polkitd
  # a second MPRIS player that speaks it differently (two bus names, a TrackList); run as `nobody` through
  # util-linux's setpriv, since VLC refuses to run as root
  vlc-bin vlc-plugin-base util-linux
  # the game's screenshot test: xvfb-run needs xauth, which xvfb only recommends
  xvfb xauth
  # the C API tests: `cc`, gcc and g++ compile the header, Tests/CAPI/capi_test.c and the C demo; valgrind checks them
  gcc g++ libc6-dev valgrind
  # Tests/Fuzz/run.sh writes a seed with python3 and finds libdbus's headers with pkg-config (SwiftPM does too);
  # the fault tests mount a small tmpfs (mount, umount)
  python3 pkg-config mount
  # the hostile-bus tests' peers (players that never answer, huge and malformed calls, forged signals) speak D-Bus
  # through Debian's python3 and its dbus module
  python3-dbus
  # the library's contention tests hold the index's lock from another process with the sqlite3 command
  sqlite3
  # the optional-library tests: readelf and nm read what the products link, ldconfig finds a library's file, and
  # util-linux's unshare (above) makes the private mount namespace that hides it
  binutils libc-bin
  # programs nobody here wrote, on SDL_mixer (RealProgramsTests; `ambience run` puts the stand-in under them):
  # Debian's pygame 2.1.2 (scripts/fetch-pygame-tests.sh takes its own tests, which Debian does not ship, from
  # Debian's source package), and two games that link SDL2_mixer and make sound with no input: chocolate-doom
  # playing a demo of the freedoom IWAD, and toppler's title screen with its music
  python3-pygame chocolate-doom freedoom toppler
  # scripts/install.sh sets the installed library's soname and RUNPATH (patchelf) and finds what it loads (ldd,
  # readelf, from binutils above); scripts/check-exports.sh compares its exports with the header (nm)
  patchelf
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "Installing: ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
