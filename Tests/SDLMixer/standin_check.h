/* The stand-in's C tests' one check: counts what holds, prints what does not with its line and Mix_GetError's
 * text. Each test prints "N passed, M failed" at its end, which the Swift suites read (CAPI.tally). */
#ifndef STANDIN_CHECK_H
#define STANDIN_CHECK_H
#include <SDL2/SDL_mixer.h>
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

#endif
