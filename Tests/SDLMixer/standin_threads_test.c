/*
 * The SDL_mixer stand-in driven from several threads at once, the way games drive SDL_mixer, for ThreadSanitizer and
 * AddressSanitizer (scripts/sanitizers.sh builds it with the toolchain's clang against the instrumented
 * libSDL2_mixer.so). Run from the repository's root (it loads Assets/).
 *   - the game thread plays chunks (the first free channel, a given one, timed, faded in, looped), halts, expires and
 *     fades them out, loads, plays and frees a WAV, shrinks and grows the channels, and plays, pauses, seeks, fades
 *     and halts the music;
 *   - the settings thread changes volumes (channel, chunk, master, music), panning, position, distance, reversed
 *     stereo, pauses and resumes channels, and asks what plays;
 *   - the effects thread registers and unregisters effects on channels and on MIX_CHANNEL_POST, and turns
 *     Mix_HookMusic and Mix_SetPostMix on and off. Each function's state is plain memory that the function writes on
 *     the audio or stream thread and this thread reads and resets once the call that removed the function has
 *     returned (or its done callback has run): the stand-in promises the function is not running then, and
 *     ThreadSanitizer checks that promise;
 *   - Mix_ChannelFinished's callback (on the update thread or a halting one) asks Mix_GetChunk and plays the chunk
 *     again on its channel now and then; Mix_HookMusicFinished's asks Mix_PlayingMusic.
 *
 *     standin_threads_test [SECONDS [mono]]   (default 5 s, stereo) prints "N passed, M failed"; exits 1 when anything
 *                                             failed. A mono device places channels through the engine's voices,
 *                                             a stereo one scales the sides in the channels' streams.
 */
#define _GNU_SOURCE
#include <SDL2/SDL.h>
#include <SDL2/SDL_mixer.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Checks from every thread: counted atomically, each failure printed with its line and Mix_GetError's text. */
static atomic_int passed, failed;
#define CHECK(cond)                                                                                                   \
    do {                                                                                                              \
        if (cond) {                                                                                                   \
            atomic_fetch_add(&passed, 1);                                                                             \
        } else {                                                                                                      \
            atomic_fetch_add(&failed, 1);                                                                             \
            printf("FAIL line %d: %s (Mix_GetError: %s)\n", __LINE__, #cond, Mix_GetError());                         \
        }                                                                                                             \
    } while (0)

#define CHANNELS 16
/* The device's channels (2, or 1 with `mono`): the chunks' and every block's frame is 2 bytes each. */
static int device_channels = 2;
#define FRAME_BYTES (2 * device_channels)
/* The settings thread's channels: those that stay while the game thread shrinks to 12 and grows back. */
#define KEPT_CHANNELS 12
#define EFFECT_CHANNELS 8

static atomic_int running = 1;
static Mix_Chunk *chunks[3];
static Mix_Music *music;

/* A chunk of `frames` S16 frames (of the device's channels) of a sine of `period` frames at a quarter scale, in
 * `*samples` (which the program frees after the chunk, as Mix_QuickLoad_RAW's caller must). */
static Mix_Chunk *make_chunk(double period, int frames, Sint16 **samples_out) {
    Sint16 *samples = *samples_out = malloc((size_t)frames * FRAME_BYTES);
    for (int i = 0; i < frames * device_channels; i++) {
        samples[i] = (Sint16)(8192 * sin(2 * M_PI * (i / device_channels) / period));
    }
    return Mix_QuickLoad_RAW((Uint8 *)samples, (Uint32)(frames * FRAME_BYTES));
}

static unsigned next_random(unsigned *state) {
    *state = *state * 1103515245u + 12345u;
    return *state >> 8;
}

/* The channels the WAV the game thread loads and frees was played on: after Mix_FreeChunk their Mix_GetChunk is
 * NULL (the stand-in never hands back a freed chunk), also in a finished callback that was on its way. */
static atomic_uint freed_chunk_channels;

/* Mix_ChannelFinished: the channel is one of ours, its chunk is there; every fourth end plays it again. */
static atomic_int finished_calls, finished_bad, replays;
static void SDLCALL on_finished(int channel) {
    int call = atomic_fetch_add(&finished_calls, 1);
    Mix_Chunk *ended = Mix_GetChunk(channel);
    int excused = ended == NULL && (atomic_load(&freed_chunk_channels) & (1u << (channel & 31)));
    if (channel < 0 || channel >= CHANNELS || (ended == NULL && !excused)) atomic_fetch_add(&finished_bad, 1);
    if (call % 4 == 0 && atomic_load(&running) && ended != NULL) {
        if (Mix_PlayChannel(channel, ended, 0) == channel) atomic_fetch_add(&replays, 1);
    }
}

/* Mix_HookMusicFinished: calls back in. */
static atomic_int music_finished_calls;
static void SDLCALL on_music_finished(void) {
    atomic_fetch_add(&music_finished_calls, 1);
    (void)Mix_PlayingMusic();
}

/* A channel effect's state: `calls`, `bytes` and `peak` are written by the effect alone (plain memory), read and
 * reset by the effects thread once the effect is gone; `done` is set by its done callback, on whichever thread ended
 * the play or unregistered it. */
typedef struct {
    long calls, bytes;
    int peak;
    atomic_int done;
    int registered; /* the effects thread's own */
} EffectState;
static EffectState effects[EFFECT_CHANNELS], post_effect;
static long effect_calls_total, effect_done_total, effect_registrations, effect_bad;

/* Halves every sample and notes the loudest. */
static void SDLCALL halve(int channel, void *stream, int len, void *udata) {
    EffectState *state = udata;
    Sint16 *samples = stream;
    (void)channel;
    for (int i = 0; i < len / 2; i++) {
        samples[i] /= 2;
        if (abs(samples[i]) > state->peak) state->peak = abs(samples[i]);
    }
    state->calls++;
    state->bytes += len;
}
static void SDLCALL halve_done(int channel, void *udata) {
    (void)channel;
    atomic_store(&((EffectState *)udata)->done, 1);
}

/* Mix_HookMusic's and Mix_SetPostMix's state: written by their functions alone, read once they are removed. */
typedef struct {
    long calls, bytes;
    void *seen_argument;
} StreamState;
static StreamState hook, postmix;
static long hook_calls_total, postmix_calls_total; /* the effects thread's own */

static void SDLCALL hook_fill(void *udata, Uint8 *stream, int len) {
    StreamState *state = udata;
    for (int i = 0; i < len; i++) stream[i] = (Uint8)(i & 0x0f);
    state->seen_argument = Mix_GetMusicHookData();
    state->calls++;
    state->bytes += len;
}
static void SDLCALL postmix_watch(void *udata, Uint8 *stream, int len) {
    StreamState *state = udata;
    (void)stream;
    state->calls++;
    state->bytes += len;
}

static int SDLCALL game(void *unused) {
    unsigned seed = 1;
    int round = 0;
    Mix_Chunk *loaded = NULL;
    (void)unused;
    while (atomic_load(&running)) {
        unsigned r = next_random(&seed);
        Mix_Chunk *chunk = chunks[r % 3];
        int channel = (int)(r % CHANNELS);
        int got = Mix_PlayChannel(-1, chunk, 0);
        CHECK(got == -1 || (got >= 0 && got < CHANNELS));
        got = Mix_PlayChannel(channel, chunk, (int)(r % 3)); /* loops 1 and 2: a stream voice */
        CHECK(got == -1 || got == channel);
        got = Mix_PlayChannelTimed(-1, chunks[2], -1, 40 + (int)(r % 60));
        CHECK(got == -1 || (got >= 0 && got < CHANNELS));
        got = Mix_FadeInChannel(-1, chunks[1], 0, 30);
        CHECK(got == -1 || (got >= 0 && got < CHANNELS));
        switch (round % 7) {
        case 0: CHECK(Mix_HaltChannel((channel + 3) % CHANNELS) == 0); break;
        case 1: CHECK(Mix_FadeOutChannel((channel + 5) % CHANNELS, 20) >= 0); break;
        case 2: CHECK(Mix_ExpireChannel((channel + 7) % CHANNELS, 15) == 1); break;
        case 3: CHECK(Mix_GroupChannel(channel, 1) == 1 && Mix_GroupOldest(1) >= -1); break;
        default: break;
        }
        if (round % 50 == 10) {
            loaded = Mix_LoadWAV("Assets/SFX/laser.wav");
            CHECK(loaded != NULL);
            for (int loops = 0; loaded && loops < 2; loops++) {
                int on = Mix_PlayChannel(-1, loaded, loops);
                if (on >= 0) atomic_fetch_or(&freed_chunk_channels, 1u << on);
            }
        }
        if (round % 50 == 30 && loaded) {
            Mix_FreeChunk(loaded); /* halts its channels; the finished callbacks run here */
            loaded = NULL;
        }
        if (round % 100 == 60) {
            CHECK(Mix_AllocateChannels(12) == 12); /* drops 12..15 and what plays there */
            CHECK(Mix_AllocateChannels(CHANNELS) == CHANNELS);
        }
        if (round % 40 == 0) CHECK(Mix_PlayMusic(music, (round / 40) % 2 ? -1 : 0) == 0);
        if (round % 40 == 8) CHECK(Mix_SetMusicPosition(1.0 + (double)(r % 20)) == 0); /* of 40 s */
        if (round % 40 == 12) Mix_PauseMusic();
        if (round % 40 == 14) Mix_ResumeMusic();
        if (round % 40 == 20) Mix_FadeOutMusic(60);
        if (round % 40 == 30) CHECK(Mix_HaltMusic() == 0);
        if (round % 200 == 199) CHECK(Mix_HaltChannel(-1) == 0);
        round++;
        SDL_Delay(3);
    }
    if (loaded) Mix_FreeChunk(loaded);
    return round;
}

static int SDLCALL settings(void *unused) {
    unsigned seed = 2;
    int round = 0;
    (void)unused;
    while (atomic_load(&running)) {
        unsigned r = next_random(&seed);
        int channel = (int)(r % KEPT_CHANNELS);
        CHECK(Mix_Volume(channel, (int)(r % 129)) >= 0);
        if (round % 10 == 0) CHECK(Mix_Volume(-1, 96) >= 0);
        CHECK(Mix_VolumeChunk(chunks[r % 3], (int)(r % 200)) >= 0);
        CHECK(Mix_MasterVolume((int)(64 + r % 65)) >= 0);
        CHECK(Mix_VolumeMusic((int)(r % 129)) >= 0);
        switch (round % 5) {
        case 0: CHECK(Mix_SetPanning(channel, (Uint8)r, (Uint8)(r >> 8)) != 0); break;
        case 1: CHECK(Mix_SetPosition(channel, (Sint16)(r % 720), (Uint8)(r >> 4)) != 0); break;
        case 2: CHECK(Mix_SetDistance(channel, (Uint8)(r >> 3)) != 0); break;
        case 3: /* SDL_mixer: 0 for turning it off when it is off, and on a mono device (the stand-in pans there) */
            if ((r & 1) && device_channels == 2) CHECK(Mix_SetReverseStereo(channel, 1) != 0);
            else (void)Mix_SetReverseStereo(channel, (int)(r & 1));
            break;
        default: CHECK(Mix_SetPanning(channel, 255, 255) != 0); break;
        }
        if (round % 9 == 0) Mix_Pause(channel);
        if (round % 9 == 3) Mix_Resume(channel);
        if (round % 31 == 0) Mix_Pause(-1), Mix_Resume(-1);
        int playing = Mix_Playing(-1);
        CHECK(playing >= 0 && playing <= CHANNELS);
        CHECK(Mix_Paused(-1) >= 0 && Mix_FadingChannel(channel) >= MIX_NO_FADING);
        (void)Mix_GetMusicPosition(music);
        round++;
        SDL_Delay(1);
    }
    return round;
}

/* Takes an effect's state back once it is gone: what it wrote is read here, on this thread. Each call had whole
 * frames. */
static void collect(EffectState *state) {
    if (state->bytes % FRAME_BYTES != 0 || state->bytes < FRAME_BYTES * state->calls || state->peak > 32767) {
        effect_bad++;
    }
    effect_calls_total += state->calls;
    effect_done_total++;
    state->calls = state->bytes = 0;
    state->peak = 0;
    state->registered = 0;
    atomic_store(&state->done, 0);
}

/* Waits up to 2 s for the effect's done callback. */
static int wait_done(EffectState *state) {
    for (int waited = 0; waited < 2000 && !atomic_load(&state->done); waited++) SDL_Delay(1);
    return atomic_load(&state->done);
}

static int SDLCALL effects_thread(void *unused) {
    unsigned seed = 3;
    int round = 0;
    (void)unused;
    while (atomic_load(&running)) {
        unsigned r = next_random(&seed);
        int channel = (int)(r % EFFECT_CHANNELS);
        EffectState *state = &effects[channel];
        if (state->registered && atomic_load(&state->done)) collect(state); /* its play ended */
        if (!state->registered) {
            if (Mix_RegisterEffect(channel, halve, halve_done, state) != 0) {
                state->registered = 1;
                effect_registrations++;
            } else {
                CHECK(!"Mix_RegisterEffect on a channel that exists");
            }
        } else if (round % 3 == 0) {
            /* 1: its done callback ran before this returned; 0: its play ended (the done callback runs, or ran). */
            if (Mix_UnregisterEffect(channel, halve) != 0) CHECK(atomic_load(&state->done) == 1);
            CHECK(wait_done(state));
            collect(state);
        }
        if (round % 20 == 5) {
            CHECK(Mix_RegisterEffect(MIX_CHANNEL_POST, halve, halve_done, &post_effect) != 0);
            post_effect.registered = 1;
            effect_registrations++;
        }
        if (round % 20 == 15) {
            CHECK(Mix_UnregisterEffect(MIX_CHANNEL_POST, halve) != 0 && atomic_load(&post_effect.done) == 1);
            collect(&post_effect);
        }
        if (round % 16 == 0) Mix_HookMusic(hook_fill, &hook);
        if (round % 16 == 8) {
            Mix_HookMusic(NULL, NULL); /* from here hook_fill is not running */
            CHECK(hook.seen_argument == NULL || hook.seen_argument == &hook);
            hook_calls_total += hook.calls;
            memset(&hook, 0, sizeof hook);
        }
        if (round % 12 == 0) Mix_SetPostMix(postmix_watch, &postmix);
        if (round % 12 == 6) {
            Mix_SetPostMix(NULL, NULL);
            CHECK(postmix.bytes % FRAME_BYTES == 0);
            postmix_calls_total += postmix.calls;
            postmix.calls = postmix.bytes = 0;
        }
        round++;
        SDL_Delay(2);
    }
    return round;
}

int main(int argc, char **argv) {
    int seconds = argc > 1 ? atoi(argv[1]) : 5;
    if (argc > 2 && strcmp(argv[2], "mono") == 0) device_channels = 1;
    if (SDL_Init(SDL_INIT_AUDIO) != 0 || Mix_OpenAudio(44100, AUDIO_S16SYS, device_channels, 512) != 0) {
        return printf("open: %s\n", Mix_GetError()), 1;
    }
    CHECK(Mix_AllocateChannels(CHANNELS) == CHANNELS);
    Sint16 *samples[3];
    chunks[0] = make_chunk(100, 441, &samples[0]);   /* 10 ms */
    chunks[1] = make_chunk(150, 4410, &samples[1]);  /* 100 ms */
    chunks[2] = make_chunk(200, 22050, &samples[2]); /* 500 ms */
    music = Mix_LoadMUS("Assets/Music/gravity-wave-theme.ogg");
    CHECK(chunks[0] && chunks[1] && chunks[2] && music);
    if (!music) return printf("%d passed, %d failed\n", atomic_load(&passed), atomic_load(&failed)), 1;
    Mix_ChannelFinished(on_finished);
    Mix_HookMusicFinished(on_music_finished);

    SDL_Thread *threads[3] = {SDL_CreateThread(game, "game", NULL), SDL_CreateThread(settings, "settings", NULL),
                              SDL_CreateThread(effects_thread, "effects", NULL)};
    SDL_Delay((Uint32)seconds * 1000);
    atomic_store(&running, 0);
    int rounds[3];
    for (int i = 0; i < 3; i++) SDL_WaitThread(threads[i], &rounds[i]);
    printf("rounds: game %d, settings %d, effects %d\n", rounds[0], rounds[1], rounds[2]);

    /* The program ends as games do: Mix_CloseAudio with chunks, music, effects, the hook and the post-mix going. The
     * effects' done callbacks have run when it returns; the hook and the post-mix are kept for a next opening, but
     * not running. */
    Mix_CloseAudio();
    for (int channel = 0; channel < EFFECT_CHANNELS; channel++) {
        if (!effects[channel].registered) continue;
        CHECK(atomic_load(&effects[channel].done));
        collect(&effects[channel]);
    }
    if (post_effect.registered) {
        CHECK(atomic_load(&post_effect.done));
        collect(&post_effect);
    }
    hook_calls_total += hook.calls;
    postmix_calls_total += postmix.calls;
    Mix_HookMusic(NULL, NULL);
    Mix_SetPostMix(NULL, NULL);
    printf("finished %d (replayed %d), music finished %d, effect runs %ld, effects %ld registered / %ld done, "
           "hook calls %ld, post-mix calls %ld\n",
           atomic_load(&finished_calls), atomic_load(&replays), atomic_load(&music_finished_calls),
           effect_calls_total, effect_registrations, effect_done_total, hook_calls_total, postmix_calls_total);
    CHECK(atomic_load(&finished_calls) > 0 && atomic_load(&finished_bad) == 0);
    CHECK(atomic_load(&music_finished_calls) > 0);
    CHECK(effect_calls_total > 0 && effect_bad == 0);
    CHECK(effect_done_total == effect_registrations); /* every done callback ran, once */
    CHECK(hook_calls_total > 0 && postmix_calls_total > 0);
    for (int i = 0; i < 3; i++) Mix_FreeChunk(chunks[i]), free(samples[i]);
    Mix_FreeMusic(music);
    Mix_Quit();
    SDL_Quit();
    printf("%d passed, %d failed\n", atomic_load(&passed), atomic_load(&failed));
    return atomic_load(&failed) == 0 ? 0 : 1;
}
