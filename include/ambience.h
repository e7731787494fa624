/*
 * ambience.h: the C API of Ambience, a game-audio engine for Linux.
 *
 * Plain C99 (and C++), in the style of SDL and OpenAL. Nothing here needs a Swift toolchain to read.
 * Build a program against the installed library (scripts/install.sh) with:
 *
 *     cc -std=c99 game.c $(pkg-config --cflags --libs ambience) -o game
 *
 * or against the build folder:
 *
 *     cc -std=c99 game.c -Iinclude -L.build/release -lambience-c -Wl,-rpath,$PWD/.build/release -o game
 *
 * ---------------------------------------------------------------------------------------------------------------
 * Conventions
 *
 * Status codes.  Every function returns an ambience_status (the exceptions are ambience_last_error and
 *   ambience_version, which return text). Results come
 *   back through pointer parameters, which are written only when the call returns AMBIENCE_OK unless a function
 *   says otherwise. ambience_last_error() describes the outcome of the most recent call on the calling thread.
 *
 * Handles.  ambience_engine, ambience_sound, ambience_bus and ambience_library are opaque handles; never dereference
 *   them. Passing NULL gives AMBIENCE_ERROR_NULL_HANDLE. A handle that was destroyed (an engine after
 *   ambience_engine_destroy, a sound after ambience_sound_unload, a library after ambience_library_close, anything
 *   of a destroyed engine) gives AMBIENCE_ERROR_DESTROYED_HANDLE, and a value that was never a handle of that kind
 *   gives AMBIENCE_ERROR_INVALID_ARGUMENT. Handle values are never reused, so an old handle can never reach a newer
 *   object. None of these cases crashes.
 *
 * Voices.  An ambience_voice is a plain 64-bit value naming one playing copy of a sound. Once the voice has finished,
 *   been stopped or been stolen by a more important one, the value is "stale": every call on it does nothing and
 *   returns AMBIENCE_ERROR_STALE_VOICE. Keeping stale voices around is harmless. AMBIENCE_VOICE_NONE (0) is always
 *   stale.
 *
 * Numbers.  Every float and double argument (gains, pitch, pan, positions, velocities, fades, times, volumes)
 *   is checked by the same rules as the Swift API: NaN and infinities give AMBIENCE_ERROR_INVALID_ARGUMENT and
 *   change nothing, checked before the voice (so a stale voice gives it too); finite values outside their range
 *   are clamped into it. The ranges: gain and bus gain 0..64, pitch 0.01..16, pan -1..1, occlusion 0..1, fades
 *   and fade-ins 0..86400 s, positions and velocities -1e9..1e9 per axis, listener distances 1e-6..1e9, rolloff and doppler 0..100, ducking depth 0..96 dB,
 *   music volume 0..1, crossfade 0..60 s, music time 0..the item's length. Engine configurations outside their
 *   limits (sample_rate 8000..192000, real_voices 1..4096, max_voices real_voices..1048576, block_frames
 *   16..16384) are refused.
 *
 * Strings.  Every string is UTF-8 and NUL-terminated. A string argument that is not valid UTF-8 gives
 *   AMBIENCE_ERROR_INVALID_UTF8; a NULL string where one is required gives AMBIENCE_ERROR_INVALID_ARGUMENT.
 *
 * Ownership (one rule for the whole API).
 *   - Arguments: the engine copies whatever it keeps (strings, structs, arrays) before the call returns, so the
 *     caller may free or reuse its memory at once. The only pointer the engine keeps is a callback's userdata,
 *     which it never reads or frees; it only hands it back to the callback.
 *   - Strings out of a call are always copied into a buffer the caller owns: (char *buffer, size_t buffer_size,
 *     size_t *required). `required` (may be NULL) receives the bytes needed including the NUL. When the buffer is
 *     too small the call writes as much as fits (cut at a character boundary, NUL-terminated) and returns
 *     AMBIENCE_ERROR_BUFFER_TOO_SMALL; buffer == NULL with buffer_size == 0 just asks for the size (AMBIENCE_OK).
 *   - Strings and structs handed to a callback belong to the engine and are valid only until the callback returns.
 *   - ambience_last_error() returns thread-local storage owned by the library, valid until the next ambience_ call
 *     on the same thread (ambience_last_error itself excepted). Never free it.
 *   - Nothing the API gives you must be freed with free(): release engines with ambience_engine_destroy, sounds with
 *     ambience_sound_unload and libraries with ambience_library_close (or let ambience_engine_destroy release them).
 *
 * Threads.  Every function may be called from any thread, concurrently. Event callbacks run only inside
 *   ambience_update(), on the thread that calls it, in the order the events happened; the engine never calls them
 *   from its audio or streaming threads. The two callbacks that make or change sound are the exceptions, and say
 *   where they run: a stream voice's (ambience_play_stream: the stream thread) and the post-mix observer
 *   (ambience_engine_set_post_mix: the audio thread). Call ambience_update for one engine from one thread at a time: a concurrent or re-entrant
 *   call (from inside a callback) returns AMBIENCE_ERROR_BUSY. A callback may call any other function, including
 *   ambience_engine_destroy (the events not yet delivered are then dropped).
 *
 * Exit.  Call ambience_engine_shutdown (or ambience_engine_destroy) before the program exits: it applies the exit
 *   rule itself (it deactivates the session with AMBIENCE_SESSION_NOTIFY_OTHERS_ON_DEACTIVATION, so the players the
 *   session paused are resumed; system music the game started is paused; other apps' music that was playing at
 *   launch is left playing; no deactivation of your own is needed first), then stops the output, the streaming
 *   thread and the music player and closes the device. As a safety net, engines still alive at exit() are shut down
 *   and released by an atexit handler.
 *   On SIGTERM, SIGINT or SIGHUP a device engine carries out the same rule in the next ambience_update (or by
 *   itself if that is not called within 0.5 s) and the process then ends by the signal, unless the program
 *   installed its own handler first or set config.handle_termination_signals = false.
 * ---------------------------------------------------------------------------------------------------------------
 */
#ifndef AMBIENCE_H
#define AMBIENCE_H

#include "ambience_version.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version this header belongs to: AMBIENCE_VERSION_MAJOR, _MINOR, _PATCH and AMBIENCE_VERSION, in
 * ambience_version.h (included at the top). */

/* ============================================================================================================ */
/* Status codes                                                                                                   */

typedef enum ambience_status {
    AMBIENCE_OK = 0,
    /* An argument is NaN or infinite, an enum or count out of range, NULL where a value is required, or not a
     * handle of the right kind. */
    AMBIENCE_ERROR_INVALID_ARGUMENT = 1,
    /* A handle argument is NULL. */
    AMBIENCE_ERROR_NULL_HANDLE = 2,
    /* The handle was destroyed (or belongs to a destroyed engine). */
    AMBIENCE_ERROR_DESTROYED_HANDLE = 3,
    /* The voice has finished, was stopped or was stolen: the call did nothing. */
    AMBIENCE_ERROR_STALE_VOICE = 4,
    /* A file could not be read or decoded. */
    AMBIENCE_ERROR_DECODING = 5,
    /* The output device could not be opened. */
    AMBIENCE_ERROR_OUTPUT = 6,
    /* ambience_render needs an engine created with AMBIENCE_OUTPUT_OFFLINE. */
    AMBIENCE_ERROR_NOT_OFFLINE = 7,
    /* This machine's audio stack lacks the feature (for example EFX reverb). */
    AMBIENCE_ERROR_UNSUPPORTED = 8,
    /* A string argument is not valid UTF-8. */
    AMBIENCE_ERROR_INVALID_UTF8 = 9,
    /* A caller buffer was too small; it holds a truncated, NUL-terminated string. */
    AMBIENCE_ERROR_BUFFER_TOO_SMALL = 10,
    /* The mixer has no room for the sound. */
    AMBIENCE_ERROR_OUT_OF_MEMORY = 11,
    /* The mixer (OpenAL Soft) could not be set up. */
    AMBIENCE_ERROR_MIXER = 12,
    /* The engine was shut down: only ambience_engine_destroy and ambience_engine_shutdown still do anything. */
    AMBIENCE_ERROR_SHUT_DOWN = 13,
    /* ambience_update is already running for this engine (on another thread, or the caller is a callback). */
    AMBIENCE_ERROR_BUSY = 14,
    /* A sound or bus of one engine was used with another engine. */
    AMBIENCE_ERROR_WRONG_ENGINE = 15,
    /* The media library's index or folders could not be used (the message names which and why). */
    AMBIENCE_ERROR_LIBRARY = 16
} ambience_status;

/*
 * A description of the most recent call's outcome on the calling thread: "" after success, otherwise one line
 * naming the function, the thing, and the reason. Never NULL. The string is thread-local and owned by the library;
 * it stays valid until the next ambience_ call on this thread. Copy it to keep it.
 */
const char *ambience_last_error(void);

/* The library's version (compare with AMBIENCE_VERSION_*). Any pointer may be NULL. */
ambience_status ambience_get_version(uint32_t *major, uint32_t *minor, uint32_t *patch);

/*
 * The library's version as text, "MAJOR.MINOR.PATCH" ("0.2.0"): the version of the library the program runs
 * with, which may be newer than the header it was built with. Never NULL; a static string, never freed. Like
 * ambience_last_error, it returns no status and leaves ambience_last_error() as it was.
 */
const char *ambience_version(void);

/* ============================================================================================================ */
/* Handles                                                                                                        */

typedef struct ambience_engine ambience_engine;
typedef struct ambience_sound ambience_sound;
typedef struct ambience_bus ambience_bus;
typedef struct ambience_library ambience_library;

/* One playing copy of a sound. A plain value: copy it freely, it never needs releasing. */
typedef uint64_t ambience_voice;
#define AMBIENCE_VOICE_NONE ((ambience_voice)0)

/* ============================================================================================================ */
/* Engine                                                                                                         */

typedef enum ambience_output_kind {
    /* Real-time output through SDL on a device (the system default unless device_name is set). The engine also
     * joins the desktop: the session's rules reach other music players over D-Bus (MPRIS), and the music player
     * appears there as a player of its own. */
    AMBIENCE_OUTPUT_DEVICE = 0,
    /* No device: audio is produced only by ambience_render, as fast as the CPU allows. Leaves the desktop alone. */
    AMBIENCE_OUTPUT_OFFLINE = 1
} ambience_output_kind;

/* How OpenAL Soft resamples a voice whose sound is at another rate than the mix or whose pitch is not 1. Measured on
 * 1,024 voices of varied pitch (README, "OpenAL Soft's options"): LINEAR is the cheapest clean one; SINC12 is about
 * 10 dB closer to SINC24 (OpenAL Soft's best) at some three times LINEAR's mixing cost; CUBIC costs about twice as
 * much and sounds like LINEAR; POINT is 10 dB worse and no cheaper. */
typedef enum ambience_resampler {
    AMBIENCE_RESAMPLER_POINT = 0,  /* the nearest sample: aliased, lo-fi */
    AMBIENCE_RESAMPLER_LINEAR = 1, /* OpenAL Soft's default */
    AMBIENCE_RESAMPLER_CUBIC = 2,
    AMBIENCE_RESAMPLER_SINC12 = 3, /* band-limited sinc, 12 points */
    AMBIENCE_RESAMPLER_SINC24 = 4  /* band-limited sinc, 24 points */
} ambience_resampler;

typedef struct ambience_engine_config {
    ambience_output_kind output;  /* default AMBIENCE_OUTPUT_DEVICE */
    const char *device_name;      /* NULL: the system default, following the user's choice. Copied. */
    int32_t sample_rate;          /* 8000..192000, default 48000 */
    int32_t real_voices;          /* voices mixed for real, 1..4096, default 256 */
    int32_t max_voices;           /* voices tracked in all (the rest are virtual), real_voices..1048576, default 16384 */
    int32_t block_frames;         /* frames per mix block, 16..16384, default 512 */
    bool hrtf;                    /* head-related rendering for 3D voices, default false */
    const char *app_name;         /* shown to the sound server; NULL: "ambience". Copied. */
    uint64_t sound_memory_budget; /* bytes of decoded sounds cached before unheld ones are evicted, default 256 MiB */
    bool handle_termination_signals; /* the exit rule on SIGTERM/SIGINT/SIGHUP (see "Exit"), default true */
    ambience_resampler resampler; /* every voice's resampler, default AMBIENCE_RESAMPLER_LINEAR */
    bool output_limiter;          /* turn a mix past full scale down smoothly (adds 1 ms of delay), default false */
    /* Tracker modules (libopenmpt) and MIDI (libfluidsynth), both opened at run time: */
    const char *sound_font;       /* the General MIDI SF2 MIDI plays with; NULL: fluid-soundfont-gm's, else
                                     timgm6mb-soundfont's. Copied. */
    int32_t module_interpolation; /* interpolation filter taps: 1 (nearest), 2 (linear), 4 (cubic), 8 (sinc), default 8 */
    int32_t module_stereo_separation; /* percent, 0 (mono)..200, default 100 */
} ambience_engine_config;

/* Which code carries a device output's mix to the sound server (ambience_engine_create_with_backend). */
typedef enum ambience_output_backend {
    /* The engine's own libpulse stream when a PulseAudio server (or PipeWire's pulse server) answers and libpulse
     * loads, else SDL; SDL alone when SDL_AUDIODRIVER is set. AMBIENCE_OUTPUT decides first: sdl is SDL alone,
     * libpulse is libpulse (then SDL) whatever SDL_AUDIODRIVER says. What ambience_engine_create uses. */
    AMBIENCE_OUTPUT_BACKEND_AUTOMATIC = 0,
    /* SDL's audio device (SDL_AUDIODRIVER, else pulseaudio, pipewire, alsa, then dummy). */
    AMBIENCE_OUTPUT_BACKEND_SDL = 1,
    /* The engine's own stream on libpulse's threaded main loop; creating the engine fails without a server. */
    AMBIENCE_OUTPUT_BACKEND_LIBPULSE = 2,
    /* Reported only: offline, or rendering to nothing (no device left). */
    AMBIENCE_OUTPUT_BACKEND_NONE = 3
} ambience_output_backend;

/* Fills a config with the defaults above. */
ambience_status ambience_engine_config_init(ambience_engine_config *config);

/*
 * Creates an engine. config may be NULL (the defaults). On success *out_engine receives the handle; release it with
 * ambience_engine_destroy. Errors: AMBIENCE_ERROR_OUTPUT (no device could be opened), AMBIENCE_ERROR_MIXER.
 * Music notifications are on from the start: set the callbacks below to receive them.
 */
ambience_status ambience_engine_create(const ambience_engine_config *config, ambience_engine **out_engine);

/* As ambience_engine_create, with the output's backend chosen (AMBIENCE_OUTPUT_BACKEND_NONE is refused: invalid). */
ambience_status ambience_engine_create_with_backend(const ambience_engine_config *config,
                                                    ambience_output_backend backend, ambience_engine **out_engine);

/* What the engine asks for the output's audio thread (ambience_engine_create_with_output). AMBIENCE_REALTIME
 * overrides it: 0 is UNCHANGED, 1 is REALTIME. */
typedef enum ambience_audio_thread_priority {
    /* A raised nice level: rtkit's MakeThreadHighPriority at its MinNiceLevel, else the kernel's nice -20. What
     * ambience_engine_create uses. No real time, so no SIGXCPU handler is installed. */
    AMBIENCE_AUDIO_THREAD_RAISED = 0,
    /* Nothing is asked: the thread runs as SDL or libpulse made it. */
    AMBIENCE_AUDIO_THREAD_UNCHANGED = 1,
    /* The raised nice level, then real time (SCHED_RR 4 from rtkit, else the kernel) with a SIGXCPU handler that drops
     * the thread back to its nice level when it runs half RLIMIT_RTTIME without blocking. */
    AMBIENCE_AUDIO_THREAD_REALTIME = 2
} ambience_audio_thread_priority;

/* As ambience_engine_create_with_backend, with the audio thread's priority chosen too (a value not in the enum is
 * refused: invalid). */
ambience_status ambience_engine_create_with_output(const ambience_engine_config *config,
                                                   ambience_output_backend backend,
                                                   ambience_audio_thread_priority priority,
                                                   ambience_engine **out_engine);

/*
 * Stops output, the streaming thread and the music player (the exit rule, see "Exit" above). Later calls on the
 * engine and its sounds, buses, libraries and voices return AMBIENCE_ERROR_SHUT_DOWN. Calling it twice is harmless.
 */
ambience_status ambience_engine_shutdown(ambience_engine *engine);

/*
 * Shuts the engine down (if it was not) and releases it with all its sounds, buses and libraries. The handle and
 * theirs are dead afterwards (AMBIENCE_ERROR_DESTROYED_HANDLE); its voices are stale.
 */
ambience_status ambience_engine_destroy(ambience_engine *engine);

/*
 * Once per game frame: advances fades, ducking and virtual voices to the output's clock, and calls the callbacks
 * for everything that happened since the last call, on this thread, in order.
 */
ambience_status ambience_update(ambience_engine *engine);

/*
 * Offline engines only: renders the next `frames` frames of the mix into `out` as interleaved stereo floats
 * (2 * frames values, -1..1), and advances the engine's time by as much. out may be NULL only when frames is 0.
 */
ambience_status ambience_render(ambience_engine *engine, float *out, size_t frames);

ambience_status ambience_engine_get_sample_rate(ambience_engine *engine, int32_t *out_sample_rate);
ambience_status ambience_engine_is_offline(ambience_engine *engine, bool *out_offline);
/* The sound system the output goes to ("pulseaudio" for SDL's driver and the libpulse stream alike, SDL's "alsa",
 * "dummy", ...) or "offline". */
ambience_status ambience_engine_get_output_driver(ambience_engine *engine, char *buffer, size_t buffer_size,
                                                  size_t *required);
/* The backend the output uses now: SDL or LIBPULSE; NONE offline or while rendering to nothing. */
ambience_status ambience_engine_get_output_backend(ambience_engine *engine, ambience_output_backend *out_backend);

typedef struct ambience_stats {
    int64_t real_voices;     /* voices mixed by real sources right now */
    int64_t virtual_voices;  /* voices tracked without a source right now */
    int64_t started;         /* voices started since creation */
    int64_t stolen;          /* voices stolen (or refused) since creation */
    int64_t finished;        /* one-shots that played to their end */
    int64_t rendered_blocks;
    int64_t underruns;
    double average_render_microseconds;
    double max_render_microseconds;
} ambience_stats;

ambience_status ambience_engine_get_stats(ambience_engine *engine, ambience_stats *out_stats);

/*
 * Events the engine lost because one of its bounded queues was full when they happened (ambience_update was not
 * called for a long time): voice endings, music and session notifications, sound-server and sleep observations,
 * summed since the engine was created. A count of its own rather than a field of ambience_stats, which callers
 * allocate with no size field, so that struct never grows.
 */
ambience_status ambience_engine_dropped_events(ambience_engine *engine, int64_t *out_dropped);

typedef struct ambience_capabilities {
    bool effects;         /* EFX: reverb and occlusion low-pass */
    bool hrtf;            /* HRTF available */
    bool hrtf_enabled;    /* HRTF in use */
    int32_t real_voices;  /* real sources the mixer got */
} ambience_capabilities;

ambience_status ambience_engine_get_capabilities(ambience_engine *engine, ambience_capabilities *out_capabilities);

/* ============================================================================================================ */
/* Sounds: decoded assets held by the mixer                                                                      */

/*
 * Loads a file (WAV, Ogg Vorbis, Ogg Opus, FLAC, MP3 or MP4 (AAC, ALAC); the format is read from the bytes) as a sound. Loading the same file again
 * returns the same handle while it is loaded. The handle stays valid until ambience_sound_unload or the engine's
 * destruction: the engine's cache never evicts a sound that has a live handle (the memory budget bounds only what
 * the cache keeps on its own, such as ambience_preload's sounds).
 * A sound is decoded whole: one whose decoded size (frames x channels x 4 bytes) is over sound_memory_budget or
 * 2 GiB (one OpenAL buffer) is refused before it is decoded, with AMBIENCE_ERROR_DECODING and a message naming the
 * file and the size; stream long audio with the music player instead.
 * Errors: AMBIENCE_ERROR_DECODING (the message names the file and the reason), AMBIENCE_ERROR_OUT_OF_MEMORY.
 */
ambience_status ambience_sound_load(ambience_engine *engine, const char *path, ambience_sound **out_sound);

/*
 * Makes a sound from `frames` frames of samples in memory (interleaved floats, -1..1, every one finite; `channels`
 * 1..8, more than two folded to stereo; `sample_rate` 1..768000, as a file's header may claim; at most 2 GiB of
 * samples, one OpenAL buffer), copied. `name`
 * (UTF-8, copied; NULL: "pcm") names it in messages. Sounds made this way are not cached and never evicted.
 */
ambience_status ambience_sound_create_pcm(ambience_engine *engine, const char *name, const float *samples,
                                          size_t frames, int32_t channels, int32_t sample_rate,
                                          ambience_sound **out_sound);

/*
 * How loud the sound is in the world, in the game's decibels (docs/HDR.md; dB SPL works): every later play of it
 * has this loudness, heard only under a bus with an HDR window. Default 0; clamped to -200..200; NaN and infinities
 * give AMBIENCE_ERROR_INVALID_ARGUMENT and change nothing.
 */
ambience_status ambience_sound_set_loudness(ambience_sound *sound, float loudness_db);
ambience_status ambience_sound_get_loudness(ambience_sound *sound, float *out_loudness_db);

/* Decodes files on a background thread so later ambience_sound_load calls return at once. Paths are copied. */
ambience_status ambience_preload(ambience_engine *engine, const char *const *paths, size_t count);

/* Stops the sound's voices and frees it. The handle is dead afterwards. */
ambience_status ambience_sound_unload(ambience_sound *sound);

typedef struct ambience_sound_info {
    int32_t sample_rate;
    int32_t channels;     /* 1 or 2: wider files are folded to stereo when loaded */
    int64_t frames;
    double duration;      /* seconds */
    uint64_t memory_cost; /* bytes of mixer memory the sound holds (stereo whose sides are equal is held as mono) */
} ambience_sound_info;

ambience_status ambience_sound_get_info(ambience_sound *sound, ambience_sound_info *out_info);

/* Bytes held by sounds loaded from files (the cache). */
ambience_status ambience_engine_get_sound_memory(ambience_engine *engine, uint64_t *out_bytes);

/* ============================================================================================================ */
/* Voices                                                                                                         */

typedef enum ambience_placement {
    AMBIENCE_PLACEMENT_PAN = 0,   /* 2D, head-relative: `pan` from -1 (left) to 1 (right) */
    AMBIENCE_PLACEMENT_WORLD = 1  /* 3D: `position` and `velocity` in world space */
} ambience_placement;

typedef struct ambience_play_options {
    float gain;                    /* 0..64, default 1 */
    float pitch;                   /* 0.01..16, default 1 */
    bool loop;                     /* default false */
    ambience_bus *bus;             /* NULL: the sfx bus */
    int32_t priority;              /* 0 (background) .. 255 (must be heard), default 128 */
    ambience_placement placement;  /* default AMBIENCE_PLACEMENT_PAN */
    float pan;                     /* -1..1, default 0 */
    float position[3];             /* world position (AMBIENCE_PLACEMENT_WORLD) */
    float velocity[3];             /* world velocity, for doppler */
    double fade_in;                /* seconds to fade in from silence, default 0 */
} ambience_play_options;

/* Fills options with the defaults above. */
ambience_status ambience_play_options_init(ambience_play_options *options);

/*
 * Starts a voice of the sound; it is heard in the next block the output renders. options may be NULL (defaults).
 * *out_voice (may be NULL) receives the voice, or AMBIENCE_VOICE_NONE when every voice slot is held by more
 * important voices (the call still returns AMBIENCE_OK: a refused voice is a stale one).
 */
ambience_status ambience_play(ambience_sound *sound, const ambience_play_options *options, ambience_voice *out_voice);

/*
 * ambience_play with a loudness for this play alone, in the game's decibels (docs/HDR.md), in place of the sound's
 * (ambience_sound_set_loudness); heard only under a bus with an HDR window. Clamped to -200..200; NaN and
 * infinities give AMBIENCE_ERROR_INVALID_ARGUMENT and start nothing. A call of its own, not a field of
 * ambience_play_options: programs allocate that struct, so a new field would change its size under them.
 * *out_voice is AMBIENCE_VOICE_NONE on any error.
 */
ambience_status ambience_play_with_loudness(ambience_sound *sound, const ambience_play_options *options,
                                            float loudness_db, ambience_voice *out_voice);

/* Stops the voice at once (fade_seconds == 0) or after fading out. */
ambience_status ambience_voice_stop(ambience_voice voice, double fade_seconds);
ambience_status ambience_voice_pause(ambience_voice voice);
ambience_status ambience_voice_resume(ambience_voice voice);
ambience_status ambience_voice_set_gain(ambience_voice voice, float gain);
ambience_status ambience_voice_set_pitch(ambience_voice voice, float pitch);
/* Makes the voice 2D, panned -1..1. */
ambience_status ambience_voice_set_pan(ambience_voice voice, float pan);
/* Places the voice in the 3D world (a 2D voice becomes a world voice, with zero velocity). */
ambience_status ambience_voice_set_position(ambience_voice voice, float x, float y, float z);
/* World voices only (AMBIENCE_ERROR_INVALID_ARGUMENT for a panned voice). */
ambience_status ambience_voice_set_velocity(ambience_voice voice, float x, float y, float z);
/* Ramps the voice's gain to `gain` over `seconds`. */
ambience_status ambience_voice_fade(ambience_voice voice, float gain, double seconds);
/* Muffles the voice as if behind a wall: 0 clear .. 1 fully occluded. AMBIENCE_ERROR_UNSUPPORTED without EFX. */
ambience_status ambience_voice_set_occlusion(ambience_voice voice, float amount);
/*
 * *out_playing: alive and not paused. For a stale voice *out_playing is set to false and the call returns
 * AMBIENCE_ERROR_STALE_VOICE.
 */
ambience_status ambience_voice_is_playing(ambience_voice voice, bool *out_playing);
/* Seconds of the sound played so far (modulo its length when looping). */
ambience_status ambience_voice_get_elapsed(ambience_voice voice, double *out_seconds);

/* ============================================================================================================ */
/* Sound made by your code: stream voices and the post-mix observer                                             */

/*
 * Fills `samples` with up to `frames` frames (frames x channels floats, interleaved, zeroed beforehand) and returns
 * how many frames it wrote. Returning fewer than `frames` ends the stream: what it wrote plays, then the voice
 * finishes (the voice-finished callback, in ambience_update) and the callback is not called again. `samples` is
 * valid only until the callback returns.
 */
typedef size_t (*ambience_stream_callback)(void *userdata, float *samples, size_t frames);

/*
 * Plays a stream whose samples come from `callback`, as a voice: on a bus, with gain, pitch, placement, pause,
 * fades and stop like any voice (the ambience_voice_* calls). `sample_rate` is 8000..192000 and `channels` 1 or 2;
 * options may be NULL (defaults); `priority` and `loop` are ignored. Placement applies to mono streams; a stereo
 * stream plays its channels as they are.
 *
 * Where the callback runs: on device output, on the engine's stream thread ("ambience-voices"), never on the audio
 * thread; offline, inside ambience_render on the calling thread, before each block is mixed, so a render is the
 * same every time. Calls for one voice never overlap, and no lock of the engine is held: the callback may call the
 * API (a voice may stop itself). Every stream voice is fed by the same thread: do not block in it.
 * Each call asks for one engine block (block_frames x sample_rate / the engine's rate). Three blocks are queued, so
 * a frame the callback writes is heard two engine blocks after it was asked for (1024 frames, 21.3 ms, with the
 * default 512-frame blocks at 48 kHz); on a device, add up to half a block for the stream thread's wake-up.
 *
 * ambience_voice_stop(voice, 0) returns only once the callback is not running, and it is never called again (from
 * inside the callback it returns at once, and that call is the last): then free what the callback uses. A stream
 * that ends by a fade-out, by returning short or by ambience_engine_shutdown is not called again either, though a
 * call under way may finish after the voice has gone.
 *
 * Errors: AMBIENCE_ERROR_INVALID_ARGUMENT (a NULL callback, a rate or channel count out of range, bad options),
 * AMBIENCE_ERROR_OUT_OF_MEMORY (64 stream voices already play, or OpenAL has no source or buffer left).
 */
ambience_status ambience_play_stream(ambience_engine *engine, int32_t sample_rate, int32_t channels,
                                     const ambience_play_options *options, ambience_stream_callback callback,
                                     void *userdata, ambience_voice *out_voice);

/*
 * Sees, and may change, every mixed block: `samples` holds `frames` stereo frames (frames x 2 floats, interleaved),
 * after the engine has rendered them and before they go to the device (or, offline, into ambience_render's `out`).
 */
typedef void (*ambience_post_mix_callback)(void *userdata, float *samples, size_t frames);

/*
 * Sets the post-mix observer (NULL removes it). It runs on the audio thread (or, offline, inside ambience_render),
 * with no lock of the engine held: it must not block, lock, allocate or do I/O, and should not call the API.
 * Replacing or removing it is safe while audio plays: when this call returns, the observer it replaced is not
 * running and will never be called again, so its userdata may be freed (the call waits for the block being
 * rendered, if any). Called from inside the observer, the new one takes over from the next block. No latency added.
 */
ambience_status ambience_engine_set_post_mix(ambience_engine *engine, ambience_post_mix_callback callback,
                                             void *userdata);

/* ============================================================================================================ */
/* Listener (3D)                                                                                                  */

typedef struct ambience_listener {
    float position[3];
    float velocity[3];
    float forward[3];          /* the direction the listener faces, default (0, 0, -1) */
    float up[3];               /* default (0, 1, 0) */
    float reference_distance;  /* distance at which a world voice plays at its own gain, default 1 */
    float max_distance;        /* beyond it a world voice gets no quieter, default 1000 */
    float rolloff;             /* inverse-distance rolloff, default 1 */
    float doppler_factor;      /* default 1 */
} ambience_listener;

ambience_status ambience_listener_get(ambience_engine *engine, ambience_listener *out_listener);
ambience_status ambience_listener_set(ambience_engine *engine, const ambience_listener *listener);
ambience_status ambience_listener_set_position(ambience_engine *engine, float x, float y, float z);

/* ============================================================================================================ */
/* Buses: master > music, sfx, ui, dialogue (and buses you add). Handles live as long as their engine.         */

/* Marks a name kept only for old code; GCC and Clang warn where it is used. */
#if defined(__GNUC__)
#define AMBIENCE_DEPRECATED(message) __attribute__((deprecated(message)))
#else
#define AMBIENCE_DEPRECATED(message)
#endif

typedef enum ambience_builtin_bus {
    AMBIENCE_BUS_MASTER = 0,
    AMBIENCE_BUS_MUSIC = 1,     /* the music player plays here; ducks 9 dB under `dialogue` by default */
    AMBIENCE_BUS_SFX = 2,       /* where voices play unless told otherwise */
    AMBIENCE_BUS_UI = 3,
    AMBIENCE_BUS_DIALOGUE = 4,  /* speech; named "dialogue" */
    /* Deprecated: the old name of AMBIENCE_BUS_DIALOGUE (the same bus). */
    AMBIENCE_BUS_VOICE AMBIENCE_DEPRECATED("use AMBIENCE_BUS_DIALOGUE") = AMBIENCE_BUS_DIALOGUE
} ambience_builtin_bus;

ambience_status ambience_bus_get(ambience_engine *engine, ambience_builtin_bus which, ambience_bus **out_bus);
/* Adds a bus named `name` (copied) under `parent` (NULL: master). */
ambience_status ambience_bus_create(ambience_engine *engine, const char *name, ambience_bus *parent,
                                    ambience_bus **out_bus);
ambience_status ambience_bus_get_name(ambience_bus *bus, char *buffer, size_t buffer_size, size_t *required);
/* The bus's own linear gain (>= 0), not counting parents or ducking. */
ambience_status ambience_bus_set_gain(ambience_bus *bus, float gain);
ambience_status ambience_bus_get_gain(ambience_bus *bus, float *out_gain);
/* Ramps the bus's gain to `gain` over `seconds` (advanced by ambience_update / ambience_render). */
ambience_status ambience_bus_fade(ambience_bus *bus, float gain, double seconds);
ambience_status ambience_bus_set_muted(ambience_bus *bus, bool muted);
ambience_status ambience_bus_get_muted(ambience_bus *bus, bool *out_muted);
/* The gain that reaches the output: own gain x ducking x every parent's; 0 when any of them is muted. */
ambience_status ambience_bus_get_effective_gain(ambience_bus *bus, float *out_gain);

/*
 * HDR mixing (docs/HDR.md). A bus's HDR window: the window's top follows the loudest voice under the bus (by its
 * loudness, gain and distance), never below threshold_db; every voice under it plays at (its level - the top) dB,
 * and those more than width_db under the top are culled (virtual, keeping their time, back when the window falls).
 * The top reaches a louder voice attack_seconds after it starts and falls back over release_seconds. width_db is
 * clamped to 0..200, threshold_db to -200..200, the times to 0..86400; NaN and infinities give
 * AMBIENCE_ERROR_INVALID_ARGUMENT and change nothing. Off by default.
 */
ambience_status ambience_bus_set_hdr(ambience_bus *bus, float width_db, float threshold_db, double attack_seconds,
                                     double release_seconds);
/* Takes the bus's HDR window off (nothing to do when it has none). */
ambience_status ambience_bus_clear_hdr(ambience_bus *bus);
/* Whether the bus has an HDR window, and where its top stands now (0 without one). Either pointer may be NULL. */
ambience_status ambience_bus_get_hdr_top(ambience_bus *bus, bool *out_has_window, float *out_top_db);

typedef enum ambience_reverb_preset {
    AMBIENCE_REVERB_NONE = 0,  /* removes the bus's reverb */
    AMBIENCE_REVERB_ROOM = 1,
    AMBIENCE_REVERB_HALL = 2,
    AMBIENCE_REVERB_CAVE = 3,
    AMBIENCE_REVERB_UNDERWATER = 4,
    AMBIENCE_REVERB_HANGAR = 5
} ambience_reverb_preset;

/* Puts a reverb on the bus and everything under it. AMBIENCE_ERROR_UNSUPPORTED when OpenAL has no EFX, or the engine
 * runs below 11025 Hz, where OpenAL Soft's effects do not work (capabilities.effects says which). */
ambience_status ambience_bus_set_reverb(ambience_bus *bus, ambience_reverb_preset preset);

/*
 * Ducking: "while `trigger` has audible voices, `target` goes down by depth_db decibels (positive: 9 means -9 dB),
 * reaching it over attack_seconds and coming back over release_seconds once the trigger is quiet".
 */
ambience_status ambience_ducking_add(ambience_engine *engine, ambience_bus *trigger, ambience_bus *target,
                                     float depth_db, double attack_seconds, double release_seconds);
/* Removes every ducking rule (including the default voice-over-music one). */
ambience_status ambience_ducking_clear(ambience_engine *engine);
ambience_status ambience_ducking_get_count(ambience_engine *engine, size_t *out_count);

/* ============================================================================================================ */
/* The application music player: a queue of files streamed gaplessly through the music bus                     */

typedef enum ambience_playback_state {
    AMBIENCE_PLAYBACK_STOPPED = 0,
    AMBIENCE_PLAYBACK_PLAYING = 1,
    AMBIENCE_PLAYBACK_PAUSED = 2,
    AMBIENCE_PLAYBACK_INTERRUPTED = 3,
    AMBIENCE_PLAYBACK_SEEKING_FORWARD = 4,
    AMBIENCE_PLAYBACK_SEEKING_BACKWARD = 5
} ambience_playback_state;

typedef enum ambience_shuffle_mode {
    AMBIENCE_SHUFFLE_OFF = 0,
    AMBIENCE_SHUFFLE_SONGS = 1,
    AMBIENCE_SHUFFLE_ALBUMS = 2
} ambience_shuffle_mode;

typedef enum ambience_repeat_mode {
    AMBIENCE_REPEAT_NONE = 0,
    AMBIENCE_REPEAT_ONE = 1,
    AMBIENCE_REPEAT_ALL = 2
} ambience_repeat_mode;

/* Loudness matching (Sound Check): every item at -18 LUFS, from ReplayGain/R128 tags or the library's analysis. */
typedef enum ambience_loudness_matching {
    AMBIENCE_LOUDNESS_OFF = 0,        /* the default: items play as mastered */
    AMBIENCE_LOUDNESS_TRACK = 1,      /* each item on its own */
    AMBIENCE_LOUDNESS_ALBUM = 2,      /* by its album's gain, so an album's tracks keep their levels */
    AMBIENCE_LOUDNESS_AUTOMATIC = 3   /* album gain while the item next to it in play order is of its album */
} ambience_loudness_matching;

typedef enum ambience_tag {
    AMBIENCE_TAG_TITLE = 0,  /* the file name when the file has no title tag */
    AMBIENCE_TAG_ARTIST = 1,
    AMBIENCE_TAG_ALBUM = 2,
    AMBIENCE_TAG_ALBUM_ARTIST = 3,
    AMBIENCE_TAG_GENRE = 4,
    AMBIENCE_TAG_COMPOSER = 5,
    AMBIENCE_TAG_PATH = 6,
    AMBIENCE_TAG_ARTWORK = 7 /* the cover a desktop player names: a file's path, or an http(s) URL (never fetched) */
} ambience_tag;

/*
 * Replaces the queue with files (paths copied; count may be 0 to empty it). The first becomes the now-playing item;
 * the playback state is kept. Unreadable files keep their place and are skipped with a playback-error callback.
 */
ambience_status ambience_music_set_queue(ambience_engine *engine, const char *const *paths, size_t count);
/* Adds files at the end of the queue; what is playing goes on undisturbed. */
ambience_status ambience_music_append(ambience_engine *engine, const char *const *paths, size_t count);
ambience_status ambience_music_get_queue_count(ambience_engine *engine, size_t *out_count);
/*
 * The transport calls return at once: files are opened and decoded on the engine's streaming thread (offline, as
 * it renders), never on yours. What a call causes, a playback error included, arrives in a later ambience_update.
 */
ambience_status ambience_music_play(ambience_engine *engine);
ambience_status ambience_music_pause(ambience_engine *engine);
/* Stops; the now-playing item stays, and play starts it again from the beginning. */
ambience_status ambience_music_stop(ambience_engine *engine);
ambience_status ambience_music_next(ambience_engine *engine);
/* The previous item, or the start of this one when more than 3 seconds in. */
ambience_status ambience_music_previous(ambience_engine *engine);
/* Seeks in the now-playing item (seconds >= 0), sample-accurately. */
ambience_status ambience_music_set_time(ambience_engine *engine, double seconds);
ambience_status ambience_music_get_time(ambience_engine *engine, double *out_seconds);
ambience_status ambience_music_get_state(ambience_engine *engine, ambience_playback_state *out_state);

typedef struct ambience_now_playing {
    bool has_item;           /* false: the queue is empty or has ended (the other fields are then 0 / -1) */
    int64_t queue_index;     /* in queue order (not shuffled order), -1 without an item */
    double duration;         /* seconds, 0 when unknown */
    int32_t track_number;    /* 0 when unknown */
    uint64_t persistent_id;  /* stable for the same file */
} ambience_now_playing;

ambience_status ambience_music_get_now_playing(ambience_engine *engine, ambience_now_playing *out_info);
/* A tag of the now-playing item, copied into the caller's buffer; "" when there is no item or no such tag. */
ambience_status ambience_music_get_now_playing_tag(ambience_engine *engine, ambience_tag tag, char *buffer,
                                                   size_t buffer_size, size_t *required);
ambience_status ambience_music_set_shuffle(ambience_engine *engine, ambience_shuffle_mode mode);
ambience_status ambience_music_get_shuffle(ambience_engine *engine, ambience_shuffle_mode *out_mode);
ambience_status ambience_music_set_repeat(ambience_engine *engine, ambience_repeat_mode mode);
ambience_status ambience_music_get_repeat(ambience_engine *engine, ambience_repeat_mode *out_mode);
/* The player's own gain, 0..1, applied before the music bus. */
ambience_status ambience_music_set_volume(ambience_engine *engine, float volume);
ambience_status ambience_music_get_volume(ambience_engine *engine, float *out_volume);
/* Seconds over which one item fades into the next (equal power); 0, the default, joins them gaplessly. */
ambience_status ambience_music_set_crossfade(ambience_engine *engine, double seconds);
ambience_status ambience_music_get_crossfade(ambience_engine *engine, double *out_seconds);
/*
 * Loudness matching. The gain never lifts a peak past full scale, and an item whose peak is unknown is never
 * turned up; items with no tags and no analysis play as they are. A change is heard at once (the now-playing item restarts where it is).
 */
ambience_status ambience_music_set_loudness_matching(ambience_engine *engine, ambience_loudness_matching mode);
ambience_status ambience_music_get_loudness_matching(ambience_engine *engine, ambience_loudness_matching *out_mode);

/* ============================================================================================================ */
/* The system music player: the desktop's own player (any MPRIS player: mpv, VLC, Rhythmbox, Spotify)            */

/*
 * It drives the player named with ambience_system_music_set_player when that one is on the session bus, else the
 * one the game last sent a queue or command to, else the one playing, else the one most recently active. Without a
 * session bus every call succeeds and does nothing; ambience_system_music_is_available tells. Commands return at
 * once: their effect shows in the state a moment later.
 *
 * The player the game drives is the game's music (see ambience_system_music_set_game_music): any command, a file
 * opened, or a player named makes it so. It never sets the "silence secondary audio" hint (a game that quiets its
 * soundtrack on the hint cannot pause the very music it plays), an unplug pauses it with the game's audio, and at
 * shutdown it is paused when the game started it playing or handed it music (ambience_system_music_open). Music
 * that was playing when the game started, and only paused and played again through the game, stays the user's and
 * is left playing at exit.
 */
ambience_status ambience_system_music_is_available(ambience_engine *engine, bool *out_available);
/* The bus name ("org.mpris.MediaPlayer2.mpv") or short name ("mpv") of the player to drive; NULL forgets it. */
ambience_status ambience_system_music_set_player(ambience_engine *engine, const char *name);
/*
 * Whether the desktop player is the game's music (the iOS "iPod player"). Set it true before the first
 * ambience_update when the game plays its soundtrack through the system player, so that music playing then is never
 * taken for the user's; set it false when the game goes back to its own player, so the desktop player is the
 * user's again. Commands sent through the system music player set it true.
 */
ambience_status ambience_system_music_set_game_music(ambience_engine *engine, bool is_game_music);
ambience_status ambience_system_music_get_game_music(ambience_engine *engine, bool *out_game_music);
ambience_status ambience_system_music_play(ambience_engine *engine);
ambience_status ambience_system_music_pause(ambience_engine *engine);
ambience_status ambience_system_music_stop(ambience_engine *engine);
ambience_status ambience_system_music_next(ambience_engine *engine);
ambience_status ambience_system_music_previous(ambience_engine *engine);
ambience_status ambience_system_music_set_time(ambience_engine *engine, double seconds);
ambience_status ambience_system_music_get_time(ambience_engine *engine, double *out_seconds);
ambience_status ambience_system_music_get_state(ambience_engine *engine, ambience_playback_state *out_state);
/* A tag of the player's current track (title, artist, album), copied into the caller's buffer; "" when unknown. */
ambience_status ambience_system_music_get_now_playing_tag(ambience_engine *engine, ambience_tag tag, char *buffer,
                                                          size_t buffer_size, size_t *required);
/* Opens one file in the player (MPRIS OpenUri). AMBIENCE_ERROR_UNSUPPORTED when no player is running. */
ambience_status ambience_system_music_open(ambience_engine *engine, const char *path);

/* ============================================================================================================ */
/* The audio session: how the game's audio lives beside other apps' audio (the iOS rules)                       */

typedef enum ambience_session_category {
    AMBIENCE_CATEGORY_AMBIENT = 0,       /* mixes with the user's music; silenced in the background */
    AMBIENCE_CATEGORY_SOLO_AMBIENT = 1,  /* the default: other players paused at activation; silenced in background */
    AMBIENCE_CATEGORY_PLAYBACK = 2       /* keeps playing in the background; pauses others unless mixing */
} ambience_session_category;

/* Category options (bit flags for ambience_session_set_category). */
#define AMBIENCE_SESSION_MIX_WITH_OTHERS 0x1u
#define AMBIENCE_SESSION_DUCK_OTHERS 0x2u
/* Activation flags (for ambience_session_set_active). */
#define AMBIENCE_SESSION_NOTIFY_OTHERS_ON_DEACTIVATION 0x1u

ambience_status ambience_session_set_category(ambience_engine *engine, ambience_session_category category,
                                              uint32_t options);
/*
 * Activates the session (applies the category's rules to other players and records what was already playing), or
 * deactivates it; deactivating with AMBIENCE_SESSION_NOTIFY_OTHERS_ON_DEACTIVATION resumes the players it paused.
 */
ambience_status ambience_session_set_active(ambience_engine *engine, bool active, uint32_t flags);
/*
 * The volume AMBIENCE_SESSION_DUCK_OTHERS turns other players down to, as a fraction of their own (0.3 by default).
 * Clamped to 0..1; NaN and infinities are AMBIENCE_ERROR_INVALID_ARGUMENT and change nothing. Players ducked at the
 * time move to the new volume at once.
 */
ambience_status ambience_session_set_others_ducked_volume(ambience_engine *engine, double volume);
ambience_status ambience_session_get_others_ducked_volume(ambience_engine *engine, double *out_volume);

typedef struct ambience_session_state {
    ambience_session_category category;
    uint32_t options;                               /* AMBIENCE_SESSION_MIX_WITH_OTHERS | ..._DUCK_OTHERS */
    bool is_active;
    bool is_other_audio_playing;                    /* another app makes sound (a stream or a playing player) */
    bool secondary_audio_should_be_silenced_hint;   /* the user's music plays: keep the soundtrack quiet */
    bool other_music_was_playing_at_launch;         /* a player was playing at first activation (left alone at exit) */
    bool is_output_silenced;                        /* backgrounded or screen locked, in a category that silences */
    bool is_backgrounded;
    bool is_interrupted;
    bool is_paused_for_route_change;                /* until ..._resume_ or ..._stop_after_route_change */
} ambience_session_state;

ambience_status ambience_session_get_state(ambience_engine *engine, ambience_session_state *out_state);
/* The name of the current output route ("offline", a device name, or "none"). */
ambience_status ambience_session_get_route(ambience_engine *engine, char *buffer, size_t buffer_size,
                                           size_t *required);
/* An interruption the game itself causes (an in-game video, voice chat), and its end. */
ambience_status ambience_session_begin_interruption(ambience_engine *engine);
ambience_status ambience_session_end_interruption(ambience_engine *engine);
/*
 * The window was minimized or hidden; and back. The screen lock the engine follows by itself (logind's LockedHint,
 * the ScreenSaver's ActiveChanged): it silences ambient and solo ambient as the background does, and is_output_silenced
 * says so.
 */
ambience_status ambience_session_enter_background(ambience_engine *engine);
ambience_status ambience_session_enter_foreground(ambience_engine *engine);
/* The game's answer to AMBIENCE_ROUTE_OLD_DEVICE_UNAVAILABLE: resumes app audio where it paused. */
ambience_status ambience_session_resume_after_route_change(ambience_engine *engine);
/*
 * The other answer, Stop: the voices the route change paused are rewound to their start and left paused (the handle
 * stays valid: ambience_voice_resume plays one again from the top; ambience_voice_stop frees it), and music the
 * session paused is stopped. Nothing of it comes back later; voices started afterwards play. Harmless when nothing
 * is paused for a route change.
 */
ambience_status ambience_session_stop_after_route_change(ambience_engine *engine);

/* ============================================================================================================ */
/* The media library: the user's music folders, indexed (tags, durations) in SQLite                            */

typedef struct ambience_scan_report {
    int64_t files;      /* audio files found (.ogg, .oga, .mp3, .wav, .flac, .opus), including those that failed */
    int64_t added;
    int64_t updated;
    int64_t removed;
    int64_t failed;     /* files that could not be indexed */
    int64_t warnings;   /* things worked around (bad tags, odd names, a rebuilt index, ...) */
    int64_t playlists;  /* .m3u / .m3u8 playlists in the library */
    double seconds;     /* how long the scan took */
} ambience_scan_report;

/*
 * Opens (or creates) the library index of `folders` (UTF-8 paths, copied; NULL or count 0: $XDG_MUSIC_DIR, else
 * ~/Music) at `database_path` (NULL: $XDG_CACHE_HOME/ambience/library.sqlite). The library belongs to the engine:
 * its change callback arrives in ambience_update, and it is closed with the engine. Queries only read the index.
 * An index that is damaged is moved aside (never over an older one) and rebuilt by the next scan; one that another
 * process keeps locked is waited for, then AMBIENCE_ERROR_LIBRARY, and kept. Errors: AMBIENCE_ERROR_LIBRARY.
 */
ambience_status ambience_library_open(ambience_engine *engine, const char *const *folders, size_t folder_count,
                                      const char *database_path, ambience_library **out_library);
/* Closes the library (stopping its change notifications). The handle is dead afterwards. */
ambience_status ambience_library_close(ambience_library *library);
/*
 * Scans the folders: new and changed files are read, unchanged ones are not, missing ones are removed (what a folder
 * that cannot be listed held is kept, and warned about). Bad files never stop a scan (they are counted in `failed`).
 * out_report may be NULL. Runs on the calling thread.
 */
ambience_status ambience_library_scan(ambience_library *library, ambience_scan_report *out_report);
/*
 * Measures the loudness (EBU R128, libebur128) of every item not measured yet (a changed file counts as new), and
 * the loudness of their albums; the music player uses it for items without loudness tags. Runs on the calling
 * thread; out_measured (may be NULL) receives how many items were measured.
 */
ambience_status ambience_library_analyze_loudness(ambience_library *library, int64_t *out_measured);
/*
 * Takes a listing of the library's songs, sorted by title: all of them when `filter` is NULL, else those whose
 * `filter_tag` (TITLE, ARTIST, ALBUM, ALBUM_ARTIST, GENRE or COMPOSER) contains `filter`, ignoring case and
 * diacritics. *out_count receives its length. The listing is what ..._get_item_tag reads and
 * ambience_music_set_queue_from_library queues; it stays until the next ambience_library_list.
 */
ambience_status ambience_library_list(ambience_library *library, ambience_tag filter_tag, const char *filter,
                                      size_t *out_count);
/* A tag of the listing's item `index`, copied into the caller's buffer ("" when the item has no such tag). */
ambience_status ambience_library_get_item_tag(ambience_library *library, size_t index, ambience_tag tag,
                                              char *buffer, size_t buffer_size, size_t *required);
/* Replaces the music player's queue with the library's current listing. */
ambience_status ambience_music_set_queue_from_library(ambience_engine *engine, ambience_library *library);
/*
 * Between begin and end (calls nest), folders are watched (inotify) and changes re-indexed as they happen; every
 * change, and every scan that changes the library, is reported once through the library-changed callback.
 */
ambience_status ambience_library_begin_change_notifications(ambience_library *library);
ambience_status ambience_library_end_change_notifications(ambience_library *library);

/* ============================================================================================================ */
/* Callbacks: called only from inside ambience_update(), on its thread. Set NULL to remove one.                  */
/* Every pointer a callback receives is owned by the engine and valid only until the callback returns.           */

typedef enum ambience_route_change_reason {
    AMBIENCE_ROUTE_NEW_DEVICE_AVAILABLE = 0,
    AMBIENCE_ROUTE_OLD_DEVICE_UNAVAILABLE = 1,  /* app audio is paused: ..._resume_ or ..._stop_after_route_change */
    AMBIENCE_ROUTE_CATEGORY_CHANGE = 2,
    AMBIENCE_ROUTE_OVERRIDE = 3,
    AMBIENCE_ROUTE_WAKE_FROM_SLEEP = 4,
    AMBIENCE_ROUTE_NO_SUITABLE_ROUTE_FOR_CATEGORY = 5,  /* no device at all: time keeps advancing on a null sink */
    AMBIENCE_ROUTE_CONFIGURATION_CHANGE = 6             /* moved to a new default device */
} ambience_route_change_reason;

typedef struct ambience_route {
    const char *name;    /* the device's human name, or "none" */
    const char *driver;  /* "pulseaudio", "dummy", "null", "offline", ... */
    const char *sink;    /* the sound server's sink name, or NULL when unknown */
} ambience_route;

typedef struct ambience_route_change {
    ambience_route_change_reason reason;
    ambience_route previous;
    ambience_route current;
} ambience_route_change;

typedef enum ambience_interruption {
    AMBIENCE_INTERRUPTION_BEGAN = 0,
    AMBIENCE_INTERRUPTION_ENDED = 1
} ambience_interruption;

typedef enum ambience_voice_end {
    AMBIENCE_VOICE_FINISHED = 0,  /* a one-shot played to its end (voices you stop are not reported) */
    AMBIENCE_VOICE_STOLEN = 1     /* a more important voice took its place */
} ambience_voice_end;

typedef struct ambience_media_item {
    const char *path;        /* never NULL */
    const char *title;       /* NULL when the file has no such tag (title falls back to the file name) */
    const char *artist;
    const char *album;
    double duration;         /* seconds, 0 when unknown */
    int32_t track_number;    /* 0 when unknown */
    uint64_t persistent_id;
} ambience_media_item;

/* The desktop services an engine uses. When one goes away the engine plays on without it and reconnects by itself. */
typedef enum ambience_media_service {
    AMBIENCE_SERVICE_SOUND_SERVER = 0,  /* PulseAudio or PipeWire-Pulse: devices, route changes, other apps' streams */
    AMBIENCE_SERVICE_SESSION_BUS = 1    /* D-Bus: other music players, the system music player, the game's MPRIS player */
} ambience_media_service;

typedef void (*ambience_route_change_callback)(void *userdata, const ambience_route_change *change);
/* should_resume is meaningful for AMBIENCE_INTERRUPTION_ENDED: the session has already resumed what it paused. */
typedef void (*ambience_interruption_callback)(void *userdata, ambience_interruption type, bool should_resume);
/* item is NULL when the queue ended or was emptied. */
typedef void (*ambience_now_playing_callback)(void *userdata, const ambience_media_item *item);
typedef void (*ambience_playback_state_callback)(void *userdata, ambience_playback_state state);
/* silence: the user's music started (true) or stopped; mute the soundtrack if you like, keep the effects. */
typedef void (*ambience_silence_hint_callback)(void *userdata, bool silence);
/* A queued file could not be played; the player moved on. path and message are UTF-8. */
typedef void (*ambience_playback_error_callback)(void *userdata, const char *path, const char *message);
typedef void (*ambience_voice_finished_callback)(void *userdata, ambience_voice voice, ambience_voice_end how);
/* The library's items or playlists changed: listings taken before are out of date. */
typedef void (*ambience_library_changed_callback)(void *userdata, ambience_library *library);
/* available false: the service went away; true: it is back and the engine uses it again. */
typedef void (*ambience_media_services_callback)(void *userdata, ambience_media_service service, bool available);

ambience_status ambience_set_route_change_callback(ambience_engine *engine, ambience_route_change_callback callback,
                                                   void *userdata);
ambience_status ambience_set_interruption_callback(ambience_engine *engine, ambience_interruption_callback callback,
                                                   void *userdata);
ambience_status ambience_set_now_playing_callback(ambience_engine *engine, ambience_now_playing_callback callback,
                                                  void *userdata);
ambience_status ambience_set_playback_state_callback(ambience_engine *engine,
                                                     ambience_playback_state_callback callback, void *userdata);
ambience_status ambience_set_silence_hint_callback(ambience_engine *engine, ambience_silence_hint_callback callback,
                                                   void *userdata);
ambience_status ambience_set_playback_error_callback(ambience_engine *engine,
                                                     ambience_playback_error_callback callback, void *userdata);
ambience_status ambience_set_voice_finished_callback(ambience_engine *engine,
                                                     ambience_voice_finished_callback callback, void *userdata);
ambience_status ambience_set_library_changed_callback(ambience_engine *engine,
                                                      ambience_library_changed_callback callback, void *userdata);
ambience_status ambience_set_media_services_callback(ambience_engine *engine,
                                                     ambience_media_services_callback callback, void *userdata);

/* ============================================================================================================ */
/* The log: the engine's diagnostics                                                                             */

/* Each level lets through itself and everything more serious. */
typedef enum ambience_log_level {
    AMBIENCE_LOG_ERROR = 0,    /* something the game asked for or relies on failed */
    AMBIENCE_LOG_WARNING = 1,  /* the default: something went wrong and the engine worked around it */
    AMBIENCE_LOG_INFO = 2,     /* what the engine did of its own accord: a service came or went, the output moved */
    AMBIENCE_LOG_DEBUG = 3     /* each decision the session carried out */
} ambience_log_level;

/*
 * The least serious level logged, for the whole process. It starts as the environment variable AMBIENCE_LOG says
 * (error, warning, info or debug), else AMBIENCE_LOG_WARNING. A value that is not a level is
 * AMBIENCE_ERROR_INVALID_ARGUMENT.
 */
ambience_status ambience_set_log_level(ambience_log_level level);
ambience_status ambience_get_log_level(ambience_log_level *out_level);

/* message is one line of UTF-8 ("output: the device is gone; rendering to nothing"), without a newline. */
typedef void (*ambience_log_callback)(void *userdata, ambience_log_level level, const char *message);

/*
 * Takes the engine's diagnostics over from stderr. Until a callback is set, each message is written to stderr at
 * once as "ambience: LEVEL: message". Once set, messages from any thread wait (up to 1024; past that the newest are
 * dropped and a warning says how many) and the callback receives them inside ambience_update, on its thread, in
 * order, like every other callback. While any engine has a log callback, nothing is written to stderr. NULL gives
 * the messages back to stderr, as do ambience_engine_shutdown and ambience_engine_destroy.
 */
ambience_status ambience_set_log_callback(ambience_engine *engine, ambience_log_callback callback, void *userdata);

#ifdef __cplusplus
}
#endif

#endif /* AMBIENCE_H */
