/*
 * The SDL_mixer stand-in's music from C, compiled against Debian's own <SDL2/SDL_mixer.h> and run with the stand-in
 * first on LD_LIBRARY_PATH, from the repository's root (Tests/AmbienceIntegrationTests/SDLMixerStandIn/SDLMixerMusicTests.swift does all three).
 *
 *   standin_music_test FOLDER  every music function, bad input included (NULL, freed music, NaN and huge positions,
 *                              an SDL_RWops that fails mid-read, absurd loop counts), with Assets/Music, tracker
 *                              modules and MIDI files from Debian packages. Ends with "N passed, M failed".
 *   standin_music_test --loops    a 0.2 s tone then 0.2 s of silence, played 3 times at music volume 64
 *   standin_music_test --fade     a 3 s tone faded in over 1 s, faded out over 0.5 s from 1.5 s
 *   standin_music_test --seek     1 s of 440 Hz then 1 s of 880 Hz, played from 1.0 s
 *   standin_music_test --session  Assets/Music's Ogg as music for 2 s (longer, until the file STANDIN_SEEN_FILE names
 *                                 exists, for up to 10 s), and a 0.3 s 880 Hz chunk from 1.5 s
 *   standin_music_test --hook     1.5 s of 440 Hz as music; from 0.5 s Mix_HookMusic's 880 Hz for 1 s in its place
 *   standin_music_test --hook-play  as --hook, and the desktop's Play (`playerctl -p ambience.$PLAYER play`, as the
 *                                   media keys) while hooked: the music stays held, and goes on once the hook is gone
 *   The last six are run with SDL's disk driver: the test reads what the device was given.
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
#define MP3 "Assets/Music/orbit-lullaby.mp3"
#define MIDI "/usr/share/games/openttd/baseset/openmsx/train_filled_with_cash.mid"
#define TIMGM "/usr/share/sounds/sf2/TimGM6mb.sf2"
static const char *modules[] = {"/usr/share/games/tecnoballz/musics/high-score.mod",
                                "/usr/share/games/ballz/finalman-quickie.xm",
                                "/usr/share/games/pingus/data/music/gd-giirm.s3m",
                                "/usr/share/games/pingus/data/music/gd-matth.it"};

/* A 16-bit stereo WAV in memory at 44.1 kHz: a half-scale sine of hz[i] for seconds[i], a frequency of 0 being
   silence. Freed by the caller. */
static Uint8 *make_wav(const double *hz, const double *seconds, int parts, Uint32 *size) {
    const Uint32 rate = 44100;
    Uint32 frames = 0;
    for (int p = 0; p < parts; p++) frames += (Uint32)(rate * seconds[p]);
    Uint32 data = frames * 4;
    Uint8 *wav = calloc(1, 44 + data);
    Uint32 fields[] = {36 + data, 16, 0x00020001, rate, rate * 4, 0x00100004, data};
    memcpy(wav, "RIFF", 4);
    memcpy(wav + 4, &fields[0], 4);
    memcpy(wav + 8, "WAVEfmt ", 8);
    for (int f = 1; f < 6; f++) memcpy(wav + 12 + 4 * f, &fields[f], 4);
    memcpy(wav + 36, "data", 4);
    memcpy(wav + 40, &fields[6], 4);
    Uint32 at = 0;
    for (int p = 0; p < parts; p++) {
        for (Uint32 i = 0; i < (Uint32)(rate * seconds[p]); i++, at++) {
            Sint16 s = hz[p] > 0 ? (Sint16)(16384 * sin(2 * M_PI * hz[p] * i / rate)) : 0;
            memcpy(wav + 44 + 4 * at, &s, 2);
            memcpy(wav + 46 + 4 * at, &s, 2);
        }
    }
    *size = 44 + data;
    return wav;
}

/* A custom SDL_RWops over memory that fails after `fail_after` bytes (-1: never). */
typedef struct {
    const Uint8 *bytes;
    Sint64 size, at, fail_after;
    int *closes;
} Source;

static Sint64 source_size(SDL_RWops *rw) { return ((Source *)rw->hidden.unknown.data1)->size; }
static Sint64 source_seek(SDL_RWops *rw, Sint64 offset, int whence) {
    Source *s = rw->hidden.unknown.data1;
    s->at = (whence == RW_SEEK_SET ? 0 : whence == RW_SEEK_CUR ? s->at : s->size) + offset;
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
static SDL_RWops *make_source(const Uint8 *bytes, Sint64 size, Sint64 fail_after, int *closes) {
    SDL_RWops *rw = SDL_AllocRW();
    Source *s = calloc(1, sizeof *s);
    *s = (Source){bytes, size, 0, fail_after, closes};
    rw->size = source_size;
    rw->seek = source_seek;
    rw->read = source_read;
    rw->write = source_write;
    rw->close = source_close;
    rw->type = SDL_RWOPS_UNKNOWN;
    rw->hidden.unknown.data1 = s;
    return rw;
}

/* Mix_HookMusicFinished's record: how many ends, whether one came off the main thread, one re-entrant play. */
static SDL_atomic_t music_ends, ends_off_main;
static pthread_t main_thread;
static Mix_Music *replay_music;
static SDL_atomic_t replay_result = {-100};
static void on_music_finished(void) {
    SDL_AtomicAdd(&music_ends, 1);
    if (!pthread_equal(pthread_self(), main_thread)) SDL_AtomicSet(&ends_off_main, 1);
    if (replay_music) {
        Mix_Music *music = replay_music;
        replay_music = NULL;
        SDL_AtomicSet(&replay_result, Mix_PlayMusic(music, 0)); /* calls back into the library */
    }
}

static int wait_ends(int count, int ms) {
    for (int waited = 0; waited < ms; waited += 5) {
        if (SDL_AtomicGet(&music_ends) >= count) return 1;
        SDL_Delay(5);
    }
    return 0;
}

/* Waits up to `ms` for the music playing to be past `seconds` (a MIDI file first loads its SoundFont). */
static int wait_position(double seconds, int ms) {
    for (int waited = 0; waited < ms; waited += 10) {
        if (Mix_GetMusicPosition(NULL) > seconds) return 1;
        SDL_Delay(10);
    }
    return 0;
}

/* Mix_HookMusic's functions: silence, and a half-scale 880 Hz sine. */
static void SDLCALL quiet_hook(void *udata, Uint8 *stream, int len) { (void)udata, (void)stream, (void)len; }
static double hook_phase;
static void SDLCALL sine_hook(void *udata, Uint8 *stream, int len) {
    (void)udata;
    fill_sine(stream, len, 880, &hook_phase);
}

static int fonts_seen;
static int on_font(const char *path, void *data) {
    (void)data;
    fonts_seen++;
    return strcmp(path, TIMGM) == 0;
}

static int open_device(void) {
    if (Mix_OpenAudio(44100, AUDIO_S16SYS, 2, 512) != 0) return printf("open: %s\n", Mix_GetError()), 0;
    Mix_HookMusicFinished(on_music_finished);
    return 1;
}

/* The runs heard through the disk driver. */
static int heard(const char *mode) {
    Uint32 size;
    Uint8 *wav;
    if (!open_device()) return 1;
    int ok = 1;
    if (strcmp(mode, "--loops") == 0) {
        wav = make_wav((double[]){880, 0}, (double[]){0.2, 0.2}, 2, &size);
        Mix_Music *music = Mix_LoadMUS_RW(SDL_RWFromConstMem(wav, (int)size), 1);
        Mix_VolumeMusic(64);
        ok = music && Mix_PlayMusic(music, 3) == 0 && wait_ends(1, 3000);
        Mix_FreeMusic(music);
    } else if (strcmp(mode, "--fade") == 0) {
        wav = make_wav((double[]){440}, (double[]){3}, 1, &size);
        Mix_Music *music = Mix_LoadMUS_RW(SDL_RWFromConstMem(wav, (int)size), 1);
        ok = music && Mix_FadeInMusic(music, 0, 1000) == 0;
        SDL_Delay(1500);
        ok = ok && Mix_FadeOutMusic(500) == 1 && wait_ends(1, 2000);
        Mix_FreeMusic(music);
    } else if (strcmp(mode, "--seek") == 0) {
        wav = make_wav((double[]){440, 880}, (double[]){1, 1}, 2, &size);
        Mix_Music *music = Mix_LoadMUS_RW(SDL_RWFromConstMem(wav, (int)size), 1);
        ok = music && Mix_FadeInMusicPos(music, 1, 1, 1.0) == 0 && wait_ends(1, 3000);
        Mix_FreeMusic(music);
    } else if (strcmp(mode, "--hook-play") == 0) {
        wav = make_wav((double[]){440}, (double[]){3}, 1, &size);
        Mix_Music *music = Mix_LoadMUS_RW(SDL_RWFromConstMem(wav, (int)size), 1);
        ok = music && Mix_PlayMusic(music, 0) == 0;
        SDL_Delay(500);
        Mix_HookMusic(sine_hook, NULL);
        double held_at = Mix_GetMusicPosition(NULL);
        char command[200];
        const char *player = getenv("PLAYER") ? getenv("PLAYER") : "";
        /* The player is on MPRIS once the session bus has it: up to 10 s on a loaded machine. */
        snprintf(command, sizeof command, "playerctl -p ambience.%s status > /dev/null 2>&1", player);
        for (int waited = 0; system(command) != 0 && waited < 10000; waited += 100) SDL_Delay(100);
        snprintf(command, sizeof command, "playerctl -p ambience.%s play", player);
        int played = system(command) == 0;
        SDL_Delay(1000);
        double moved = Mix_GetMusicPosition(NULL) - held_at;
        printf("hooked, then Play from the desktop (%s): moved %.3f s\n", played ? "done" : "failed", moved);
        ok = ok && played && fabs(moved) < 0.02;
        Mix_HookMusic(NULL, NULL);
        double released_at = Mix_GetMusicPosition(NULL);
        /* It goes on: 0.3 s of it within 10 s (0.7 s of wall time on a quiet machine). */
        for (int waited = 0; Mix_GetMusicPosition(NULL) - released_at <= 0.3 && waited < 10000; waited += 50) SDL_Delay(50);
        printf("after the hook: moved %.3f s\n", Mix_GetMusicPosition(NULL) - released_at);
        ok = ok && Mix_GetMusicPosition(NULL) - released_at > 0.3;
        Mix_HaltMusic();
        Mix_FreeMusic(music);
    } else if (strcmp(mode, "--hook") == 0) {
        /* As Debian's SDL_mixer 2.6.2: the hook is mixed in the music's place, which waits where it was. */
        wav = make_wav((double[]){440}, (double[]){1.5}, 1, &size);
        Mix_Music *music = Mix_LoadMUS_RW(SDL_RWFromConstMem(wav, (int)size), 1);
        ok = music && Mix_PlayMusic(music, 0) == 0;
        SDL_Delay(500);
        Mix_HookMusic(sine_hook, NULL);
        double held_at = Mix_GetMusicPosition(NULL);
        SDL_Delay(1000);
        int playing = Mix_PlayingMusic(), ends = SDL_AtomicGet(&music_ends);
        double moved = Mix_GetMusicPosition(NULL) - held_at;
        printf("hooked for 1 s: playing music %d, moved %.3f s, finished %d\n", playing, moved, ends);
        ok = ok && playing == 1 && fabs(moved) < 0.02 && ends == 0;
        Mix_HookMusic(NULL, NULL);
        ok = ok && wait_ends(1, 3000);
        Mix_FreeMusic(music);
    } else {
        wav = make_wav((double[]){880}, (double[]){0.3}, 1, &size);
        Mix_Chunk *beep = Mix_LoadWAV_RW(SDL_RWFromConstMem(wav, (int)size), 1);
        Mix_Music *music = Mix_LoadMUS(OGG);
        SDL_Delay(500); /* the session sees the desktop's players */
        ok = beep && music && Mix_PlayMusic(music, -1) == 0;
        SDL_Delay(1500);
        ok = ok && Mix_PlayChannel(-1, beep, 0) == 0;
        SDL_Delay(500);
        ok = ok && Mix_PlayingMusic() == 1;
        printf("playing music: %d\n", Mix_PlayingMusic());
        /* The test's MPRIS watcher says when it has seen the music's title (up to 10 s on a loaded machine). */
        const char *seen = getenv("STANDIN_SEEN_FILE");
        for (int waited = 0; seen && access(seen, F_OK) != 0 && waited < 10000; waited += 50) SDL_Delay(50);
        Mix_HaltMusic();
        Mix_FreeMusic(music);
        Mix_FreeChunk(beep);
    }
    SDL_Delay(200);
    Mix_CloseAudio();
    free(wav);
    printf("heard run %s: %s\n", mode, ok ? "ok" : "failed");
    return ok ? 0 : 1;
}

int main(int argc, char **argv) {
    main_thread = pthread_self();
    if (argc == 2 && strncmp(argv[1], "--", 2) == 0) return heard(argv[1]);
    if (argc != 2) return fprintf(stderr, "usage: standin_music_test FOLDER | --loops | --fade | --seek | --session\n"), 2;

    /* Before any device: music loads and tells its tags; playing it needs the device. */
    CHECK(Mix_PlayMusic(NULL, 0) == -1 && Mix_PlayingMusic() == 0 && Mix_HaltMusic() == 0);
    Mix_Music *ogg = Mix_LoadMUS(OGG);
    CHECK(ogg && Mix_GetMusicType(ogg) == MUS_OGG && Mix_PlayMusic(ogg, 0) == -1);
    CHECK(ogg && strcmp(Mix_GetMusicTitle(ogg), "Gravity Wave Theme") == 0);
    CHECK(ogg && strcmp(Mix_GetMusicTitleTag(ogg), "Gravity Wave Theme") == 0);
    CHECK(ogg && strcmp(Mix_GetMusicArtistTag(ogg), "Ambience Ensemble") == 0);
    CHECK(ogg && strcmp(Mix_GetMusicAlbumTag(ogg), "Gravity Wave") == 0 && strcmp(Mix_GetMusicCopyrightTag(ogg), "") == 0);
    CHECK(fabs(Mix_MusicDuration(ogg) - 40.0) < 0.05);
    const char *title = Mix_GetMusicTitle(ogg);
    Mix_Music *mp3 = Mix_LoadMUS(MP3);
    CHECK(mp3 && Mix_GetMusicType(mp3) == MUS_MP3 && strcmp(Mix_GetMusicTitle(mp3), "Orbit Lullaby") == 0);
    CHECK(fabs(Mix_MusicDuration(mp3) - 33.6) < 0.2);
    CHECK(title == Mix_GetMusicTitle(ogg) && strcmp(title, "Gravity Wave Theme") == 0); /* the music's own string */

    CHECK(open_device());
    /* Bytes from an SDL_RWops: no file name, so no title; the type comes from the bytes, whatever the hint. */
    Uint32 size;
    Uint8 *wav = make_wav((double[]){440}, (double[]){0.1}, 1, &size);
    Mix_Music *short_wav = Mix_LoadMUS_RW(SDL_RWFromConstMem(wav, (int)size), 1);
    CHECK(short_wav && Mix_GetMusicType(short_wav) == MUS_WAV && strcmp(Mix_GetMusicTitle(short_wav), "") == 0);
    CHECK(fabs(Mix_MusicDuration(short_wav) - 0.1) < 0.01 && strcmp(Mix_GetMusicArtistTag(short_wav), "") == 0);
    Mix_Music *typed = Mix_LoadMUSType_RW(SDL_RWFromConstMem(wav, (int)size), MUS_OGG, 1);
    CHECK(typed && Mix_GetMusicType(typed) == MUS_WAV);
    char path[] = "/tmp/standin-music-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0 && write(fd, wav, size) == (ssize_t)size);
    close(fd);
    Mix_Music *from_file = Mix_LoadMUS(path);
    CHECK(from_file && strcmp(Mix_GetMusicTitle(from_file), strrchr(path, '/') + 1) == 0);
    CHECK(from_file && strcmp(Mix_GetMusicTitleTag(from_file), "") == 0);
    unlink(path);
    int closes = 0;
    CHECK(Mix_LoadMUS_RW(make_source(wav, size, 1000, &closes), 1) == NULL && closes == 1);
    CHECK(strstr(Mix_GetError(), "disk is on fire") != NULL);
    SDL_RWops *kept = make_source(wav, size, 40, &closes);
    CHECK(Mix_LoadMUSType_RW(kept, MUS_WAV, 0) == NULL && closes == 1);
    SDL_RWclose(kept);
    CHECK(Mix_LoadMUS_RW(NULL, 1) == NULL && Mix_LoadMUSType_RW(NULL, MUS_NONE, 0) == NULL);
    static const Uint8 junk[64] = "this is not music, in any format the engine knows of, at all";
    CHECK(Mix_LoadMUS_RW(SDL_RWFromConstMem(junk, sizeof junk), 1) == NULL && strlen(Mix_GetError()) > 0);
    CHECK(Mix_LoadMUS(NULL) == NULL && Mix_LoadMUS("/nonexistent/music.ogg") == NULL);

    /* Modules and MIDI, from Debian's game packages. */
    Mix_Music *mods[4];
    for (int i = 0; i < 4; i++) {
        mods[i] = Mix_LoadMUS(modules[i]);
        CHECK(mods[i] && Mix_GetMusicType(mods[i]) == MUS_MOD && Mix_MusicDuration(mods[i]) > 1);
    }
    CHECK(mods[0] && strcmp(Mix_GetMusicTitleTag(mods[0]), "high-score") == 0);
    CHECK(Mix_GetSoundFonts() != NULL);
    Mix_Music *midi = Mix_LoadMUS(MIDI);
    CHECK(midi && Mix_GetMusicType(midi) == MUS_MID && Mix_MusicDuration(midi) > 1);

    /* SoundFonts: a missing one is named when MIDI loads; the list is walked in order. */
    CHECK(Mix_SetSoundFonts("/nonexistent/missing.sf2") == 1);
    CHECK(strcmp(Mix_GetSoundFonts(), "/nonexistent/missing.sf2") == 0);
    CHECK(Mix_LoadMUS(MIDI) == NULL && strstr(Mix_GetError(), "missing.sf2") != NULL);
    CHECK(Mix_SetSoundFonts("/nonexistent/missing.sf2;" TIMGM) == 1);
    Mix_Music *midi2 = Mix_LoadMUS(MIDI);
    CHECK(midi2 != NULL);
    CHECK(Mix_EachSoundFont(on_font, NULL) == 1 && fonts_seen == 2);
    CHECK(Mix_EachSoundFont(NULL, NULL) == 0);
    CHECK(Mix_SetSoundFonts(NULL) == 1 && Mix_GetSoundFonts() != NULL);
    CHECK(Mix_GetTimidityCfg() == NULL && Mix_SetTimidityCfg("/etc/timidity/timidity.cfg") == 1);
    CHECK(strcmp(Mix_GetTimidityCfg(), "/etc/timidity/timidity.cfg") == 0);
    CHECK(Mix_SetSynchroValue(5) == -1 && Mix_GetSynchroValue() == -1);

    /* Nothing playing. */
    CHECK(Mix_GetMusicType(NULL) == MUS_NONE && strcmp(Mix_GetMusicTitle(NULL), "") == 0);
    CHECK(Mix_GetMusicPosition(NULL) == -1 && Mix_MusicDuration(NULL) == -1 && Mix_SetMusicPosition(1) == -1);
    CHECK(Mix_FadeOutMusic(100) == 0 && Mix_FadingMusic() == MIX_NO_FADING && Mix_PausedMusic() == 0);
    Mix_PauseMusic();
    Mix_ResumeMusic();
    Mix_RewindMusic();

    /* Playing, position, seeking, pausing. */
    CHECK(Mix_PlayMusic(ogg, -1) == 0 && Mix_PlayingMusic() == 1 && Mix_PausedMusic() == 0);
    CHECK(Mix_GetMusicType(NULL) == MUS_OGG && strcmp(Mix_GetMusicTitle(NULL), "Gravity Wave Theme") == 0);
    SDL_Delay(400);
    double position = Mix_GetMusicPosition(NULL);
    CHECK(position > 0.1 && position < 1.5 && fabs(Mix_GetMusicPosition(ogg) - position) < 0.1);
    CHECK(Mix_GetMusicPosition(mp3) == 0 && fabs(Mix_MusicDuration(NULL) - 40.0) < 0.05);
    CHECK(Mix_SetMusicPosition(20.0) == 0);
    SDL_Delay(300);
    position = Mix_GetMusicPosition(NULL);
    CHECK(position >= 20.0 && position < 21.0);
    CHECK(Mix_SetMusicPosition(NAN) == -1 && Mix_SetMusicPosition(-5) == -1 && Mix_SetMusicPosition(INFINITY) == -1);
    Mix_RewindMusic();
    SDL_Delay(200);
    CHECK(Mix_GetMusicPosition(NULL) < 1.0);
    CHECK(Mix_SetMusicPosition(1e300) == -1 && Mix_SetMusicPosition(40.5) == -1 && Mix_PlayingMusic() == 1);
    Mix_PauseMusic();
    CHECK(Mix_PausedMusic() == 1 && Mix_PlayingMusic() == 1);
    SDL_Delay(300);
    double paused_at = Mix_GetMusicPosition(NULL);
    SDL_Delay(200);
    CHECK(fabs(Mix_GetMusicPosition(NULL) - paused_at) < 0.02);
    Mix_ResumeMusic();
    CHECK(Mix_PausedMusic() == 0 && Mix_PlayingMusic() == 1);
    CHECK(Mix_VolumeMusic(-1) == 128 && Mix_VolumeMusic(1000000000) == 128 && Mix_VolumeMusic(32) == 128);
    CHECK(Mix_GetMusicVolume(NULL) == 32 && Mix_GetMusicVolume(ogg) == 32 && Mix_VolumeMusic(-5) == 32);
    Mix_VolumeMusic(MIX_MAX_VOLUME);
    CHECK(Mix_GetMusicLoopStartTime(ogg) == -1 && Mix_GetMusicLoopEndTime(NULL) == -1);
    CHECK(Mix_GetMusicLoopLengthTime(ogg) == -1 && Mix_ModMusicJumpToOrder(1) == -1);

    /* Fades: a fade-out ends the music on the update thread, with the hook. */
    CHECK(Mix_FadingMusic() == MIX_NO_FADING && Mix_FadeOutMusic(100) == 1 && Mix_FadingMusic() == MIX_FADING_OUT);
    CHECK(Mix_FadeOutMusic(100) == 0);
    CHECK(wait_ends(1, 1000) && SDL_AtomicGet(&ends_off_main) == 1 && Mix_PlayingMusic() == 0);
    CHECK(Mix_FadeInMusic(mp3, 0, 200) == 0 && Mix_FadingMusic() == MIX_FADING_IN);
    SDL_Delay(300);
    CHECK(Mix_FadingMusic() == MIX_NO_FADING && Mix_PlayingMusic() == 1);
    /* Another music in its place: no hook for the one replaced. */
    CHECK(Mix_FadeInMusicPos(ogg, 1, 10, 30.0) == 0 && SDL_AtomicGet(&music_ends) == 1);
    SDL_Delay(200);
    CHECK(Mix_GetMusicPosition(NULL) >= 30.0 && Mix_GetMusicType(NULL) == MUS_OGG);
    CHECK(Mix_FadeInMusicPos(ogg, 1, 10, NAN) == -1 && Mix_FadeInMusicPos(ogg, 1, 10, -1) == -1);

    /* Halting calls the hook before it returns; the hook may play again. */
    CHECK(Mix_HaltMusic() == 0 && SDL_AtomicGet(&music_ends) == 2 && Mix_PlayingMusic() == 0);
    CHECK(Mix_HaltMusic() == 0 && SDL_AtomicGet(&music_ends) == 2);
    CHECK(Mix_PlayMusic(mp3, -1) == 0);
    replay_music = short_wav;
    CHECK(Mix_HaltMusic() == 0 && SDL_AtomicGet(&replay_result) == 0 && Mix_PlayingMusic() == 1);
    CHECK(wait_ends(4, 1000) && Mix_PlayingMusic() == 0); /* the replay (0.1 s) ended by itself */

    /* Loops: 0.1 s three times lasts about 0.3 s; absurd counts are forever or a long time. */
    Uint32 start = SDL_GetTicks();
    CHECK(Mix_PlayMusic(short_wav, 3) == 0 && wait_ends(5, 2000));
    Uint32 took = SDL_GetTicks() - start;
    CHECK(took >= 250 && took < 1000);
    CHECK(Mix_PlayMusic(short_wav, 1000000000) == 0);
    SDL_Delay(600);
    CHECK(Mix_PlayingMusic() == 1 && Mix_PlayMusic(short_wav, -1000) == 0);
    SDL_Delay(300);
    CHECK(Mix_PlayingMusic() == 1 && Mix_HaltMusic() == 0);

    /* A module and a MIDI file play, and seek by seconds. */
    CHECK(Mix_PlayMusic(mods[0], -1) == 0);
    SDL_Delay(300);
    CHECK(Mix_GetMusicPosition(NULL) > 0.05 && Mix_SetMusicPosition(5.0) == 0);
    SDL_Delay(300);
    position = Mix_GetMusicPosition(NULL);
    CHECK(position >= 5.0 && position < 6.0 && Mix_GetMusicType(NULL) == MUS_MOD);
    CHECK(Mix_PlayMusic(midi, 0) == 0);
    CHECK(wait_position(0.05, 20000) && Mix_PlayingMusic() == 1 && Mix_GetMusicType(NULL) == MUS_MID);

    /* Freeing the music playing halts it, without the hook; freed music is refused afterwards. */
    int ends = SDL_AtomicGet(&music_ends);
    CHECK(Mix_PlayMusic(from_file, -1) == 0);
    Mix_FreeMusic(from_file);
    CHECK(Mix_PlayingMusic() == 0 && SDL_AtomicGet(&music_ends) == ends); /* nor for the MIDI it replaced */
    CHECK(Mix_PlayMusic(from_file, 0) == -1 && Mix_GetMusicType(from_file) == MUS_NONE);
    CHECK(strcmp(Mix_GetMusicTitle(from_file), "") == 0 && Mix_MusicDuration(from_file) == -1);
    CHECK(Mix_GetMusicVolume(from_file) == -1 && Mix_GetMusicPosition(from_file) == -1);
    Mix_FreeMusic(from_file);
    Mix_FreeMusic(NULL);

    /* Mix_HookMusic holds the music playing, as Debian's SDL_mixer 2.6.2 does (it mixes the hook instead): still
       playing and not paused, its position and a fade unmoved, no finished hook; without the hook it goes on from
       where it was, the fade too. Pause and resume act on it. Music started while hooked waits at its start;
       halted, it ends with the finished hook. */
    ends = SDL_AtomicGet(&music_ends);
    CHECK(Mix_PlayMusic(ogg, -1) == 0);
    SDL_Delay(300);
    Mix_HookMusic(quiet_hook, NULL);
    double held_at = Mix_GetMusicPosition(NULL);
    CHECK(held_at > 0.1 && Mix_FadeOutMusic(100) == 1 && Mix_FadingMusic() == MIX_FADING_OUT);
    SDL_Delay(300);
    CHECK(Mix_PlayingMusic() == 1 && Mix_PausedMusic() == 0 && SDL_AtomicGet(&music_ends) == ends);
    CHECK(fabs(Mix_GetMusicPosition(NULL) - held_at) < 0.02 && Mix_FadingMusic() == MIX_FADING_OUT);
    Mix_HookMusic(NULL, NULL);
    CHECK(wait_ends(ends + 1, 1000) && Mix_PlayingMusic() == 0); /* the fade went on, and ended the music */
    CHECK(Mix_PlayMusic(ogg, -1) == 0);
    SDL_Delay(300);
    Mix_HookMusic(quiet_hook, NULL);
    held_at = Mix_GetMusicPosition(NULL);
    Mix_PauseMusic();
    CHECK(Mix_PausedMusic() == 1);
    Mix_HookMusic(NULL, NULL);
    SDL_Delay(200);
    CHECK(Mix_PlayingMusic() == 1 && fabs(Mix_GetMusicPosition(NULL) - held_at) < 0.02); /* still paused */
    Mix_ResumeMusic();
    SDL_Delay(200);
    CHECK(Mix_PausedMusic() == 0 && Mix_GetMusicPosition(NULL) > held_at + 0.05);
    Mix_HookMusic(quiet_hook, NULL);
    CHECK(Mix_FadeInMusicPos(mp3, -1, 100, 5.0) == 0 && SDL_AtomicGet(&music_ends) == ends + 1);
    SDL_Delay(300);
    position = Mix_GetMusicPosition(NULL);
    CHECK(Mix_PlayingMusic() == 1 && position >= 5.0 && position < 5.02 && Mix_FadingMusic() == MIX_FADING_IN);
    CHECK(Mix_HaltMusic() == 0 && SDL_AtomicGet(&music_ends) == ends + 2 && Mix_PlayingMusic() == 0);
    Mix_HookMusic(NULL, NULL);

    /* Hook data (unhooking forgets the argument, as Debian's SDL_mixer 2.6.2 does), the outside command. */
    int anything = 0;
    CHECK(Mix_GetMusicHookData() == NULL);
    Mix_HookMusic(NULL, &anything);
    CHECK(Mix_GetMusicHookData() == NULL && Mix_SetMusicCMD("mpg123") == -1);

    /* A fade waits while the music is paused (SDL_mixer steps it only as it mixes the music), and goes on after. */
    CHECK(Mix_PlayMusic(ogg, -1) == 0);
    ends = SDL_AtomicGet(&music_ends);
    CHECK(Mix_FadeOutMusic(150) == 1);
    Mix_PauseMusic();
    SDL_Delay(400);
    CHECK(Mix_PlayingMusic() == 1 && Mix_FadingMusic() == MIX_FADING_OUT && SDL_AtomicGet(&music_ends) == ends);
    Mix_ResumeMusic();
    CHECK(wait_ends(ends + 1, 30000) && Mix_PlayingMusic() == 0);

    /* Closing halts the music, with the hook, before it returns. */
    CHECK(Mix_PlayMusic(ogg, -1) == 0);
    ends = SDL_AtomicGet(&music_ends);
    Mix_CloseAudio();
    CHECK(SDL_AtomicGet(&music_ends) == ends + 1 && Mix_PlayingMusic() == 0);
    CHECK(strcmp(Mix_GetMusicTitle(ogg), "Gravity Wave Theme") == 0); /* loaded music outlives the device */

    Mix_Music *all[] = {ogg, mp3, short_wav, typed, midi, midi2, mods[0], mods[1], mods[2], mods[3]};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) Mix_FreeMusic(all[i]);
    free(wav);
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
