#define SDL_MAIN_HANDLED 1
#include <SDL2/SDL.h>
#include <SDL2/SDL_mixer.h>

/*
 * SDL_mixer is opened at run time (dlopen), not linked: the module map has no `link "SDL2_mixer"`, so the `ambience`
 * command and the test binary, which carry the benchmark, do not load it (nor what it links: libfluidsynth,
 * libopenmpt, ...) unless a comparison with SDL_mixer runs. This header keeps SDL_mixer's types and constants, and
 * declares the table the benchmark fills with dlsym. AMBIENCE_SDL_MIXER_FUNCTIONS lists every SDL_mixer function the
 * benchmark calls; each field has the declared function's own type (__typeof__), so a call through it is checked
 * against SDL_mixer's header, and the name looked up is the field's.
 */
#define AMBIENCE_SDL_MIXER_FUNCTIONS(F) \
    F(Mix_Init) F(Mix_Quit) F(Mix_OpenAudio) F(Mix_CloseAudio) F(Mix_QuerySpec) F(Mix_Linked_Version) \
    F(Mix_LoadWAV) F(Mix_QuickLoad_RAW) F(Mix_FreeChunk) F(Mix_VolumeChunk) F(Mix_AllocateChannels) \
    F(Mix_PlayChannel) F(Mix_Playing) F(Mix_HaltChannel) F(Mix_SetPosition) F(Mix_SetPostMix) \
    F(Mix_LoadMUS) F(Mix_FreeMusic) F(Mix_PlayMusic) F(Mix_PlayingMusic) F(Mix_HaltMusic) F(Mix_VolumeMusic) \
    F(Mix_SetSoundFonts)

#define AMBIENCE_SDL_MIXER_FIELD(name) __typeof__(name) *_Nonnull name;
/* Only function pointers, in the order of the list: the loader fills it as an array of pointers. */
typedef struct ambience_sdl_mixer_functions {
    AMBIENCE_SDL_MIXER_FUNCTIONS(AMBIENCE_SDL_MIXER_FIELD)
} ambience_sdl_mixer_functions;
#undef AMBIENCE_SDL_MIXER_FIELD

#define AMBIENCE_SDL_MIXER_NAME(name) #name "\n"
/* The table's field names, in order, each ended by a newline. */
static inline const char *_Nonnull ambience_sdl_mixer_function_names(void) {
    return AMBIENCE_SDL_MIXER_FUNCTIONS(AMBIENCE_SDL_MIXER_NAME);
}
#undef AMBIENCE_SDL_MIXER_NAME
