/*
 * buf — a growable byte buffer with a hard cap (like curl's dynbuf).
 *
 * The buffer owns its bytes and always keeps them NUL-terminated.  Every
 * append checks the cap; once an append would pass it, the buffer is marked
 * `toobig`, the append fails with -1 and later appends fail too, so callers
 * can append freely and check once.  cap 0 means SL_BUF_DEFAULT_CAP.
 */
#ifndef SL_BUF_H
#define SL_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define SL_BUF_DEFAULT_CAP ((size_t)64 << 20)

typedef struct {
    char *data;
    size_t len, alloc, cap;
    bool toobig;
    bool ext;              /* data is the caller's memory (sl_buf_init_on) */
} sl_buf;

void sl_buf_init(sl_buf *b, size_t cap);
/* Starts in the caller's memory mem[0..n) (typically a stack array, which
 * must outlive the buffer's use); moves to the heap only when it grows
 * past it.  Release and detach work as usual.  (Inline, as the next one:
 * templates make and drop such buffers for almost every value.) */
static inline void sl_buf_init_on(sl_buf *b, size_t cap, char *mem, size_t n)
{
    b->len = 0;
    b->cap = cap ? cap : SL_BUF_DEFAULT_CAP;
    b->toobig = false;
    if (n > 1) {
        b->data = mem;
        b->alloc = n;
        b->ext = true;
        mem[0] = '\0';
    } else {
        b->data = NULL;
        b->alloc = 0;
        b->ext = false;
    }
}
/* frees; buffer is reusable after init */
static inline void sl_buf_release(sl_buf *b)
{
    if (!b->ext)
        free(b->data);
    b->ext = false;
    b->data = NULL;
    b->len = b->alloc = 0;
    b->toobig = false;
}
void sl_buf_reset(sl_buf *b);              /* len = 0, keeps memory */
int sl_buf_add(sl_buf *b, const void *p, size_t n);
int sl_buf_adds(sl_buf *b, const char *s);
int sl_buf_addc(sl_buf *b, char c);
/* Appends code point cp as UTF-8; NUL, surrogates and values past
 * U+10FFFF become U+FFFD. */
int sl_buf_add_utf8(sl_buf *b, uint32_t cp);
int sl_buf_addf(sl_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends the rest of f, until its end or the buffer's cap (toobig says
 * which).  -1 when reading failed. */
int sl_buf_add_file(sl_buf *b, FILE *f);
char *sl_buf_detach(sl_buf *b);
/* The value of the hex digit c (0-15), or -1 when c is not one. */
static inline int sl_hex_digit(int c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}
/* An untrusted string fit to show in a message or on a terminal: control
 * characters (C0, DEL, C1 and the ESC that starts terminal sequences)
 * become \n, \t or \xNN, and a string longer than out holds ends in
 * "...".  out is always terminated (n >= 8). */
void sl_excerpt(const char *s, char *out, size_t n);            /* hands the string to the caller */

#endif
