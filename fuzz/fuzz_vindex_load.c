/*
 * fuzz_vindex_load — libFuzzer target for the saved vector index
 * (knowledge/vindex.c, sl_vindex_load).
 *
 * The input is the file, read from a memfd.  Besides memory errors the
 * target checks:
 *   - a load either succeeds or sets an error with a message and no index;
 *   - a loaded index answers an exact and an approximate search (with and
 *     without a filter) with at most k hits, ordered best first, scores
 *     within [-1, 1] (its rows are checked unit vectors);
 *   - saving it again and loading that gives the same count.
 * Seeds: fuzz/corpus/vindex_load/ (small saved indexes, one with a graph
 * and a removed row).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "knowledge/vindex.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool keep_odd(long long id, void *ud)
{
    (void)ud;
    return id & 1;
}

static void check_search(sl_vindex *ix, bool exact, sl_vindex_keep keep)
{
    int d = sl_vindex_dims(ix);
    float *q = calloc((size_t)d, sizeof(float));
    for (int i = 0; i < d; i++)
        q[i] = (float)(i % 3) - 1.0f;
    q[0] = 1;
    sl_vhit h[8];
    size_t n = 99;
    sl_err err = {0};
    if (sl_vindex_search(ix, q, 8, keep, NULL, exact, h, &n, &err)) {
        if (!err.msg)
            abort();
    } else {
        if (n > 8 || n > sl_vindex_count(ix))
            abort();
        for (size_t i = 0; i < n; i++) {
            if (!(h[i].score >= -1.01f && h[i].score <= 1.01f))
                abort();
            if (i && h[i].score > h[i - 1].score)
                abort();
            if (keep && !keep(h[i].id, NULL))
                abort();
        }
    }
    sl_err_clear(&err);
    free(q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("fuzz", MFD_CLOEXEC);
    if (fd < 0)
        return 0;
    if (size && write(fd, data, size) != (ssize_t)size)
        abort();
    lseek(fd, 0, SEEK_SET);
    sl_vindex *ix = (sl_vindex *)1;
    sl_err err = {0};
    int rc = sl_vindex_load(fd, &ix, &err);
    close(fd);
    if (rc) {
        if (!err.msg || ix)
            abort();
        sl_err_clear(&err);
        return 0;
    }
    check_search(ix, true, NULL);
    check_search(ix, false, NULL);
    check_search(ix, false, keep_odd);
    int fd2 = memfd_create("fuzz2", MFD_CLOEXEC);
    if (fd2 >= 0) {
        if (sl_vindex_save(ix, fd2, &err))
            abort();
        lseek(fd2, 0, SEEK_SET);
        sl_vindex *back = NULL;
        if (sl_vindex_load(fd2, &back, &err) || sl_vindex_count(back) != sl_vindex_count(ix))
            abort();
        sl_vindex_free(back);
        close(fd2);
    }
    sl_vindex_free(ix);
    return 0;
}
