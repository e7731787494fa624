/*
 * standin_rewrite_test SECONDS: a program writing into a loaded chunk's abuf, as pygame's sndarray does. A chunk of a
 * 440 Hz tone (Mix_LoadWAV_RW, 44.1 kHz stereo S16, as opened) is played on channel 0 to its end (Mix_PlayChannel,
 * then Mix_Playing polled as a game loop does), 880 Hz is written into its abuf in place, and it is played again the
 * same way: SDL_mixer mixes from abuf, so the second play sounds the new bytes. Run with SDL's disk driver; the test
 * (SDLMixerStandInTests) reads what the device was given. 0.25 s (44 KB) is compared with the chunk's sound under the
 * stand-in's lock, 1 s (176 KB) outside it.
 */
#define _GNU_SOURCE
#include <SDL2/SDL.h>
#include <SDL2/SDL_mixer.h>
#include <stdlib.h>
#include <string.h>

#include "standin_check.h"

/* A 16-bit stereo WAV file at 44.1 kHz in memory, `frames` long, of a half-scale 440 Hz sine. Freed by the caller. */
static Uint8 *tone_wav(Uint32 frames, Uint32 *size) {
    Uint32 data = frames * 4;
    Uint32 fields[] = {36 + data, 16, 0x00020001, 44100, 44100 * 4, 0x00100004, data};
    Uint8 *wav = calloc(1, 44 + data);
    memcpy(wav, "RIFF", 4);
    memcpy(wav + 4, &fields[0], 4);
    memcpy(wav + 8, "WAVEfmt ", 8);
    memcpy(wav + 16, &fields[1], 20);
    memcpy(wav + 36, "data", 4);
    memcpy(wav + 40, &fields[6], 4);
    double phase = 0;
    fill_sine(wav + 44, (int)data, 440, &phase);
    *size = 44 + data;
    return wav;
}

int main(int argc, char **argv) {
    double seconds = argc == 2 ? atof(argv[1]) : 0;
    if (seconds <= 0 || seconds > 10) return fprintf(stderr, "usage: standin_rewrite_test SECONDS\n"), 2;
    Uint32 size;
    Uint8 *wav = tone_wav((Uint32)(44100 * seconds), &size);
    if (Mix_OpenAudio(44100, AUDIO_S16SYS, 2, 512) != 0) return printf("open: %s\n", Mix_GetError()), 1;
    Mix_Chunk *tone = Mix_LoadWAV_RW(SDL_RWFromConstMem(wav, (int)size), 1);
    CHECK(tone != NULL && tone->alen == size - 44);
    for (int pass = 0; pass < 2 && tone; pass++) {
        if (pass == 1) {
            double phase = 0;
            fill_sine(tone->abuf, (int)tone->alen, 880, &phase);
        }
        CHECK(Mix_PlayChannel(0, tone, 0) == 0);
        int ended = 0;
        for (int waited = 0; waited < 1000 * seconds + 3000 && !ended; waited += 5) {
            SDL_Delay(5);
            ended = Mix_Playing(0) == 0;
        }
        CHECK(ended);
        SDL_Delay(300);
    }
    Mix_FreeChunk(tone);
    Mix_CloseAudio();
    free(wav);
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
