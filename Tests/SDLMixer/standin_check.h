/* The stand-in's C tests' one check: counts what holds, prints what does not with its line and Mix_GetError's
 * text. Each test prints "N passed, M failed" at its end, which the Swift suites read (CAPI.tally). */
#ifndef STANDIN_CHECK_H
#define STANDIN_CHECK_H
#include <SDL2/SDL_mixer.h>
#include <math.h>
#include <stdio.h>

static int passed, failed;
#define CHECK(cond)                                                                                                   \
    do {                                                                                                              \
        if (cond) {                                                                                                   \
            passed++;                                                                                                 \
        } else {                                                                                                      \
            failed++;                                                                                                 \
            printf("FAIL line %d: %s (Mix_GetError: %s)\n", __LINE__, #cond, Mix_GetError());                         \
        }                                                                                                             \
    } while (0)

/* Fills `len` bytes of S16 stereo at 44.1 kHz with a half-scale sine of `hz`, going on from `*phase`: what the tests'
 * Mix_HookMusic functions play. */
static inline void fill_sine(Uint8 *stream, int len, double hz, double *phase) {
    Sint16 *s = (Sint16 *)stream;
    for (int i = 0; i < len / 4; i++) {
        s[2 * i] = s[2 * i + 1] = (Sint16)(16384 * sin(*phase));
        *phase = fmod(*phase + 2 * M_PI * hz / 44100, 2 * M_PI);
    }
}

#endif
