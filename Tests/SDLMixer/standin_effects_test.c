/*
 * The SDL_mixer stand-in's code that sees or makes samples, from C: Mix_HookMusic, Mix_RegisterEffect and its kin,
 * Mix_SetPostMix, and finite loops. Compiled against Debian's own <SDL2/SDL_mixer.h> and run with the stand-in first
 * on LD_LIBRARY_PATH by Tests/AmbienceIntegrationTests/SDLMixerStandIn/SDLMixerEffectsTests.swift.
 *
 *   standin_effects_test          the functions' contracts, bad input included. Ends with "N passed, M failed".
 *   standin_effects_test --heard  four parts, silence between them, for SDL's disk driver (the Swift test reads what
 *                                 the device was given): the hook's 440 Hz tone (0.5 s); a 660 Hz chunk whose right
 *                                 side an effect zeroes (0.5 s); a 330 Hz chunk under a post-mix that zeroes the left
 *                                 (0.5 s); a tone of period 100 frames, 4,400 frames long, played with loops = 2.
 */
#define _GNU_SOURCE
#include <SDL2/SDL.h>
#include <SDL2/SDL_mixer.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "standin_check.h"

/* A chunk of `frames` stereo S16 frames of a sine of `period` frames at half scale (the memory is never freed). */
static Mix_Chunk *make_chunk(double period, int frames) {
    Sint16 *samples = malloc((size_t)frames * 4);
    for (int i = 0; i < frames; i++) {
        samples[2 * i] = samples[2 * i + 1] = (Sint16)(16384 * sin(2 * M_PI * i / period));
    }
    return Mix_QuickLoad_RAW((Uint8 *)samples, (Uint32)frames * 4);
}

/* How long a wait may last: it ends as soon as its count is reached, so only a loaded machine, where the update
   thread can lose the processor for seconds, comes near it (the Swift tests' waitBound). */
#define WAIT_MS 30000

/* Waits up to `ms` for `counter` to reach `count`. */
static int wait_for(SDL_atomic_t *counter, int count, int ms) {
    for (int waited = 0; waited < ms; waited += 5) {
        if (SDL_AtomicGet(counter) >= count) return 1;
        SDL_Delay(5);
    }
    return SDL_AtomicGet(counter) >= count;
}

/* Whether `counter` stays where it is for 100 ms (a removed callback is not called again). */
static int stays(SDL_atomic_t *counter) {
    int before = SDL_AtomicGet(counter);
    SDL_Delay(100);
    return SDL_AtomicGet(counter) == before;
}

/* An effect's calls and its done calls, counted by count_effect and count_done (`udata` points at one). */
typedef struct {
    SDL_atomic_t calls, dones;
} Counter;
static Counter counters[8], post;
static SDL_atomic_t bad_input, finished[8], postmix_calls, hook_calls, zeroed_right, hook_len, post_saw_sound, order_at;
static char order[64];
static int marker;

/* Counts a call, and notes one whose bytes are not whole S16 stereo frames or whose channel is not a channel. */
static void SDLCALL count_effect(int chan, void *stream, int len, void *udata) {
    SDL_AtomicAdd(&((Counter *)udata)->calls, 1);
    if (stream == NULL || len <= 0 || len % 4 != 0 || chan < MIX_CHANNEL_POST || chan >= 8) {
        SDL_AtomicSet(&bad_input, 1);
    }
}
static void SDLCALL count_done(int chan, void *udata) {
    (void)chan;
    SDL_AtomicAdd(&((Counter *)udata)->dones, 1);
}
/* Zeroes the right side; the next effect sees what it left. */
static void SDLCALL zero_right(int chan, void *stream, int len, void *udata) {
    Sint16 *s = stream;
    (void)chan, (void)udata;
    for (int i = 0; i < len / 4; i++) s[2 * i + 1] = 0;
}
static void SDLCALL right_is_zero(int chan, void *stream, int len, void *udata) {
    const Sint16 *s = stream;
    int zero = 1;
    (void)chan, (void)udata;
    for (int i = 0; i < len / 4; i++) zero &= s[2 * i + 1] == 0;
    SDL_AtomicSet(&zeroed_right, zero ? 1 : -1);
}
static void SDLCALL log_a(int chan, void *stream, int len, void *udata) {
    int at = SDL_AtomicAdd(&order_at, 1);
    (void)chan, (void)stream, (void)len, (void)udata;
    if (at < 63) order[at] = 'a';
}
static void SDLCALL log_b(int chan, void *stream, int len, void *udata) {
    int at = SDL_AtomicAdd(&order_at, 1);
    (void)chan, (void)stream, (void)len, (void)udata;
    if (at < 63) order[at] = 'b';
}
static void SDLCALL never_registered(int chan, void *stream, int len, void *udata) {
    (void)chan, (void)stream, (void)len, (void)udata;
}
static void SDLCALL post_effect(int chan, void *stream, int len, void *udata) {
    count_effect(chan, stream, len, udata);
    if (chan != MIX_CHANNEL_POST) SDL_AtomicSet(&bad_input, 1);
}
static void SDLCALL post_mix(void *udata, Uint8 *stream, int len) {
    SDL_AtomicAdd(&postmix_calls, 1);
    if (udata != &marker || stream == NULL || len <= 0 || len % 4 != 0) SDL_AtomicSet(&bad_input, 1);
}
static void SDLCALL count_hook(void *udata, Uint8 *stream, int len) {
    SDL_AtomicAdd(&hook_calls, 1);
    SDL_AtomicSet(&hook_len, len);
    if (udata != &marker || stream == NULL) SDL_AtomicSet(&bad_input, 1);
    memset(stream, 0, (size_t)len);
}
static void on_finished(int channel) {
    if (channel >= 0 && channel < 8) SDL_AtomicAdd(&finished[channel], 1);
}

static int checks(void) {
    Mix_EffectFunc_t counting = count_effect;
    /* Closed: there are no channels. */
    CHECK(Mix_RegisterEffect(0, counting, NULL, &counters[0]) == 0);
    CHECK(Mix_OpenAudio(44100, AUDIO_S16LSB, 2, 512) == 0);
    Mix_ChannelFinished(on_finished);
    Mix_Chunk *short_tone = make_chunk(100, 13230); /* 0.3 s */
    Mix_Chunk *long_tone = make_chunk(100, 44100);

    /* Bad input: 0 and the reason. */
    CHECK(Mix_RegisterEffect(0, NULL, NULL, NULL) == 0 && strstr(Mix_GetError(), "NULL") != NULL);
    CHECK(Mix_RegisterEffect(-3, counting, NULL, NULL) == 0 && strstr(Mix_GetError(), "channel") != NULL);
    CHECK(Mix_RegisterEffect(100000, counting, NULL, NULL) == 0 && Mix_RegisterEffect(-1, counting, NULL, NULL) == 0);
    CHECK(Mix_UnregisterEffect(0, never_registered) == 0 && strstr(Mix_GetError(), "no such effect") != NULL);
    CHECK(Mix_UnregisterEffect(0, NULL) == 0 && Mix_UnregisterEffect(-3, counting) == 0);
    CHECK(Mix_UnregisterEffect(100000, counting) == 0 && strstr(Mix_GetError(), "channel") != NULL);
    CHECK(Mix_UnregisterEffect(MIX_CHANNEL_POST, never_registered) == 0);
    CHECK(Mix_UnregisterAllEffects(-3) == 0 && Mix_UnregisterAllEffects(100000) == 0);
    CHECK(Mix_UnregisterAllEffects(MIX_CHANNEL_POST) == 1 && Mix_UnregisterAllEffects(0) == 1);

    /* Registered before the play: it runs on the play, and goes with its end (done once, after the finish). */
    Counter *before = &counters[1];
    CHECK(Mix_RegisterEffect(1, counting, count_done, before) == 1);
    CHECK(Mix_PlayChannel(1, short_tone, 0) == 1 && wait_for(&before->calls, 1, WAIT_MS));
    /* The done comes after the finished callback, as SDL_mixer calls them, so it is waited for too. */
    CHECK(wait_for(&finished[1], 1, WAIT_MS) && wait_for(&before->dones, 1, WAIT_MS) && stays(&before->calls) &&
          SDL_AtomicGet(&before->dones) == 1);
    CHECK(Mix_UnregisterEffect(1, counting) == 0); /* gone with the play */

    /* Registered during a play (a looping sound's voice moves to a stream): runs; unregistered, done before return
       and no call after. */
    Counter *during = &counters[2];
    CHECK(Mix_PlayChannel(2, long_tone, -1) == 2);
    CHECK(Mix_RegisterEffect(2, counting, count_done, during) == 1 && wait_for(&during->calls, 3, WAIT_MS));
    CHECK(Mix_Playing(2) == 1 && Mix_UnregisterEffect(2, counting) == 1 && SDL_AtomicGet(&during->dones) == 1);
    CHECK(stays(&during->calls) && Mix_Playing(2) == 1);

    /* Each effect works on what the one before left; a halt calls every done before it returns. */
    Counter *chained = &counters[3];
    CHECK(Mix_RegisterEffect(2, zero_right, count_done, chained) == 1);
    CHECK(Mix_RegisterEffect(2, right_is_zero, count_done, chained) == 1);
    CHECK(wait_for(&zeroed_right, 1, WAIT_MS) && SDL_AtomicGet(&zeroed_right) == 1);
    CHECK(Mix_HaltChannel(2) == 0 && SDL_AtomicGet(&chained->dones) == 2 && SDL_AtomicGet(&zeroed_right) == 1);

    /* Registration order (both before the play: one registered during it may see blocks the other did not). */
    CHECK(Mix_RegisterEffect(3, log_a, NULL, NULL) == 1 && Mix_RegisterEffect(3, log_b, NULL, NULL) == 1);
    CHECK(Mix_PlayChannel(3, long_tone, -1) == 3 && wait_for(&order_at, 8, WAIT_MS));
    CHECK(Mix_HaltChannel(3) == 0);
    CHECK(order[0] == 'a' && order[1] == 'b' && order[2] == 'a' && order[3] == 'b');

    /* A finite loop count plays through a stream: three plays of 0.3 s end after about 0.9 s, not before. */
    CHECK(Mix_PlayChannel(4, short_tone, 2) == 4);
    SDL_Delay(600);
    CHECK(Mix_Playing(4) == 1 && SDL_AtomicGet(&finished[4]) == 0);
    CHECK(wait_for(&finished[4], 1, WAIT_MS) && Mix_Playing(4) == 0);

    /* Idle channels keep their effects until removed: Mix_UnregisterAllEffects, or a shrink that drops them. */
    Counter *idle = &counters[5], *dropped = &counters[7];
    CHECK(Mix_RegisterEffect(5, counting, count_done, idle) == 1 && SDL_AtomicGet(&idle->dones) == 0);
    CHECK(Mix_UnregisterAllEffects(5) == 1 && SDL_AtomicGet(&idle->dones) == 1 && SDL_AtomicGet(&idle->calls) == 0);
    CHECK(Mix_RegisterEffect(7, counting, count_done, dropped) == 1);
    CHECK(Mix_AllocateChannels(4) == 4 && SDL_AtomicGet(&dropped->dones) == 1);
    CHECK(Mix_RegisterEffect(7, counting, NULL, NULL) == 0);

    /* The final mix: post effects, then the post-mix function; each removal is final when it returns. */
    CHECK(Mix_PlayChannel(0, long_tone, -1) == 0);
    CHECK(Mix_RegisterEffect(MIX_CHANNEL_POST, post_effect, count_done, &post) == 1);
    CHECK(wait_for(&post.calls, 3, WAIT_MS));
    Mix_SetPostMix(post_mix, &marker);
    CHECK(wait_for(&postmix_calls, 3, WAIT_MS));
    Mix_SetPostMix(NULL, NULL);
    CHECK(stays(&postmix_calls));
    CHECK(Mix_UnregisterEffect(MIX_CHANNEL_POST, post_effect) == 1 && SDL_AtomicGet(&post.dones) == 1);
    CHECK(stays(&post.calls));
    CHECK(Mix_RegisterEffect(MIX_CHANNEL_POST, post_effect, count_done, &post) == 1);
    CHECK(Mix_HaltChannel(0) == 0);

    /* The music hook: one engine block of the opened format per call (512 frames of S16 stereo). */
    CHECK(Mix_GetMusicHookData() == NULL);
    Mix_HookMusic(count_hook, &marker);
    CHECK(Mix_GetMusicHookData() == &marker && wait_for(&hook_calls, 3, WAIT_MS) && SDL_AtomicGet(&hook_len) == 2048);
    Mix_HookMusic(NULL, &marker);
    CHECK(Mix_GetMusicHookData() == NULL && stays(&hook_calls));

    /* Closing ends the post effects (done called); the contracts held throughout. */
    Mix_CloseAudio();
    CHECK(SDL_AtomicGet(&post.dones) == 2 && stays(&post.calls));
    CHECK(SDL_AtomicGet(&bad_input) == 0);
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}

/* --heard: the parts the Swift test listens to. */
static double hook_phase;
static void SDLCALL sine_hook(void *udata, Uint8 *stream, int len) {
    (void)udata;
    fill_sine(stream, len, 440, &hook_phase);
}
static void SDLCALL zero_left_post(void *udata, Uint8 *stream, int len) {
    Sint16 *s = (Sint16 *)stream;
    (void)udata;
    for (int i = 0; i < len / 4; i++) {
        if (abs(s[2 * i]) > 8000) SDL_AtomicSet(&post_saw_sound, 1);
        s[2 * i] = 0;
    }
}

static int heard(void) {
    if (Mix_OpenAudio(44100, AUDIO_S16LSB, 2, 512) != 0) return printf("open: %s\n", Mix_GetError()), 1;
    Mix_ChannelFinished(on_finished);
    Mix_Chunk *high = make_chunk(44100.0 / 660, 44100), *low = make_chunk(44100.0 / 330, 44100);
    Mix_Chunk *looped = make_chunk(100, 4400);
    SDL_Delay(300);
    Mix_HookMusic(sine_hook, NULL);
    SDL_Delay(500);
    Mix_HookMusic(NULL, NULL);
    SDL_Delay(300);
    Mix_PlayChannel(0, high, -1);
    Mix_RegisterEffect(0, zero_right, NULL, NULL);
    SDL_Delay(500);
    Mix_HaltChannel(0);
    SDL_Delay(300);
    Mix_SetPostMix(zero_left_post, NULL);
    Mix_PlayChannel(1, low, -1);
    SDL_Delay(500);
    Mix_HaltChannel(1);
    SDL_Delay(100);
    Mix_SetPostMix(NULL, NULL);
    SDL_Delay(300);
    Mix_PlayChannel(2, looped, 2);
    int ended = wait_for(&finished[2], 1, WAIT_MS);
    SDL_Delay(300);
    Mix_CloseAudio();
    printf("heard run: loops %s, post-mix %s\n", ended ? "ended" : "did not end",
           SDL_AtomicGet(&post_saw_sound) ? "saw the chunk" : "saw nothing");
    return ended && SDL_AtomicGet(&post_saw_sound) ? 0 : 1;
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "--heard") == 0) return heard();
    if (argc != 1) return fprintf(stderr, "usage: standin_effects_test [--heard]\n"), 2;
    return checks();
}
