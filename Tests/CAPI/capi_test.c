/*
 * The C API's own test, written against include/ambience.h only and linked with libambience-c.so.
 * Tests/AmbienceIntegrationTests/AmbienceC/CAPITests.swift builds and runs it (also under valgrind).
 *
 *     capi_test ROOT            every function group, offline, plus NOT_OFFLINE on a device engine (SDL dummy)
 *     capi_test ROOT route      a real route change: needs the private PulseAudio of scripts/with-services.sh
 *     capi_test ROOT bus        the session bus killed and started again (a dbus-daemon of its own)
 *
 * ROOT is the package folder (for Assets/). Prints "N passed, M failed" and exits 1 when anything failed.
 */
#define _POSIX_C_SOURCE 200809L
#include "ambience.h"

#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int passed, failed;
static char root[4096];

static void check(int ok, int line, const char *what) {
    if (ok) {
        passed++;
    } else {
        failed++;
        fprintf(stderr, "FAIL capi_test.c:%d: %s (last error: \"%s\")\n", line, what, ambience_last_error());
    }
}
#define CHECK(cond) check((cond) ? 1 : 0, __LINE__, #cond)

static void expect_status(ambience_status got, ambience_status want, int line, const char *call) {
    if (got == want) {
        passed++;
        /* The message agrees with the status: empty after success, naming the function after a failure. */
        if ((want == AMBIENCE_OK) != (ambience_last_error()[0] == '\0') ||
            (want != AMBIENCE_OK && strstr(ambience_last_error(), "ambience_") == NULL)) {
            failed++;
            fprintf(stderr, "FAIL capi_test.c:%d: %s: last error \"%s\" does not fit status %d\n", line, call,
                    ambience_last_error(), (int)got);
        }
    } else {
        failed++;
        fprintf(stderr, "FAIL capi_test.c:%d: %s returned %d, expected %d (last error: \"%s\")\n", line, call, (int)got,
                (int)want, ambience_last_error());
    }
}
#define EXPECT(call, status) expect_status((call), (status), __LINE__, #call)
#define OK(call) EXPECT(call, AMBIENCE_OK)

static void path_of(char *out, size_t size, const char *relative) { snprintf(out, size, "%s/%s", root, relative); }

/* ---------------------------------------------------------------------------------------------------------- */
/* Measuring                                                                                                   */

/* RMS of one channel (0 left, 1 right) or both (-1) over frames [from, to). */
static double rms(const float *stereo, size_t from, size_t to, int channel) {
    double sum = 0;
    size_t count = 0, i;
    for (i = from; i < to; i++) {
        if (channel != 1) { sum += (double)stereo[2 * i] * stereo[2 * i]; count++; }
        if (channel != 0) { sum += (double)stereo[2 * i + 1] * stereo[2 * i + 1]; count++; }
    }
    return count ? sqrt(sum / (double)count) : 0;
}

enum { RATE = 48000, BLOCK = 12000 }; /* a quarter of a second */
static float mix[2 * BLOCK];

/* Renders a quarter second and returns its RMS after the first 1024 frames (changes land within a block). */
static double render_rms(ambience_engine *engine, int channel) {
    if (ambience_render(engine, mix, BLOCK) != AMBIENCE_OK) return -1;
    return rms(mix, 1024, BLOCK, channel);
}

/* ---------------------------------------------------------------------------------------------------------- */
/* Callbacks: each records into `struct events` and checks it got the userdata it was registered with.        */

struct events {
    int wrong_userdata;
    int voice_ends;
    ambience_voice last_voice;
    ambience_voice_end last_end;
    int state_changes;
    ambience_playback_state last_state;
    int now_playing;
    int now_playing_nil;
    char title[256];
    char path[1024];
    int errors;
    char error_path[1024];
    char error_message[1024];
    int began, ended;
    bool should_resume;
    int route_changes;
    ambience_route_change_reason last_reason;
    char previous_route[256], current_route[256];
    int hints;
    int library_changes;
    ambience_library *changed_library;
    int services_lost, services_back;
    ambience_media_service last_service;
    ambience_engine *engine;     /* for the callbacks that call back into the API */
    ambience_status nested_update;
    int destroy_in_callback;
    int log_warnings;            /* warnings that name the missing song */
    char log_message[1024];
};
static struct events events;

static void on_voice(void *userdata, ambience_voice voice, ambience_voice_end how) {
    struct events *e = (struct events *)userdata;
    if (e != &events) { events.wrong_userdata++; return; }
    e->voice_ends++;
    e->last_voice = voice;
    e->last_end = how;
    e->nested_update = ambience_update(e->engine); /* re-entering update must be refused, not deadlock */
    if (e->destroy_in_callback) ambience_engine_destroy(e->engine);
}

static void on_state(void *userdata, ambience_playback_state state) {
    struct events *e = (struct events *)userdata;
    if (e != &events) { events.wrong_userdata++; return; }
    e->state_changes++;
    e->last_state = state;
}

static void on_now_playing(void *userdata, const ambience_media_item *item) {
    struct events *e = (struct events *)userdata;
    if (e != &events) { events.wrong_userdata++; return; }
    e->now_playing++;
    if (item == NULL) { e->now_playing_nil++; return; }
    snprintf(e->title, sizeof e->title, "%s", item->title ? item->title : "(none)");
    snprintf(e->path, sizeof e->path, "%s", item->path);
}

static void on_error(void *userdata, const char *path, const char *message) {
    struct events *e = (struct events *)userdata;
    if (e != &events) { events.wrong_userdata++; return; }
    e->errors++;
    snprintf(e->error_path, sizeof e->error_path, "%s", path);
    snprintf(e->error_message, sizeof e->error_message, "%s", message);
}

static void on_log(void *userdata, ambience_log_level level, const char *message) {
    struct events *e = (struct events *)userdata;
    if (e != &events) { events.wrong_userdata++; return; }
    /* The log is the process's: only the message about this test's missing song counts. */
    if (level == AMBIENCE_LOG_WARNING && strstr(message, "missing-song.ogg") != NULL) {
        e->log_warnings++;
        snprintf(e->log_message, sizeof e->log_message, "%s", message);
    }
}

static void on_interruption(void *userdata, ambience_interruption type, bool should_resume) {
    struct events *e = (struct events *)userdata;
    if (e != &events) { events.wrong_userdata++; return; }
    if (type == AMBIENCE_INTERRUPTION_BEGAN) e->began++;
    else { e->ended++; e->should_resume = should_resume; }
}

static void on_route(void *userdata, const ambience_route_change *change) {
    struct events *e = (struct events *)userdata;
    if (e != &events) { events.wrong_userdata++; return; }
    e->route_changes++;
    e->last_reason = change->reason;
    snprintf(e->previous_route, sizeof e->previous_route, "%s", change->previous.name);
    snprintf(e->current_route, sizeof e->current_route, "%s", change->current.name);
}

static void on_hint(void *userdata, bool silence) {
    struct events *e = (struct events *)userdata;
    (void)silence;
    if (e != &events) { events.wrong_userdata++; return; }
    e->hints++;
}

static void on_library(void *userdata, ambience_library *library) {
    struct events *e = (struct events *)userdata;
    if (e != &events) { events.wrong_userdata++; return; }
    e->library_changes++;
    e->changed_library = library;
}

static void on_services(void *userdata, ambience_media_service service, bool available) {
    struct events *e = (struct events *)userdata;
    if (e != &events) { events.wrong_userdata++; return; }
    if (available) e->services_back++; else e->services_lost++;
    e->last_service = service;
}

static void set_all_callbacks(ambience_engine *engine) {
    OK(ambience_set_voice_finished_callback(engine, on_voice, &events));
    OK(ambience_set_playback_state_callback(engine, on_state, &events));
    OK(ambience_set_now_playing_callback(engine, on_now_playing, &events));
    OK(ambience_set_playback_error_callback(engine, on_error, &events));
    OK(ambience_set_interruption_callback(engine, on_interruption, &events));
    OK(ambience_set_route_change_callback(engine, on_route, &events));
    OK(ambience_set_silence_hint_callback(engine, on_hint, &events));
    OK(ambience_set_library_changed_callback(engine, on_library, &events));
    OK(ambience_set_media_services_callback(engine, on_services, &events));
}

/* ---------------------------------------------------------------------------------------------------------- */

static ambience_engine *offline_engine(void) {
    ambience_engine_config config;
    ambience_engine *engine = NULL;
    OK(ambience_engine_config_init(&config));
    config.output = AMBIENCE_OUTPUT_OFFLINE;
    config.sample_rate = RATE;
    config.app_name = "capi_test";
    OK(ambience_engine_create(&config, &engine));
    return engine;
}

/* A sine as a sound: `seconds` long, mono, amplitude 0.5. */
static ambience_sound *tone(ambience_engine *engine, double hz, double seconds) {
    size_t frames = (size_t)(seconds * RATE), i;
    float *samples = (float *)malloc(frames * sizeof(float));
    ambience_sound *sound = NULL;
    for (i = 0; i < frames; i++) samples[i] = (float)(0.5 * sin(2 * 3.14159265358979 * hz * (double)i / RATE));
    OK(ambience_sound_create_pcm(engine, "tone", samples, frames, 1, RATE, &sound));
    free(samples); /* the engine copied them */
    return sound;
}

static void test_version_and_config(void) {
    uint32_t major = 99, minor = 99, patch = 99;
    ambience_engine_config config;
    CHECK(ambience_last_error() != NULL && ambience_last_error()[0] == '\0');
    OK(ambience_get_version(&major, &minor, &patch));
    CHECK(major == AMBIENCE_VERSION_MAJOR && minor == AMBIENCE_VERSION_MINOR && patch == AMBIENCE_VERSION_PATCH);
    OK(ambience_get_version(NULL, NULL, NULL));
    {
        char expected[64];
        snprintf(expected, sizeof expected, "%d.%d.%d", AMBIENCE_VERSION_MAJOR, AMBIENCE_VERSION_MINOR,
                 AMBIENCE_VERSION_PATCH);
        CHECK(ambience_version() != NULL && strcmp(ambience_version(), expected) == 0);
        CHECK(AMBIENCE_VERSION == AMBIENCE_VERSION_NUM(AMBIENCE_VERSION_MAJOR, AMBIENCE_VERSION_MINOR,
                                                       AMBIENCE_VERSION_PATCH));
        CHECK(AMBIENCE_VERSION_NUM(0, 10, 0) > AMBIENCE_VERSION_NUM(0, 9, 12));
    }
    OK(ambience_engine_config_init(&config));
    CHECK(config.output == AMBIENCE_OUTPUT_DEVICE && config.sample_rate == 48000 && config.real_voices == 256);
    CHECK(config.device_name == NULL && config.app_name == NULL && config.block_frames == 512);
    CHECK(config.handle_termination_signals); /* the exit rule on SIGTERM, SIGINT and SIGHUP, unless turned off */
    CHECK(config.resampler == AMBIENCE_RESAMPLER_LINEAR && !config.output_limiter);
    CHECK(config.sound_font == NULL && config.module_interpolation == 8 && config.module_stereo_separation == 100);
    EXPECT(ambience_engine_config_init(NULL), AMBIENCE_ERROR_INVALID_ARGUMENT);
}

/* The output limiter from C: eight centred 0.5 sines sum to about 2.4 per channel; limited, the mix stays at full
 * scale. The resampler is set too (a sinc), and the engine renders with it. */
static void test_output_limiter(void) {
    int limited;
    for (limited = 0; limited < 2; limited++) {
        ambience_engine_config config;
        ambience_engine *engine = NULL;
        ambience_sound *sound;
        float peak = 0;
        size_t i;
        int v;
        OK(ambience_engine_config_init(&config));
        config.output = AMBIENCE_OUTPUT_OFFLINE;
        config.sample_rate = RATE;
        config.output_limiter = limited;
        config.resampler = AMBIENCE_RESAMPLER_SINC12;
        OK(ambience_engine_create(&config, &engine));
        sound = tone(engine, 440, 1);
        for (v = 0; v < 8; v++) OK(ambience_play(sound, NULL, NULL));
        OK(ambience_render(engine, mix, BLOCK));
        for (i = 0; i < 2 * BLOCK; i++) peak = fabsf(mix[i]) > peak ? fabsf(mix[i]) : peak;
        if (limited) CHECK(peak > 0.5f && peak <= 1.01f); else CHECK(peak > 1.5f);
        OK(ambience_engine_destroy(engine));
    }
}

static void test_bad_configs(void) {
    ambience_engine_config config;
    ambience_engine *engine = (ambience_engine *)&config; /* must be left alone on failure */
    EXPECT(ambience_engine_create(NULL, NULL), AMBIENCE_ERROR_INVALID_ARGUMENT);
    ambience_engine_config_init(&config);
    config.output = AMBIENCE_OUTPUT_OFFLINE;
    config.sample_rate = 7;
    EXPECT(ambience_engine_create(&config, &engine), AMBIENCE_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ambience_last_error(), "sample_rate") != NULL);
    config.sample_rate = 48000;
    config.output = (ambience_output_kind)42;
    EXPECT(ambience_engine_create(&config, &engine), AMBIENCE_ERROR_INVALID_ARGUMENT);
    config.output = AMBIENCE_OUTPUT_OFFLINE;
    config.resampler = (ambience_resampler)9;
    EXPECT(ambience_engine_create(&config, &engine), AMBIENCE_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ambience_last_error(), "config->resampler is 9") != NULL);
    config.resampler = AMBIENCE_RESAMPLER_SINC12;
    config.real_voices = 0;
    EXPECT(ambience_engine_create(&config, &engine), AMBIENCE_ERROR_INVALID_ARGUMENT);
    config.real_voices = 64;
    /* The same check as Swift's EngineConfiguration.validated(): a zero block once hung the first render. */
    config.block_frames = 0;
    EXPECT(ambience_engine_create(&config, &engine), AMBIENCE_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ambience_last_error(), "config->block_frames is 0") != NULL);
    config.block_frames = 512;
    config.max_voices = 8;
    EXPECT(ambience_engine_create(&config, &engine), AMBIENCE_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ambience_last_error(), "max_voices") != NULL);
    config.max_voices = 1024;
    config.module_interpolation = 3;
    EXPECT(ambience_engine_create(&config, &engine), AMBIENCE_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ambience_last_error(), "config->module_interpolation is 3") != NULL);
    config.module_interpolation = 1;
    config.module_stereo_separation = 201;
    EXPECT(ambience_engine_create(&config, &engine), AMBIENCE_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ambience_last_error(), "config->module_stereo_separation is 201") != NULL);
    config.module_stereo_separation = 50;
    config.app_name = "bad \xff\xfe name";
    EXPECT(ambience_engine_create(&config, &engine), AMBIENCE_ERROR_INVALID_UTF8);
    CHECK(engine == (ambience_engine *)&config);
}

static void test_engine_queries(ambience_engine *engine) {
    int32_t rate = 0;
    bool offline = false;
    char driver[64], small[4];
    size_t required = 0;
    ambience_stats stats;
    ambience_capabilities caps;
    int64_t dropped = -1;
    OK(ambience_engine_get_sample_rate(engine, &rate));
    CHECK(rate == RATE);
    OK(ambience_engine_is_offline(engine, &offline));
    CHECK(offline);
    OK(ambience_engine_get_output_driver(engine, driver, sizeof driver, &required));
    CHECK(strcmp(driver, "offline") == 0 && required == 8);
    /* Ask for the size first; then a buffer too small: truncated, terminated, and said so. */
    required = 0;
    OK(ambience_engine_get_output_driver(engine, NULL, 0, &required));
    CHECK(required == 8);
    EXPECT(ambience_engine_get_output_driver(engine, small, sizeof small, &required), AMBIENCE_ERROR_BUFFER_TOO_SMALL);
    CHECK(strcmp(small, "off") == 0 && required == 8);
    EXPECT(ambience_engine_get_output_driver(engine, NULL, 5, NULL), AMBIENCE_ERROR_INVALID_ARGUMENT);
    EXPECT(ambience_engine_get_output_driver(engine, small, (size_t)-1, NULL), AMBIENCE_ERROR_INVALID_ARGUMENT);
    OK(ambience_engine_get_stats(engine, &stats));
    CHECK(stats.real_voices == 0);
    OK(ambience_engine_get_capabilities(engine, &caps));
    CHECK(caps.real_voices > 0);
    EXPECT(ambience_engine_get_stats(engine, NULL), AMBIENCE_ERROR_INVALID_ARGUMENT);
    OK(ambience_engine_dropped_events(engine, &dropped));
    CHECK(dropped == 0);
    EXPECT(ambience_engine_dropped_events(engine, NULL), AMBIENCE_ERROR_INVALID_ARGUMENT);
    EXPECT(ambience_engine_dropped_events(NULL, &dropped), AMBIENCE_ERROR_NULL_HANDLE);
    EXPECT(ambience_engine_get_sample_rate(engine, NULL), AMBIENCE_ERROR_INVALID_ARGUMENT);
}

static void test_render_levels(ambience_engine *engine) {
    ambience_sound *sound = tone(engine, 440, 2);
    ambience_play_options options;
    ambience_voice voice = AMBIENCE_VOICE_NONE;
    double loud, half, level;
    bool playing = false;

    CHECK(render_rms(engine, -1) < 1e-6); /* nothing plays: silence */
    EXPECT(ambience_render(engine, NULL, 10), AMBIENCE_ERROR_INVALID_ARGUMENT);
    OK(ambience_render(engine, NULL, 0));
    EXPECT(ambience_render(engine, mix, (size_t)-1), AMBIENCE_ERROR_INVALID_ARGUMENT);

    OK(ambience_play_options_init(&options));
    CHECK(options.gain == 1 && options.pitch == 1 && options.priority == 128 && options.bus == NULL);
    options.loop = true;
    OK(ambience_play(sound, &options, &voice));
    CHECK(voice != AMBIENCE_VOICE_NONE);
    loud = render_rms(engine, -1);
    CHECK(loud > 0.1 && loud < 0.5); /* a 0.5 sine, centred: about 0.25 per channel */
    OK(ambience_voice_is_playing(voice, &playing));
    CHECK(playing);

    OK(ambience_voice_set_gain(voice, 0.5f));
    half = render_rms(engine, -1);
    CHECK(half > loud * 0.4 && half < loud * 0.6);
    OK(ambience_voice_set_gain(voice, 1));

    OK(ambience_voice_set_pan(voice, -1));
    render_rms(engine, -1);
    CHECK(rms(mix, 1024, BLOCK, 0) > 4 * rms(mix, 1024, BLOCK, 1)); /* hard left */
    OK(ambience_voice_set_pan(voice, 0));

    OK(ambience_voice_pause(voice));
    CHECK(render_rms(engine, -1) < 1e-4);
    OK(ambience_voice_is_playing(voice, &playing));
    CHECK(!playing);
    OK(ambience_voice_resume(voice));
    CHECK(render_rms(engine, -1) > 0.1);

    OK(ambience_voice_set_pitch(voice, 1.5f));
    OK(ambience_voice_set_position(voice, 2, 0, -1));
    OK(ambience_voice_set_velocity(voice, 1, 0, 0));
    CHECK(render_rms(engine, -1) > 0.01);
    {
        ambience_capabilities caps;
        OK(ambience_engine_get_capabilities(engine, &caps));
        EXPECT(ambience_voice_set_occlusion(voice, 0.5f), caps.effects ? AMBIENCE_OK : AMBIENCE_ERROR_UNSUPPORTED);
        EXPECT(ambience_voice_set_occlusion(voice, 0), caps.effects ? AMBIENCE_OK : AMBIENCE_ERROR_UNSUPPORTED);
        EXPECT(ambience_voice_set_occlusion(voice, 2), caps.effects ? AMBIENCE_OK : AMBIENCE_ERROR_UNSUPPORTED); /* clamped to 1 */
        EXPECT(ambience_voice_set_occlusion(voice, (float)NAN), caps.effects ? AMBIENCE_ERROR_INVALID_ARGUMENT : AMBIENCE_ERROR_UNSUPPORTED);
        if (caps.effects) OK(ambience_voice_set_occlusion(voice, 0));
    }
    OK(ambience_voice_set_pan(voice, 0));

    {
        double elapsed = -1;
        OK(ambience_voice_get_elapsed(voice, &elapsed));
        CHECK(elapsed >= 0 && elapsed < 2.01);
    }
    /* Fading to silence over 0.1 s: the second quarter second is silent. */
    OK(ambience_voice_fade(voice, 0, 0.1));
    render_rms(engine, -1);
    level = render_rms(engine, -1);
    CHECK(level < 1e-4);
    OK(ambience_voice_fade(voice, 1, 0));

    /* Stopping with a fade: the voice goes stale once the fade is over. */
    OK(ambience_voice_stop(voice, 0.05));
    render_rms(engine, -1);
    OK(ambience_update(engine));
    EXPECT(ambience_voice_is_playing(voice, &playing), AMBIENCE_ERROR_STALE_VOICE);
    CHECK(!playing);

    /* NaN and infinities are refused before anything happens; finite values out of range are clamped to the
     * engine's limits (MixerLimits), exactly as in Swift. */
    OK(ambience_play(sound, NULL, &voice));
    OK(ambience_voice_set_gain(voice, -1));  /* 0 */
    OK(ambience_voice_set_gain(voice, 1));
    EXPECT(ambience_voice_set_gain(voice, (float)NAN), AMBIENCE_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ambience_last_error(), "gain is nan") != NULL);
    EXPECT(ambience_voice_set_gain(voice, (float)INFINITY), AMBIENCE_ERROR_INVALID_ARGUMENT);
    OK(ambience_voice_set_pitch(voice, 0));  /* 0.01 */
    EXPECT(ambience_voice_set_pitch(voice, (float)-INFINITY), AMBIENCE_ERROR_INVALID_ARGUMENT);
    OK(ambience_voice_set_pitch(voice, 1));
    OK(ambience_voice_set_pan(voice, 2));  /* hard right */
    EXPECT(ambience_voice_set_pan(voice, (float)NAN), AMBIENCE_ERROR_INVALID_ARGUMENT);
    OK(ambience_voice_set_pan(voice, 0));
    EXPECT(ambience_voice_set_velocity(voice, 1, 0, 0), AMBIENCE_ERROR_INVALID_ARGUMENT); /* panned */
    EXPECT(ambience_voice_set_position(voice, (float)INFINITY, 0, 0), AMBIENCE_ERROR_INVALID_ARGUMENT);
    EXPECT(ambience_voice_fade(voice, 1, (double)NAN), AMBIENCE_ERROR_INVALID_ARGUMENT);
    EXPECT(ambience_voice_stop(voice, (double)NAN), AMBIENCE_ERROR_INVALID_ARGUMENT);
    EXPECT(ambience_voice_is_playing(voice, NULL), AMBIENCE_ERROR_INVALID_ARGUMENT);
    OK(ambience_voice_is_playing(voice, &playing));
    CHECK(playing);
    options.gain = (float)NAN;
    EXPECT(ambience_play(sound, &options, &voice), AMBIENCE_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ambience_last_error(), "options->gain") != NULL);
    options.gain = 1;
    options.priority = 300;
    EXPECT(ambience_play(sound, &options, &voice), AMBIENCE_ERROR_INVALID_ARGUMENT);
    options.priority = 128;
    options.placement = (ambience_placement)9;
    EXPECT(ambience_play(sound, &options, &voice), AMBIENCE_ERROR_INVALID_ARGUMENT);
    OK(ambience_voice_stop(voice, 0)); /* the one-shot played above: the failed calls left `voice` alone */

    /* A voice in the world, then stopped at once: stale for every call. */
    options.placement = AMBIENCE_PLACEMENT_WORLD;
    options.position[0] = 1; options.position[1] = 0; options.position[2] = -2;
    OK(ambience_play(sound, &options, &voice));
    OK(ambience_voice_set_velocity(voice, 0, 0, 1));
    OK(ambience_voice_stop(voice, 0));
    EXPECT(ambience_voice_stop(voice, 0), AMBIENCE_ERROR_STALE_VOICE);
    EXPECT(ambience_voice_pause(voice), AMBIENCE_ERROR_STALE_VOICE);
    EXPECT(ambience_voice_resume(voice), AMBIENCE_ERROR_STALE_VOICE);
    EXPECT(ambience_voice_set_gain(voice, 1), AMBIENCE_ERROR_STALE_VOICE);
    EXPECT(ambience_voice_set_pitch(voice, 1), AMBIENCE_ERROR_STALE_VOICE);
    EXPECT(ambience_voice_set_pan(voice, 0), AMBIENCE_ERROR_STALE_VOICE);
    EXPECT(ambience_voice_set_position(voice, 0, 0, 0), AMBIENCE_ERROR_STALE_VOICE);
    EXPECT(ambience_voice_set_velocity(voice, 0, 0, 0), AMBIENCE_ERROR_STALE_VOICE);
    EXPECT(ambience_voice_fade(voice, 0, 1), AMBIENCE_ERROR_STALE_VOICE);
    EXPECT(ambience_voice_set_occlusion(voice, 0), AMBIENCE_ERROR_STALE_VOICE);
    EXPECT(ambience_voice_is_playing(voice, &playing), AMBIENCE_ERROR_STALE_VOICE);
    {
        double elapsed;
        EXPECT(ambience_voice_get_elapsed(voice, &elapsed), AMBIENCE_ERROR_STALE_VOICE);
    }
    EXPECT(ambience_voice_pause(AMBIENCE_VOICE_NONE), AMBIENCE_ERROR_STALE_VOICE);
    /* Numbers are checked before the voice: NaN is an invalid argument whether or not the voice still plays. */
    EXPECT(ambience_voice_set_gain(voice, (float)NAN), AMBIENCE_ERROR_INVALID_ARGUMENT);
    EXPECT(ambience_voice_set_pitch(voice, (float)INFINITY), AMBIENCE_ERROR_INVALID_ARGUMENT);
    EXPECT(ambience_voice_set_pan(voice, (float)NAN), AMBIENCE_ERROR_INVALID_ARGUMENT);
    EXPECT(ambience_voice_set_position(voice, 0, (float)NAN, 0), AMBIENCE_ERROR_INVALID_ARGUMENT);
    EXPECT(ambience_voice_set_velocity(voice, (float)-INFINITY, 0, 0), AMBIENCE_ERROR_INVALID_ARGUMENT);
    EXPECT(ambience_voice_fade(voice, 0, (double)NAN), AMBIENCE_ERROR_INVALID_ARGUMENT);
    EXPECT(ambience_voice_stop(voice, (double)INFINITY), AMBIENCE_ERROR_INVALID_ARGUMENT);
    EXPECT(ambience_voice_set_occlusion(voice, (float)NAN), AMBIENCE_ERROR_INVALID_ARGUMENT);
    EXPECT(ambience_voice_set_gain(AMBIENCE_VOICE_NONE, (float)NAN), AMBIENCE_ERROR_INVALID_ARGUMENT);
    EXPECT(ambience_voice_pause((ambience_voice)0x7fffffffffffULL), AMBIENCE_ERROR_INVALID_ARGUMENT);
    CHECK(render_rms(engine, -1) < 1e-4);
    OK(ambience_sound_unload(sound));
}

static void test_voice_finished_callback(ambience_engine *engine) {
    ambience_sound *blip = tone(engine, 880, 0.1);
    ambience_voice voice = AMBIENCE_VOICE_NONE;
    memset(&events, 0, sizeof events);
    events.engine = engine;
    set_all_callbacks(engine);
    OK(ambience_play(blip, NULL, &voice));
    OK(ambience_update(engine));
    CHECK(events.voice_ends == 0);
    render_rms(engine, -1);
    OK(ambience_update(engine));
    CHECK(events.voice_ends == 1 && events.last_voice == voice && events.last_end == AMBIENCE_VOICE_FINISHED);
    CHECK(events.nested_update == AMBIENCE_ERROR_BUSY);
    CHECK(events.wrong_userdata == 0);
    EXPECT(ambience_voice_pause(voice), AMBIENCE_ERROR_STALE_VOICE);
    /* Removing a callback: the next finished voice is not reported. */
    OK(ambience_set_voice_finished_callback(engine, NULL, NULL));
    OK(ambience_play(blip, NULL, &voice));
    render_rms(engine, -1);
    OK(ambience_update(engine));
    CHECK(events.voice_ends == 1);
    OK(ambience_set_voice_finished_callback(engine, on_voice, &events));
    OK(ambience_sound_unload(blip));
}

static void test_sounds(ambience_engine *engine) {
    char laser[4200], missing[4200], wrong_utf8[4200];
    ambience_sound *sound = NULL, *again = NULL;
    ambience_sound_info info;
    uint64_t memory = 0;
    const char *paths[2];
    ambience_voice voice;

    path_of(laser, sizeof laser, "Assets/SFX/laser.wav");
    path_of(missing, sizeof missing, "Assets/SFX/no-such-file.wav");
    path_of(wrong_utf8, sizeof wrong_utf8, "Assets/SFX/\xc3\x28.wav");

    OK(ambience_sound_load(engine, laser, &sound));
    CHECK(sound != NULL);
    OK(ambience_sound_load(engine, laser, &again));
    CHECK(again == sound); /* the same file: the same handle */
    OK(ambience_sound_get_info(sound, &info));
    CHECK(info.sample_rate == 44100 && info.channels == 1 && info.frames == 11025);
    CHECK(info.duration > 0.24 && info.duration < 0.26 && info.memory_cost == 11025 * 4);
    OK(ambience_engine_get_sound_memory(engine, &memory));
    CHECK(memory >= info.memory_cost);

    paths[0] = laser;
    path_of(missing, sizeof missing, "Assets/SFX/pickup.wav");
    paths[1] = missing;
    OK(ambience_preload(engine, paths, 2));
    OK(ambience_preload(engine, NULL, 0));
    EXPECT(ambience_preload(engine, NULL, 2), AMBIENCE_ERROR_INVALID_ARGUMENT);
    paths[1] = NULL;
    EXPECT(ambience_preload(engine, paths, 2), AMBIENCE_ERROR_INVALID_ARGUMENT);
    paths[1] = "\xff";
    EXPECT(ambience_preload(engine, paths, 2), AMBIENCE_ERROR_INVALID_UTF8);

    /* A sound that plays, then is unloaded: its handle is dead, its voice stale. */
    OK(ambience_play(sound, NULL, &voice));
    CHECK(render_rms(engine, -1) > 0.01);
    OK(ambience_sound_unload(sound));
    EXPECT(ambience_voice_set_gain(voice, 1), AMBIENCE_ERROR_STALE_VOICE);
    EXPECT(ambience_sound_unload(sound), AMBIENCE_ERROR_DESTROYED_HANDLE);
    EXPECT(ambience_sound_get_info(sound, &info), AMBIENCE_ERROR_DESTROYED_HANDLE);
    EXPECT(ambience_play(sound, NULL, &voice), AMBIENCE_ERROR_DESTROYED_HANDLE);
    OK(ambience_sound_load(engine, laser, &again));
    CHECK(again != sound); /* handles are never reused */
    OK(ambience_sound_unload(again));

    /* Files that cannot be loaded, and strings that are not strings. */
    path_of(missing, sizeof missing, "Assets/SFX/no-such-file.wav");
    sound = NULL;
    EXPECT(ambience_sound_load(engine, missing, &sound), AMBIENCE_ERROR_DECODING);
    CHECK(sound == NULL && strstr(ambience_last_error(), "no-such-file.wav") != NULL);
    EXPECT(ambience_sound_load(engine, wrong_utf8, &sound), AMBIENCE_ERROR_INVALID_UTF8);
    EXPECT(ambience_sound_load(engine, NULL, &sound), AMBIENCE_ERROR_INVALID_ARGUMENT);
    EXPECT(ambience_sound_load(engine, laser, NULL), AMBIENCE_ERROR_INVALID_ARGUMENT);
    EXPECT(ambience_sound_create_pcm(engine, "x", NULL, 10, 1, RATE, &sound), AMBIENCE_ERROR_INVALID_ARGUMENT);
    {
        float samples[4] = {0, 0.5f, (float)NAN, 0};
        EXPECT(ambience_sound_create_pcm(engine, "x", samples, 1, 9, RATE, &sound), AMBIENCE_ERROR_INVALID_ARGUMENT);
        EXPECT(ambience_sound_create_pcm(engine, "x", samples, 4, 1, RATE, &sound), AMBIENCE_ERROR_INVALID_ARGUMENT);
        EXPECT(ambience_sound_create_pcm(engine, "x", samples, 0, 1, RATE, &sound), AMBIENCE_ERROR_INVALID_ARGUMENT);
        EXPECT(ambience_sound_create_pcm(engine, "x", samples, 1, 1, 0, &sound), AMBIENCE_ERROR_INVALID_ARGUMENT);
        EXPECT(ambience_sound_create_pcm(engine, "x", samples, 1, 1, 768001, &sound), AMBIENCE_ERROR_INVALID_ARGUMENT);
        EXPECT(ambience_sound_create_pcm(engine, "\xfe", samples, 1, 1, RATE, &sound), AMBIENCE_ERROR_INVALID_UTF8);
    }
    {
        /* A sound over the budget is refused before it is decoded, naming the file and its size. */
        ambience_engine_config config;
        ambience_engine *small = NULL;
        OK(ambience_engine_config_init(&config));
        config.output = AMBIENCE_OUTPUT_OFFLINE;
        config.sound_memory_budget = 1024;
        OK(ambience_engine_create(&config, &small));
        sound = NULL;
        EXPECT(ambience_sound_load(small, laser, &sound), AMBIENCE_ERROR_DECODING);
        CHECK(sound == NULL && strstr(ambience_last_error(), "laser.wav") != NULL);
        CHECK(strstr(ambience_last_error(), "1024") != NULL);
        OK(ambience_engine_destroy(small));
    }
    {
        /* A handle holds its sound: with a budget of one sound, three loaded handles all still play. */
        ambience_engine_config config;
        ambience_engine *tight = NULL;
        ambience_sound *held[3] = {NULL, NULL, NULL};
        const char *names[3] = {"Assets/SFX/laser.wav", "Assets/SFX/pickup.wav", "Assets/SFX/ui-click.wav"};
        char path[4200];
        OK(ambience_engine_config_init(&config));
        config.output = AMBIENCE_OUTPUT_OFFLINE;
        config.sound_memory_budget = 60000; /* one of these at a time */
        OK(ambience_engine_create(&config, &tight));
        for (int i = 0; i < 3; i++) {
            path_of(path, sizeof path, names[i]);
            OK(ambience_sound_load(tight, path, &held[i]));
        }
        /* All three stay resident, past the budget: none was evicted (nor is decoded again to play). */
        OK(ambience_engine_get_sound_memory(tight, &memory));
        CHECK(memory == (11025 + 13230 + 1764) * 4);
        for (int i = 0; i < 3; i++) {
            voice = AMBIENCE_VOICE_NONE;
            OK(ambience_play(held[i], NULL, &voice));
            CHECK(voice != AMBIENCE_VOICE_NONE);
        }
        OK(ambience_engine_destroy(tight));
    }
}

static void test_listener(ambience_engine *engine) {
    ambience_listener listener;
    OK(ambience_listener_get(engine, &listener));
    CHECK(listener.forward[2] == -1 && listener.up[1] == 1 && listener.reference_distance == 1);
    listener.position[0] = 3;
    listener.rolloff = 2;
    OK(ambience_listener_set(engine, &listener));
    OK(ambience_listener_set_position(engine, 1, 2, 3));
    OK(ambience_listener_get(engine, &listener));
    CHECK(listener.position[0] == 1 && listener.position[1] == 2 && listener.position[2] == 3 && listener.rolloff == 2);
    listener.forward[0] = listener.forward[1] = listener.forward[2] = 0;
    EXPECT(ambience_listener_set(engine, &listener), AMBIENCE_ERROR_INVALID_ARGUMENT);
    EXPECT(ambience_listener_set(engine, NULL), AMBIENCE_ERROR_INVALID_ARGUMENT);
    EXPECT(ambience_listener_set_position(engine, (float)NAN, 0, 0), AMBIENCE_ERROR_INVALID_ARGUMENT);
    OK(ambience_listener_set_position(engine, 0, 0, 0));
}

static void test_buses(ambience_engine *engine, ambience_engine *other) {
    ambience_bus *master = NULL, *music = NULL, *sfx = NULL, *ui = NULL, *dialogue = NULL, *old_name = NULL;
    ambience_bus *mine = NULL, *foreign = NULL;
    ambience_sound *sound = tone(engine, 330, 2);
    ambience_play_options options;
    ambience_voice voice;
    char name[64];
    float gain = 0;
    bool muted = true;
    size_t count = 99;
    ambience_status reverb;

    OK(ambience_bus_get(engine, AMBIENCE_BUS_MASTER, &master));
    OK(ambience_bus_get(engine, AMBIENCE_BUS_MUSIC, &music));
    OK(ambience_bus_get(engine, AMBIENCE_BUS_SFX, &sfx));
    OK(ambience_bus_get(engine, AMBIENCE_BUS_UI, &ui));
    OK(ambience_bus_get(engine, AMBIENCE_BUS_DIALOGUE, &dialogue));
    OK(ambience_bus_get_name(dialogue, name, sizeof name, NULL));
    CHECK(strcmp(name, "dialogue") == 0);
    /* The deprecated name is the same bus. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    OK(ambience_bus_get(engine, AMBIENCE_BUS_VOICE, &old_name));
#pragma GCC diagnostic pop
    CHECK(old_name == dialogue);
    EXPECT(ambience_bus_get(engine, (ambience_builtin_bus)5, &ui), AMBIENCE_ERROR_INVALID_ARGUMENT);
    OK(ambience_bus_get_name(music, name, sizeof name, NULL));
    CHECK(strcmp(name, "music") == 0);
    OK(ambience_bus_create(engine, "weapons \xe2\x9a\x94", sfx, &mine)); /* UTF-8 names are fine */
    OK(ambience_bus_get_name(mine, name, sizeof name, NULL));
    CHECK(strcmp(name, "weapons \xe2\x9a\x94") == 0);
    /* Cut at a character boundary: "weapons " plus a 3-byte character does not fit in 10 bytes. */
    EXPECT(ambience_bus_get_name(mine, name, 10, NULL), AMBIENCE_ERROR_BUFFER_TOO_SMALL);
    CHECK(strcmp(name, "weapons ") == 0);
    EXPECT(ambience_bus_create(engine, NULL, NULL, &mine), AMBIENCE_ERROR_INVALID_ARGUMENT);
    EXPECT(ambience_bus_create(engine, "\x80", NULL, &mine), AMBIENCE_ERROR_INVALID_UTF8);

    /* A voice on the new bus: the bus's gain and mute reach the output. */
    OK(ambience_play_options_init(&options));
    options.bus = mine;
    options.loop = true;
    OK(ambience_play(sound, &options, &voice));
    CHECK(render_rms(engine, -1) > 0.1);
    OK(ambience_bus_set_muted(mine, true));
    OK(ambience_bus_get_muted(mine, &muted));
    CHECK(muted);
    CHECK(render_rms(engine, -1) < 1e-4);
    OK(ambience_bus_set_muted(mine, false));
    OK(ambience_bus_set_gain(sfx, 0.5f));
    OK(ambience_bus_get_gain(sfx, &gain));
    CHECK(gain == 0.5f);
    OK(ambience_bus_get_effective_gain(mine, &gain));
    CHECK(gain > 0.49f && gain < 0.51f);
    OK(ambience_bus_set_gain(sfx, 1));
    OK(ambience_bus_fade(master, 0, 0.1));
    render_rms(engine, -1);
    CHECK(render_rms(engine, -1) < 1e-4);
    OK(ambience_bus_get_gain(master, &gain));
    CHECK(gain == 0);
    OK(ambience_bus_set_gain(master, 1));
    OK(ambience_bus_set_gain(master, 100));  /* clamped to +36 dB */
    OK(ambience_bus_get_gain(master, &gain));
    CHECK(gain == 64);
    OK(ambience_bus_set_gain(master, 1));
    EXPECT(ambience_bus_set_gain(master, (float)NAN), AMBIENCE_ERROR_INVALID_ARGUMENT);
    EXPECT(ambience_bus_fade(master, 1, (double)NAN), AMBIENCE_ERROR_INVALID_ARGUMENT);

    reverb = ambience_bus_set_reverb(mine, AMBIENCE_REVERB_HALL);
    CHECK(reverb == AMBIENCE_OK || reverb == AMBIENCE_ERROR_UNSUPPORTED);
    reverb = ambience_bus_set_reverb(mine, AMBIENCE_REVERB_NONE);
    CHECK(reverb == AMBIENCE_OK || reverb == AMBIENCE_ERROR_UNSUPPORTED);
    EXPECT(ambience_bus_set_reverb(mine, (ambience_reverb_preset)77), AMBIENCE_ERROR_INVALID_ARGUMENT);

    /* Ducking: the default voice-over-music rule, one more, then none. */
    OK(ambience_ducking_get_count(engine, &count));
    CHECK(count == 1);
    OK(ambience_ducking_add(engine, dialogue, mine, 12, 0.05, 0.2));
    OK(ambience_ducking_get_count(engine, &count));
    CHECK(count == 2);
    EXPECT(ambience_ducking_add(engine, mine, mine, 6, 0, 0), AMBIENCE_ERROR_INVALID_ARGUMENT);
    EXPECT(ambience_ducking_add(engine, NULL, mine, 6, 0, 0), AMBIENCE_ERROR_NULL_HANDLE);
    OK(ambience_bus_get(other, AMBIENCE_BUS_SFX, &foreign));
    EXPECT(ambience_ducking_add(engine, foreign, mine, 6, 0, 0), AMBIENCE_ERROR_WRONG_ENGINE);
    EXPECT(ambience_bus_create(engine, "x", foreign, &mine), AMBIENCE_ERROR_WRONG_ENGINE);
    options.bus = foreign;
    EXPECT(ambience_play(sound, &options, &voice), AMBIENCE_ERROR_WRONG_ENGINE);
    OK(ambience_ducking_clear(engine));
    OK(ambience_ducking_get_count(engine, &count));
    CHECK(count == 0);

    /* A bus handle is not an engine handle, nor the other way round. */
    EXPECT(ambience_update((ambience_engine *)mine), AMBIENCE_ERROR_INVALID_ARGUMENT);
    EXPECT(ambience_bus_set_gain((ambience_bus *)engine, 1), AMBIENCE_ERROR_INVALID_ARGUMENT);
    EXPECT(ambience_sound_unload((ambience_sound *)mine), AMBIENCE_ERROR_INVALID_ARGUMENT);
    OK(ambience_sound_unload(sound));
}

static void test_music(ambience_engine *engine) {
    char theme[4200], lullaby[4200], missing[4200], tag[256];
    const char *queue[2];
    size_t count = 0, required = 0;
    ambience_playback_state state;
    ambience_now_playing now;
    double time = -1, crossfade = -1;
    float volume = -1;
    ambience_shuffle_mode shuffle;
    ambience_repeat_mode repeat;
    ambience_loudness_matching loudness = AMBIENCE_LOUDNESS_TRACK;
    ambience_bus *music_bus = NULL;

    path_of(theme, sizeof theme, "Assets/Music/gravity-wave-theme.ogg");
    path_of(lullaby, sizeof lullaby, "Assets/Music/orbit-lullaby.mp3");
    path_of(missing, sizeof missing, "Assets/Music/missing-song.ogg");
    memset(&events, 0, sizeof events);
    events.engine = engine;
    set_all_callbacks(engine);

    queue[0] = theme;
    queue[1] = lullaby;
    OK(ambience_music_set_queue(engine, queue, 2));
    OK(ambience_music_get_queue_count(engine, &count));
    CHECK(count == 2);
    OK(ambience_music_get_state(engine, &state));
    CHECK(state == AMBIENCE_PLAYBACK_STOPPED);
    OK(ambience_music_play(engine));
    OK(ambience_update(engine));
    CHECK(events.state_changes >= 1 && events.last_state == AMBIENCE_PLAYBACK_PLAYING);
    CHECK(events.now_playing >= 1 && strcmp(events.title, "Gravity Wave Theme") == 0);
    CHECK(strcmp(events.path, theme) == 0);
    CHECK(render_rms(engine, -1) > 0.01); /* the music is heard */

    OK(ambience_music_get_now_playing(engine, &now));
    CHECK(now.has_item && now.queue_index == 0 && now.track_number == 1);
    CHECK(now.duration > 39.9 && now.duration < 40.1);
    OK(ambience_music_get_now_playing_tag(engine, AMBIENCE_TAG_TITLE, tag, sizeof tag, &required));
    CHECK(strcmp(tag, "Gravity Wave Theme") == 0 && required == strlen("Gravity Wave Theme") + 1);
    OK(ambience_music_get_now_playing_tag(engine, AMBIENCE_TAG_ARTIST, tag, sizeof tag, NULL));
    CHECK(strcmp(tag, "Ambience Ensemble") == 0);
    OK(ambience_music_get_now_playing_tag(engine, AMBIENCE_TAG_ALBUM, tag, sizeof tag, NULL));
    CHECK(strcmp(tag, "Gravity Wave") == 0);
    OK(ambience_music_get_now_playing_tag(engine, AMBIENCE_TAG_PATH, tag, sizeof tag, NULL));
    CHECK(strcmp(tag, theme) == 0 || strlen(theme) >= sizeof tag);
    OK(ambience_music_get_now_playing_tag(engine, AMBIENCE_TAG_COMPOSER, tag, sizeof tag, NULL));
    CHECK(tag[0] == '\0');
    EXPECT(ambience_music_get_now_playing_tag(engine, (ambience_tag)99, tag, sizeof tag, NULL),
           AMBIENCE_ERROR_INVALID_ARGUMENT);

    OK(ambience_music_get_time(engine, &time));
    CHECK(time > 0.1 && time < 0.5);
    OK(ambience_music_set_time(engine, 10));
    OK(ambience_music_get_time(engine, &time));
    CHECK(time > 9.99 && time < 10.01);
    render_rms(engine, -1);
    OK(ambience_music_get_time(engine, &time));
    CHECK(time > 10.1 && time < 10.5);
    EXPECT(ambience_music_set_time(engine, (double)NAN), AMBIENCE_ERROR_INVALID_ARGUMENT);
    EXPECT(ambience_music_set_time(engine, (double)INFINITY), AMBIENCE_ERROR_INVALID_ARGUMENT);

    OK(ambience_music_next(engine));
    OK(ambience_update(engine));
    CHECK(strcmp(events.title, "Orbit Lullaby") == 0);
    OK(ambience_music_get_now_playing(engine, &now));
    CHECK(now.queue_index == 1 && now.track_number == 2);
    OK(ambience_music_previous(engine));
    OK(ambience_update(engine));
    CHECK(strcmp(events.title, "Gravity Wave Theme") == 0);

    OK(ambience_music_pause(engine));
    OK(ambience_update(engine));
    CHECK(events.last_state == AMBIENCE_PLAYBACK_PAUSED);
    CHECK(render_rms(engine, -1) < 1e-4);
    OK(ambience_music_play(engine));

    OK(ambience_music_set_shuffle(engine, AMBIENCE_SHUFFLE_SONGS));
    OK(ambience_music_get_shuffle(engine, &shuffle));
    CHECK(shuffle == AMBIENCE_SHUFFLE_SONGS);
    OK(ambience_music_set_shuffle(engine, AMBIENCE_SHUFFLE_OFF));
    EXPECT(ambience_music_set_shuffle(engine, (ambience_shuffle_mode)3), AMBIENCE_ERROR_INVALID_ARGUMENT);
    OK(ambience_music_set_repeat(engine, AMBIENCE_REPEAT_ALL));
    OK(ambience_music_get_repeat(engine, &repeat));
    CHECK(repeat == AMBIENCE_REPEAT_ALL);
    EXPECT(ambience_music_set_repeat(engine, (ambience_repeat_mode)-1), AMBIENCE_ERROR_INVALID_ARGUMENT);
    OK(ambience_music_set_volume(engine, 0.25f));
    OK(ambience_music_get_volume(engine, &volume));
    CHECK(volume == 0.25f);
    OK(ambience_music_set_volume(engine, 1.5f));  /* clamped to 1 */
    OK(ambience_music_get_volume(engine, &volume));
    CHECK(volume == 1);
    EXPECT(ambience_music_set_volume(engine, (float)NAN), AMBIENCE_ERROR_INVALID_ARGUMENT);
    OK(ambience_music_set_volume(engine, 1));
    OK(ambience_music_set_crossfade(engine, 2));
    OK(ambience_music_get_crossfade(engine, &crossfade));
    CHECK(crossfade == 2);
    OK(ambience_music_set_crossfade(engine, 0));
    OK(ambience_music_get_loudness_matching(engine, &loudness));
    CHECK(loudness == AMBIENCE_LOUDNESS_OFF);  /* off by default */
    OK(ambience_music_set_loudness_matching(engine, AMBIENCE_LOUDNESS_AUTOMATIC));
    OK(ambience_music_get_loudness_matching(engine, &loudness));
    CHECK(loudness == AMBIENCE_LOUDNESS_AUTOMATIC);
    EXPECT(ambience_music_set_loudness_matching(engine, (ambience_loudness_matching)7), AMBIENCE_ERROR_INVALID_ARGUMENT);
    EXPECT(ambience_music_get_loudness_matching(engine, NULL), AMBIENCE_ERROR_INVALID_ARGUMENT);
    OK(ambience_music_set_loudness_matching(engine, AMBIENCE_LOUDNESS_OFF));

    /* The music bus carries the player. */
    OK(ambience_bus_get(engine, AMBIENCE_BUS_MUSIC, &music_bus));
    OK(ambience_bus_set_muted(music_bus, true));
    CHECK(render_rms(engine, -1) < 1e-4);
    OK(ambience_bus_set_muted(music_bus, false));

    /* An unplayable file: the playback-error callback names it, and the player moves on. */
    queue[0] = missing;
    OK(ambience_music_append(engine, queue, 1));
    OK(ambience_music_get_queue_count(engine, &count));
    CHECK(count == 3);
    OK(ambience_music_stop(engine));
    OK(ambience_music_set_queue(engine, queue, 1));
    OK(ambience_music_append(engine, NULL, 0));
    /* The log says so too: a warning, to the log callback, in ambience_update like the playback-error callback. */
    {
        ambience_log_level level = AMBIENCE_LOG_DEBUG;
        OK(ambience_get_log_level(&level));
        CHECK(level == AMBIENCE_LOG_WARNING); /* the default (the test runs without AMBIENCE_LOG) */
        EXPECT(ambience_set_log_level((ambience_log_level)9), AMBIENCE_ERROR_INVALID_ARGUMENT);
        EXPECT(ambience_get_log_level(NULL), AMBIENCE_ERROR_INVALID_ARGUMENT);
        EXPECT(ambience_set_log_callback(NULL, on_log, &events), AMBIENCE_ERROR_NULL_HANDLE);
        OK(ambience_set_log_callback(engine, on_log, &events));
    }
    OK(ambience_music_play(engine));
    /* The player opens files on the streaming side (offline: as it renders), and reports in the next update. */
    render_rms(engine, -1);
    CHECK(events.log_warnings == 0); /* not before ambience_update */
    OK(ambience_update(engine));
    CHECK(events.log_warnings == 1 && strstr(events.log_message, "music: skipped") != NULL);
    OK(ambience_set_log_callback(engine, NULL, NULL));
    CHECK(events.errors == 1 && strcmp(events.error_path, missing) == 0);
    CHECK(strstr(events.error_message, "missing-song.ogg") != NULL);
    OK(ambience_music_get_state(engine, &state));
    CHECK(state == AMBIENCE_PLAYBACK_STOPPED);
    CHECK(events.now_playing_nil >= 1);
    CHECK(events.wrong_userdata == 0);

    queue[0] = "\xff\xff";
    EXPECT(ambience_music_set_queue(engine, queue, 1), AMBIENCE_ERROR_INVALID_UTF8);
    EXPECT(ambience_music_set_queue(engine, NULL, 1), AMBIENCE_ERROR_INVALID_ARGUMENT);
    OK(ambience_music_set_queue(engine, NULL, 0));
    OK(ambience_music_get_queue_count(engine, &count));
    CHECK(count == 0);
    OK(ambience_music_get_now_playing(engine, &now));
    CHECK(!now.has_item && now.queue_index == -1);
    OK(ambience_music_get_now_playing_tag(engine, AMBIENCE_TAG_TITLE, tag, sizeof tag, NULL));
    CHECK(tag[0] == '\0');
}

/*
 * The system player. Whatever players share the session bus (other test engines may), every call answers and
 * nothing crashes; with no bus at all it reports stopped and refuses to open a file.
 */
static void test_system_music(ambience_engine *engine) {
    bool available = true;
    ambience_playback_state state = AMBIENCE_PLAYBACK_INTERRUPTED;
    double seconds = -1;
    char tag[256];
    size_t required = 0;
    char theme[4200];

    OK(ambience_system_music_is_available(engine, &available));
    OK(ambience_system_music_get_state(engine, &state));
    CHECK(state == AMBIENCE_PLAYBACK_STOPPED || state == AMBIENCE_PLAYBACK_PLAYING || state == AMBIENCE_PLAYBACK_PAUSED);
    OK(ambience_system_music_get_time(engine, &seconds));
    CHECK(seconds >= 0);
    OK(ambience_system_music_get_now_playing_tag(engine, AMBIENCE_TAG_TITLE, tag, sizeof tag, &required));
    OK(ambience_system_music_set_player(engine, "no-such-player"));
    OK(ambience_system_music_set_player(engine, NULL));
    /* Naming a player made the desktop player the game's music; the game can say it is the user's again. */
    bool game_music = false;
    OK(ambience_system_music_get_game_music(engine, &game_music));
    CHECK(game_music);
    OK(ambience_system_music_set_game_music(engine, false));
    OK(ambience_system_music_get_game_music(engine, &game_music));
    CHECK(!game_music);
    EXPECT(ambience_system_music_get_game_music(engine, NULL), AMBIENCE_ERROR_INVALID_ARGUMENT);
    EXPECT(ambience_system_music_set_game_music(NULL, true), AMBIENCE_ERROR_NULL_HANDLE);
    if (!available) {
        /* No bus: nothing to drive. */
        OK(ambience_system_music_play(engine));
        CHECK(state == AMBIENCE_PLAYBACK_STOPPED);
        path_of(theme, sizeof theme, "Assets/Music/gravity-wave-theme.ogg");
        EXPECT(ambience_system_music_open(engine, theme), AMBIENCE_ERROR_UNSUPPORTED);
        CHECK(strstr(ambience_last_error(), "player") != NULL);
    }
    /* As the application player: NaN is refused, a negative time is the track's start. */
    EXPECT(ambience_system_music_set_time(engine, (double)NAN), AMBIENCE_ERROR_INVALID_ARGUMENT);
    OK(ambience_system_music_set_time(engine, -1));
    EXPECT(ambience_system_music_get_state(NULL, &state), AMBIENCE_ERROR_NULL_HANDLE);
    EXPECT(ambience_system_music_get_state(engine, NULL), AMBIENCE_ERROR_INVALID_ARGUMENT);
    EXPECT(ambience_system_music_open(engine, NULL), AMBIENCE_ERROR_INVALID_ARGUMENT);
    EXPECT(ambience_system_music_set_player(engine, "\xff\xfe"), AMBIENCE_ERROR_INVALID_UTF8);
}

static void test_session(ambience_engine *engine) {
    ambience_session_state state;
    ambience_sound *sound = tone(engine, 500, 2);
    ambience_play_options options;
    ambience_voice voice;
    char route[64];
    double ducked = 0;

    memset(&events, 0, sizeof events);
    events.engine = engine;
    set_all_callbacks(engine);
    OK(ambience_session_get_state(engine, &state));
    CHECK(state.category == AMBIENCE_CATEGORY_SOLO_AMBIENT && !state.is_active && !state.is_interrupted);
    OK(ambience_session_set_category(engine, AMBIENCE_CATEGORY_PLAYBACK, AMBIENCE_SESSION_MIX_WITH_OTHERS));
    OK(ambience_session_get_state(engine, &state));
    CHECK(state.category == AMBIENCE_CATEGORY_PLAYBACK && state.options == AMBIENCE_SESSION_MIX_WITH_OTHERS);
    EXPECT(ambience_session_set_category(engine, (ambience_session_category)7, 0), AMBIENCE_ERROR_INVALID_ARGUMENT);
    EXPECT(ambience_session_set_category(engine, AMBIENCE_CATEGORY_AMBIENT, 0x80), AMBIENCE_ERROR_INVALID_ARGUMENT);
    OK(ambience_session_set_category(engine, AMBIENCE_CATEGORY_SOLO_AMBIENT, 0));
    OK(ambience_session_set_active(engine, true, 0));
    OK(ambience_session_get_state(engine, &state));
    CHECK(state.is_active && !state.is_other_audio_playing && !state.other_music_was_playing_at_launch);
    OK(ambience_session_get_route(engine, route, sizeof route, NULL));
    CHECK(strcmp(route, "offline") == 0);

    /* The ducked volume of other players: clamped, NaN and infinities refused without a change. */
    OK(ambience_session_get_others_ducked_volume(engine, &ducked));
    CHECK(ducked == 0.3);
    OK(ambience_session_set_others_ducked_volume(engine, 0.5));
    EXPECT(ambience_session_set_others_ducked_volume(engine, NAN), AMBIENCE_ERROR_INVALID_ARGUMENT);
    EXPECT(ambience_session_set_others_ducked_volume(engine, -INFINITY), AMBIENCE_ERROR_INVALID_ARGUMENT);
    OK(ambience_session_get_others_ducked_volume(engine, &ducked));
    CHECK(ducked == 0.5);
    OK(ambience_session_set_others_ducked_volume(engine, 4));
    OK(ambience_session_get_others_ducked_volume(engine, &ducked));
    CHECK(ducked == 1);
    EXPECT(ambience_session_get_others_ducked_volume(engine, NULL), AMBIENCE_ERROR_INVALID_ARGUMENT);

    OK(ambience_play_options_init(&options));
    options.loop = true;
    OK(ambience_play(sound, &options, &voice));
    CHECK(render_rms(engine, -1) > 0.1);

    /* An interruption silences app audio; its end resumes it and says so. */
    OK(ambience_session_begin_interruption(engine));
    OK(ambience_update(engine));
    CHECK(events.began == 1);
    CHECK(render_rms(engine, -1) < 1e-4);
    OK(ambience_session_get_state(engine, &state));
    CHECK(state.is_interrupted);
    OK(ambience_session_end_interruption(engine));
    OK(ambience_update(engine));
    CHECK(events.ended == 1 && events.should_resume);
    CHECK(render_rms(engine, -1) > 0.1);

    /* Solo ambient is silenced in the background. */
    OK(ambience_session_enter_background(engine));
    OK(ambience_session_get_state(engine, &state));
    CHECK(state.is_backgrounded && state.is_output_silenced);
    CHECK(render_rms(engine, -1) < 1e-4);
    OK(ambience_session_enter_foreground(engine));
    CHECK(render_rms(engine, -1) > 0.1);

    OK(ambience_session_resume_after_route_change(engine)); /* nothing to resume: harmless */
    OK(ambience_session_stop_after_route_change(engine));   /* nothing to stop: harmless */
    CHECK(render_rms(engine, -1) > 0.1);
    OK(ambience_session_set_active(engine, false, AMBIENCE_SESSION_NOTIFY_OTHERS_ON_DEACTIVATION));
    EXPECT(ambience_session_set_active(engine, false, 0x10), AMBIENCE_ERROR_INVALID_ARGUMENT);
    OK(ambience_session_get_state(engine, &state));
    CHECK(!state.is_active);
    CHECK(events.route_changes == 0 && events.hints == 0 && events.wrong_userdata == 0);
    OK(ambience_voice_stop(voice, 0));
    OK(ambience_sound_unload(sound));
}

static int copy_file(const char *from, const char *to) {
    char chunk[65536];
    size_t n;
    FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
    int ok = in != NULL && out != NULL;
    while (ok && (n = fread(chunk, 1, sizeof chunk, in)) > 0) ok = fwrite(chunk, 1, n, out) == n;
    if (in) fclose(in);
    if (out && fclose(out) != 0) ok = 0;
    return ok;
}

static void test_library(ambience_engine *engine) {
    char scratch[] = "/tmp/ambience-capi-library-XXXXXX";
    char music[256], database[256], from[4200], to[300], title[128], command[300];
    const char *folders[1];
    ambience_library *library = NULL, *second = NULL;
    int64_t measured = -1;
    ambience_scan_report report;
    size_t count = 99;

    memset(&events, 0, sizeof events);
    events.engine = engine;
    set_all_callbacks(engine);
    CHECK(mkdtemp(scratch) != NULL);
    snprintf(music, sizeof music, "%s/music", scratch);
    snprintf(database, sizeof database, "%s/library.sqlite", scratch);
    CHECK(mkdir(music, 0700) == 0);
    path_of(from, sizeof from, "Assets/Music/gravity-wave-theme.ogg");
    snprintf(to, sizeof to, "%s/theme.ogg", music);
    CHECK(copy_file(from, to));
    path_of(from, sizeof from, "Assets/Music/orbit-lullaby.mp3");
    snprintf(to, sizeof to, "%s/lullaby.mp3", music);
    CHECK(copy_file(from, to));

    folders[0] = music;
    OK(ambience_library_open(engine, folders, 1, database, &library));
    OK(ambience_library_scan(library, &report));
    CHECK(report.files == 2 && report.added == 2 && report.failed == 0 && report.removed == 0);
    OK(ambience_library_scan(library, NULL));
    /* Loudness analysis measures each file once; a second run finds nothing new. */
    OK(ambience_library_analyze_loudness(library, &measured));
    CHECK(measured == 2);
    OK(ambience_library_analyze_loudness(library, &measured));
    CHECK(measured == 0);
    OK(ambience_library_analyze_loudness(library, NULL));

    OK(ambience_library_list(library, AMBIENCE_TAG_TITLE, NULL, &count));
    CHECK(count == 2);
    OK(ambience_library_get_item_tag(library, 0, AMBIENCE_TAG_TITLE, title, sizeof title, NULL));
    CHECK(strcmp(title, "Gravity Wave Theme") == 0);
    OK(ambience_library_get_item_tag(library, 1, AMBIENCE_TAG_TITLE, title, sizeof title, NULL));
    CHECK(strcmp(title, "Orbit Lullaby") == 0);
    EXPECT(ambience_library_get_item_tag(library, 2, AMBIENCE_TAG_TITLE, title, sizeof title, NULL),
           AMBIENCE_ERROR_INVALID_ARGUMENT);
    OK(ambience_library_list(library, AMBIENCE_TAG_ARTIST, "ensemble", &count));
    CHECK(count == 2); /* case is ignored */
    OK(ambience_library_list(library, AMBIENCE_TAG_TITLE, "zzz", &count));
    CHECK(count == 0);
    EXPECT(ambience_library_list(library, AMBIENCE_TAG_PATH, "x", &count), AMBIENCE_ERROR_INVALID_ARGUMENT);
    EXPECT(ambience_library_list(library, AMBIENCE_TAG_TITLE, "\xc0", &count), AMBIENCE_ERROR_INVALID_UTF8);
    EXPECT(ambience_library_list(library, AMBIENCE_TAG_TITLE, NULL, NULL), AMBIENCE_ERROR_INVALID_ARGUMENT);

    /* The music player plays what the listing holds. */
    OK(ambience_library_list(library, AMBIENCE_TAG_TITLE, "ORBIT", &count));
    CHECK(count == 1);
    OK(ambience_music_set_queue_from_library(engine, library));
    OK(ambience_music_get_queue_count(engine, &count));
    CHECK(count == 1);
    OK(ambience_music_play(engine));
    OK(ambience_update(engine));
    CHECK(strcmp(events.title, "Orbit Lullaby") == 0);
    CHECK(render_rms(engine, -1) > 0.01);
    OK(ambience_music_stop(engine));

    /* A change, while notifications are on, reaches the callback with the library's handle. */
    OK(ambience_library_begin_change_notifications(library));
    path_of(from, sizeof from, "Assets/SFX/pickup.wav");
    snprintf(to, sizeof to, "%s/pickup.wav", music);
    CHECK(copy_file(from, to));
    OK(ambience_library_scan(library, &report));
    CHECK(report.files == 3 && report.added + report.updated >= 0);
    OK(ambience_update(engine));
    CHECK(events.library_changes >= 1 && events.changed_library == library && events.wrong_userdata == 0);
    OK(ambience_library_end_change_notifications(library));
    EXPECT(ambience_library_end_change_notifications(library), AMBIENCE_ERROR_INVALID_ARGUMENT);
    OK(ambience_library_list(library, AMBIENCE_TAG_TITLE, NULL, &count));
    CHECK(count == 3);

    /* Folders and indexes that cannot be used. */
    folders[0] = "/nonexistent-ambience-folder";
    OK(ambience_library_open(engine, folders, 1, database, &second));
    EXPECT(ambience_library_scan(second, &report), AMBIENCE_ERROR_LIBRARY);
    CHECK(strstr(ambience_last_error(), "nonexistent-ambience-folder") != NULL);
    OK(ambience_library_close(second));
    EXPECT(ambience_library_scan(second, &report), AMBIENCE_ERROR_DESTROYED_HANDLE);
    folders[0] = "\xff";
    EXPECT(ambience_library_open(engine, folders, 1, database, &second), AMBIENCE_ERROR_INVALID_UTF8);
    folders[0] = music;
    EXPECT(ambience_library_open(engine, folders, 1, "/proc/ambience/library.sqlite", &second), AMBIENCE_ERROR_LIBRARY);
    EXPECT(ambience_library_open(engine, folders, 1, database, NULL), AMBIENCE_ERROR_INVALID_ARGUMENT);

    OK(ambience_library_begin_change_notifications(library)); /* left on: closing ends it */
    OK(ambience_library_close(library));
    EXPECT(ambience_library_list(library, AMBIENCE_TAG_TITLE, NULL, &count), AMBIENCE_ERROR_DESTROYED_HANDLE);
    EXPECT(ambience_music_set_queue_from_library(engine, library), AMBIENCE_ERROR_DESTROYED_HANDLE);
    snprintf(command, sizeof command, "rm -rf '%s'", scratch);
    CHECK(system(command) == 0);
}

/* Every call that takes an engine, expecting `want` (NULL, garbage, destroyed or shut-down handles). */
static void every_engine_call(ambience_engine *e, ambience_status want, ambience_bus *bus) {
    char text[64];
    size_t size = 0;
    int32_t rate;
    bool flag;
    uint64_t bytes;
    ambience_stats stats;
    ambience_capabilities caps;
    ambience_sound *sound = NULL;
    ambience_bus *out_bus = NULL;
    ambience_listener listener;
    ambience_playback_state state;
    ambience_now_playing now;
    ambience_session_state session;
    ambience_shuffle_mode shuffle;
    ambience_repeat_mode repeat;
    ambience_loudness_matching loudness;
    double seconds;
    float value;
    float samples[4] = {0, 0, 0, 0};
    const char *paths[1] = {"x.wav"};
    ambience_library *library = NULL;

    memset(&listener, 0, sizeof listener);
    listener.forward[2] = -1;
    listener.up[1] = 1;
    listener.reference_distance = listener.max_distance = 1;
    EXPECT(ambience_update(e), want);
    EXPECT(ambience_render(e, mix, 16), want);
    EXPECT(ambience_engine_get_sample_rate(e, &rate), want);
    EXPECT(ambience_engine_is_offline(e, &flag), want);
    EXPECT(ambience_engine_get_output_driver(e, text, sizeof text, &size), want);
    EXPECT(ambience_engine_get_stats(e, &stats), want);
    EXPECT(ambience_engine_get_capabilities(e, &caps), want);
    EXPECT(ambience_sound_load(e, "x.wav", &sound), want);
    EXPECT(ambience_sound_create_pcm(e, "x", samples, 4, 1, RATE, &sound), want);
    EXPECT(ambience_preload(e, paths, 1), want);
    EXPECT(ambience_engine_get_sound_memory(e, &bytes), want);
    EXPECT(ambience_listener_get(e, &listener), want);
    EXPECT(ambience_listener_set(e, &listener), want);
    EXPECT(ambience_listener_set_position(e, 0, 0, 0), want);
    EXPECT(ambience_bus_get(e, AMBIENCE_BUS_SFX, &out_bus), want);
    EXPECT(ambience_bus_create(e, "x", NULL, &out_bus), want);
    EXPECT(ambience_ducking_add(e, bus, bus, 6, 0, 0), want);
    EXPECT(ambience_ducking_clear(e), want);
    EXPECT(ambience_ducking_get_count(e, &size), want);
    EXPECT(ambience_music_set_queue(e, paths, 1), want);
    EXPECT(ambience_music_append(e, paths, 1), want);
    EXPECT(ambience_music_get_queue_count(e, &size), want);
    EXPECT(ambience_music_play(e), want);
    EXPECT(ambience_music_pause(e), want);
    EXPECT(ambience_music_stop(e), want);
    EXPECT(ambience_music_next(e), want);
    EXPECT(ambience_music_previous(e), want);
    EXPECT(ambience_music_set_time(e, 1), want);
    EXPECT(ambience_music_get_time(e, &seconds), want);
    EXPECT(ambience_music_get_state(e, &state), want);
    EXPECT(ambience_music_get_now_playing(e, &now), want);
    EXPECT(ambience_music_get_now_playing_tag(e, AMBIENCE_TAG_TITLE, text, sizeof text, NULL), want);
    EXPECT(ambience_music_set_shuffle(e, AMBIENCE_SHUFFLE_OFF), want);
    EXPECT(ambience_music_get_shuffle(e, &shuffle), want);
    EXPECT(ambience_music_set_repeat(e, AMBIENCE_REPEAT_NONE), want);
    EXPECT(ambience_music_get_repeat(e, &repeat), want);
    EXPECT(ambience_music_set_volume(e, 1), want);
    EXPECT(ambience_music_get_volume(e, &value), want);
    EXPECT(ambience_music_set_crossfade(e, 0), want);
    EXPECT(ambience_music_get_crossfade(e, &seconds), want);
    EXPECT(ambience_music_set_loudness_matching(e, AMBIENCE_LOUDNESS_OFF), want);
    EXPECT(ambience_music_get_loudness_matching(e, &loudness), want);
    EXPECT(ambience_session_set_category(e, AMBIENCE_CATEGORY_AMBIENT, 0), want);
    EXPECT(ambience_session_set_active(e, true, 0), want);
    EXPECT(ambience_session_get_state(e, &session), want);
    EXPECT(ambience_session_get_route(e, text, sizeof text, NULL), want);
    EXPECT(ambience_session_begin_interruption(e), want);
    EXPECT(ambience_session_end_interruption(e), want);
    EXPECT(ambience_session_enter_background(e), want);
    EXPECT(ambience_session_enter_foreground(e), want);
    EXPECT(ambience_session_resume_after_route_change(e), want);
    EXPECT(ambience_session_stop_after_route_change(e), want);
    EXPECT(ambience_set_route_change_callback(e, on_route, &events), want);
    EXPECT(ambience_set_interruption_callback(e, on_interruption, &events), want);
    EXPECT(ambience_set_now_playing_callback(e, on_now_playing, &events), want);
    EXPECT(ambience_set_playback_state_callback(e, on_state, &events), want);
    EXPECT(ambience_set_silence_hint_callback(e, on_hint, &events), want);
    EXPECT(ambience_set_playback_error_callback(e, on_error, &events), want);
    EXPECT(ambience_set_voice_finished_callback(e, on_voice, &events), want);
    EXPECT(ambience_set_library_changed_callback(e, on_library, &events), want);
    EXPECT(ambience_set_media_services_callback(e, on_services, &events), want);
    EXPECT(ambience_library_open(e, paths, 1, "/tmp/x.sqlite", &library), want);
    EXPECT(ambience_music_set_queue_from_library(e, library), want);
}

/* Every call that takes a sound or a bus. */
static void every_sound_and_bus_call(ambience_sound *sound, ambience_bus *bus, ambience_status want) {
    ambience_sound_info info;
    ambience_voice voice = 12345;
    char name[32];
    float gain;
    bool muted;
    EXPECT(ambience_play(sound, NULL, &voice), want);
    CHECK(voice == 12345); /* outputs are left alone on failure */
    EXPECT(ambience_sound_get_info(sound, &info), want);
    EXPECT(ambience_sound_unload(sound), want);
    EXPECT(ambience_bus_get_name(bus, name, sizeof name, NULL), want);
    EXPECT(ambience_bus_set_gain(bus, 1), want);
    EXPECT(ambience_bus_get_gain(bus, &gain), want);
    EXPECT(ambience_bus_fade(bus, 1, 1), want);
    EXPECT(ambience_bus_set_muted(bus, false), want);
    EXPECT(ambience_bus_get_muted(bus, &muted), want);
    EXPECT(ambience_bus_get_effective_gain(bus, &gain), want);
    EXPECT(ambience_bus_set_reverb(bus, AMBIENCE_REVERB_NONE), want);
}

/* Every call that takes a library. */
static void every_library_call(ambience_library *library, ambience_status want) {
    ambience_scan_report report;
    size_t count;
    char text[16];
    EXPECT(ambience_library_scan(library, &report), want);
    EXPECT(ambience_library_analyze_loudness(library, NULL), want);
    EXPECT(ambience_library_list(library, AMBIENCE_TAG_TITLE, NULL, &count), want);
    EXPECT(ambience_library_get_item_tag(library, 0, AMBIENCE_TAG_TITLE, text, sizeof text, NULL), want);
    EXPECT(ambience_library_begin_change_notifications(library), want);
    EXPECT(ambience_library_end_change_notifications(library), want);
    EXPECT(ambience_library_close(library), want);
}

/* Every call that takes a voice. */
static void every_voice_call(ambience_voice voice, ambience_status want) {
    bool playing;
    double elapsed;
    EXPECT(ambience_voice_stop(voice, 0.1), want);
    EXPECT(ambience_voice_pause(voice), want);
    EXPECT(ambience_voice_resume(voice), want);
    EXPECT(ambience_voice_set_gain(voice, 1), want);
    EXPECT(ambience_voice_set_pitch(voice, 1), want);
    EXPECT(ambience_voice_set_pan(voice, 0), want);
    EXPECT(ambience_voice_set_position(voice, 0, 0, 0), want);
    EXPECT(ambience_voice_set_velocity(voice, 0, 0, 0), want);
    EXPECT(ambience_voice_fade(voice, 1, 0), want);
    EXPECT(ambience_voice_set_occlusion(voice, 0), want);
    EXPECT(ambience_voice_is_playing(voice, &playing), want);
    EXPECT(ambience_voice_get_elapsed(voice, &elapsed), want);
}

static void test_bad_handles(void) {
    ambience_engine *engine = offline_engine();
    ambience_sound *sound = tone(engine, 440, 1);
    ambience_bus *bus = NULL;
    ambience_play_options options;
    ambience_voice voice = AMBIENCE_VOICE_NONE;
    ambience_library *library = NULL;
    char scratch[] = "/tmp/ambience-capi-handles-XXXXXX", command[128];

    OK(ambience_bus_get(engine, AMBIENCE_BUS_UI, &bus));
    OK(ambience_play_options_init(&options));
    options.loop = true;
    OK(ambience_play(sound, &options, &voice));
    CHECK(mkdtemp(scratch) != NULL);
    {
        char folder[4200], database[128];
        const char *folders[1];
        path_of(folder, sizeof folder, "Assets/Music");
        folders[0] = folder;
        snprintf(database, sizeof database, "%s/library.sqlite", scratch);
        OK(ambience_library_open(engine, folders, 1, database, &library));
    }

    /* NULL and garbage: refused with a status, never dereferenced. */
    every_engine_call(NULL, AMBIENCE_ERROR_NULL_HANDLE, bus);
    every_engine_call((ambience_engine *)(uintptr_t)0x1234, AMBIENCE_ERROR_INVALID_ARGUMENT, bus);
    every_engine_call((ambience_engine *)&options, AMBIENCE_ERROR_INVALID_ARGUMENT, bus);
    every_sound_and_bus_call(NULL, NULL, AMBIENCE_ERROR_NULL_HANDLE);
    every_sound_and_bus_call((ambience_sound *)(uintptr_t)0xdeadbeef, (ambience_bus *)(uintptr_t)0xdeadbeef,
                             AMBIENCE_ERROR_INVALID_ARGUMENT);
    every_library_call(NULL, AMBIENCE_ERROR_NULL_HANDLE);
    every_library_call((ambience_library *)bus, AMBIENCE_ERROR_INVALID_ARGUMENT);
    EXPECT(ambience_engine_shutdown(NULL), AMBIENCE_ERROR_NULL_HANDLE);
    EXPECT(ambience_engine_destroy(NULL), AMBIENCE_ERROR_NULL_HANDLE);
    EXPECT(ambience_engine_destroy((ambience_engine *)(uintptr_t)0x10), AMBIENCE_ERROR_INVALID_ARGUMENT);

    /* Shut down: everything but shutdown and destroy is refused, and the voice with it. */
    OK(ambience_engine_shutdown(engine));
    OK(ambience_engine_shutdown(engine));
    every_engine_call(engine, AMBIENCE_ERROR_SHUT_DOWN, bus);
    every_sound_and_bus_call(sound, bus, AMBIENCE_ERROR_SHUT_DOWN);
    every_voice_call(voice, AMBIENCE_ERROR_SHUT_DOWN);
    every_library_call(library, AMBIENCE_ERROR_SHUT_DOWN);
    CHECK(strstr(ambience_last_error(), "shut down") != NULL);

    /* Destroyed: every handle of the engine is dead, its voices stale. */
    OK(ambience_engine_destroy(engine));
    every_engine_call(engine, AMBIENCE_ERROR_DESTROYED_HANDLE, bus);
    CHECK(strstr(ambience_last_error(), "destroyed") != NULL);
    every_sound_and_bus_call(sound, bus, AMBIENCE_ERROR_DESTROYED_HANDLE);
    every_voice_call(voice, AMBIENCE_ERROR_STALE_VOICE);
    every_library_call(library, AMBIENCE_ERROR_DESTROYED_HANDLE);
    EXPECT(ambience_engine_shutdown(engine), AMBIENCE_ERROR_DESTROYED_HANDLE);
    EXPECT(ambience_engine_destroy(engine), AMBIENCE_ERROR_DESTROYED_HANDLE);
    snprintf(command, sizeof command, "rm -rf '%s'", scratch);
    CHECK(system(command) == 0);
}

static void test_destroy_inside_callback(void) {
    ambience_engine *engine = offline_engine();
    ambience_sound *blip = tone(engine, 660, 0.05);
    ambience_voice voice;
    memset(&events, 0, sizeof events);
    events.engine = engine;
    events.destroy_in_callback = 1;
    OK(ambience_set_voice_finished_callback(engine, on_voice, &events));
    OK(ambience_play(blip, NULL, &voice));
    OK(ambience_play(blip, NULL, &voice));
    render_rms(engine, -1);
    OK(ambience_update(engine));
    CHECK(events.voice_ends == 1); /* the second event was dropped: the engine was gone */
    EXPECT(ambience_update(engine), AMBIENCE_ERROR_DESTROYED_HANDLE);
    EXPECT(ambience_sound_unload(blip), AMBIENCE_ERROR_DESTROYED_HANDLE);
}

static void test_device_engine(void) {
    ambience_engine_config config;
    ambience_engine *engine = NULL;
    bool offline = true;
    char driver[64];
    ambience_status status;
    ambience_engine_config_init(&config);
    config.app_name = "capi_test device";
    status = ambience_engine_create(&config, &engine);
    CHECK(status == AMBIENCE_OK || status == AMBIENCE_ERROR_OUTPUT);
    if (status != AMBIENCE_OK) return;
    OK(ambience_engine_is_offline(engine, &offline));
    CHECK(!offline);
    OK(ambience_engine_get_output_driver(engine, driver, sizeof driver, NULL));
    CHECK(strcmp(driver, "offline") != 0);
    EXPECT(ambience_render(engine, mix, 16), AMBIENCE_ERROR_NOT_OFFLINE);
    OK(ambience_update(engine));
    OK(ambience_engine_destroy(engine));
}

/* ---------------------------------------------------------------------------------------------------------- */
/* Threads                                                                                                     */

static void *fail_on_another_thread(void *message_out) {
    /* Another thread's failure does not touch this thread's message, and the other way round. */
    ambience_update(NULL);
    snprintf((char *)message_out, 256, "%s", ambience_last_error());
    return NULL;
}

struct hammer {
    ambience_sound *sound;
    volatile int stop;
    int unexpected;
    int calls;
};

static void *hammer_voices(void *argument) {
    struct hammer *h = (struct hammer *)argument;
    while (!h->stop) {
        ambience_voice voice = AMBIENCE_VOICE_NONE;
        ambience_status s = ambience_play(h->sound, NULL, &voice);
        ambience_status t = ambience_voice_set_gain(voice, 0.5f);
        ambience_status u = ambience_voice_stop(voice, 0);
        h->calls += 3;
        if ((s != AMBIENCE_OK && s != AMBIENCE_ERROR_SHUT_DOWN && s != AMBIENCE_ERROR_DESTROYED_HANDLE) ||
            (t != AMBIENCE_OK && t != AMBIENCE_ERROR_STALE_VOICE && t != AMBIENCE_ERROR_SHUT_DOWN) ||
            (u != AMBIENCE_OK && u != AMBIENCE_ERROR_STALE_VOICE && u != AMBIENCE_ERROR_SHUT_DOWN)) {
            h->unexpected++;
        }
        if (s == AMBIENCE_ERROR_DESTROYED_HANDLE) break;
    }
    return NULL;
}

static void test_threads(void) {
    char other[256] = "";
    pthread_t thread;
    ambience_engine *engine;
    struct hammer h;
    int i;

    ambience_engine_destroy(NULL);
    pthread_create(&thread, NULL, fail_on_another_thread, other);
    pthread_join(thread, NULL);
    CHECK(strstr(other, "engine is NULL") != NULL);
    CHECK(strstr(ambience_last_error(), "ambience_engine_destroy") != NULL);

    /* Voices played and stopped on another thread while this one renders, updates, then destroys the engine. */
    engine = offline_engine();
    memset(&h, 0, sizeof h);
    h.sound = tone(engine, 220, 0.2);
    pthread_create(&thread, NULL, hammer_voices, &h);
    for (i = 0; i < 8; i++) {
        OK(ambience_render(engine, mix, 2048));
        OK(ambience_update(engine));
    }
    OK(ambience_engine_destroy(engine));
    pthread_join(thread, NULL);
    CHECK(h.unexpected == 0 && h.calls > 0);
}

/* ---------------------------------------------------------------------------------------------------------- */
/* A real route change: the device the engine plays on goes away (needs scripts/with-services.sh).            */

static int pactl(const char *arguments, char *output, size_t size) {
    char command[512];
    FILE *pipe;
    size_t n = 0;
    snprintf(command, sizeof command, "pactl %s", arguments);
    pipe = popen(command, "r");
    if (pipe == NULL) return -1;
    if (output != NULL && size > 0) {
        n = fread(output, 1, size - 1, pipe);
        output[n] = '\0';
    }
    return pclose(pipe);
}

static void sleep_ms(long ms) {
    struct timespec t;
    t.tv_sec = ms / 1000;
    t.tv_nsec = (ms % 1000) * 1000000L;
    nanosleep(&t, NULL);
}

/* A device that has only just appeared, named by the game: SDL, already started by an earlier engine, learns of it
 * on its hotplug thread, which can lag; the engine waits for the name instead of failing (it did, under load). */
static void test_named_device_just_added(void) {
    const int rounds = 8;
    int i, opened = 0;
    if (getenv("PULSE_SERVER") == NULL) {
        fprintf(stderr, "named device: no private PulseAudio server (run under scripts/with-services.sh)\n");
        failed++;
        return;
    }
    setenv("SDL_AUDIODRIVER", "pulseaudio", 1);
    for (i = 0; i < rounds; i++) {
        char module[64], arguments[160], route[128] = {0};
        ambience_engine_config config;
        ambience_engine *engine = NULL;
        snprintf(arguments, sizeof arguments,
                 "load-module module-null-sink sink_name=capi_fresh%d sink_properties=device.description=CAPIFresh%d",
                 i, i);
        if (pactl(arguments, module, sizeof module) != 0) {
            fprintf(stderr, "named device: cannot load a null sink\n");
            failed++;
            return;
        }
        snprintf(route, sizeof route, "CAPIFresh%d", i);
        ambience_engine_config_init(&config);
        config.device_name = route;
        config.app_name = "capi_test named device";
        if (ambience_engine_create(&config, &engine) == AMBIENCE_OK && engine != NULL) {
            char current[128] = {0};
            OK(ambience_session_get_route(engine, current, sizeof current, NULL));
            /* The route is the device's description, perhaps with the sink's name after it. */
            CHECK(strncmp(current, route, strlen(route)) == 0);
            if (strncmp(current, route, strlen(route)) == 0) opened++;
            OK(ambience_engine_destroy(engine));
        } else {
            fprintf(stderr, "named device %s: %s\n", route, ambience_last_error());
            failed++;
        }
        snprintf(arguments, sizeof arguments, "unload-module %ld", strtol(module, NULL, 10));
        CHECK(pactl(arguments, NULL, 0) == 0);
    }
    printf("named device: %d of %d opened just after they appeared\n", opened, rounds);
}

/* A real route change: the sink the engine plays on is unloaded. The game answers Resume, or (answer_stop) Stop. */
static void test_route_change(bool answer_stop) {
    char module[64];
    ambience_engine_config config;
    ambience_engine *engine = NULL;
    ambience_sound *sound;
    ambience_play_options options;
    ambience_voice voice;
    ambience_session_state state;
    bool playing = false;
    int i;

    if (getenv("PULSE_SERVER") == NULL ||
        pactl("load-module module-null-sink sink_name=capi_route sink_properties=device.description=CAPIRoute",
              module, sizeof module) != 0) {
        fprintf(stderr, "route: no private PulseAudio server (run under scripts/with-services.sh)\n");
        failed++;
        return;
    }
    setenv("SDL_AUDIODRIVER", "pulseaudio", 1);
    memset(&events, 0, sizeof events);
    ambience_engine_config_init(&config);
    config.device_name = "CAPIRoute";
    config.app_name = "capi_test route";
    OK(ambience_engine_create(&config, &engine));
    if (engine == NULL) return;
    events.engine = engine;
    set_all_callbacks(engine);
    OK(ambience_set_voice_finished_callback(engine, NULL, NULL));
    sound = tone(engine, 440, 1);
    OK(ambience_play_options_init(&options));
    options.loop = true;
    OK(ambience_play(sound, &options, &voice));
    for (i = 0; i < 10; i++) { OK(ambience_update(engine)); sleep_ms(20); }
    {
        char arguments[96];
        snprintf(arguments, sizeof arguments, "unload-module %ld", strtol(module, NULL, 10));
        CHECK(pactl(arguments, NULL, 0) == 0);
    }
    /* Up to 15 s: on a loaded machine the server's news can be slow; it ends as soon as the change arrives. */
    for (i = 0; i < 750 && events.route_changes == 0; i++) { OK(ambience_update(engine)); sleep_ms(20); }
    CHECK(events.route_changes >= 1 && events.wrong_userdata == 0);
    CHECK(events.last_reason == AMBIENCE_ROUTE_OLD_DEVICE_UNAVAILABLE ||
          events.last_reason == AMBIENCE_ROUTE_NO_SUITABLE_ROUTE_FOR_CATEGORY);
    CHECK(strcmp(events.previous_route, "CAPIRoute") == 0);
    printf("route change: reason %d, \"%s\" -> \"%s\"\n", (int)events.last_reason, events.previous_route,
           events.current_route);
    OK(ambience_session_get_state(engine, &state));
    if (events.last_reason == AMBIENCE_ROUTE_OLD_DEVICE_UNAVAILABLE && !answer_stop) {
        /* The device the game named is gone: the engine follows the default instead of falling silent. */
        CHECK(strcmp(events.current_route, "Speakers") == 0);
        CHECK(state.is_paused_for_route_change);
        OK(ambience_session_resume_after_route_change(engine));
        OK(ambience_session_get_state(engine, &state));
        CHECK(!state.is_paused_for_route_change);
        OK(ambience_voice_is_playing(voice, &playing));
        CHECK(playing);
    } else if (events.last_reason == AMBIENCE_ROUTE_OLD_DEVICE_UNAVAILABLE) {
        /* Stop: the voice is kept, paused at its start; a later Resume does not bring it back, the game can. */
        double elapsed = -1;
        CHECK(state.is_paused_for_route_change);
        OK(ambience_session_stop_after_route_change(engine));
        OK(ambience_session_get_state(engine, &state));
        CHECK(!state.is_paused_for_route_change);
        OK(ambience_voice_is_playing(voice, &playing));
        CHECK(!playing);
        OK(ambience_voice_get_elapsed(voice, &elapsed));
        CHECK(elapsed == 0);
        OK(ambience_session_resume_after_route_change(engine));
        for (i = 0; i < 5; i++) { OK(ambience_update(engine)); sleep_ms(20); }
        OK(ambience_voice_is_playing(voice, &playing));
        CHECK(!playing);
        OK(ambience_voice_get_elapsed(voice, &elapsed));
        CHECK(elapsed == 0);
        OK(ambience_voice_resume(voice));
        OK(ambience_voice_is_playing(voice, &playing));
        CHECK(playing);
        printf("route change: stopped, voice rewound\n");
    }
    OK(ambience_engine_destroy(engine));
}

/* ---------------------------------------------------------------------------------------------------------- */
/* The session bus killed under a running engine, then started again at the same address (needs dbus-daemon). */

/* Starts a session bus at `socket` and returns its pid (0 on failure). */
static long start_bus(const char *socket) {
    char command[600], pid[32] = {0};
    FILE *pipe;
    unlink(socket);
    snprintf(command, sizeof command, "dbus-daemon --session --fork --print-pid --address=unix:path=%s", socket);
    pipe = popen(command, "r");
    if (pipe == NULL) return 0;
    if (fgets(pid, sizeof pid, pipe) == NULL) pid[0] = '\0';
    pclose(pipe);
    return strtol(pid, NULL, 10);
}

static void test_session_bus(void) {
    char folder[] = "/tmp/capi_bus_XXXXXX", socket[128], address[160];
    ambience_engine_config config;
    ambience_engine *engine = NULL;
    ambience_sound *sound;
    ambience_play_options options;
    ambience_voice voice;
    bool playing = false;
    long bus;
    int i;

    if (mkdtemp(folder) == NULL) { failed++; return; }
    snprintf(socket, sizeof socket, "%s/bus", folder);
    snprintf(address, sizeof address, "unix:path=%s", socket);
    bus = start_bus(socket);
    if (bus <= 0) {
        fprintf(stderr, "bus: cannot start dbus-daemon\n");
        failed++;
        return;
    }
    setenv("DBUS_SESSION_BUS_ADDRESS", address, 1);
    setenv("SDL_AUDIODRIVER", "dummy", 1);
    memset(&events, 0, sizeof events);
    ambience_engine_config_init(&config);
    config.app_name = "capi_test bus";
    OK(ambience_engine_create(&config, &engine));
    if (engine == NULL) { kill((pid_t)bus, SIGKILL); return; }
    events.engine = engine;
    set_all_callbacks(engine);
    sound = tone(engine, 440, 1);
    OK(ambience_play_options_init(&options));
    options.loop = true;
    OK(ambience_play(sound, &options, &voice));
    for (i = 0; i < 10; i++) { OK(ambience_update(engine)); sleep_ms(20); }
    CHECK(events.services_lost == 0);

    kill((pid_t)bus, SIGKILL);
    for (i = 0; i < 500 && events.services_lost == 0; i++) { OK(ambience_update(engine)); sleep_ms(20); }
    CHECK(events.services_lost == 1 && events.last_service == AMBIENCE_SERVICE_SESSION_BUS);
    OK(ambience_voice_is_playing(voice, &playing));
    CHECK(playing);

    bus = start_bus(socket);
    CHECK(bus > 0);
    for (i = 0; i < 500 && events.services_back == 0; i++) { OK(ambience_update(engine)); sleep_ms(20); }
    CHECK(events.services_back == 1 && events.last_service == AMBIENCE_SERVICE_SESSION_BUS);
    CHECK(events.wrong_userdata == 0);
    printf("session bus: lost %d, back %d\n", events.services_lost, events.services_back);
    OK(ambience_engine_destroy(engine));
    if (bus > 0) kill((pid_t)bus, SIGKILL);
    unlink(socket);
    rmdir(folder);
}

/* ---------------------------------------------------------------------------------------------------------- */

int main(int argc, char **argv) {
    ambience_engine *engine, *other, *forgotten;
    if (argc < 2) {
        fprintf(stderr, "usage: capi_test ROOT [route|bus]\n");
        return 2;
    }
    snprintf(root, sizeof root, "%s", argv[1]);

    if (argc > 2 && strcmp(argv[2], "route") == 0) {
        test_named_device_just_added();
        test_route_change(false);
        test_route_change(true);
    } else if (argc > 2 && strcmp(argv[2], "bus") == 0) {
        test_session_bus();
    } else {
        setenv("SDL_AUDIODRIVER", "dummy", 1);
        test_version_and_config();
        test_bad_configs();
        test_output_limiter();
        engine = offline_engine();
        other = offline_engine();
        events.engine = engine;
        test_engine_queries(engine);
        test_render_levels(engine);
        test_voice_finished_callback(engine);
        test_sounds(engine);
        test_listener(engine);
        test_buses(engine, other);
        test_music(engine);
        test_session(engine);
        test_system_music(engine);
        test_library(engine);
        OK(ambience_engine_destroy(other));
        OK(ambience_engine_destroy(engine));
        test_bad_handles();
        test_destroy_inside_callback();
        test_device_engine();
        test_threads();
        /* Left alive on purpose: the exit handler shuts it down (no "alc_cleanup: device not closed"). */
        forgotten = offline_engine();
        (void)forgotten;
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
