/*
 * mhd — see mhd.h.
 */
#include "server/mhd.h"

#include "core/dl.h"

#define SL_MHD_DEF(f) __typeof__(sl_mhd_##f) sl_mhd_##f;
SL_MHD_FNS(SL_MHD_DEF)

#define SL_MHD_SYM(f) {#f, (void **)&sl_mhd_##f},
static const sl_dl_sym mhd_syms[] = {SL_MHD_FNS(SL_MHD_SYM){NULL, NULL}};
static const char *const mhd_names[] = {"libmicrohttpd.so.12", "libmicrohttpd.so", NULL};
static sl_dl_lib mhd_lib = {.what = "libmicrohttpd", .sonames = mhd_names,
                            .package = "libmicrohttpd12", .syms = mhd_syms};

int sl_mhd_load(sl_err *err)
{
    return sl_dl_load(&mhd_lib, err);
}
