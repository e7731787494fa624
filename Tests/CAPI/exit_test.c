/* exit() while other threads are inside the library: the engine's exit path (ProcessExit) must stop rendering and
 * streaming before OpenAL Soft's destructor runs, from whichever thread exits. Run many times by ExitTests.swift;
 * before that path existed, OpenAL Soft aborted (its LockLists assertion) in a good share of runs.
 *
 *   exit_test ROOT main    six threads render (64 frames a call) an offline engine (music and 64 voices); main calls exit()
 *   exit_test ROOT thread  the same, and one of the rendering threads calls exit()
 *   exit_test ROOT device  as main, beside a real-time engine whose streaming thread plays music
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ambience.h"

static ambience_engine *offline;
static int exit_from_thread;

static void pause_ms(long ms) {
    struct timespec pause = {0, ms * 1000 * 1000};
    nanosleep(&pause, NULL);
}

static void *render(void *which) {
    static float blocks[6][2 * 64];
    float *block = blocks[(long)which];
    for (int i = 0;; i++) {
        ambience_render(offline, block, 64);
        if (exit_from_thread && (long)which == 0 && i == 300) exit(0);
    }
    return NULL;
}

static ambience_engine *start(ambience_output_kind output, const char *root) {
    ambience_engine_config config;
    ambience_engine *engine;
    ambience_sound *sound;
    char music[4096], sfx[4096];
    snprintf(music, sizeof music, "%s/Assets/Music/gravity-wave-theme.ogg", root);
    snprintf(sfx, sizeof sfx, "%s/Assets/SFX/laser.wav", root);
    ambience_engine_config_init(&config);
    config.output = output;
    if (ambience_engine_create(&config, &engine) != AMBIENCE_OK) {
        fprintf(stderr, "exit_test: %s\n", ambience_last_error());
        exit(2);
    }
    const char *songs[] = {music};
    if (ambience_music_set_queue(engine, songs, 1) != AMBIENCE_OK || ambience_music_play(engine) != AMBIENCE_OK ||
        ambience_sound_load(engine, sfx, &sound) != AMBIENCE_OK) {
        fprintf(stderr, "exit_test: %s\n", ambience_last_error());
        exit(2);
    }
    for (int i = 0; i < 64; i++) ambience_play(sound, NULL, NULL);
    return engine;
}

int main(int argc, char **argv) {
    pthread_t threads[6];
    if (argc != 3) {
        fprintf(stderr, "usage: exit_test ROOT main|thread|device\n");
        return 2;
    }
    exit_from_thread = strcmp(argv[2], "thread") == 0;
    if (strcmp(argv[2], "device") == 0) start(AMBIENCE_OUTPUT_DEVICE, argv[1]);
    offline = start(AMBIENCE_OUTPUT_OFFLINE, argv[1]);
    for (long i = 0; i < 6; i++) pthread_create(&threads[i], NULL, render, (void *)i);
    if (exit_from_thread) {
        for (;;) {
            ambience_update(offline);
            pause_ms(1);
        }
    }
    pause_ms(30);
    exit(0); /* with the rendering threads still inside ambience_render */
}
