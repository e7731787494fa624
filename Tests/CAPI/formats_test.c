/*
 * Tracker modules and MIDI through the C API, written against include/ambience.h only and linked with
 * libambience-c.so. Tests/AmbienceIntegrationTests/AmbienceC/CAPITests+Formats.swift builds and runs it (CAPITests).
 *
 *     formats_test MODULE MIDI SOUNDFONT
 *
 * MODULE and MIDI are played as sounds and as music with SOUNDFONT in the configuration, and must be heard; the
 * configuration's module fields must reach libopenmpt (stereo separation 0 is mono); a SoundFont that is not there
 * must give AMBIENCE_ERROR_DECODING, and a playback error, naming the Debian packages, while modules still play.
 * Prints "N passed, M failed" and exits 1 when anything failed.
 */
#define _POSIX_C_SOURCE 200809L
#include "ambience.h"
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { RATE = 48000, BLOCK = 4800 }; /* a tenth of a second */
static float mix[2 * BLOCK];

/* The loudest tenth of a second (RMS of both channels) in `seconds` of rendering; -1 when a render fails. Also the
 * largest difference between the channels, for the mono check. */
static double loudest(ambience_engine *engine, double seconds, double *out_side) {
    double best = 0, side = 0;
    int blocks = (int)(seconds * 10), b, i;
    for (b = 0; b < blocks; b++) {
        double sum = 0;
        if (ambience_update(engine) != AMBIENCE_OK || ambience_render(engine, mix, BLOCK) != AMBIENCE_OK) return -1;
        for (i = 0; i < 2 * BLOCK; i++) sum += (double)mix[i] * mix[i];
        for (i = 0; i < BLOCK; i++) side = fmax(side, fabs((double)mix[2 * i] - mix[2 * i + 1]));
        best = fmax(best, sqrt(sum / (2.0 * BLOCK)));
    }
    if (out_side) *out_side = side;
    return best;
}

static ambience_engine *engine_with(const char *sound_font, int separation) {
    ambience_engine_config config;
    ambience_engine *engine = NULL;
    OK(ambience_engine_config_init(&config));
    config.output = AMBIENCE_OUTPUT_OFFLINE;
    config.sample_rate = RATE;
    config.app_name = "formats_test";
    config.sound_font = sound_font;
    config.module_stereo_separation = separation;
    OK(ambience_engine_create(&config, &engine));
    return engine;
}

/* Loads `path` whole as a sound, plays it and returns how loud the first `seconds` are. */
static double play_sound(ambience_engine *engine, const char *path, double seconds, double *out_side) {
    ambience_sound *sound = NULL;
    ambience_voice voice = AMBIENCE_VOICE_NONE;
    double level;
    OK(ambience_sound_load(engine, path, &sound));
    if (sound == NULL) return -1;
    OK(ambience_play(sound, NULL, &voice));
    level = loudest(engine, seconds, out_side);
    OK(ambience_sound_unload(sound));
    return level;
}

struct errors {
    int count;
    char message[2048];
};

static void on_error(void *userdata, const char *path, const char *message) {
    struct errors *errors = (struct errors *)userdata;
    (void)path;
    errors->count++;
    snprintf(errors->message, sizeof errors->message, "%s", message);
}

static int names_packages(const char *message) {
    return strstr(message, "timgm6mb-soundfont") != NULL && strstr(message, "fluid-soundfont-gm") != NULL;
}

int main(int argc, char **argv) {
    const char *module, *midi, *font, *queue[2];
    ambience_engine *engine;
    ambience_sound *sound = (ambience_sound *)0;
    struct errors errors;
    char title[256];
    double side = -1, level;
    int i;
    if (argc != 4) {
        fprintf(stderr, "usage: formats_test MODULE MIDI SOUNDFONT\n");
        return 2;
    }
    module = argv[1];
    midi = argv[2];
    font = argv[3];

    /* As sounds, and as music: heard. */
    engine = engine_with(font, 100);
    level = play_sound(engine, module, 2, &side);
    printf("module sound: loudest %.4f, L-R up to %.4f\n", level, side);
    CHECK(level > 0.01 && side > 0.001); /* heard, and in stereo at 100 % separation */
    level = play_sound(engine, midi, 4, NULL);
    printf("MIDI sound: loudest %.4f\n", level);
    CHECK(level > 0.01);
    queue[0] = module;
    queue[1] = midi;
    OK(ambience_music_set_queue(engine, queue, 2));
    OK(ambience_music_play(engine));
    level = loudest(engine, 2, NULL);
    printf("module music: loudest %.4f\n", level);
    CHECK(level > 0.01);
    OK(ambience_music_get_now_playing_tag(engine, AMBIENCE_TAG_TITLE, title, sizeof title, NULL));
    printf("module title: %s\n", title);
    CHECK(strcmp(title, "Matthias") == 0);
    OK(ambience_music_next(engine));
    level = loudest(engine, 4, NULL);
    printf("MIDI music: loudest %.4f\n", level);
    CHECK(level > 0.01);
    OK(ambience_update(engine));
    OK(ambience_music_get_now_playing_tag(engine, AMBIENCE_TAG_TITLE, title, sizeof title, NULL));
    printf("MIDI title: %s\n", title);
    CHECK(strcmp(title, "Be Sharp Boogie") == 0);
    OK(ambience_engine_destroy(engine));

    /* The stereo separation reaches libopenmpt: 0 % is mono. */
    engine = engine_with(font, 0);
    level = play_sound(engine, module, 2, &side);
    printf("module sound at 0 %% separation: loudest %.4f, L-R up to %.6f\n", level, side);
    CHECK(level > 0.01 && side < 1e-5);
    OK(ambience_engine_destroy(engine));

    /* A SoundFont that is not there: a decoding status naming the packages, a playback error naming them, and
     * modules still play. */
    engine = engine_with("/nonexistent/no-such-font.sf2", 100);
    CHECK(ambience_sound_load(engine, midi, &sound) == AMBIENCE_ERROR_DECODING);
    printf("missing SoundFont: %s\n", ambience_last_error());
    CHECK(names_packages(ambience_last_error()));
    memset(&errors, 0, sizeof errors);
    OK(ambience_set_playback_error_callback(engine, on_error, &errors));
    queue[0] = midi;
    OK(ambience_music_set_queue(engine, queue, 1));
    OK(ambience_music_play(engine));
    for (i = 0; i < 100 && errors.count == 0; i++) loudest(engine, 0.1, NULL);
    printf("playback error: %s\n", errors.message);
    CHECK(errors.count == 1 && names_packages(errors.message));
    level = play_sound(engine, module, 1, NULL);
    CHECK(level > 0.01);
    OK(ambience_engine_destroy(engine));

    return tally();
}
