#include <fluidsynth.h>

/*
 * libfluidsynth is opened at run time (dlopen), not linked: the module map has no `link`. This header keeps its
 * types and constants, and declares the table the engine fills with dlsym. AMBIENCE_FLUIDSYNTH_FUNCTIONS lists every
 * libfluidsynth function the engine calls; the table's field for each has the declared function's own type
 * (__typeof__), so a call through it is checked against the header, and the name looked up is the field's name.
 */
#define AMBIENCE_FLUIDSYNTH_FUNCTIONS(F) \
    F(new_fluid_settings) F(delete_fluid_settings) F(fluid_settings_setnum) F(fluid_settings_setint) \
    F(fluid_settings_setstr) F(new_fluid_synth) F(delete_fluid_synth) F(fluid_synth_sfload) \
    F(fluid_synth_write_float) F(fluid_synth_all_sounds_off) F(fluid_synth_set_interp_method) F(new_fluid_player) F(delete_fluid_player) \
    F(fluid_player_add_mem) F(fluid_player_play) F(fluid_player_stop) F(fluid_player_get_status) \
    F(fluid_player_set_loop) F(fluid_player_seek) F(fluid_set_log_function)

#define AMBIENCE_FLUIDSYNTH_FIELD(name) __typeof__(name) *_Nonnull name;
/* Only function pointers, in the order of the list: the loader fills it as an array of pointers. */
typedef struct ambience_fluidsynth_functions {
    AMBIENCE_FLUIDSYNTH_FUNCTIONS(AMBIENCE_FLUIDSYNTH_FIELD)
} ambience_fluidsynth_functions;
#undef AMBIENCE_FLUIDSYNTH_FIELD

#define AMBIENCE_FLUIDSYNTH_NAME(name) #name "\n"
/* The table's field names, in order, each ended by a newline. */
static inline const char *_Nonnull ambience_fluidsynth_function_names(void) {
    return AMBIENCE_FLUIDSYNTH_FUNCTIONS(AMBIENCE_FLUIDSYNTH_NAME);
}
#undef AMBIENCE_FLUIDSYNTH_NAME
