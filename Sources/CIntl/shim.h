// gettext as glibc has it (libintl.h): message catalogs for the demo game's text. Part of libc, so nothing to link.
#include <libintl.h>
#include <locale.h>
