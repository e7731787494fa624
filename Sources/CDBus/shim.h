#include <dbus/dbus.h>

/*
 * libdbus-1 is opened at run time (dlopen), not linked: the target takes only its compiler flags from pkg-config
 * (see Package.swift) and the module map has no `link`. This header keeps its types and constants, and declares the
 * table the engine fills with dlsym. AMBIENCE_DBUS_FUNCTIONS lists every libdbus function the engine calls; the
 * table's field for each has the declared function's own type (__typeof__), so a call through it is checked against
 * libdbus's header, and the name looked up is the field's name.
 */
#define AMBIENCE_DBUS_FUNCTIONS(F) \
    F(dbus_connection_add_filter) F(dbus_connection_close) F(dbus_connection_dispatch) \
    F(dbus_connection_get_dispatch_status) F(dbus_connection_get_is_connected) F(dbus_connection_get_unix_fd) \
    F(dbus_connection_has_messages_to_send) F(dbus_connection_open_private) F(dbus_connection_read_write) \
    F(dbus_connection_send) F(dbus_connection_send_with_reply) F(dbus_connection_set_exit_on_disconnect) \
    F(dbus_connection_unref) F(dbus_error_free) F(dbus_error_init) F(dbus_free) F(dbus_message_get_error_name) \
    F(dbus_message_get_interface) F(dbus_message_get_member) F(dbus_message_get_no_reply) F(dbus_message_get_path) \
    F(dbus_message_get_sender) F(dbus_message_get_serial) F(dbus_message_get_type) \
    F(dbus_message_iter_abandon_container) F(dbus_message_iter_append_basic) F(dbus_message_iter_close_container) \
    F(dbus_message_iter_get_arg_type) F(dbus_message_iter_get_basic) F(dbus_message_iter_get_signature) \
    F(dbus_message_iter_init) F(dbus_message_iter_init_append) F(dbus_message_iter_next) \
    F(dbus_message_demarshal) F(dbus_message_iter_open_container) F(dbus_message_iter_recurse) F(dbus_message_new) \
    F(dbus_message_new_method_call) F(dbus_message_new_signal) F(dbus_message_set_destination) \
    F(dbus_message_set_error_name) F(dbus_message_set_no_reply) F(dbus_message_set_reply_serial) \
    F(dbus_message_unref) F(dbus_pending_call_cancel) F(dbus_pending_call_get_completed) \
    F(dbus_pending_call_steal_reply) F(dbus_pending_call_unref) F(dbus_signature_validate_single) \
    F(dbus_threads_init_default) F(dbus_validate_bus_name) F(dbus_validate_error_name) F(dbus_validate_interface) \
    F(dbus_validate_member) F(dbus_validate_path) F(dbus_validate_utf8)

#define AMBIENCE_DBUS_FIELD(name) __typeof__(name) *_Nonnull name;
/* Only function pointers, in the order of the list: the loader fills it as an array of pointers. */
typedef struct ambience_dbus_functions {
    AMBIENCE_DBUS_FUNCTIONS(AMBIENCE_DBUS_FIELD)
} ambience_dbus_functions;
#undef AMBIENCE_DBUS_FIELD

#define AMBIENCE_DBUS_NAME(name) #name "\n"
/* The table's field names, in order, each ended by a newline. */
static inline const char *_Nonnull ambience_dbus_function_names(void) {
    return AMBIENCE_DBUS_FUNCTIONS(AMBIENCE_DBUS_NAME);
}
#undef AMBIENCE_DBUS_NAME
