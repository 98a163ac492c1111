/* core/archive: the table is filled from core/dl's symbol list. */
#define SL_ARCHIVE_NO_MACROS
#include "core/archive.h"

#include "core/dl.h"

sl_archive_api sl_archive;

#define SL_ARCHIVE_SYM(f) {#f, (void **)&sl_archive.f},
static const sl_dl_sym archive_syms[] = {SL_ARCHIVE_FNS(SL_ARCHIVE_SYM){NULL, NULL}};
static const char *const archive_names[] = {"libarchive.so.13", "libarchive.so", NULL};
static sl_dl_lib archive_lib = {.what = "libarchive", .sonames = archive_names,
                                .package = "libarchive13", .syms = archive_syms};

int sl_archive_load(sl_err *err)
{
    return sl_dl_load(&archive_lib, err);
}

void sl_archive_utf8_enter(sl_archive_utf8 *u)
{
    u->loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
    u->old = u->loc ? uselocale(u->loc) : (locale_t)0;
}

void sl_archive_utf8_leave(sl_archive_utf8 *u)
{
    if (u->loc) {
        uselocale(u->old);
        freelocale(u->loc);
    }
}
