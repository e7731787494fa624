/*
 * The SDL_mixer stand-in from C, compiled against Debian's own <SDL2/SDL_mixer.h> (which proves the ABI) and run
 * with the stand-in first on LD_LIBRARY_PATH (Tests/AmbienceIntegrationTests/SDLMixerStandIn/SDLMixerStandInTests.swift does both).
 *
 *   standin_test FOLDER   every implemented function, bad input included; FOLDER is where the stand-in must have
 *                         been loaded from (read back from /proc/self/maps). Ends with "N passed, M failed".
 *   standin_test --heard  plays a 1 s 440 Hz chunk and waits for its end: run with SDL's disk driver, the test reads
 *                         what the device was given.
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

/* A WAV file in memory: 16-bit mono at `rate`, a sine of `hz` at half scale, `seconds` long. Freed by the caller. */
static Uint8 *make_wav(int rate, double hz, double seconds, Uint32 *size) {
    Uint32 frames = (Uint32)(rate * seconds), data = frames * 2;
    Uint8 *wav = calloc(1, 44 + data);
    Uint32 fields[] = {36 + data, 16, 0x00010001, (Uint32)rate, (Uint32)rate * 2, 0x00100002, data};
    memcpy(wav, "RIFF", 4);
    memcpy(wav + 4, &fields[0], 4);
    memcpy(wav + 8, "WAVEfmt ", 8);
    memcpy(wav + 16, &fields[1], 4);
    memcpy(wav + 20, &fields[2], 4);
    memcpy(wav + 24, &fields[3], 4);
    memcpy(wav + 28, &fields[4], 4);
    memcpy(wav + 32, &fields[5], 4);
    memcpy(wav + 36, "data", 4);
    memcpy(wav + 40, &fields[6], 4);
    for (Uint32 i = 0; i < frames; i++) {
        Sint16 s = (Sint16)(16384 * sin(2 * M_PI * hz * i / rate));
        memcpy(wav + 44 + 2 * i, &s, 2);
    }
    *size = 44 + data;
    return wav;
}

/* A custom SDL_RWops over memory that fails after `fail_after` bytes (-1: never), and may hide its size. */
typedef struct {
    const Uint8 *bytes;
    Sint64 size, at, fail_after;
    int hide_size;
    int *closes;
} Source;

static Sint64 source_size(SDL_RWops *rw) {
    Source *s = rw->hidden.unknown.data1;
    return s->hide_size ? -1 : s->size;
}
static Sint64 source_seek(SDL_RWops *rw, Sint64 offset, int whence) {
    Source *s = rw->hidden.unknown.data1;
    Sint64 base = whence == RW_SEEK_SET ? 0 : whence == RW_SEEK_CUR ? s->at : s->size;
    s->at = base + offset;
    return s->at;
}
static size_t source_read(SDL_RWops *rw, void *to, size_t size, size_t count) {
    Source *s = rw->hidden.unknown.data1;
    Sint64 want = (Sint64)(size * count), left = s->size - s->at;
    if (s->fail_after >= 0 && s->at >= s->fail_after) {
        SDL_SetError("the disk is on fire");
        return 0;
    }
    if (s->fail_after >= 0 && s->at + want > s->fail_after) want = s->fail_after - s->at;
    if (want > left) want = left;
    memcpy(to, s->bytes + s->at, (size_t)want);
    s->at += want;
    return (size_t)(want / (Sint64)size);
}
static size_t source_write(SDL_RWops *rw, const void *from, size_t size, size_t count) {
    (void)rw, (void)from, (void)size, (void)count;
    return 0;
}
static int source_close(SDL_RWops *rw) {
    Source *s = rw->hidden.unknown.data1;
    (*s->closes)++;
    free(s);
    SDL_FreeRW(rw);
    return 0;
}
static SDL_RWops *make_source(const Uint8 *bytes, Sint64 size, Sint64 fail_after, int hide_size, int *closes) {
    SDL_RWops *rw = SDL_AllocRW();
    Source *s = calloc(1, sizeof *s);
    *s = (Source){bytes, size, 0, fail_after, hide_size, closes};
    rw->size = source_size;
    rw->seek = source_seek;
    rw->read = source_read;
    rw->write = source_write;
    rw->close = source_close;
    rw->type = SDL_RWOPS_UNKNOWN;
    rw->hidden.unknown.data1 = s;
    return rw;
}

/* Mix_ChannelFinished's record: how many ends per channel, on which thread, and one re-entrant play. */
static SDL_atomic_t finished_count[64];
static SDL_atomic_t finished_off_main;
static pthread_t main_thread;
static Mix_Chunk *replay_chunk;
static SDL_atomic_t replay_result = {-100};
static Mix_Chunk *seen_chunk[64]; /* Mix_GetChunk(channel) as the callback saw it */
static SDL_atomic_t unset_in_callback, unset_calls;
static void on_finished(int channel) {
    if (channel >= 0 && channel < 64) SDL_AtomicAdd(&finished_count[channel], 1);
    if (channel >= 0 && channel < 64) seen_chunk[channel] = Mix_GetChunk(channel);
    if (SDL_AtomicGet(&unset_in_callback)) {
        SDL_AtomicAdd(&unset_calls, 1);
        Mix_ChannelFinished(NULL); /* the channels after this one in the same batch get no call */
    }
    if (!pthread_equal(pthread_self(), main_thread)) SDL_AtomicSet(&finished_off_main, 1);
    if (replay_chunk) {
        Mix_Chunk *chunk = replay_chunk;
        replay_chunk = NULL;
        SDL_AtomicSet(&replay_result, Mix_PlayChannel(-1, chunk, 0)); /* calls back into the library */
    }
}

/* Waits up to `ms` for channel `channel`'s end count to reach `count`. */
static int wait_finished(int channel, int count, int ms) {
    for (int waited = 0; waited < ms; waited += 10) {
        if (SDL_AtomicGet(&finished_count[channel]) >= count) return 1;
        SDL_Delay(10);
    }
    return 0;
}

/* Two threads open the closed device at once: both opens must count (Mix_QuerySpec 2), one engine. */
static int open_once(void *unused) {
    (void)unused;
    return Mix_OpenAudio(44100, AUDIO_S16LSB, 2, 1024);
}

/* A thread that times Mix_Playing while the main thread plays a big chunk: no call may wait for a conversion. */
static SDL_atomic_t stop_timing, longest_wait_ms;
static int time_calls(void *unused) {
    (void)unused;
    while (!SDL_AtomicGet(&stop_timing)) {
        Uint32 start = SDL_GetTicks();
        Mix_Playing(-1);
        int waited = (int)(SDL_GetTicks() - start);
        if (waited > SDL_AtomicGet(&longest_wait_ms)) SDL_AtomicSet(&longest_wait_ms, waited);
        SDL_Delay(1);
    }
    return 0;
}

static int loaded_from(const char *folder) {
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[4096];
    int ours = 0, theirs = 0;
    while (maps && fgets(line, sizeof line, maps)) {
        if (!strstr(line, "libSDL2_mixer")) continue;
        if (strstr(line, folder)) ours = 1;
        else theirs = 1;
    }
    if (maps) fclose(maps);
    return ours && !theirs;
}

/* --heard plays the tone centred; --heard-left panned hard left (Mix_SetPanning(0, 255, 0)): the right side silent;
 * --heard-left-reversed then Mix_SetReverseStereo(0, 1), which SDL_mixer runs after the panning (effects run in the
 * order they were set): the left side silent. */
static int heard(int left, int reversed) {
    Uint32 size;
    Uint8 *wav = make_wav(44100, 440, 1.0, &size);
    if (Mix_OpenAudio(44100, AUDIO_S16SYS, 2, 512) != 0) return printf("open: %s\n", Mix_GetError()), 1;
    Mix_ChannelFinished(on_finished);
    Mix_Chunk *tone = Mix_LoadWAV_RW(SDL_RWFromConstMem(wav, (int)size), 1);
    if (left && Mix_SetPanning(0, 255, 0) != 1) return printf("panning: %s\n", Mix_GetError()), 1;
    if (reversed && Mix_SetReverseStereo(0, 1) != 1) return printf("reversing: %s\n", Mix_GetError()), 1;
    if (!tone || Mix_PlayChannel(0, tone, 0) != 0) return printf("play: %s\n", Mix_GetError()), 1;
    int ended = wait_finished(0, 1, 3000);
    SDL_Delay(200);
    Mix_FreeChunk(tone);
    Mix_CloseAudio();
    free(wav);
    printf("heard run: %s\n", ended ? "ended" : "did not end");
    return ended ? 0 : 1;
}

int main(int argc, char **argv) {
    main_thread = pthread_self();
    if (argc == 2 && strcmp(argv[1], "--heard") == 0) return heard(0, 0);
    if (argc == 2 && strcmp(argv[1], "--heard-left") == 0) return heard(1, 0);
    if (argc == 2 && strcmp(argv[1], "--heard-left-reversed") == 0) return heard(1, 1);
    if (argc != 2) return fprintf(stderr, "usage: standin_test FOLDER | --heard\n"), 2;

    CHECK(loaded_from(argv[1]));
    const SDL_version *version = Mix_Linked_Version();
    CHECK(version && version->major == 2 && version->minor == 6 && version->patch == 2);
    int basic = MIX_INIT_OGG | MIX_INIT_FLAC | MIX_INIT_MP3 | MIX_INIT_OPUS;
    CHECK((Mix_Init(basic) & basic) == basic);
    CHECK((Mix_Init(0) & basic) == basic);
    Mix_Quit();
    CHECK(Mix_Init(0) == 0);

    Uint32 size;
    Uint8 *wav = make_wav(22050, 440, 0.5, &size);
    int closes = 0;
    /* Closed device: refused, and the source still closed when asked. Mix_QuerySpec leaves the error text alone. */
    SDL_SetError("an error of the program's");
    CHECK(Mix_QuerySpec(NULL, NULL, NULL) == 0 && strcmp(Mix_GetError(), "an error of the program's") == 0);
    /* All zeros open at SDL's defaults, as Debian's SDL_mixer 2.6.2 does: 22,050 Hz, AUDIO_S16, stereo. */
    int default_rate = 0, default_channels = 0;
    Uint16 default_format = 0;
    CHECK(Mix_OpenAudio(0, 0, 0, 0) == 0 && Mix_QuerySpec(&default_rate, &default_format, &default_channels) == 1);
    CHECK(default_rate == 22050 && default_format == AUDIO_S16LSB && default_channels == 2);
    Mix_CloseAudio();
    /* Two threads opening at once: both opens count. */
    SDL_Thread *openers[2] = {SDL_CreateThread(open_once, "open-a", NULL), SDL_CreateThread(open_once, "open-b", NULL)};
    int open_results[2] = {-1, -1};
    SDL_WaitThread(openers[0], &open_results[0]);
    SDL_WaitThread(openers[1], &open_results[1]);
    CHECK(open_results[0] == 0 && open_results[1] == 0 && Mix_QuerySpec(NULL, NULL, NULL) == 2);
    while (Mix_QuerySpec(NULL, NULL, NULL) > 0) Mix_CloseAudio();
    CHECK(Mix_LoadWAV_RW(make_source(wav, size, -1, 0, &closes), 1) == NULL && closes == 1);
    CHECK(Mix_PlayChannel(-1, NULL, 0) == -1);
    CHECK(Mix_OpenAudio(44100, 0x7777, 2, 1024) == -1); /* no such format */

    CHECK(Mix_OpenAudio(44100, AUDIO_S16LSB, 2, 1024) == 0);
    int rate = 0, channels = 0;
    Uint16 format = 0;
    CHECK(Mix_QuerySpec(&rate, &format, &channels) == 1 && rate == 44100 && format == AUDIO_S16LSB && channels == 2);
    CHECK(Mix_OpenAudio(44100, AUDIO_S16LSB, 2, 1024) == 0 && Mix_QuerySpec(NULL, NULL, NULL) == 2);
    Mix_CloseAudio();
    CHECK(Mix_QuerySpec(NULL, NULL, NULL) == 1);

    CHECK(Mix_GetNumChunkDecoders() >= 5 && Mix_GetNumMusicDecoders() >= 5);
    CHECK(Mix_HasChunkDecoder("wave") == SDL_TRUE && Mix_HasChunkDecoder("nonsense") == SDL_FALSE);
    CHECK(Mix_HasMusicDecoder("OGG") == SDL_TRUE && Mix_HasChunkDecoder(NULL) == SDL_FALSE);
    CHECK(Mix_GetChunkDecoder(0) != NULL && Mix_GetChunkDecoder(-1) == NULL && Mix_GetChunkDecoder(100000) == NULL);
    CHECK(Mix_GetMusicDecoder(0) != NULL && Mix_GetMusicDecoder(-1) == NULL);

    /* Loading: memory (converted to 44.1 kHz stereo S16), file, custom sources. */
    Mix_Chunk *tone = Mix_LoadWAV_RW(SDL_RWFromConstMem(wav, (int)size), 1);
    CHECK(tone != NULL && tone->allocated == 1 && tone->volume == MIX_MAX_VOLUME);
    CHECK(tone && tone->alen >= 88000 && tone->alen <= 88400 && tone->alen % 4 == 0);
    if (tone) {
        Sint16 *s = (Sint16 *)tone->abuf;
        int peak = 0, stereo = 1;
        for (Uint32 i = 0; i < tone->alen / 4; i++) {
            if (abs(s[2 * i]) > peak) peak = abs(s[2 * i]);
            if (s[2 * i] != s[2 * i + 1]) stereo = 0;
        }
        CHECK(peak > 15000 && peak < 17500 && stereo);
    }
    char path[] = "/tmp/standin-test-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0 && write(fd, wav, size) == (ssize_t)size);
    close(fd);
    Mix_Chunk *from_file = Mix_LoadWAV(path);
    CHECK(from_file != NULL && tone && from_file->alen == tone->alen);
    unlink(path);
    CHECK(Mix_LoadWAV("/nonexistent/sound.wav") == NULL && Mix_LoadWAV(NULL) == NULL);
    closes = 0;
    CHECK(Mix_LoadWAV_RW(make_source(wav, size, 1000, 0, &closes), 1) == NULL && closes == 1);
    CHECK(strstr(Mix_GetError(), "disk is on fire") != NULL);
    CHECK(Mix_LoadWAV_RW(make_source(wav, size, 3000, 1, &closes), 1) == NULL && closes == 2);
    CHECK(strstr(Mix_GetError(), "disk is on fire") != NULL);
    SDL_RWops *kept = make_source(wav, size, -1, 1, &closes);
    Mix_Chunk *custom = Mix_LoadWAV_RW(kept, 0);
    CHECK(custom != NULL && closes == 2);
    SDL_RWclose(kept);
    CHECK(Mix_LoadWAV_RW(NULL, 1) == NULL);
    static const Uint8 junk[64] = "this is not audio, in any format the engine knows of at all";
    CHECK(Mix_LoadWAV_RW(SDL_RWFromConstMem(junk, sizeof junk), 1) == NULL && strlen(Mix_GetError()) > 0);

    static Sint16 raw[4410 * 2];
    for (int i = 0; i < 4410; i++) raw[2 * i] = raw[2 * i + 1] = (Sint16)(8000 * sin(2 * M_PI * 1000 * i / 44100.0));
    Mix_Chunk *short_raw = Mix_QuickLoad_RAW((Uint8 *)raw, sizeof raw); /* 0.1 s */
    CHECK(short_raw && short_raw->abuf == (Uint8 *)raw && short_raw->alen == sizeof raw && short_raw->allocated == 0);
    CHECK(Mix_QuickLoad_RAW(NULL, 10) == NULL);
    Mix_Chunk *quick = Mix_QuickLoad_WAV(wav);
    CHECK(quick && quick->abuf == wav + 44 && quick->alen == size - 44);
    CHECK(Mix_QuickLoad_WAV(NULL) == NULL && Mix_QuickLoad_WAV((Uint8 *)junk) == NULL);

    /* Channels. */
    CHECK(Mix_AllocateChannels(-1) == MIX_CHANNELS);
    CHECK(Mix_AllocateChannels(16) == 16 && Mix_AllocateChannels(-1) == 16);
    CHECK(Mix_AllocateChannels(100000) == -1 && Mix_AllocateChannels(-1) == 16);
    Mix_ChannelFinished(on_finished);
    int ch = Mix_PlayChannel(-1, tone, -1);
    CHECK(ch == 0 && Mix_Playing(0) == 1 && Mix_Playing(-1) == 1 && Mix_GetChunk(0) == tone);
    CHECK(Mix_PlayChannel(-2, tone, 0) == -1 && Mix_PlayChannel(100000, tone, 0) == -1);
    CHECK(Mix_Playing(-2) == 0 && Mix_Playing(100000) == 0 && Mix_GetChunk(100000) == NULL);
    CHECK(Mix_Volume(0, 1000000000) == 128 && Mix_Volume(0, -1) == 128);
    CHECK(Mix_Volume(0, 64) == 128 && Mix_Volume(0, -1) == 64);
    CHECK(Mix_Volume(-1, -1) == (64 + 15 * 128) / 16);
    CHECK(Mix_Volume(-2, 5) == 0 && Mix_Volume(100000, 5) == 0); /* SDL_mixer's 0 for a channel past its table */
    CHECK(Mix_VolumeChunk(tone, 1000000000) == 128 && Mix_VolumeChunk(tone, 32) == 128 && tone->volume == 32);
    CHECK(Mix_VolumeChunk(tone, -1) == 32 && Mix_VolumeChunk(NULL, 5) == -1);
    Mix_VolumeChunk(tone, MIX_MAX_VOLUME);
    CHECK(Mix_MasterVolume(1000000000) == 128 && Mix_MasterVolume(64) == 128 && Mix_MasterVolume(-1) == 64);
    Mix_MasterVolume(MIX_MAX_VOLUME);
    Mix_Pause(0);
    CHECK(Mix_Paused(0) == 1 && Mix_Paused(-1) == 1 && Mix_Playing(0) == 1);
    Mix_Resume(-1);
    CHECK(Mix_Paused(0) == 0 && Mix_Paused(-2) == 0 && Mix_Paused(100000) == 0);
    Mix_Pause(100000);
    Mix_Resume(-2);

    /* Placement. */
    CHECK(Mix_SetPanning(0, 255, 0) == 1 && Mix_SetPosition(0, 90, 100) == 1 && Mix_SetDistance(0, 200) == 1);
    CHECK(Mix_SetPosition(0, 32767, 255) == 1 && Mix_SetPosition(0, -32768, 0) == 1);
    CHECK(Mix_SetReverseStereo(0, 1) == 1 && Mix_SetReverseStereo(0, 0) == 1 && Mix_UnregisterAllEffects(0) == 1);
    CHECK(Mix_SetPanning(MIX_CHANNEL_POST, 255, 0) == 0 && Mix_SetPanning(100000, 1, 1) == 0);
    CHECK(Mix_SetPosition(-5, 0, 0) == 0 && Mix_SetDistance(100000, 1) == 0 && Mix_SetReverseStereo(-3, 1) == 0);

    /* Halting calls the callback before it returns; the callback may play. */
    replay_chunk = short_raw;
    CHECK(Mix_HaltChannel(0) == 0 && SDL_AtomicGet(&finished_count[0]) == 1);
    /* The callback's play took the channel just freed. */
    CHECK(SDL_AtomicGet(&replay_result) == 0 && Mix_GetChunk(0) == short_raw && Mix_Playing(0) == 1);
    CHECK(Mix_HaltChannel(100000) == 0 && Mix_HaltChannel(-2) == 0); /* SDL_mixer's 0 */
    /* The re-entrant play (0.1 s) ends by itself: reported on the update thread. */
    CHECK(wait_finished(0, 2, 2000) && SDL_AtomicGet(&finished_off_main) == 1 && Mix_Playing(0) == 0);

    /* Loops: 0.1 s played three times is still on at 0.2 s, over by 1 s. */
    ch = Mix_PlayChannel(1, short_raw, 2);
    SDL_Delay(200);
    CHECK(ch == 1 && Mix_Playing(1) == 1);
    CHECK(wait_finished(1, 1, 1000) && Mix_Playing(1) == 0);
    /* Timed, expired, faded. */
    CHECK(Mix_PlayChannelTimed(2, tone, -1, 100) == 2 && wait_finished(2, 1, 1000));
    CHECK(Mix_PlayChannel(3, tone, -1) == 3 && Mix_ExpireChannel(3, 50) == 1 && wait_finished(3, 1, 1000));
    /* Counted as SDL_mixer counts: every channel named, playing or not. */
    CHECK(Mix_ExpireChannel(100000, 10) == 0 && Mix_ExpireChannel(3, 10) == 1 && Mix_ExpireChannel(-1, 0) == 16);
    CHECK(Mix_FadeInChannel(4, tone, -1, 500) == 4 && Mix_FadingChannel(4) == MIX_FADING_IN);
    CHECK(Mix_FadeOutChannel(4, 100) == 1 && Mix_FadingChannel(4) == MIX_FADING_OUT && wait_finished(4, 1, 1000));
    CHECK(Mix_FadeInChannelTimed(5, tone, 0, 10, 60) == 5 && wait_finished(5, 1, 1000));
    CHECK(Mix_FadeOutChannel(100000, 10) == 0 && Mix_FadingChannel(100000) == MIX_NO_FADING);
    CHECK(Mix_FadeInChannel(-1, NULL, 0, 10) == -1 && Mix_FadeInChannelTimed(-2, tone, 0, 10, 10) == -1);
    /* Mix_Volume during a fade-in reports the volume as faded so far; a channel at volume 0 does not fade out. */
    CHECK(Mix_FadeInChannel(6, tone, -1, 400) == 6);
    SDL_Delay(200);
    int faded = Mix_Volume(6, -1);
    CHECK(faded > 20 && faded < 110);
    Mix_HaltChannel(6);
    Mix_Volume(7, 0);
    CHECK(Mix_PlayChannel(7, tone, -1) == 7 && Mix_FadeOutChannel(7, 100) == 0 && Mix_FadingChannel(7) == MIX_NO_FADING);
    Mix_HaltChannel(7);
    Mix_Volume(7, MIX_MAX_VOLUME);
    /* A paused channel's deadline and fade-out wait while it is paused, and go on when it resumes. */
    int ends = SDL_AtomicGet(&finished_count[8]);
    CHECK(Mix_PlayChannelTimed(8, tone, -1, 150) == 8);
    Mix_Pause(8);
    SDL_Delay(400);
    CHECK(Mix_Playing(8) == 1 && Mix_Paused(8) == 1 && SDL_AtomicGet(&finished_count[8]) == ends);
    Mix_Resume(8);
    CHECK(Mix_Playing(8) == 1 && wait_finished(8, ends + 1, 1000));
    ends = SDL_AtomicGet(&finished_count[9]);
    CHECK(Mix_PlayChannel(9, tone, -1) == 9 && Mix_FadeOutChannel(9, 150) == 1);
    Mix_Pause(9);
    SDL_Delay(400);
    CHECK(Mix_Playing(9) == 1 && Mix_FadingChannel(9) == MIX_FADING_OUT && SDL_AtomicGet(&finished_count[9]) == ends);
    Mix_Resume(9);
    CHECK(Mix_Playing(9) == 1 && wait_finished(9, ends + 1, 1000));
    /* A play that ended by itself is reported before the next play on its channel is installed: the callback's
       Mix_GetChunk is the chunk that ended, never the next one. */
    int late = 0;
    for (int k = 0; k < 10; k++) {
        ends = SDL_AtomicGet(&finished_count[10]);
        Mix_PlayChannel(10, short_raw, 0);
        while (Mix_Playing(10)) SDL_Delay(0);
        Mix_PlayChannel(10, tone, 0);
        wait_finished(10, ends + 1, 500);
        if (seen_chunk[10] != short_raw) late++;
        Mix_HaltChannel(10);
    }
    CHECK(late == 0);
    /* A chunk that cannot play leaves the channel's play alone: no halt, no callback. */
    static Uint8 three_bytes[3];
    Mix_Chunk bad_frame = {0, three_bytes, 3, MIX_MAX_VOLUME};
    ends = SDL_AtomicGet(&finished_count[11]);
    CHECK(Mix_PlayChannel(11, tone, -1) == 11 && Mix_PlayChannel(11, &bad_frame, 0) == -1);
    CHECK(Mix_Playing(11) == 1 && Mix_GetChunk(11) == tone && SDL_AtomicGet(&finished_count[11]) == ends);
    /* Mix_ChannelFinished(NULL) from a callback: the other channels halted in the same call get no call. */
    for (int i = 12; i < 16; i++) Mix_PlayChannel(i, tone, -1);
    SDL_AtomicSet(&unset_in_callback, 1);
    Mix_HaltChannel(-1);
    SDL_AtomicSet(&unset_in_callback, 0);
    CHECK(SDL_AtomicGet(&unset_calls) == 1);
    Mix_ChannelFinished(on_finished);

    /* Reserved channels and groups. */
    CHECK(Mix_ReserveChannels(2) == 2 && Mix_PlayChannel(-1, tone, -1) == 2);
    CHECK(Mix_ReserveChannels(1000) == 16 && Mix_PlayChannel(-1, tone, 0) == -1);
    CHECK(Mix_ReserveChannels(0) == 0 && Mix_HaltChannel(-1) == 0 && Mix_Playing(-1) == 0);
    CHECK(Mix_ReserveChannels(-3) == -3 && Mix_PlayChannel(-1, short_raw, 0) == 0 && Mix_HaltChannel(0) == 0);
    CHECK(Mix_GroupChannels(14, 20, 9) == 2 && Mix_GroupCount(9) == 2 && Mix_GroupChannels(-5, 0, 9) == 1);
    Mix_GroupChannels(0, 15, -1);
    CHECK(Mix_GroupChannels(0, 1, 7) == 2 && Mix_GroupCount(7) == 2 && Mix_GroupCount(-1) == 16);
    CHECK(Mix_GroupAvailable(7) == 0 && Mix_GroupOldest(7) == -1 && Mix_GroupNewer(7) == -1);
    Mix_PlayChannel(0, tone, -1);
    SDL_Delay(20);
    Mix_PlayChannel(1, tone, -1);
    CHECK(Mix_GroupOldest(7) == 0 && Mix_GroupNewer(7) == 1 && Mix_GroupAvailable(7) == -1);
    CHECK(Mix_GroupChannel(1, -1) == 1 && Mix_GroupCount(7) == 1 && Mix_GroupChannel(100000, 7) == 0);
    CHECK(Mix_GroupChannels(3, 1, 7) == 0 && Mix_GroupChannels(1, 100000, -1) == 15); /* the ones that exist */
    CHECK(Mix_FadeOutGroup(7, 50) == 1 && Mix_HaltGroup(-1) == 0 && Mix_Playing(-1) == 0);
    /* Shrinking halts the channels it drops; their callbacks still see the chunk that ended, as SDL_mixer's. */
    int before = SDL_AtomicGet(&finished_count[10]);
    Mix_PlayChannel(10, tone, -1);
    seen_chunk[10] = NULL;
    CHECK(Mix_AllocateChannels(4) == 4 && SDL_AtomicGet(&finished_count[10]) == before + 1);
    CHECK(seen_chunk[10] == tone);
    CHECK(Mix_PlayChannel(10, tone, 0) == -1 && Mix_Playing(-1) == 0);
    /* Mix_Playing of one channel is answered without the lock from what each call publishes (PlayingAnswers.swift):
     * every change shows at once, on the channels past the published ones too, and a one-shot reads 0 once out. */
    CHECK(Mix_AllocateChannels(70) == 70 && Mix_PlayChannel(3, tone, -1) == 3 && Mix_PlayChannel(66, tone, -1) == 66);
    CHECK(Mix_Playing(3) == 1 && Mix_Playing(66) == 1 && Mix_Playing(-1) == 2 && Mix_Playing(69) == 0);
    Mix_Pause(3);
    CHECK(Mix_Playing(3) == 1 && Mix_AllocateChannels(4) == 4 && Mix_Playing(3) == 1 && Mix_Playing(66) == 0);
    CHECK(Mix_HaltChannel(3) == 0 && Mix_Playing(3) == 0 && Mix_Playing(4) == 0);
    CHECK(Mix_PlayChannel(2, short_raw, 0) == 2 && Mix_Playing(2) == 1);
    Uint32 asked = SDL_GetTicks();
    while (Mix_Playing(2) && SDL_GetTicks() - asked < 5000) SDL_Delay(1);
    CHECK(Mix_Playing(2) == 0 && Mix_Playing(-1) == 0);

    /* A chunk the program built itself plays, as chocolate-doom's do. */
    Mix_Chunk own = {0, (Uint8 *)raw, sizeof raw, MIX_MAX_VOLUME};
    CHECK(Mix_PlayChannel(-1, &own, 0) == 0 && Mix_Playing(0) == 1 && Mix_GetChunk(0) == &own);
    CHECK(Mix_HaltChannel(0) == 0);

    /* A program's chunk at the address of one of ours that was freed plays; ours, freed, stays refused. */
    Mix_Chunk *ours_freed = Mix_QuickLoad_RAW((Uint8 *)raw, sizeof raw);
    Mix_FreeChunk(ours_freed);
    Mix_Chunk *program_chunk = malloc(sizeof *program_chunk);
    *program_chunk = (Mix_Chunk){0, (Uint8 *)raw, sizeof raw, MIX_MAX_VOLUME};
    CHECK(Mix_PlayChannel(-1, program_chunk, 0) == 0 && Mix_HaltChannel(0) == 0);
    CHECK((void *)program_chunk == (void *)ours_freed || Mix_PlayChannel(-1, ours_freed, 0) == -1);
    free(program_chunk);
    /* A big chunk written into is converted again outside the stand-in's lock: other calls do not wait for it. The
     * bound catches the lock held through the conversion (3 to 7 s for this chunk, before); what they wait is the
     * engine uploading the sound, about 45 ms on a quiet machine, longer on a loaded one, so it is no timing figure. */
    Uint32 big_length = 32u << 20;
    Uint8 *big = calloc(1, big_length);
    Mix_Chunk *big_chunk = Mix_QuickLoad_RAW(big, big_length);
    CHECK(big_chunk && Mix_PlayChannel(0, big_chunk, 0) == 0);
    big[big_length / 2] ^= 1;
    SDL_Thread *timer = SDL_CreateThread(time_calls, "time-calls", NULL);
    SDL_Delay(20);
    CHECK(Mix_PlayChannel(1, big_chunk, 0) == 1);
    SDL_AtomicSet(&stop_timing, 1);
    SDL_WaitThread(timer, NULL);
    CHECK(SDL_AtomicGet(&longest_wait_ms) < 2000);
    Mix_FreeChunk(big_chunk);
    free(big);

    /* Freed chunks are refused; NULL is ignored. */
    Mix_FreeChunk(from_file);
    CHECK(Mix_PlayChannel(-1, from_file, 0) == -1 && Mix_VolumeChunk(from_file, 5) == -1);
    Mix_FreeChunk(from_file);
    Mix_FreeChunk(NULL);
    Mix_PlayChannel(0, custom, -1);
    Mix_FreeChunk(custom); /* halts its channel */
    CHECK(Mix_Playing(0) == 0);

    /* No music loaded: refused the documented way (music: standin_music_test.c); a NULL effect is refused too
     * (effects: standin_effects_test.c). */
    CHECK(Mix_LoadMUS("/nonexistent.ogg") == NULL && Mix_PlayMusic(NULL, 0) == -1 && Mix_SetMusicCMD("mpg123") == -1);
    CHECK(Mix_GetMusicType(NULL) == MUS_NONE && strcmp(Mix_GetMusicTitle(NULL), "") == 0);
    CHECK(Mix_RegisterEffect(0, NULL, NULL, NULL) == 0 && Mix_PlayingMusic() == 0 && Mix_HaltMusic() == 0);
    CHECK(Mix_VolumeMusic(1000000000) == 128 && Mix_VolumeMusic(-1) == 128);

    /* Closing halts what plays; the callbacks still see the chunk that ended, as SDL_mixer's. */
    seen_chunk[2] = NULL;
    CHECK(Mix_PlayChannel(2, quick, -1) == 2);
    Mix_CloseAudio();
    CHECK(seen_chunk[2] == quick);
    CHECK(Mix_QuerySpec(NULL, NULL, NULL) == 0 && Mix_PlayChannel(-1, tone, 0) == -1);
    Mix_FreeChunk(tone);
    Mix_FreeChunk(short_raw);
    Mix_FreeChunk(quick);
    free(wav);
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
