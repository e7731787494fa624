#include <libopenmpt/libopenmpt.h>

/*
 * libopenmpt is opened at run time (dlopen), not linked: the module map has no `link`. This header keeps its types
 * and constants, and declares the table the engine fills with dlsym. AMBIENCE_OPENMPT_FUNCTIONS lists every
 * libopenmpt function the engine calls; the table's field for each has the declared function's own type
 * (__typeof__), so a call through it is checked against libopenmpt's header, and the name looked up is the field's.
 */
#define AMBIENCE_OPENMPT_FUNCTIONS(F) \
    F(openmpt_probe_file_header) F(openmpt_probe_file_header_get_recommended_size) \
    F(openmpt_module_create_from_memory2) F(openmpt_module_destroy) F(openmpt_module_set_repeat_count) \
    F(openmpt_module_set_render_param) F(openmpt_module_get_duration_seconds) \
    F(openmpt_module_set_position_seconds) F(openmpt_module_get_position_seconds) \
    F(openmpt_module_read_interleaved_float_stereo) F(openmpt_module_get_metadata) F(openmpt_free_string) \
    F(openmpt_error_string) F(openmpt_get_supported_extensions)

#define AMBIENCE_OPENMPT_FIELD(name) __typeof__(name) *_Nonnull name;
/* Only function pointers, in the order of the list: the loader fills it as an array of pointers. */
typedef struct ambience_openmpt_functions {
    AMBIENCE_OPENMPT_FUNCTIONS(AMBIENCE_OPENMPT_FIELD)
} ambience_openmpt_functions;
#undef AMBIENCE_OPENMPT_FIELD

#define AMBIENCE_OPENMPT_NAME(name) #name "\n"
/* The table's field names, in order, each ended by a newline. */
static inline const char *_Nonnull ambience_openmpt_function_names(void) {
    return AMBIENCE_OPENMPT_FUNCTIONS(AMBIENCE_OPENMPT_NAME);
}
#undef AMBIENCE_OPENMPT_NAME
