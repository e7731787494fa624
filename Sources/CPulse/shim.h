#include <pulse/pulseaudio.h>

/*
 * libpulse is opened at run time (dlopen), not linked: the module map has no `link`. This header keeps its types
 * and constants, and declares the table the engine fills with dlsym. AMBIENCE_PULSE_FUNCTIONS lists every libpulse
 * function the engine calls; the table's field for each has the declared function's own type (__typeof__), so a
 * call through it is checked against libpulse's header, and the name looked up is the field's name.
 */
#define AMBIENCE_PULSE_FUNCTIONS(F) \
    F(pa_context_connect) F(pa_context_disconnect) F(pa_context_errno) F(pa_context_get_card_info_by_index) \
    F(pa_context_get_card_info_list) F(pa_context_get_server_info) F(pa_context_get_sink_info_by_index) \
    F(pa_context_get_sink_info_list) F(pa_context_get_sink_input_info) F(pa_context_get_sink_input_info_list) \
    F(pa_context_get_state) F(pa_context_kill_sink_input) F(pa_context_move_sink_input_by_name) \
    F(pa_context_new_with_proplist) F(pa_context_rttime_new) F(pa_context_set_default_sink) \
    F(pa_context_set_sink_input_mute) F(pa_context_set_state_callback) F(pa_context_set_subscribe_callback) \
    F(pa_context_subscribe) F(pa_context_unref) F(pa_operation_cancel) F(pa_operation_unref) F(pa_proplist_free) \
    F(pa_proplist_gets) F(pa_proplist_new) F(pa_proplist_sets) F(pa_rtclock_now) F(pa_strerror) \
    F(pa_stream_connect_playback) F(pa_stream_disconnect) F(pa_stream_get_index) F(pa_stream_get_state) \
    F(pa_stream_new_with_proplist) F(pa_stream_set_event_callback) F(pa_stream_set_state_callback) \
    F(pa_stream_unref) \
    F(pa_stream_begin_write) F(pa_stream_cancel_write) \
    F(pa_stream_get_buffer_attr) F(pa_stream_get_device_name) F(pa_stream_set_underflow_callback) \
    F(pa_stream_set_write_callback) F(pa_stream_write) \
    F(pa_threaded_mainloop_free) F(pa_threaded_mainloop_get_api) F(pa_threaded_mainloop_in_thread) \
    F(pa_threaded_mainloop_lock) F(pa_threaded_mainloop_new) F(pa_threaded_mainloop_set_name) \
    F(pa_threaded_mainloop_signal) F(pa_threaded_mainloop_start) F(pa_threaded_mainloop_stop) \
    F(pa_threaded_mainloop_unlock) F(pa_threaded_mainloop_wait)

#define AMBIENCE_PULSE_FIELD(name) __typeof__(name) *_Nonnull name;
/* Only function pointers, in the order of the list: the loader fills it as an array of pointers. */
typedef struct ambience_pulse_functions {
    AMBIENCE_PULSE_FUNCTIONS(AMBIENCE_PULSE_FIELD)
} ambience_pulse_functions;
#undef AMBIENCE_PULSE_FIELD

#define AMBIENCE_PULSE_NAME(name) #name "\n"
/* The table's field names, in order, each ended by a newline. */
static inline const char *_Nonnull ambience_pulse_function_names(void) {
    return AMBIENCE_PULSE_FUNCTIONS(AMBIENCE_PULSE_NAME);
}
#undef AMBIENCE_PULSE_NAME

/*
 * The latency bench records the sink's monitor and writes its reference clicks through libpulse-simple, opened at
 * run time the same way (libpulse-simple.so.0; pa_strerror is found through its dependency on libpulse).
 */
#include <pulse/simple.h>
#define AMBIENCE_PULSE_SIMPLE_FUNCTIONS(F) \
    F(pa_simple_new) F(pa_simple_free) F(pa_simple_read) F(pa_simple_write) F(pa_strerror)

#define AMBIENCE_PULSE_SIMPLE_FIELD(name) __typeof__(name) *_Nonnull name;
typedef struct ambience_pulse_simple_functions {
    AMBIENCE_PULSE_SIMPLE_FUNCTIONS(AMBIENCE_PULSE_SIMPLE_FIELD)
} ambience_pulse_simple_functions;
#undef AMBIENCE_PULSE_SIMPLE_FIELD

#define AMBIENCE_PULSE_SIMPLE_NAME(name) #name "\n"
static inline const char *_Nonnull ambience_pulse_simple_function_names(void) {
    return AMBIENCE_PULSE_SIMPLE_FUNCTIONS(AMBIENCE_PULSE_SIMPLE_NAME);
}
#undef AMBIENCE_PULSE_SIMPLE_NAME
