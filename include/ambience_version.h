/*
 * ambience_version.h: the version of Ambience, the one source of it. ambience.h includes it; the Swift engine reads
 * it (the module CAmbienceVersion, Sources/CAmbienceVersion) without the C API's header, so the engine's version
 * takes no arrow from the engine to the C layer above it.
 */
#ifndef AMBIENCE_VERSION_H
#define AMBIENCE_VERSION_H

/*
 * The version this header belongs to: the one source of the library's version (Swift's Ambience.version, the
 * `ambience --version` command, ambience.pc and the soname libambience.so.<MAJOR> all read it). Compare with what
 * the library at run time reports: ambience_version() or ambience_get_version().
 */
#define AMBIENCE_VERSION_MAJOR 0
#define AMBIENCE_VERSION_MINOR 2
#define AMBIENCE_VERSION_PATCH 0
/* One number for comparisons at compile time: AMBIENCE_VERSION >= AMBIENCE_VERSION_NUM(0, 2, 0). */
#define AMBIENCE_VERSION_NUM(major, minor, patch) ((major) * 1000000 + (minor) * 1000 + (patch))
#define AMBIENCE_VERSION \
    AMBIENCE_VERSION_NUM(AMBIENCE_VERSION_MAJOR, AMBIENCE_VERSION_MINOR, AMBIENCE_VERSION_PATCH)

#endif /* AMBIENCE_VERSION_H */
