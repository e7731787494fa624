/*
 * CGameLoop: a game loop in plain C99 on Ambience's C API (include/ambience.h), nothing else.
 *
 * Fires the bundled sound effects on a timer, plays the bundled music as its soundtrack, and handles the audio
 * session's route changes the way a game should: print, then resume. It follows UtopiaGL's rules for the user's music:
 *   - the ambient category: the user's music and the game's effects mix;
 *   - at launch it reports music that is already playing, and leaves it playing;
 *   - it plays its own soundtrack only while the user has none (the secondary-audio hint): quiet while theirs plays,
 *     back when theirs stops;
 *   - at exit it stops only the music it started (the engine's exit rule, in ambience_engine_shutdown).
 *
 *     cgameloop [--seconds N] [--assets DIR]                 real time, on the default output device
 *     cgameloop --seconds N --record out.wav [--assets DIR]  headless: an offline render written to a WAV
 *     cgameloop --system-music PLAYER ...                    also starts the desktop's player (MPRIS, e.g. "mpv")
 *     cgameloop --category solo-ambient ...                  the other rule: pause the user's music while it runs
 *     cgameloop --own-signals ...                            leaves SIGTERM, SIGINT and SIGHUP alone (no exit rule)
 *
 * SIGTERM, SIGINT or SIGHUP end it the way a game is usually ended: the engine carries out the exit rule (the
 * players its session paused are resumed, the system music it started is paused), then the signal ends it.
 *
 * Build (after `swift build -c release --product ambience-c`):
 *     cc -std=c99 Demos/CGameLoop/main.c -Iinclude -L.build/release -lambience-c \
 *        -Wl,-rpath,$PWD/.build/release -o cgameloop
 * or, after scripts/install.sh:
 *     cc -std=c99 Demos/CGameLoop/main.c $(pkg-config --cflags --libs ambience) -o cgameloop
 */
#define _POSIX_C_SOURCE 200809L
#include "ambience.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { SAMPLE_RATE = 48000, FRAME_RATE = 60, FRAMES_PER_TICK = SAMPLE_RATE / FRAME_RATE, MAX_FILES = 64 };

static void fail(const char *what) {
    fprintf(stderr, "cgameloop: %s: %s\n", what, ambience_last_error());
    exit(1);
}

#define TRY(call) do { if ((call) != AMBIENCE_OK) fail(#call); } while (0)

/* ---------------------------------------------------------------------------------------------------------- */
/* Files                                                                                                       */

static int ends_with(const char *name, const char *suffix) {
    size_t n = strlen(name), s = strlen(suffix);
    return n >= s && strcmp(name + n - s, suffix) == 0;
}

static int compare_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The files in `folder` whose names end with one of `suffixes` (NULL-terminated), sorted; returns how many. */
static size_t list_files(const char *folder, const char *const *suffixes, char **out, size_t max) {
    DIR *dir = opendir(folder);
    struct dirent *entry;
    size_t count = 0;
    if (dir == NULL) return 0;
    while ((entry = readdir(dir)) != NULL && count < max) {
        const char *const *suffix;
        for (suffix = suffixes; *suffix != NULL; suffix++) {
            if (ends_with(entry->d_name, *suffix)) {
                size_t size = strlen(folder) + strlen(entry->d_name) + 2;
                out[count] = (char *)malloc(size);
                snprintf(out[count], size, "%s/%s", folder, entry->d_name);
                count++;
                break;
            }
        }
    }
    closedir(dir);
    qsort(out, count, sizeof out[0], compare_names);
    return count;
}

/* ---------------------------------------------------------------------------------------------------------- */
/* A tiny WAV writer: 16-bit stereo PCM, written to a temporary file and renamed into place when complete.     */

struct wav {
    FILE *file;
    char temporary[4096];
    const char *path;
    unsigned long frames;
};

static void put16(FILE *f, unsigned v) { fputc((int)(v & 0xff), f); fputc((int)((v >> 8) & 0xff), f); }
static void put32(FILE *f, unsigned long v) { put16(f, (unsigned)(v & 0xffff)); put16(f, (unsigned)((v >> 16) & 0xffff)); }

static void write_header(struct wav *w) {
    unsigned long data = w->frames * 4;
    fwrite("RIFF", 1, 4, w->file);
    put32(w->file, 36 + data);
    fwrite("WAVEfmt ", 1, 8, w->file);
    put32(w->file, 16);
    put16(w->file, 1);                   /* PCM */
    put16(w->file, 2);                   /* stereo */
    put32(w->file, SAMPLE_RATE);
    put32(w->file, SAMPLE_RATE * 4);     /* bytes per second */
    put16(w->file, 4);                   /* bytes per frame */
    put16(w->file, 16);                  /* bits per sample */
    fwrite("data", 1, 4, w->file);
    put32(w->file, data);
}

static int wav_open(struct wav *w, const char *path) {
    w->path = path;
    w->frames = 0;
    snprintf(w->temporary, sizeof w->temporary, "%s.tmp-%ld", path, (long)getpid());
    w->file = fopen(w->temporary, "wb");
    if (w->file == NULL) return 0;
    write_header(w); /* sizes are patched in wav_close */
    return 1;
}

static void wav_append(struct wav *w, const float *stereo, size_t frames) {
    size_t i;
    for (i = 0; i < frames * 2; i++) {
        float v = stereo[i];
        long s;
        if (v > 1) v = 1;
        if (v < -1) v = -1;
        s = (long)(v * 32767.0f);
        put16(w->file, (unsigned)(s & 0xffff));
    }
    w->frames += (unsigned long)frames;
}

static int wav_close(struct wav *w) {
    int ok = fseek(w->file, 0, SEEK_SET) == 0;
    if (ok) write_header(w);
    ok = fclose(w->file) == 0 && ok;
    if (ok && rename(w->temporary, w->path) == 0) return 1;
    remove(w->temporary);
    return 0;
}

/* ---------------------------------------------------------------------------------------------------------- */
/* Callbacks: they run inside ambience_update(), on this (the game's) thread.                                  */

struct game {
    ambience_engine *engine;
    int route_changes;
    int effects_finished;
    int soundtrack_waiting;  /* the soundtrack is held back for the user's music: it plays when theirs stops */
};

static void on_route_change(void *userdata, const ambience_route_change *change) {
    struct game *game = (struct game *)userdata;
    game->route_changes++;
    printf("route change (reason %d): %s -> %s\n", (int)change->reason, change->previous.name, change->current.name);
    if (change->reason == AMBIENCE_ROUTE_OLD_DEVICE_UNAVAILABLE) {
        /* The engine paused our audio when the device went away; this game simply carries on. */
        if (ambience_session_resume_after_route_change(game->engine) == AMBIENCE_OK) printf("resumed\n");
    }
}

static void on_interruption(void *userdata, ambience_interruption type, bool should_resume) {
    (void)userdata;
    printf("interruption %s%s\n", type == AMBIENCE_INTERRUPTION_BEGAN ? "began" : "ended",
           type == AMBIENCE_INTERRUPTION_ENDED && should_resume ? " (resuming)" : "");
}

static void on_now_playing(void *userdata, const ambience_media_item *item) {
    struct game *game = (struct game *)userdata;
    ambience_playback_state state = AMBIENCE_PLAYBACK_STOPPED;
    if (item == NULL) {
        printf("music: the queue has ended\n");
        return;
    }
    /* The queue names its first item before it plays: "queued" until the soundtrack actually plays. */
    (void)ambience_music_get_state(game->engine, &state);
    printf("%s: %s%s%s\n", state == AMBIENCE_PLAYBACK_PLAYING ? "now playing" : "queued",
           item->title ? item->title : item->path, item->artist ? " - " : "", item->artist ? item->artist : "");
}

static void on_playback_error(void *userdata, const char *path, const char *message) {
    (void)userdata;
    fprintf(stderr, "cgameloop: cannot play %s: %s\n", path, message);
}

/* The user's music started or stopped during the game: the soundtrack makes way, and comes back. */
static void on_silence_hint(void *userdata, bool silence) {
    struct game *game = (struct game *)userdata;
    ambience_playback_state state = AMBIENCE_PLAYBACK_STOPPED;
    if (silence) {
        if (ambience_music_get_state(game->engine, &state) == AMBIENCE_OK && state == AMBIENCE_PLAYBACK_PLAYING &&
            ambience_music_pause(game->engine) == AMBIENCE_OK) {
            game->soundtrack_waiting = 1;
            printf("your music started: the soundtrack is paused\n");
        }
    } else if (game->soundtrack_waiting) {
        game->soundtrack_waiting = 0;
        if (ambience_music_play(game->engine) == AMBIENCE_OK) printf("your music stopped: the soundtrack plays\n");
    }
}

static void on_voice_finished(void *userdata, ambience_voice voice, ambience_voice_end how) {
    struct game *game = (struct game *)userdata;
    (void)voice;
    if (how == AMBIENCE_VOICE_FINISHED) game->effects_finished++;
}

/* ---------------------------------------------------------------------------------------------------------- */

static void sleep_until_next_tick(struct timespec *next) {
    next->tv_nsec += 1000000000L / FRAME_RATE;
    if (next->tv_nsec >= 1000000000L) { next->tv_nsec -= 1000000000L; next->tv_sec++; }
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, next, NULL);
}

int main(int argc, char **argv) {
    double seconds = 10;
    const char *record = NULL, *assets = "Assets", *system_player = NULL;
    static const char *const music_types[] = {".ogg", ".mp3", ".wav", NULL};
    static const char *const sfx_types[] = {".wav", NULL};
    char folder[4096], *music[MAX_FILES], *sfx_paths[MAX_FILES];
    ambience_sound *sfx[MAX_FILES];
    size_t music_count, sfx_count, i;
    ambience_engine_config config;
    struct game game;
    struct wav wav;
    struct timespec next;
    static float block[FRAMES_PER_TICK * 2];
    long tick, ticks;
    int a, own_signals = 0;
    ambience_session_category category = AMBIENCE_CATEGORY_AMBIENT;
    ambience_session_state session;

    setvbuf(stdout, NULL, _IOLBF, 0);   /* a line at a time, even into a pipe or a file: others follow it live */
    for (a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--seconds") == 0 && a + 1 < argc) seconds = atof(argv[++a]);
        else if (strcmp(argv[a], "--record") == 0 && a + 1 < argc) record = argv[++a];
        else if (strcmp(argv[a], "--assets") == 0 && a + 1 < argc) assets = argv[++a];
        else if (strcmp(argv[a], "--system-music") == 0 && a + 1 < argc) system_player = argv[++a];
        else if (strcmp(argv[a], "--own-signals") == 0) own_signals = 1;
        else if (strcmp(argv[a], "--category") == 0 && a + 1 < argc && strcmp(argv[a + 1], "ambient") == 0) a++;
        else if (strcmp(argv[a], "--category") == 0 && a + 1 < argc && strcmp(argv[a + 1], "solo-ambient") == 0) {
            category = AMBIENCE_CATEGORY_SOLO_AMBIENT;
            a++;
        } else {
            fprintf(stderr, "usage: cgameloop [--seconds N] [--record OUT.wav] [--assets DIR] [--system-music PLAYER]"
                            " [--category ambient|solo-ambient] [--own-signals]\n");
            return 2;
        }
    }
    if (!(seconds > 0 && seconds <= 3600)) {
        fprintf(stderr, "cgameloop: --seconds must be between 0 and 3600\n");
        return 2;
    }

    snprintf(folder, sizeof folder, "%s/Music", assets);
    music_count = list_files(folder, music_types, music, MAX_FILES);
    snprintf(folder, sizeof folder, "%s/SFX", assets);
    sfx_count = list_files(folder, sfx_types, sfx_paths, MAX_FILES);
    if (music_count == 0 && sfx_count == 0) {
        fprintf(stderr, "cgameloop: no music or sound effects under %s\n", assets);
        return 1;
    }

    /* The engine: the default output device, or offline when recording. */
    TRY(ambience_engine_config_init(&config));
    config.output = record ? AMBIENCE_OUTPUT_OFFLINE : AMBIENCE_OUTPUT_DEVICE;
    config.sample_rate = SAMPLE_RATE;
    config.app_name = "CGameLoop";
    /* The opt-out: a game that handles these signals itself, or wants them to end it at once. */
    if (own_signals) config.handle_termination_signals = false;
    memset(&game, 0, sizeof game);
    TRY(ambience_engine_create(&config, &game.engine));
    TRY(ambience_set_route_change_callback(game.engine, on_route_change, &game));
    TRY(ambience_set_interruption_callback(game.engine, on_interruption, &game));
    TRY(ambience_set_now_playing_callback(game.engine, on_now_playing, &game));
    TRY(ambience_set_playback_error_callback(game.engine, on_playback_error, &game));
    TRY(ambience_set_voice_finished_callback(game.engine, on_voice_finished, &game));
    TRY(ambience_set_silence_hint_callback(game.engine, on_silence_hint, &game));
    TRY(ambience_session_set_category(game.engine, category, 0));
    TRY(ambience_session_set_active(game.engine, true, 0));
    TRY(ambience_session_get_state(game.engine, &session));
    if (session.other_music_was_playing_at_launch) {
        /* Already playing at launch: name it, and leave it playing (ambient), now and at exit. */
        char title[256], artist[256];
        TRY(ambience_system_music_get_now_playing_tag(game.engine, AMBIENCE_TAG_TITLE, title, sizeof title, NULL));
        TRY(ambience_system_music_get_now_playing_tag(game.engine, AMBIENCE_TAG_ARTIST, artist, sizeof artist, NULL));
        printf("music already playing at launch: %s%s%s\n", title[0] ? title : "(untitled)", artist[0] ? " - " : "", artist);
    }

    /* Sounds are loaded once; every shot is a new voice of one of them. */
    for (i = 0; i < sfx_count; i++) TRY(ambience_sound_load(game.engine, sfx_paths[i], &sfx[i]));
    TRY(ambience_music_set_queue(game.engine, (const char *const *)music, music_count));
    TRY(ambience_music_set_repeat(game.engine, AMBIENCE_REPEAT_ALL));
    TRY(ambience_music_set_volume(game.engine, 0.6f));
    /* The soundtrack only when the user has no music of their own (solo ambient has paused theirs by now). */
    if (category == AMBIENCE_CATEGORY_AMBIENT &&
        (session.other_music_was_playing_at_launch || session.secondary_audio_should_be_silenced_hint)) {
        game.soundtrack_waiting = 1;
        printf("the user's music plays: the soundtrack stays off\n");
    } else {
        TRY(ambience_music_play(game.engine));
    }
    if (system_player) {
        TRY(ambience_system_music_set_player(game.engine, system_player));
        TRY(ambience_system_music_play(game.engine));
    }

    if (record && !wav_open(&wav, record)) {
        fprintf(stderr, "cgameloop: %s: cannot create the file\n", record);
        return 1;
    }
    {
        char driver[64];
        TRY(ambience_engine_get_output_driver(game.engine, driver, sizeof driver, NULL));
        printf("cgameloop: %zu songs, %zu effects, %.1f s on %s\n", music_count, sfx_count, seconds, driver);
    }

    /* The game loop: a fixed 60 Hz step. */
    clock_gettime(CLOCK_MONOTONIC, &next);
    ticks = (long)(seconds * FRAME_RATE + 0.5);
    for (tick = 0; tick < ticks; tick++) {
        /* Every 0.75 s an effect, somewhere between left and right. */
        if (sfx_count > 0 && tick % (FRAME_RATE * 3 / 4) == FRAME_RATE / 4) {
            ambience_play_options shot;
            long n = tick / (FRAME_RATE * 3 / 4);
            TRY(ambience_play_options_init(&shot));
            shot.pan = (float)((n % 5) - 2) / 2.5f;
            shot.gain = 0.8f;
            shot.pitch = 0.9f + 0.05f * (float)(n % 4);
            TRY(ambience_play(sfx[(size_t)n % sfx_count], &shot, NULL));
        }
        TRY(ambience_update(game.engine));
        if (record) {
            TRY(ambience_render(game.engine, block, FRAMES_PER_TICK));
            wav_append(&wav, block, FRAMES_PER_TICK);
        } else {
            sleep_until_next_tick(&next);
        }
    }

    if (record && !wav_close(&wav)) {
        fprintf(stderr, "cgameloop: %s: cannot write the file\n", record);
        return 1;
    }
    printf("cgameloop: %d effects played out, %d route changes%s%s\n", game.effects_finished, game.route_changes,
           record ? ", wrote " : "", record ? record : "");

    /* The exit rule: shut down (stops output and the music player; other apps' music is left alone), release. */
    TRY(ambience_engine_shutdown(game.engine));
    TRY(ambience_engine_destroy(game.engine));
    for (i = 0; i < music_count; i++) free(music[i]);
    for (i = 0; i < sfx_count; i++) free(sfx_paths[i]);
    return 0;
}
