/*
 * The tally of the C API's test programs: CHECK and OK count each check, a failure prints a FAIL line naming the
 * file, the line and the library's last error, and tally() prints "N passed, M failed" (the line the Swift suites
 * read) and returns the program's exit status. Each program includes it once.
 */
#ifndef AMBIENCE_TEST_CHECK_H
#define AMBIENCE_TEST_CHECK_H

#include "ambience.h"

#include <stdio.h>

static int passed, failed;

static void check_at(int ok, const char *file, int line, const char *what) {
    if (ok) {
        passed++;
    } else {
        failed++;
        fprintf(stderr, "FAIL %s:%d: %s (last error: \"%s\")\n", file, line, what, ambience_last_error());
    }
}
#define CHECK(cond) check_at((cond) ? 1 : 0, __FILE__, __LINE__, #cond)
#define OK(call) check_at((call) == AMBIENCE_OK, __FILE__, __LINE__, #call)

static int tally(void) {
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}

#endif
