#!/usr/bin/env bash
# Generates Ambience's bundled audio assets (music and sound effects) from
# nothing but synthesis, so every file here is original and CC0.
#
#   Music/gravity-wave-theme.ogg  D major, 100 BPM, I-V-vi-IV, 40 s, Ogg Vorbis q3
#   Music/orbit-lullaby.mp3       F major, 75 BPM 3/4 arpeggios, 33.6 s, MP3 112 kbps
#   Music/cover.png               64x64 gradient, embedded in the MP3 (needs ImageMagick)
#   SFX/*.wav                     44.1 kHz 16-bit mono effects
#
# Requirements: sox (with libsox-fmt-all), oggenc (vorbis-tools), lame;
# optional: ImageMagick `convert` for the cover picture.
#
# Usage: Assets/make-assets.sh        (safe to re-run; output is overwritten)
#
# Output is deterministic for a given toolchain: sox runs in repeatable mode
# (-R: fixed random seeds for noise, pluck and dither), the Ogg stream serial
# number is fixed and PNG time stamps are left out.
set -euo pipefail
shopt -s inherit_errexit

ASSETS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
MUSIC="$ASSETS/Music"
SFX="$ASSETS/SFX"

export LC_ALL=C

for tool in sox oggenc lame; do
    command -v "$tool" >/dev/null 2>&1 || { echo "make-assets: '$tool' is required but not installed" >&2; exit 1; }
done

TMP="$(mktemp -d "${TMPDIR:-/tmp}/ambience-assets.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT

mkdir -p "$MUSIC" "$SFX"

R=44100                  # sample rate everywhere
SOX=(sox -R)             # repeatable mode: fixed seeds for noise, pluck and dither

# ---------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------

# silence OUT SAMPLES
silence() {
    "${SOX[@]}" -r "$R" -c 1 -n "$1" trim 0 "${2}s"
}

# concat OUT IN...  (mono, same rate; sox concatenates its inputs)
concat() {
    local out=$1; shift
    "${SOX[@]}" "$@" "$out"
}

# place OUT TOTAL_SAMPLES FILE@OFFSET...
# Mixes mono files at sample offsets (each at half level, to leave room for
# overlaps) into a buffer of exactly TOTAL_SAMPLES; tails past the end are cut.
place() {
    local out=$1 total=$2; shift 2
    local args=() ev file off
    for ev in "$@"; do
        file=${ev%@*}; off=${ev##*@}
        args+=(-v 0.5 "|sox -R '$file' -p pad ${off}s")
    done
    "${SOX[@]}" -m -v 1 "|sox -R -r $R -c 1 -n -p trim 0 ${total}s" "${args[@]}" "$out" trim 0 "${total}s"
}

# mixdown OUT "FILE LEFT RIGHT"...
# Mixes mono stems into a stereo file, each with its own left/right gain
# (scaled down by 0.4 overall for headroom; the result is normalised later).
mixdown() {
    local out=$1; shift
    local args=() stem f l r
    for stem in "$@"; do
        read -r f l r <<<"$stem"
        args+=(-v 0.4 "|sox -R '$f' -p remix 1v$l 1v$r")
    done
    "${SOX[@]}" -m "${args[@]}" "$out"
}

# A note cache: every (instrument, pitch, length) is synthesised once.
NOTES="$TMP/notes"
mkdir -p "$NOTES"

# note INSTRUMENT PITCH SAMPLES -> prints the path of a mono file of exactly
# SAMPLES samples. PITCH is a sox note name (A4, C#5, Bb3), several joined
# with '+' for a chord, or 'r' for a rest.
note() {
    local instr=$1 pitch=$2 n=$3
    local f="$NOTES/${instr}_${pitch}_${n}.sox"
    if [[ ! -e $f ]]; then
        if [[ $pitch == r ]]; then
            silence "$f" "$n"
        elif [[ $pitch == *+* ]]; then
            local parts=() p
            IFS=+ read -r -a parts <<<"$pitch"
            local ins=()
            for p in "${parts[@]}"; do ins+=(-v 0.3 "$(note "$instr" "$p" "$n")"); done
            "${SOX[@]}" -m "${ins[@]}" "$f"
        else
            synth_note "$f" "$instr" "$pitch" "$n"
        fi
    fi
    printf '%s\n' "$f"
}

# synth_note OUT INSTRUMENT PITCH SAMPLES -- the instrument definitions.
# Every note is normalised to a fixed peak so stems mix predictably.
synth_note() {
    local out=$1 instr=$2 p=$3 n=$4
    local d="${n}s"
    case $instr in
        # --- Gravity Wave Theme ---
        lead)   # plucked string with a little sine body
            "${SOX[@]}" -r "$R" -c 2 -n -c 1 "$out" synth "$d" pluck "$p" sine "$p" \
                remix 1v0.6 2v0.1 lowpass 5000 fade q 40s "$d" 1500s gain -n -6 ;;
        arp)    # soft, darker pluck for the counter line
            "${SOX[@]}" -r "$R" -c 1 -n "$out" synth "$d" pluck "$p" \
                vol 0.7 lowpass 2200 fade q 40s "$d" 1200s gain -n -6 ;;
        pad)    # one voice of the chord pad; the chord is faded as a whole
            "${SOX[@]}" -r "$R" -c 2 -n -c 1 "$out" synth "$d" triangle "$p" sine "$p" \
                remix 1v0.35 2v0.35 lowpass 1800 gain -n -6 ;;
        bass)   # plucked bass with a sine sub
            "${SOX[@]}" -r "$R" -c 2 -n -c 1 "$out" synth "$d" pluck "$p" sine "$p" \
                remix 1v0.4 2v0.3 lowpass 700 fade q 60s "$d" 1500s gain -n -6 ;;
        # --- Orbit Lullaby ---
        box)    # music box: soft pluck with a little sine body
            "${SOX[@]}" -r "$R" -c 2 -n -c 1 "$out" synth "$d" pluck "$p" sine "$p" \
                remix 1v0.55 2v0.15 lowpass 3500 fade q 40s "$d" 2500s gain -n -6 ;;
        flute)  # gentle sine lead with slow attack and a touch of tremolo
            "${SOX[@]}" -r "$R" -c 2 -n -c 1 "$out" synth "$d" sine "$p" triangle "$p" \
                remix 1v0.6 2v0.1 tremolo 5 12 fade h 1800s "$d" 4000s gain -n -6 ;;
        sub)    # round sine bass
            "${SOX[@]}" -r "$R" -c 2 -n -c 1 "$out" synth "$d" sine "$p" triangle "$p" \
                remix 1v0.6 2v0.1 lowpass 400 fade h 3000s "$d" 6000s gain -n -6 ;;
        *) echo "unknown instrument $instr" >&2; return 1 ;;
    esac
}

# sequence OUT INSTRUMENT UNIT_SAMPLES "PITCH:UNITS ..." -- a monophonic line
# (or block chords) made by concatenating notes and rests.
sequence() {
    local out=$1 instr=$2 unit=$3 tokens=$4
    local files=() tok pitch mult
    for tok in $tokens; do
        pitch=${tok%:*}; mult=${tok##*:}
        files+=("$(note "$instr" "$pitch" $((unit * mult)))")
    done
    concat "$out" "${files[@]}"
}

# repeat_words N WORDS... -> prints the words N times
repeat_words() {
    local n=$1; shift
    local i
    for ((i = 0; i < n; i++)); do printf '%s ' "$@"; done
}

# ---------------------------------------------------------------------------
# 1. Gravity Wave Theme -- D major, 100 BPM, 4/4, D A Bm G (I V vi IV)
#    17 bars of 2.4 s: intro (4), melody A (4), melody B (4), A' (4), tag (1).
# ---------------------------------------------------------------------------
make_theme() {
    local W="$TMP/theme"
    mkdir -p "$W"
    local E=13230               # eighth note at 100 BPM = 0.3 s
    local S=$((E / 2))          # sixteenth
    local BAR=$((E * 8))        # 2.4 s
    local BARS=17

    # Chord pad: one chord per bar, the last held through the tag.
    local prog="D4+F#4+A4:8 C#4+E4+A4:8 D4+F#4+B4:8 D4+G4+B4:8"
    local pad_f=() tok
    for tok in $(repeat_words 4 $prog) D4+F#4+A4:8; do
        local ch=${tok%:*}
        local raw; raw="$(note pad "$ch" "$BAR")"
        local f="$NOTES/padbar_${ch}.sox"
        [[ -e $f ]] || "${SOX[@]}" "$raw" "$f" fade h 4000s "${BAR}s" 6000s tremolo 4 15 gain -n -6
        pad_f+=("$f")
    done
    concat "$W/pad.sox" "${pad_f[@]}"

    # Bass: root-driven eighth pattern, silent for the first two bars.
    bassbar() { echo "$1:2 $1:1 $1:1 $2:2 $3:1 $1:1"; }
    local bass_cycle
    bass_cycle="$(bassbar D2 D3 A2) $(bassbar A1 A2 E2) $(bassbar B1 B2 F#2) $(bassbar G1 G2 D2)"
    sequence "$W/bass.sox" bass "$E" \
        "r:16 $(bassbar B1 B2 F#2) $(bassbar G1 G2 D2) $(repeat_words 3 $bass_cycle) D2:8"

    # Counter arpeggio from bar 3 on, quiet, panned left.
    local arp_cycle="D4:1 F#4:1 A4:1 D5:1 A4:1 F#4:1 D4:1 F#4:1 \
C#4:1 E4:1 A4:1 C#5:1 A4:1 E4:1 C#4:1 E4:1 \
B3:1 D4:1 F#4:1 B4:1 F#4:1 D4:1 B3:1 D4:1 \
B3:1 D4:1 G4:1 B4:1 G4:1 D4:1 B3:1 D4:1"
    local arp_tail="B3:1 D4:1 F#4:1 B4:1 F#4:1 D4:1 B3:1 D4:1 B3:1 D4:1 G4:1 B4:1 G4:1 D4:1 B3:1 D4:1"
    sequence "$W/arp.sox" arp "$E" "r:16 $arp_tail $(repeat_words 3 $arp_cycle) D4:8"

    # Melody.
    local A="F#5:2 A5:1 F#5:1 E5:2 D5:2  E5:2 C#5:1 E5:1 A5:3 r:1  B5:2 A5:1 F#5:1 D5:2 F#5:2  G5:1 F#5:1 E5:1 D5:1 E5:4"
    local B="A5:1 A5:1 D6:2 C#6:1 B5:1 A5:2  C#6:1 C#6:1 E6:2 C#6:1 A5:1 E5:2  D6:1 C#6:1 B5:2 F#5:1 B5:1 D6:2  B5:1 A5:1 G5:1 B5:1 A5:4"
    local A2="F#5:2 A5:1 F#5:1 E5:2 D5:2  E5:2 C#5:1 E5:1 A5:3 r:1  B5:2 A5:1 F#5:1 D5:2 F#5:2  G5:1 F#5:1 E5:1 F#5:1 D5:4"
    sequence "$W/lead.sox" lead "$E" "r:32 $A $B $A2 D5:8"

    # Drums, built per bar from one-shot hits placed on a 16th grid.
    "${SOX[@]}" -r "$R" -c 3 -n -c 1 "$W/kick.sox" synth 0.32 sine 120-42 sine 60-40 whitenoise \
        remix 1v0.45 2v0.22 3v0.02 lowpass 3000 fade l 0.002 0.32 0.3 gain -n -6
    "${SOX[@]}" -r "$R" -c 2 -n -c 1 "$W/snare.sox" synth 0.2 whitenoise sine 185 \
        remix 1v0.5 2v0.2 highpass 180 lowpass 7000 fade l 0.001 0.2 0.19 gain -n -6
    "${SOX[@]}" -r "$R" -c 1 -n "$W/hat.sox" synth 0.05 whitenoise \
        vol 0.4 highpass 7000 fade l 0.001 0.05 0.048 gain -n -6
    "${SOX[@]}" -r "$R" -c 1 -n "$W/ohat.sox" synth 0.22 whitenoise \
        vol 0.4 highpass 6500 fade l 0.001 0.22 0.21 gain -n -8
    "${SOX[@]}" -r "$R" -c 1 -n "$W/crash.sox" synth 2.4 whitenoise \
        vol 0.4 highpass 3500 lowpass 11000 fade l 0.002 2.4 2.39 gain -n -6

    # Hats (own stem, panned right) and kick+snare (centre).
    local k=$W/kick.sox s=$W/snare.sox h=$W/hat.sox o=$W/ohat.sox
    local hats=() i
    for i in 0 2 4 6 8 10 12; do hats+=("$h@$((i * S))"); done
    place "$W/hatbar.sox" "$BAR" "${hats[@]}" "$o@$((14 * S))"
    place "$W/hatbar_end.sox" "$BAR" "$W/crash.sox@0"
    place "$W/ksbar.sox" "$BAR" "$k@0" "$s@$((4 * S))" "$k@$((7 * S))" "$k@$((8 * S))" "$s@$((12 * S))"
    place "$W/ksbar_fill.sox" "$BAR" "$k@0" "$s@$((4 * S))" "$k@$((7 * S))" "$k@$((8 * S))" \
        "$s@$((12 * S))" "$s@$((13 * S))" "$s@$((14 * S))" "$s@$((15 * S))"
    place "$W/ksbar_end.sox" "$BAR" "$k@0"
    silence "$W/emptybar.sox" "$BAR"

    local hat_bars=() ks_bars=() b
    for ((b = 1; b <= BARS; b++)); do
        if ((b == BARS)); then
            hat_bars+=("$W/hatbar_end.sox"); ks_bars+=("$W/ksbar_end.sox")
        else
            hat_bars+=("$W/hatbar.sox")
            if ((b <= 2)); then ks_bars+=("$W/emptybar.sox")
            elif ((b % 4 == 0)); then ks_bars+=("$W/ksbar_fill.sox")
            else ks_bars+=("$W/ksbar.sox"); fi
        fi
    done
    "${SOX[@]}" "${hat_bars[@]}" "$W/hats.sox" gain -n -6
    "${SOX[@]}" "${ks_bars[@]}" "$W/kicksnare.sox" gain -n -6

    # Mix: stems are all at -6 dBFS peak; these are the relative levels.
    mixdown "$W/mix.sox" \
        "$W/lead.sox 0.62 0.75" \
        "$W/arp.sox 0.30 0.16" \
        "$W/pad.sox 0.26 0.26" \
        "$W/bass.sox 0.60 0.60" \
        "$W/kicksnare.sox 0.55 0.55" \
        "$W/hats.sox 0.14 0.24"
    # Light room, cut to 40 s with a fade on the final chord, -3 dBFS peak.
    "${SOX[@]}" "$W/mix.sox" -b 16 "$W/theme.wav" \
        reverb 25 50 60 100 10 trim 0 40 fade q 0.005 40 1.6 gain -n -3

    oggenc --quiet -q 3 --serial 20260001 \
        -t "Gravity Wave Theme" -a "Ambience Ensemble" -l "Gravity Wave" \
        -G "Game" -N 1 -d 2026 -c "ALBUMARTIST=Ambience Ensemble" \
        -o "$W/out.ogg" "$W/theme.wav"
    mv -f "$W/out.ogg" "$MUSIC/gravity-wave-theme.ogg"
}

# ---------------------------------------------------------------------------
# 2. Orbit Lullaby -- F major, 75 BPM, 3/4, F Dm Bb C (I vi IV V) x3, F F
#    14 bars of 2.4 s = 33.6 s of music-box arpeggios, flute melody, sub bass.
# ---------------------------------------------------------------------------
make_cover() {
    # Only a real ImageMagick will do (on some systems `convert` is a
    # different program).
    command -v convert >/dev/null 2>&1 || return 1
    convert -version 2>/dev/null | grep -q 'ImageMagick' || return 1
    local out=$1
    # Night-sky gradient with a small "planet"; no time stamps, no metadata.
    convert -size 64x64 gradient:'#10123a'-'#3a8fb7' \
        -fill '#f2c46d' -draw 'circle 40,22 40,30' \
        -fill none -stroke '#e8e8ff' -strokewidth 1 -draw 'ellipse 40,22 18,6 0,360' \
        -strip -define png:exclude-chunks=date,time -define png:compression-level=9 \
        "PNG8:$out" 2>/dev/null || return 1
}

# mark_front_cover MP3 -- lame writes its APIC frame with picture type 0
# ("Other"); set it to 3 ("Cover (front)"), which players look for. The frame
# is <header 10> <encoding 1> "image/png\0" <type 1>; the size is unchanged.
mark_front_cover() {
    local f=$1 off
    off=$(grep -m1 -boa 'APIC' "$f" | cut -d: -f1) || true
    [[ -n $off ]] || { echo "make-assets: no APIC frame in $f" >&2; return 0; }
    if cmp -s <(dd if="$f" bs=1 skip=$((off + 11)) count=11 status=none) <(printf 'image/png\0\0'); then
        printf '\003' | dd of="$f" bs=1 seek=$((off + 21)) conv=notrunc status=none
    else
        echo "make-assets: unexpected APIC layout, picture type left as is" >&2
    fi
}

make_lullaby() {
    local W="$TMP/lullaby"
    mkdir -p "$W"
    local E=17640               # eighth note at 75 BPM = 0.4 s
    local BAR=$((E * 6))        # 3/4 bar = 2.4 s

    # Music-box arpeggio, every bar (rising then falling).
    local arp_cycle="F3:1 C4:1 A4:1 F4:1 C5:1 A4:1 \
D3:1 A3:1 F4:1 D4:1 A4:1 F4:1 \
Bb2:1 F3:1 D4:1 Bb3:1 F4:1 D4:1 \
C3:1 G3:1 E4:1 C4:1 G4:1 E4:1"
    sequence "$W/box.sox" box "$E" \
        "$(repeat_words 3 $arp_cycle) F3:1 C4:1 A4:1 F4:1 C5:1 A4:1 F3:1 C4:1 A4:1 F4:3"

    # Sub bass: one root per bar.
    sequence "$W/sub.sox" sub "$E" "$(repeat_words 3 F2:6 D2:6 Bb1:6 C2:6) F2:6 F2:6"

    # Melody enters on the second time round.
    local mel="C6:4 A5:2  D6:3 C6:1 A5:2  Bb5:4 D6:2  C6:6 \
A5:4 C6:2  F6:3 E6:1 D6:2  D6:2 C6:2 Bb5:2  G5:4 E5:2 \
F5:6"
    sequence "$W/flute.sox" flute "$E" "r:24 $mel r:6"

    mixdown "$W/mix.sox" \
        "$W/box.sox 0.55 0.38" \
        "$W/flute.sox 0.30 0.42" \
        "$W/sub.sox 0.55 0.55"
    # Big soft room, final fade, -3 dBFS peak.
    "${SOX[@]}" "$W/mix.sox" -b 16 "$W/lullaby.wav" \
        reverb 60 40 100 100 20 fade q 0.01 "$((BAR * 14))s" 2.2 gain -n -3

    local pic=()
    if make_cover "$W/cover.png"; then
        cp -f "$W/cover.png" "$MUSIC/cover.png"
        pic=(--ti "$MUSIC/cover.png")
    else
        echo "make-assets: ImageMagick not found, skipping cover.png" >&2
        rm -f "$MUSIC/cover.png"
    fi
    lame --silent -b 112 -q 2 --add-id3v2 --pad-id3v2 \
        --tt "Orbit Lullaby" --ta "Ambience Ensemble" --tl "Gravity Wave" \
        --tg "Game" --tn 2 --tv "TPE2=Ambience Ensemble" "${pic[@]}" \
        "$W/lullaby.wav" "$W/out.mp3"
    ((${#pic[@]} == 0)) || mark_front_cover "$W/out.mp3"
    mv -f "$W/out.mp3" "$MUSIC/orbit-lullaby.mp3"
}

# ---------------------------------------------------------------------------
# 3. Sound effects (44.1 kHz, 16-bit, mono WAV)
# ---------------------------------------------------------------------------
# finish_sfx IN NAME PEAK_DB -- normalise, write 16-bit and move into place.
finish_sfx() {
    "${SOX[@]}" "$1" -r "$R" -c 1 -b 16 -e signed-integer "$TMP/sfx_out.wav" gain -n "$3"
    mv -f "$TMP/sfx_out.wav" "$SFX/$2.wav"
}

make_sfx() {
    local W="$TMP/sfx"
    mkdir -p "$W"

    # thrust-loop: 1 s of filtered brown + pink noise over a 45 Hz rumble with
    # a 6 Hz flutter. The periodic parts repeat exactly every second; the
    # noise loops by crossfading the 0.2 s after the loop end into the head.
    local N=44100 X=8820
    "${SOX[@]}" -r "$R" -c 4 -n -c 1 "$W/thrust_src.sox" \
        synth "$((N + X))s" brownnoise pinknoise sine 45 sine 90 \
        remix 1v0.4 2v0.06 3v0.16 4v0.06 lowpass 700 lowpass 1400 tremolo 6 25 gain -n -6
    "${SOX[@]}" "$W/thrust_src.sox" "$W/thrust_head.sox" trim 0 "${X}s" fade q "${X}s"
    "${SOX[@]}" "$W/thrust_src.sox" "$W/thrust_tail.sox" trim "${N}s" "${X}s" fade q 0 "${X}s" "${X}s"
    "${SOX[@]}" -m -v 1 "$W/thrust_head.sox" -v 1 "$W/thrust_tail.sox" "$W/thrust_xfade.sox"
    "${SOX[@]}" "$W/thrust_src.sox" "$W/thrust_body.sox" trim "${X}s" "$((N - X))s"
    "${SOX[@]}" "$W/thrust_xfade.sox" "$W/thrust_body.sox" "$W/thrust.sox"
    # Plain 16-bit conversion without dither so the loop point stays exact.
    "${SOX[@]}" "$W/thrust.sox" -D -b 16 -e signed-integer "$TMP/sfx_out.wav" gain -n -3
    mv -f "$TMP/sfx_out.wav" "$SFX/thrust-loop.wav"

    # laser: 0.25 s descending square + saw sweep.
    "${SOX[@]}" -r "$R" -c 2 -n -c 1 "$W/laser.sox" synth 0.25 square 1700-160 sawtooth 1720-170 \
        remix 1v0.4 2v0.3 lowpass 6000 fade q 0.002 0.25 0.09
    finish_sfx "$W/laser.sox" laser -2

    # explosion: 1.2 s -- noise crack, rumbling brown noise and a low boom, all decaying.
    "${SOX[@]}" -r "$R" -c 1 -n "$W/ex_crack.sox" synth 0.25 whitenoise vol 0.7 lowpass 3500 fade l 0.001 0.25 0.24
    "${SOX[@]}" -r "$R" -c 1 -n "$W/ex_rumble.sox" synth 1.2 brownnoise vol 0.7 lowpass 500 fade h 0.01 1.2 1.15
    "${SOX[@]}" -r "$R" -c 1 -n "$W/ex_boom.sox" synth 0.9 sine 75-28 vol 0.7 fade h 0.003 0.9 0.85
    "${SOX[@]}" -m -v 0.2 "$W/ex_crack.sox" -v 0.45 "$W/ex_rumble.sox" -v 0.3 "$W/ex_boom.sox" \
        "$W/explosion.sox" lowpass 2500 reverb 30 50 50 100 0 fade q 0 1.2 0.05
    finish_sfx "$W/explosion.sox" explosion -1

    # pickup: 0.3 s rising two-note chime (B5 then E6), the first ringing under the second.
    # (an exponential decay three times the note's length, then cut and faded)
    "${SOX[@]}" -r "$R" -c 2 -n -c 1 "$W/pk1.sox" synth 0.9 sine B5 sine B6 \
        remix 1v0.55 2v0.15 fade l 0.002 0.9 0.898 trim 0 0.3 fade t 0 0.3 0.03
    "${SOX[@]}" -r "$R" -c 2 -n -c 1 "$W/pk2.sox" synth 0.66 sine E6 sine E7 \
        remix 1v0.55 2v0.15 fade l 0.002 0.66 0.658 trim 0 0.22 fade t 0 0.22 0.03
    place "$W/pickup.sox" 13230 "$W/pk1.sox@0" "$W/pk2.sox@3528"
    finish_sfx "$W/pickup.sox" pickup -2

    # ui-click: 40 ms -- a short high blip with a tiny noise transient.
    "${SOX[@]}" -r "$R" -c 2 -n -c 1 "$W/click.sox" synth 1764s sine 2200 whitenoise \
        remix 1v0.6 2v0.1 fade l 8s 1764s 1740s highpass 300
    finish_sfx "$W/click.sox" ui-click -3
}

make_theme
make_lullaby
make_sfx

echo "make-assets: done"
du -sh "$ASSETS"
