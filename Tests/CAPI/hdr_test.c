/*
 * HDR mixing through the C API (docs/HDR.md), written against include/ambience.h only and linked with
 * libambience-c.so. Tests/AmbienceIntegrationTests/AmbienceC/CAPITests+HDR.swift builds and runs it (CAPITests).
 *
 * Footsteps (500 Hz, loudness 50) and an ambience (300 Hz, 40) under a window 40 dB wide; an explosion (1250 Hz,
 * 120) 56.2 m away reaches the listener at 85: the footsteps fall 35 dB, the ambience is culled; both come back
 * once it has ended. Measured in the samples, band by band. Then the hostile numbers. Prints "N passed, M failed"
 * and exits 1 when anything failed.
 */
#define _POSIX_C_SOURCE 200809L
#include "ambience.h"
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* A tenth of a second holds a whole number of cycles of every tone here: no band leaks into another. */
enum { RATE = 48000, BLOCK = 4800 };
static const double pi = 3.14159265358979323846;
static float mix[2 * BLOCK * 3];

/* Renders `blocks` tenths of a second; the last three stay in `mix` when `keep` is set. */
static int render(ambience_engine *engine, int blocks, int keep) {
    int b;
    for (b = 0; b < blocks; b++) {
        float *into = keep && blocks - b <= 3 ? mix + 2 * BLOCK * (3 - (blocks - b)) : mix;
        if (ambience_render(engine, into, BLOCK) != AMBIENCE_OK) return 0;
    }
    return 1;
}

/* The amplitude of `hz` in the left channel of the 0.3 s kept in `mix`. */
static double band(double hz) {
    double re = 0, im = 0;
    int f;
    for (f = 0; f < 3 * BLOCK; f++) {
        re += mix[2 * f] * cos(2 * pi * hz * f / RATE);
        im += mix[2 * f] * sin(2 * pi * hz * f / RATE);
    }
    return 2 * sqrt(re * re + im * im) / (3 * BLOCK);
}

static double db(double a, double b) { return 20 * log10(a / b); }

static ambience_sound *tone(ambience_engine *engine, const char *name, double hz, double seconds, float loudness) {
    size_t frames = (size_t)(seconds * RATE), f;
    float *samples = malloc(frames * sizeof *samples);
    ambience_sound *sound = NULL;
    for (f = 0; f < frames; f++) samples[f] = (float)(0.5 * sin(2 * pi * hz * (double)f / RATE));
    OK(ambience_sound_create_pcm(engine, name, samples, frames, 1, RATE, &sound));
    free(samples);
    OK(ambience_sound_set_loudness(sound, loudness));
    return sound;
}

static int near(ambience_bus *bus, float expected) {
    bool has = false;
    float top = -1;
    return ambience_bus_get_hdr_top(bus, &has, &top) == AMBIENCE_OK && has && fabsf(top - expected) < 0.05f;
}

int main(void) {
    ambience_engine_config config;
    ambience_engine *engine = NULL;
    ambience_bus *sfx = NULL, *world = NULL;
    ambience_sound *footsteps, *ambience, *explosion;
    ambience_play_options options;
    ambience_voice voice = AMBIENCE_VOICE_NONE;
    double steps, air, steps_during, air_during;
    bool has = true;
    float value = 0;

    OK(ambience_engine_config_init(&config));
    config.output = AMBIENCE_OUTPUT_OFFLINE;
    config.sample_rate = RATE;
    config.app_name = "hdr_test";
    OK(ambience_engine_create(&config, &engine));
    if (!engine) return 1;
    OK(ambience_bus_get(engine, AMBIENCE_BUS_SFX, &sfx));
    OK(ambience_bus_create(engine, "world", sfx, &world));
    OK(ambience_bus_get_hdr_top(world, &has, &value));
    CHECK(!has && value == 0);
    OK(ambience_bus_set_hdr(world, 40, 0, 0.05, 0.5));

    footsteps = tone(engine, "footsteps", 500, 2, 50);
    ambience = tone(engine, "ambience", 300, 2, 40);
    explosion = tone(engine, "explosion", 1250, 1, 120);
    OK(ambience_play_options_init(&options));
    options.bus = world;
    options.loop = true;
    OK(ambience_play(footsteps, &options, NULL));
    OK(ambience_play(ambience, &options, NULL));

    CHECK(render(engine, 5, 1));
    steps = band(500);
    air = band(300);
    printf("calm: footsteps %.4f, ambience %.1f dB under them\n", steps, db(air, steps));
    CHECK(steps > 0.1 && fabs(db(air, steps) + 10) < 0.3);
    CHECK(near(world, 50));

    options.loop = false;
    options.placement = AMBIENCE_PLACEMENT_WORLD;
    options.position[2] = -56.234f;
    OK(ambience_play(explosion, &options, NULL));
    CHECK(render(engine, 4, 1)); /* the attack (50 ms), then 0.3 s kept */
    CHECK(near(world, 85));
    steps_during = db(band(500), steps);
    air_during = db(band(300), air);
    printf("explosion: footsteps %.2f dB, ambience %.1f dB, explosion %.3f\n", steps_during, air_during, band(1250));
    CHECK(fabs(steps_during + 35) < 0.5);
    CHECK(air_during < -80);
    CHECK(band(1250) > 0.2);

    /* The explosion ends 1 s after it started; then the release (0.5 s) and a tenth to see the end. */
    CHECK(render(engine, 6 + 6, 0));
    CHECK(near(world, 50));
    CHECK(render(engine, 3, 1));
    printf("after: footsteps %.2f dB, ambience %.2f dB\n", db(band(500), steps), db(band(300), air));
    CHECK(fabs(db(band(500), steps)) < 0.3 && fabs(db(band(300), air)) < 0.3);

    /* A loudness for one play (ambience_play_with_loudness): the explosion's sound (120) played beside the listener
     * at 60 instead lifts the top to 60, and the footsteps (50) and the ambience (40) go 10 dB down, none culled. */
    options.placement = AMBIENCE_PLACEMENT_PAN;
    OK(ambience_play_with_loudness(explosion, &options, 60, &voice));
    CHECK(voice != AMBIENCE_VOICE_NONE);
    CHECK(render(engine, 4, 1));
    CHECK(near(world, 60));
    printf("a play at 60: footsteps %.2f dB, ambience %.2f dB\n", db(band(500), steps), db(band(300), air));
    CHECK(fabs(db(band(500), steps) + 10) < 0.3 && fabs(db(band(300), air) + 10) < 0.3);
    OK(ambience_voice_stop(voice, 0));
    CHECK(render(engine, 6, 0)); /* the release, 0.5 s */
    CHECK(near(world, 50));
    OK(ambience_sound_get_loudness(explosion, &value));
    CHECK(value == 120);

    /* Hostile numbers: NaN and infinities refused and nothing changed; finite ones clamped; NULL refused. */
    voice = 7;
    CHECK(ambience_play_with_loudness(explosion, &options, NAN, &voice) == AMBIENCE_ERROR_INVALID_ARGUMENT);
    CHECK(voice == AMBIENCE_VOICE_NONE);
    CHECK(ambience_play_with_loudness(explosion, NULL, -INFINITY, NULL) == AMBIENCE_ERROR_INVALID_ARGUMENT);
    CHECK(ambience_play_with_loudness(NULL, &options, 60, &voice) != AMBIENCE_OK && voice == AMBIENCE_VOICE_NONE);
    CHECK(render(engine, 1, 0));
    CHECK(near(world, 50));
    OK(ambience_play_with_loudness(explosion, &options, -1e30f, &voice)); /* clamped to -200: culled at once */
    CHECK(voice != AMBIENCE_VOICE_NONE);
    CHECK(render(engine, 1, 0));
    CHECK(near(world, 50));
    OK(ambience_voice_stop(voice, 0));
    CHECK(ambience_sound_set_loudness(footsteps, NAN) == AMBIENCE_ERROR_INVALID_ARGUMENT);
    CHECK(ambience_sound_set_loudness(footsteps, INFINITY) == AMBIENCE_ERROR_INVALID_ARGUMENT);
    OK(ambience_sound_get_loudness(footsteps, &value));
    CHECK(value == 50);
    OK(ambience_sound_set_loudness(footsteps, 1e30f));
    OK(ambience_sound_get_loudness(footsteps, &value));
    CHECK(value == 200);
    CHECK(ambience_sound_set_loudness(NULL, 1) != AMBIENCE_OK);
    CHECK(ambience_sound_get_loudness(footsteps, NULL) == AMBIENCE_ERROR_INVALID_ARGUMENT);
    CHECK(ambience_bus_set_hdr(world, NAN, 0, 0, 0) == AMBIENCE_ERROR_INVALID_ARGUMENT);
    CHECK(ambience_bus_set_hdr(world, 40, -INFINITY, 0, 0) == AMBIENCE_ERROR_INVALID_ARGUMENT);
    CHECK(ambience_bus_set_hdr(world, 40, 0, NAN, 0) == AMBIENCE_ERROR_INVALID_ARGUMENT);
    CHECK(ambience_bus_set_hdr(world, 40, 0, 0, INFINITY) == AMBIENCE_ERROR_INVALID_ARGUMENT);
    CHECK(near(world, 50));
    OK(ambience_bus_set_hdr(world, 1e30f, -1e30f, -5, 1e300));
    CHECK(ambience_bus_set_hdr(NULL, 40, 0, 0, 0) != AMBIENCE_OK);
    OK(ambience_bus_get_hdr_top(world, NULL, NULL));
    CHECK(render(engine, 2, 0));
    OK(ambience_bus_clear_hdr(world));
    OK(ambience_bus_clear_hdr(world));
    OK(ambience_bus_get_hdr_top(world, &has, &value));
    CHECK(!has);
    CHECK(render(engine, 2, 0));
    OK(ambience_engine_destroy(engine));

    return tally();
}
