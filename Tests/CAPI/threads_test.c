/*
 * The C API called from several threads at once, against one offline engine: one thread renders and updates,
 * two start, change and stop voices (with NaN, huge and stale arguments among them), one moves buses, the
 * listener and the music volume, and one creates and destroys engines of its own and loads and unloads sounds.
 * Every call must return a status the header allows; the mix must stay finite. Built by
 * Tests/AmbienceIntegrationTests/AmbienceC/CAPITests.swift, and under ThreadSanitizer by scripts/sanitizers.sh.
 *
 *     threads_test [ROUNDS]      prints "N passed, M failed" and exits 1 when anything failed
 */
#define _POSIX_C_SOURCE 200809L
#include "ambience.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static atomic_int passed, failed;
static int rounds = 400;
static ambience_engine *engine;
static ambience_sound *tone;
static atomic_int running = 1;

static void check(int ok, int line, const char *what, ambience_status status) {
    if (ok) {
        atomic_fetch_add(&passed, 1);
    } else {
        atomic_fetch_add(&failed, 1);
        fprintf(stderr, "FAIL threads_test.c:%d: %s gave %d (%s)\n", line, what, (int)status, ambience_last_error());
    }
}
/* The call returns one of the statuses listed after it. */
#define ALLOW(call, ...)                                                                                        \
    do {                                                                                                        \
        ambience_status got_ = (call);                                                                          \
        ambience_status allowed_[] = {__VA_ARGS__};                                                             \
        int ok_ = 0;                                                                                            \
        for (size_t i_ = 0; i_ < sizeof allowed_ / sizeof allowed_[0]; i_++) ok_ |= got_ == allowed_[i_];       \
        check(ok_, __LINE__, #call, got_);                                                                      \
    } while (0)

static void *render_and_update(void *unused) {
    (void)unused;
    static float block[2 * 256];
    while (atomic_load(&running)) {
        ALLOW(ambience_render(engine, block, 256), AMBIENCE_OK);
        ALLOW(ambience_update(engine), AMBIENCE_OK);
        for (int i = 0; i < 2 * 256; i++) check(isfinite(block[i]), __LINE__, "a finite sample", AMBIENCE_OK);
    }
    return NULL;
}

static void *voices(void *seed) {
    unsigned state = (unsigned)(size_t)seed;
    ambience_play_options options;
    ambience_play_options_init(&options);
    for (int round = 0; round < rounds; round++) {
        ambience_voice voice = AMBIENCE_VOICE_NONE;
        state = state * 1103515245u + 12345u;
        options.pitch = 0.5f + (float)(state % 100) / 50.0f;
        options.gain = (state & 1) ? 0.2f : 100.0f; /* the second is clamped */
        ALLOW(ambience_play(tone, &options, &voice), AMBIENCE_OK);
        ALLOW(ambience_voice_set_gain(voice, (float)NAN), AMBIENCE_ERROR_INVALID_ARGUMENT);
        ALLOW(ambience_voice_set_pitch(voice, 1e30f), AMBIENCE_OK, AMBIENCE_ERROR_STALE_VOICE);
        ALLOW(ambience_voice_set_position(voice, 1, 2, (float)(round % 7)), AMBIENCE_OK, AMBIENCE_ERROR_STALE_VOICE);
        ALLOW(ambience_voice_fade(voice, 0, 0.01), AMBIENCE_OK, AMBIENCE_ERROR_STALE_VOICE);
        if (round % 3 == 0) ALLOW(ambience_voice_stop(voice, 0), AMBIENCE_OK, AMBIENCE_ERROR_STALE_VOICE);
        ALLOW(ambience_voice_set_gain(voice + 1000000, 1), AMBIENCE_ERROR_STALE_VOICE, AMBIENCE_ERROR_INVALID_ARGUMENT);
    }
    return NULL;
}

static void *buses_and_listener(void *unused) {
    (void)unused;
    ambience_bus *sfx = NULL, *music = NULL;
    ALLOW(ambience_bus_get(engine, AMBIENCE_BUS_SFX, &sfx), AMBIENCE_OK);
    ALLOW(ambience_bus_get(engine, AMBIENCE_BUS_MUSIC, &music), AMBIENCE_OK);
    for (int round = 0; round < rounds; round++) {
        ALLOW(ambience_bus_set_gain(sfx, (float)(round % 10) / 10.0f), AMBIENCE_OK);
        ALLOW(ambience_bus_fade(music, 1, (double)INFINITY), AMBIENCE_ERROR_INVALID_ARGUMENT);
        ALLOW(ambience_bus_fade(music, 0.5f, 0.05), AMBIENCE_OK);
        ALLOW(ambience_listener_set_position(engine, (float)round, 0, (float)NAN), AMBIENCE_ERROR_INVALID_ARGUMENT);
        ALLOW(ambience_listener_set_position(engine, (float)(round % 5), 0, 0), AMBIENCE_OK);
        ALLOW(ambience_music_set_volume(engine, (float)(round % 3) / 2.0f), AMBIENCE_OK);
    }
    return NULL;
}

static void *engines_and_sounds(void *unused) {
    (void)unused;
    float samples[480];
    for (int i = 0; i < 480; i++) samples[i] = 0.25f * sinf((float)i * 0.1f);
    ambience_engine_config config;
    ambience_engine_config_init(&config);
    config.output = AMBIENCE_OUTPUT_OFFLINE;
    config.real_voices = 8;
    config.max_voices = 64;
    for (int round = 0; round < rounds / 20; round++) {
        ambience_engine *own = NULL;
        ambience_sound *sound = NULL;
        ALLOW(ambience_engine_create(&config, &own), AMBIENCE_OK);
        ALLOW(ambience_sound_create_pcm(engine, "blip", samples, 480, 1, 48000, &sound), AMBIENCE_OK);
        ALLOW(ambience_play(sound, NULL, NULL), AMBIENCE_OK);
        ALLOW(ambience_sound_unload(sound), AMBIENCE_OK);
        ALLOW(ambience_play(sound, NULL, NULL), AMBIENCE_ERROR_DESTROYED_HANDLE);
        ALLOW(ambience_engine_destroy(own), AMBIENCE_OK);
        ALLOW(ambience_update(own), AMBIENCE_ERROR_DESTROYED_HANDLE);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc > 1) rounds = atoi(argv[1]) > 0 ? atoi(argv[1]) : rounds;
    ambience_engine_config config;
    ambience_engine_config_init(&config);
    config.output = AMBIENCE_OUTPUT_OFFLINE;
    config.block_frames = 256;
    config.real_voices = 32;
    config.max_voices = 256;
    if (ambience_engine_create(&config, &engine) != AMBIENCE_OK) {
        fprintf(stderr, "threads_test: %s\n", ambience_last_error());
        return 1;
    }
    static float samples[48000];
    for (int i = 0; i < 48000; i++) samples[i] = 0.3f * sinf((float)i * 2.0f * 3.14159265f * 440.0f / 48000.0f);
    ALLOW(ambience_sound_create_pcm(engine, "tone", samples, 48000, 1, 48000, &tone), AMBIENCE_OK);

    pthread_t renderer, players[2], mover, maker;
    pthread_create(&renderer, NULL, render_and_update, NULL);
    pthread_create(&players[0], NULL, voices, (void *)1);
    pthread_create(&players[1], NULL, voices, (void *)2);
    pthread_create(&mover, NULL, buses_and_listener, NULL);
    pthread_create(&maker, NULL, engines_and_sounds, NULL);
    pthread_join(players[0], NULL);
    pthread_join(players[1], NULL);
    pthread_join(mover, NULL);
    pthread_join(maker, NULL);
    atomic_store(&running, 0);
    pthread_join(renderer, NULL);
    ALLOW(ambience_engine_destroy(engine), AMBIENCE_OK);
    printf("%d passed, %d failed\n", atomic_load(&passed), atomic_load(&failed));
    return atomic_load(&failed) == 0 ? 0 : 1;
}
