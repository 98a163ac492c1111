/*
 * fuzz_extract_xls — libFuzzer target for the .xls reader (extract/xls.c,
 * extract/sheet.c, under extract/cfb.c).  An input that is a compound
 * file is read as it is; any other input is taken as the Workbook
 * stream's BIFF8 records and put in a compound file here first, so that
 * mutations reach the records rather than the container.  Besides memory
 * errors the target checks that the reader either fails with a message
 * or gives text no longer than max_output, and that a failure leaves the
 * output as it was.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "extract/extract.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> 8 * i);
}

static void put16(uint8_t *p, unsigned v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void dir_entry(uint8_t *e, const char *name, int type, uint32_t child, uint32_t start,
                      uint32_t size)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < n; i++)
        e[2 * i] = (uint8_t)name[i];
    put16(e + 64, (unsigned)(2 * n + 2));
    e[66] = (uint8_t)type;
    e[67] = 1;
    put32(e + 68, 0xFFFFFFFF);
    put32(e + 72, 0xFFFFFFFF);
    put32(e + 76, child);
    put32(e + 116, start);
    put32(e + 120, size);
}

/* A version 3 compound file whose one stream "Workbook" is the input,
 * padded to the mini-stream cutoff; NULL when the input is too big. */
static uint8_t *wrap(const uint8_t *data, size_t size, size_t *len)
{
    size_t ssize = size < 4096 ? 4096 : size;
    size_t nsec = (ssize + 511) / 512;
    if (nsec + 2 > 127) /* one FAT sector */
        return NULL;
    *len = 512 * (1 + nsec + 2);
    uint8_t *f = calloc(1, *len);
    static const uint8_t sig[] = {0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1};
    memcpy(f, sig, sizeof sig);
    put16(f + 24, 0x3E);
    put16(f + 26, 3);
    put16(f + 28, 0xFFFE);
    put16(f + 30, 9);
    put16(f + 32, 6);
    put32(f + 44, 1);                        /* FAT sectors */
    put32(f + 48, (uint32_t)nsec);           /* first directory sector */
    put32(f + 56, 4096);                     /* mini-stream cutoff */
    put32(f + 60, 0xFFFFFFFE);               /* no mini FAT */
    put32(f + 68, 0xFFFFFFFE);               /* no DIFAT sectors */
    for (int i = 0; i < 109; i++)
        put32(f + 76 + 4 * i, i ? 0xFFFFFFFF : (uint32_t)nsec + 1);
    memcpy(f + 512, data, size);
    uint8_t *dir = f + 512 * (1 + nsec);
    dir_entry(dir, "Root Entry", 5, 1, 0xFFFFFFFE, 0);
    dir_entry(dir + 128, "Workbook", 2, 0xFFFFFFFF, 0, (uint32_t)ssize);
    for (int i = 2; i < 4; i++) {
        put32(dir + 128 * i + 68, 0xFFFFFFFF);
        put32(dir + 128 * i + 72, 0xFFFFFFFF);
        put32(dir + 128 * i + 76, 0xFFFFFFFF);
    }
    uint8_t *fat = f + 512 * (2 + nsec);
    for (size_t i = 0; i < 128; i++)
        put32(fat + 4 * i, 0xFFFFFFFF);
    for (size_t i = 0; i < nsec; i++)
        put32(fat + 4 * i, i + 1 < nsec ? (uint32_t)i + 1 : 0xFFFFFFFE);
    put32(fat + 4 * nsec, 0xFFFFFFFE);       /* the directory */
    put32(fat + 4 * (nsec + 1), 0xFFFFFFFD); /* the FAT */
    return f;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sl_extract_limits lim;
    sl_extract_limits_default(&lim);
    lim.max_output = 1 << 16;
    lim.max_member = 1 << 18;
    lim.max_unpacked = 1 << 19;
    static const uint8_t sig[] = {0xd0, 0xcf, 0x11, 0xe0};
    uint8_t *own = NULL;
    size_t len = size;
    if (!(size >= 4 && !memcmp(data, sig, 4))) {
        own = wrap(data, size, &len);
        if (!own)
            return 0;
    }
    sl_buf out;
    sl_buf_init(&out, 0);
    sl_buf_adds(&out, "keep");
    sl_err err = {0};
    int rc = sl_extract_text(SL_DOC_EXCEL, own ? own : data, len, &lim, &out, &err);
    if (rc && (!err.msg || !err.msg[0] || out.len != 4 || memcmp(out.data, "keep", 4)))
        abort(); /* a failure without a message, or that changed the output */
    if (!rc && out.len - 4 > lim.max_output)
        abort();
    sl_err_clear(&err);
    sl_buf_release(&out);
    free(own);
    return 0;
}
