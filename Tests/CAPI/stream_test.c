/*
 * Stream voices and the post-mix observer through the C API, written against include/ambience.h only and linked
 * with libambience-c.so. Tests/AmbienceIntegrationTests/AmbienceC/CAPITests+Streams.swift builds and runs it.
 *
 * An offline engine plays a 440 Hz stream from a callback (heard at its frequency and level), stops it (never
 * called again), ends one that returns short (the voice-finished callback names it), and a post-mix observer that
 * negates and then zeroes the mix shows in the render; NULL engines, NULL callbacks and bad formats are refused with
 * a status and a message. Prints "N passed, M failed" and exits 1 when anything failed.
 */
#define _POSIX_C_SOURCE 200809L
#include "ambience.h"
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { RATE = 48000, FRAMES = 9600 };
static float mix[2 * FRAMES];

/* A sine the callback writes, and what the test learns about its calls. */
typedef struct sine {
    double hz;
    long frame;
    long length; /* frames in all; 0: endless */
    int calls;
    int stopped;
    int calls_after_stop;
} sine;

static size_t sine_render(void *userdata, float *samples, size_t frames) {
    sine *s = (sine *)userdata;
    size_t i, n = frames;
    s->calls++;
    if (s->stopped) s->calls_after_stop++;
    if (s->length > 0 && s->frame + (long)n > s->length) n = (size_t)(s->length - s->frame);
    for (i = 0; i < n; i++) samples[i] = (float)(0.5 * sin(2 * 3.14159265358979 * s->hz * (double)(s->frame + (long)i) / RATE));
    s->frame += (long)n;
    return n;
}

/* The amplitude of `hz` in the left channel over frames [from, FRAMES). */
static double amplitude(double hz, int from) {
    double re = 0, im = 0;
    int f;
    for (f = from; f < FRAMES; f++) {
        double phase = 2 * 3.14159265358979 * hz * f / RATE;
        re += mix[2 * f] * cos(phase);
        im += mix[2 * f] * sin(phase);
    }
    return 2 * sqrt(re * re + im * im) / (FRAMES - from);
}

static double peak(int from, int to) {
    double p = 0;
    int i;
    for (i = 2 * from; i < 2 * to; i++) p = fmax(p, fabs((double)mix[i]));
    return p;
}

static ambience_voice finished_voice;
static void on_finished(void *userdata, ambience_voice voice, ambience_voice_end how) {
    (void)userdata;
    (void)how;
    finished_voice = voice;
}

/* The first sample the observer saw, before it negated it. */
static float first_seen;

static void negate(void *userdata, float *samples, size_t frames) {
    size_t i;
    if ((*(int *)userdata)++ == 0) first_seen = samples[2];
    for (i = 0; i < 2 * frames; i++) samples[i] = -samples[i];
}

static void silence(void *userdata, float *samples, size_t frames) {
    (void)userdata;
    memset(samples, 0, 2 * frames * sizeof(float));
}

int main(void) {
    ambience_engine_config config;
    ambience_engine *engine = NULL;
    ambience_voice voice = AMBIENCE_VOICE_NONE, ended = AMBIENCE_VOICE_NONE;
    ambience_play_options options;
    sine tone = {440, 0, 0, 0, 0, 0}, short_one = {440, 0, 6000, 0, 0, 0};
    int observed = 0;
    double heard;

    OK(ambience_engine_config_init(&config));
    config.output = AMBIENCE_OUTPUT_OFFLINE;
    config.sample_rate = RATE;
    config.app_name = "stream_test";
    OK(ambience_engine_create(&config, &engine));
    if (!engine) return 1;
    OK(ambience_set_voice_finished_callback(engine, on_finished, NULL));

    /* Refusals: each a status and a message. */
    CHECK(ambience_play_stream(NULL, RATE, 1, NULL, sine_render, &tone, &voice) == AMBIENCE_ERROR_NULL_HANDLE);
    CHECK(strlen(ambience_last_error()) > 0);
    CHECK(ambience_play_stream(engine, RATE, 1, NULL, NULL, &tone, &voice) == AMBIENCE_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ambience_last_error(), "callback") != NULL);
    CHECK(ambience_play_stream(engine, RATE, 3, NULL, sine_render, &tone, &voice) == AMBIENCE_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ambience_last_error(), "channels") != NULL);
    CHECK(ambience_play_stream(engine, 0, 1, NULL, sine_render, &tone, &voice) == AMBIENCE_ERROR_INVALID_ARGUMENT);
    OK(ambience_play_options_init(&options));
    options.gain = NAN;
    CHECK(ambience_play_stream(engine, RATE, 1, &options, sine_render, &tone, &voice) == AMBIENCE_ERROR_INVALID_ARGUMENT);
    CHECK(ambience_engine_set_post_mix(NULL, negate, &observed) == AMBIENCE_ERROR_NULL_HANDLE);
    CHECK(strlen(ambience_last_error()) > 0);
    CHECK(tone.calls == 0);

    /* A 440 Hz stream, heard at its frequency and level. */
    OK(ambience_play_options_init(&options));
    OK(ambience_play_stream(engine, RATE, 1, &options, sine_render, &tone, &voice));
    CHECK(voice != AMBIENCE_VOICE_NONE);
    OK(ambience_render(engine, mix, FRAMES));
    heard = amplitude(440, 1024);
    printf("440 Hz at %.4f in the left channel\n", heard);
    CHECK(heard > 0.28 && heard < 0.31); /* 0.5 centred: 0.2975 in each channel (OpenAL Soft's centre pan) */
    CHECK(amplitude(500, 1024) < 0.05);
    CHECK(tone.calls > 0);

    /* The post-mix observer negates the mix, then silences it; removed, the mix is back. */
    OK(ambience_engine_set_post_mix(engine, negate, &observed));
    OK(ambience_render(engine, mix, FRAMES));
    CHECK(observed == FRAMES / 512 + 1);
    CHECK(first_seen != 0 && mix[2] == -first_seen);
    CHECK(amplitude(440, 0) > 0.28);
    OK(ambience_engine_set_post_mix(engine, silence, NULL));
    OK(ambience_render(engine, mix, FRAMES));
    CHECK(peak(0, FRAMES) == 0);
    OK(ambience_engine_set_post_mix(engine, NULL, NULL));
    OK(ambience_render(engine, mix, FRAMES));
    CHECK(peak(0, FRAMES) > 0.28);

    /* Stopped: never called again. */
    OK(ambience_voice_stop(voice, 0));
    tone.stopped = 1;
    OK(ambience_render(engine, mix, FRAMES));
    CHECK(tone.calls_after_stop == 0);
    CHECK(peak(0, FRAMES) == 0);
    CHECK(ambience_voice_pause(voice) == AMBIENCE_ERROR_STALE_VOICE);

    /* One that returns short ends, and the voice-finished callback names it in ambience_update. */
    OK(ambience_play_stream(engine, RATE, 1, NULL, sine_render, &short_one, &ended));
    OK(ambience_render(engine, mix, FRAMES));
    CHECK(peak(0, 5900) > 0.28);
    CHECK(peak(6000, FRAMES) == 0);
    OK(ambience_update(engine));
    CHECK(finished_voice == ended);
    CHECK(short_one.frame == 6000);

    OK(ambience_engine_destroy(engine));
    return tally();
}
