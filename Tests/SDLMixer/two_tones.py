"""A small pygame program for RealProgramRulesTests: a looping sound effect (a 1 kHz tone, pygame.mixer.Sound) and
looping music (a 440 Hz tone, pygame.mixer.music from a WAV file), both from the start, until it is ended. Each tone
is a whole number of periods long, so that its loops are seamless and a Goertzel filter finds it alone."""

import math
import os
import signal
import struct
import sys
import time
import wave

import pygame

RATE = 44100
EFFECT_HZ = 1000
MUSIC_HZ = 440


def tone(hz, amplitude):
    """One second of a stereo 16-bit sine."""
    frames = []
    for i in range(RATE):
        value = int(amplitude * 32767 * math.sin(2 * math.pi * hz * i / RATE))
        frames.append(struct.pack("<hh", value, value))
    return b"".join(frames)


# SDL turns SIGTERM into an SDL_QUIT event when no handler is set, and this program reads no events: it ends by
# its own handler instead (`timeout` ends it so).
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
pygame.mixer.pre_init(RATE, -16, 2, 512)
pygame.mixer.init()
music_path = os.path.join(os.environ.get("TMPDIR", "/tmp"), "two_tones_music.wav")
with wave.open(music_path, "wb") as music_file:
    music_file.setnchannels(2)
    music_file.setsampwidth(2)
    music_file.setframerate(RATE)
    music_file.writeframes(tone(MUSIC_HZ, 0.3))
effect = pygame.mixer.Sound(buffer=tone(EFFECT_HZ, 0.3))
pygame.mixer.music.load(music_path)
pygame.mixer.music.play(-1)
effect.play(-1)
print("two_tones: playing", pygame.mixer.get_init(), flush=True)
sys.stdout.flush()
while True:
    time.sleep(0.05)
