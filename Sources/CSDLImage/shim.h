#define SDL_MAIN_HANDLED 1
#include <SDL2/SDL.h>
#include <SDL2/SDL_image.h>

/*
 * SDL2_image is opened at run time (dlopen), not linked: the module map links only SDL2. This header keeps its
 * types, and declares the table the engine fills with dlsym (MediaItemArtwork.swift). AMBIENCE_SDL_IMAGE_FUNCTIONS
 * lists every SDL2_image function the project calls; the table's field for each has the declared function's own type
 * (__typeof__), so a call through it is checked against the header, and the name looked up is the field's name.
 */
#define AMBIENCE_SDL_IMAGE_FUNCTIONS(F) F(IMG_LoadPNG_RW) F(IMG_LoadJPG_RW) F(IMG_SavePNG)

#define AMBIENCE_SDL_IMAGE_FIELD(name) __typeof__(name) *_Nonnull name;
/* Only function pointers, in the order of the list: the loader fills it as an array of pointers. */
typedef struct ambience_sdl_image_functions {
    AMBIENCE_SDL_IMAGE_FUNCTIONS(AMBIENCE_SDL_IMAGE_FIELD)
} ambience_sdl_image_functions;
#undef AMBIENCE_SDL_IMAGE_FIELD

#define AMBIENCE_SDL_IMAGE_NAME(name) #name "\n"
/* The table's field names, in order, each ended by a newline. */
static inline const char *_Nonnull ambience_sdl_image_function_names(void) {
    return AMBIENCE_SDL_IMAGE_FUNCTIONS(AMBIENCE_SDL_IMAGE_NAME);
}
#undef AMBIENCE_SDL_IMAGE_NAME
