/*
 * SDL_mixer 2.6's public types and constants, declared here from its documentation (the SDL2_mixer pages of the SDL
 * wiki), for the stand-in library (Sources/SDLMixerStandIn). No code of SDL_mixer's is copied. The C test
 * (Tests/SDLMixer/standin_test.c) is compiled against Debian's own SDL_mixer.h, which proves these match its ABI.
 */
#ifndef AMBIENCE_MIXER_ABI_H
#define AMBIENCE_MIXER_ABI_H

#define SDL_MAIN_HANDLED 1
#include <SDL2/SDL.h>

/* The version the stand-in reports (Mix_Linked_Version). */
#define STANDIN_MIXER_MAJOR 2
#define STANDIN_MIXER_MINOR 6
#define STANDIN_MIXER_PATCHLEVEL 2

/* Mix_Init's flags (MIX_InitFlags). */
#define STANDIN_MIX_INIT_FLAC 0x00000001
#define STANDIN_MIX_INIT_MOD 0x00000002
#define STANDIN_MIX_INIT_MP3 0x00000008
#define STANDIN_MIX_INIT_OGG 0x00000010
#define STANDIN_MIX_INIT_MID 0x00000020
#define STANDIN_MIX_INIT_OPUS 0x00000040

#define STANDIN_MIX_CHANNELS 8
#define STANDIN_MIX_DEFAULT_FREQUENCY 44100
#define STANDIN_MIX_DEFAULT_CHANNELS 2
#define STANDIN_MIX_MAX_VOLUME 128
/* The channel number that names the final mix, for effects (MIX_CHANNEL_POST). */
#define STANDIN_MIX_CHANNEL_POST (-2)

/* A sample: the audio in the opened format (what Mix_QuerySpec reports), `alen` bytes at `abuf`. `allocated` is
   non-zero when the library owns `abuf` and frees it with the chunk. */
typedef struct Mix_Chunk {
    int allocated;
    Uint8 *abuf;
    Uint32 alen;
    Uint8 volume;
} Mix_Chunk;

/* What a channel or the music is doing about fading. */
typedef enum Mix_Fading { MIX_NO_FADING, MIX_FADING_OUT, MIX_FADING_IN } Mix_Fading;

/* A music file's kind. */
typedef enum Mix_MusicType {
    MUS_NONE,
    MUS_CMD,
    MUS_WAV,
    MUS_MOD,
    MUS_MID,
    MUS_OGG,
    MUS_MP3,
    MUS_MP3_MAD_UNUSED,
    MUS_FLAC,
    MUS_MODPLUG_UNUSED,
    MUS_OPUS
} Mix_MusicType;

/* Music: opaque to programs. */
typedef struct Mix_Music Mix_Music;

/* Callbacks a program registers. */
typedef void(SDLCALL *Mix_EffectFunc_t)(int chan, void *stream, int len, void *udata);
typedef void(SDLCALL *Mix_EffectDone_t)(int chan, void *udata);
typedef void(SDLCALL *standin_mix_func)(void *udata, Uint8 *stream, int len);
typedef void(SDLCALL *standin_music_finished)(void);
typedef void(SDLCALL *standin_channel_finished)(int channel);
typedef int(SDLCALL *standin_each_sound_font)(const char *path, void *data);

/* Mix_GetError is SDL_GetError; SDL_SetError is variadic, so Swift cannot call it: this is the one way in. Returns
   -1, as SDL_SetError does. */
static inline int standin_set_error(const char *text) { return SDL_SetError("%s", text); }

#endif
