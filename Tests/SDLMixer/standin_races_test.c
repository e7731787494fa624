/*
 * Three races of the SDL_mixer stand-in (issue #33's known defects), from C: compiled against Debian's own
 * <SDL2/SDL_mixer.h> and run with the stand-in first on LD_LIBRARY_PATH, from the repository's root, by
 * Tests/AmbienceIntegrationTests/SDLMixerStandIn/SDLMixerStandInTests.swift. Ends with "N passed, M failed".
 *   standin_races_test           the hook and the shrink (any SDL audio driver)
 *   standin_races_test --reopen  the reopening (a driver that opens two devices at once, as pulseaudio does: the
 *                                closing device is still open while its callbacks run)
 *   - Mix_HookMusic set on one thread while another clears it: afterwards the music is held exactly when a hook is
 *     set (never a hook set with the music let go), and when the clearing came last the hook never runs once it has
 *     returned (not even from a voice of the racing set that was still starting).
 *   - A finished callback of Mix_CloseAudio that registers an effect and opens the device again: the effect's done
 *     callback runs once, with the device it was registered on, and the hook set before plays on the new device.
 *   - Mix_AllocateChannels shrinking while the update thread's finished callback for a dropped channel waits for a
 *     lock the shrinking thread holds: it returns at once, reports the other dropped channel's end itself, once, and
 *     the waiting callback still sees its chunk; that channel's effect is done once, after its finished callback,
 *     though the update thread goes on meanwhile.
 */
#define _GNU_SOURCE
#include <SDL2/SDL.h>
#include <SDL2/SDL_mixer.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "standin_check.h"

#define OGG "Assets/Music/gravity-wave-theme.ogg"
/* How long a wait may last: it ends as soon as its condition holds, so only a loaded machine comes near it. */
#define WAIT_MS 30000

static pthread_t main_thread;
static int marker;

/* Waits up to WAIT_MS for `counter` to reach `count`. */
static int wait_for(SDL_atomic_t *counter, int count) {
    for (int waited = 0; waited < WAIT_MS; waited += 2) {
        if (SDL_AtomicGet(counter) >= count) return 1;
        SDL_Delay(2);
    }
    return SDL_AtomicGet(counter) >= count;
}

/* A chunk of `frames` stereo S16 frames of a 441 Hz sine at a quarter scale (the memory is never freed). */
static Mix_Chunk *make_chunk(int frames) {
    Sint16 *samples = malloc((size_t)frames * 4);
    for (int i = 0; i < frames; i++) samples[2 * i] = samples[2 * i + 1] = (Sint16)(8192 * sin(2 * M_PI * i / 100));
    return Mix_QuickLoad_RAW((Uint8 *)samples, (Uint32)frames * 4);
}

/* ---- Mix_HookMusic set and cleared at once ---- */

/* Set once the clearer's Mix_HookMusic(NULL) has returned; the hook counts each call that sees it set, at its
   start or its end. */
static SDL_atomic_t cleared_returned, calls_after_clearing;

/* Silence, slowly: a clearing waits for a call under way, which widens the window a racing set can fall in. */
static void SDLCALL slow_hook(void *udata, Uint8 *stream, int len) {
    (void)udata, (void)stream, (void)len;
    if (SDL_AtomicGet(&cleared_returned)) SDL_AtomicAdd(&calls_after_clearing, 1);
    usleep(4000);
    if (SDL_AtomicGet(&cleared_returned)) SDL_AtomicAdd(&calls_after_clearing, 1);
}
static pthread_barrier_t round_start, round_end;
static int rounds_left;

static void *setter(void *unused) {
    (void)unused;
    for (;;) {
        pthread_barrier_wait(&round_start);
        if (rounds_left == 0) return NULL;
        /* In half the rounds from 0 to 3 ms after the clearer, so that some set the hook while the clearing is
           under way. */
        if ((rounds_left / 4) % 2 == 0) usleep((useconds_t)(rounds_left % 4) * 1000);
        Mix_HookMusic(slow_hook, &marker);
        pthread_barrier_wait(&round_end);
    }
}
static void *clearer(void *unused) {
    (void)unused;
    for (;;) {
        pthread_barrier_wait(&round_start);
        if (rounds_left == 0) return NULL;
        /* In the other half from 0 to 1.5 ms after the setter, so that some clear the hook while the setter's voice
           is still starting. */
        if ((rounds_left / 4) % 2 == 1) usleep((useconds_t)(rounds_left % 4) * 500);
        Mix_HookMusic(NULL, NULL);
        SDL_AtomicSet(&cleared_returned, 1);
        pthread_barrier_wait(&round_end);
    }
}

/* Whether the music's position moves within `ms`: it does when it plays, not while a hook holds it. */
static int music_moves(int ms) {
    double from = Mix_GetMusicPosition(NULL);
    for (int waited = 0; waited < ms; waited += 5) {
        SDL_Delay(5);
        if (Mix_GetMusicPosition(NULL) > from + 0.02) return 1;
    }
    return 0;
}

static void hook_race(void) {
    Mix_Music *music = Mix_LoadMUS(OGG);
    CHECK(music && Mix_PlayMusic(music, -1) == 0);
    pthread_t threads[2];
    pthread_barrier_init(&round_start, NULL, 3);
    pthread_barrier_init(&round_end, NULL, 3);
    pthread_create(&threads[0], NULL, setter, NULL);
    pthread_create(&threads[1], NULL, clearer, NULL);
    int held = 0, going = 0, wrong = 0;
    for (rounds_left = 40; rounds_left > 0; rounds_left--) {
        /* Every other round starts from a hook set (the music held), the others from none. */
        Mix_HookMusic(rounds_left % 2 ? slow_hook : NULL, rounds_left % 2 ? &marker : NULL);
        SDL_AtomicSet(&cleared_returned, 0);
        SDL_AtomicSet(&calls_after_clearing, 0);
        pthread_barrier_wait(&round_start);
        pthread_barrier_wait(&round_end);
        SDL_Delay(50); /* a voice of the setter's hook that was still starting has had its time */
        if (Mix_GetMusicHookData() == NULL && SDL_AtomicGet(&calls_after_clearing) > 0) {
            /* The clearing came last: once it returned, the hook it replaced was never to run again. */
            wrong++, printf("round %d: the hook ran after Mix_HookMusic(NULL) returned\n", rounds_left);
        }
        if (Mix_GetMusicHookData() == &marker) {
            held++;
            if (music_moves(300)) wrong++, printf("round %d: a hook is set and the music plays\n", rounds_left);
        } else {
            going++;
            if (!music_moves(WAIT_MS)) wrong++, printf("round %d: no hook, and the music is held\n", rounds_left);
        }
    }
    pthread_barrier_wait(&round_start);
    pthread_join(threads[0], NULL);
    pthread_join(threads[1], NULL);
    printf("hook race: %d rounds ended hooked, %d unhooked, %d wrong\n", held, going, wrong);
    CHECK(wrong == 0 && held + going == 40);
    Mix_HookMusic(NULL, NULL);
    Mix_HaltMusic();
    Mix_FreeMusic(music);
}

/* ---- an effect registered while Mix_CloseAudio's callbacks run, and the device opened again there ---- */

static SDL_atomic_t reopen_armed, done_before_open, done_after_open;
static int registered_before_open, registered_after_open, reopened;
static void SDLCALL nothing(int chan, void *stream, int len, void *udata) {
    (void)chan, (void)stream, (void)len, (void)udata;
}
static void SDLCALL count_done(int chan, void *udata) {
    (void)chan;
    SDL_AtomicAdd(udata, 1);
}
static void SDLCALL reopen_when_closed(int channel) {
    (void)channel;
    if (!SDL_AtomicCAS(&reopen_armed, 1, 0)) return;
    registered_before_open = Mix_RegisterEffect(3, nothing, count_done, &done_before_open);
    reopened = Mix_OpenAudio(44100, AUDIO_S16LSB, 2, 512) == 0;
    registered_after_open = Mix_RegisterEffect(2, nothing, count_done, &done_after_open);
}

static SDL_atomic_t hook_calls;
static void SDLCALL counting_hook(void *udata, Uint8 *stream, int len) {
    (void)udata, (void)stream, (void)len;
    SDL_AtomicAdd(&hook_calls, 1);
}

static void reopen_in_close(Mix_Chunk *chunk) {
    Mix_ChannelFinished(reopen_when_closed);
    Mix_HookMusic(counting_hook, NULL);
    CHECK(Mix_PlayChannel(1, chunk, -1) == 1);
    SDL_AtomicSet(&reopen_armed, 1);
    Mix_CloseAudio();
    CHECK(reopened && registered_before_open && registered_after_open && Mix_QuerySpec(NULL, NULL, NULL) == 1);
    /* The hook stays set across the closing and plays on the device its callback opened (before, it was set with
       nothing playing it). */
    int calls = SDL_AtomicGet(&hook_calls);
    CHECK(wait_for(&hook_calls, calls + 10));
    Mix_HookMusic(NULL, NULL);
    /* The effect registered with the closing device went with it; the one registered after the opening stays. */
    CHECK(SDL_AtomicGet(&done_before_open) == 1 && SDL_AtomicGet(&done_after_open) == 0);
    Mix_ChannelFinished(NULL);
    Mix_CloseAudio();
    CHECK(SDL_AtomicGet(&done_before_open) == 1 && SDL_AtomicGet(&done_after_open) == 1);
    CHECK(Mix_OpenAudio(44100, AUDIO_S16LSB, 2, 512) == 0);
}

/* ---- Mix_AllocateChannels shrinking while a dropped channel's end is being reported ---- */

static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
static SDL_atomic_t in_callback, chunk_seen, dropped_reports, reports_on_main, chunk_on_main, gate_open;
/* The order of channel 6's callbacks: its finished callback and its effect's done callback take a ticket each. */
static SDL_atomic_t tickets, finished_ticket, done_ticket, done_calls;
static Mix_Chunk *blip;
static Uint64 shrink_start, shrink_reached_6;
static void SDLCALL done_in_order(int chan, void *udata) {
    (void)chan, (void)udata;
    SDL_AtomicAdd(&done_calls, 1);
    SDL_AtomicSet(&done_ticket, SDL_AtomicAdd(&tickets, 1) + 1);
}
static void SDLCALL wait_at_gate(int channel) {
    if (channel != 5 && channel != 6) return;
    if (pthread_equal(pthread_self(), main_thread)) {
        SDL_AtomicAdd(&reports_on_main, 1);
        if (Mix_GetChunk(channel) == blip) SDL_AtomicAdd(&chunk_on_main, 1);
        if (channel == 6) {
            shrink_reached_6 = SDL_GetPerformanceCounter();
            /* The update thread goes on (its report of 5, then what it would do with 6) before this callback ends:
               channel 6's done callback must still come after it. */
            SDL_AtomicSet(&gate_open, 1);
            pthread_mutex_unlock(&gate);
            SDL_Delay(150);
            SDL_AtomicSet(&finished_ticket, SDL_AtomicAdd(&tickets, 1) + 1);
        }
    } else if (channel == 5) {
        SDL_AtomicSet(&in_callback, 1);
        pthread_mutex_lock(&gate);
        SDL_AtomicSet(&chunk_seen, Mix_GetChunk(5) == blip ? 1 : -1);
        pthread_mutex_unlock(&gate);
    }
    SDL_AtomicAdd(&dropped_reports, 1);
}

static void shrink_while_reporting(void) {
    blip = make_chunk(441);
    CHECK(Mix_AllocateChannels(8) == 8);
    Mix_ChannelFinished(wait_at_gate);
    pthread_mutex_lock(&gate);
    CHECK(Mix_PlayChannel(5, blip, 0) == 5 && Mix_PlayChannel(6, blip, 0) == 6);
    /* Both through stream voices (an effect each), so that they end in the same tick of the update thread. */
    CHECK(Mix_RegisterEffect(5, nothing, NULL, NULL) != 0 && Mix_RegisterEffect(6, nothing, done_in_order, NULL) != 0);
    CHECK(wait_for(&in_callback, 1));
    shrink_start = SDL_GetPerformanceCounter();
    CHECK(Mix_AllocateChannels(4) == 4);
    double ms = (double)(shrink_reached_6 - shrink_start) * 1000 / (double)SDL_GetPerformanceFrequency();
    int on_main = SDL_AtomicGet(&reports_on_main);
    if (!SDL_AtomicGet(&gate_open)) pthread_mutex_unlock(&gate);
    printf("the shrink reached channel 6's report after %.1f ms\n", ms);
    /* Before, the shrink waited 200 ms for the update thread's report, then dropped the channel under it. */
    CHECK(shrink_reached_6 != 0 && ms < 190);
    /* Channel 6's effect was done once, after its finished callback (before, the update thread ran it meanwhile). */
    CHECK(wait_for(&done_calls, 1) && SDL_AtomicGet(&done_calls) == 1);
    printf("channel 6: finished callback ticket %d, effect done ticket %d\n", SDL_AtomicGet(&finished_ticket),
           SDL_AtomicGet(&done_ticket));
    CHECK(SDL_AtomicGet(&finished_ticket) == 1 && SDL_AtomicGet(&done_ticket) == 2);
    /* Channel 6 ended too: the shrink reported it, on this thread, before it returned, with its chunk. */
    CHECK(on_main == 1 && SDL_AtomicGet(&chunk_on_main) == 1);
    CHECK(wait_for(&dropped_reports, 2) && SDL_AtomicGet(&chunk_seen) == 1);
    SDL_Delay(100);
    CHECK(SDL_AtomicGet(&dropped_reports) == 2 && Mix_AllocateChannels(-1) == 4);
    Mix_ChannelFinished(NULL);
}

int main(int argc, char **argv) {
    main_thread = pthread_self();
    if (Mix_OpenAudio(44100, AUDIO_S16LSB, 2, 512) != 0) return printf("open: %s\n", Mix_GetError()), 1;
    if (argc == 2 && strcmp(argv[1], "--reopen") == 0) {
        reopen_in_close(make_chunk(44100));
    } else {
        hook_race();
        shrink_while_reporting();
    }
    Mix_CloseAudio();
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
