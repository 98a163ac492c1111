#include "extract/cfb.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define ENDOFCHAIN 0xFFFFFFFEu
#define FREESECT 0xFFFFFFFFu
#define NOSTREAM 0xFFFFFFFFu
#define MAXREGSECT 0xFFFFFFFAu

typedef struct {
    char name[128];     /* UTF-8 */
    int type;           /* 0: unused */
    uint32_t left, right, child, start;
    uint64_t size;
} cfb_entry;

struct sl_cfb {
    const uint8_t *d;
    size_t len;
    const sl_extract_limits *lim;
    uint32_t ssz, cutoff;
    uint32_t nsect;                 /* sectors in the file */
    uint32_t *fat, nfat;            /* FAT entries */
    uint32_t *minifat, nminifat;
    uint32_t *ms, nms;              /* the mini stream's sectors */
    uint64_t ms_size;
    cfb_entry *ents;
    int nents;
    uint32_t *stack;                /* for tree walks, nents long */
    uint32_t *stamp, *mstamp, gen;  /* per sector and mini sector: the
                                     * read that last passed it (loops) */
};

static const uint8_t sig[8] = {0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1};

static uint32_t u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

int sl_cfb_is(const void *data, size_t len)
{
    return len >= 8 && !memcmp(data, sig, 8);
}

/* Sector s's bytes (ssz of them, or fewer for a last sector cut short:
 * *n says how many), or NULL when it is past the file's end. */
static const uint8_t *sector(const sl_cfb *f, uint32_t s, size_t *n)
{
    size_t off = ((size_t)s + 1) * f->ssz;
    if (s >= f->nsect || off >= f->len)
        return NULL;
    *n = f->len - off < f->ssz ? f->len - off : f->ssz;
    return f->d + off;
}

/* The FAT chain from start, into a new array (*out, *n); at most `max`
 * sectors (0: the file's count).  `what` names the chain in errors. */
static int fat_chain(const sl_cfb *f, uint32_t start, uint32_t **out, uint32_t *n,
                     const char *what, sl_err *err)
{
    *out = NULL;
    *n = 0;
    size_t alloc = 0;
    uint8_t *seen = sl_xcalloc((size_t)f->nsect + 1, 1);
    for (uint32_t s = start; s != ENDOFCHAIN;) {
        if (s == FREESECT && *n == 0)
            break; /* an empty chain written as FREESECT */
        if (s >= f->nsect || s > MAXREGSECT) {
            free(*out);
            free(seen);
            *out = NULL;
            return sl_err_set(err, SL_EPARSE,
                              "the compound file's %s chain points to sector %u, past the "
                              "file's %u sectors",
                              what, s, f->nsect);
        }
        if (seen[s]) {
            free(*out);
            free(seen);
            *out = NULL;
            return sl_err_set(err, SL_EPARSE, "the compound file's FAT chain of its %s loops",
                              what);
        }
        seen[s] = 1;
        if (*n == alloc) {
            alloc = alloc ? alloc * 2 : 16;
            *out = sl_xrealloc(*out, alloc * sizeof **out);
        }
        (*out)[(*n)++] = s;
        s = s < f->nfat ? f->fat[s] : ENDOFCHAIN;
        if (s == FREESECT) {
            free(*out);
            free(seen);
            *out = NULL;
            return sl_err_set(err, SL_EPARSE,
                              "the compound file's %s chain runs into a free sector", what);
        }
    }
    free(seen);
    return 0;
}

/* The bytes of the sectors of a chain, appended to b. */
static int chain_bytes(const sl_cfb *f, const uint32_t *c, uint32_t n, sl_buf *b,
                       const char *what, sl_err *err)
{
    for (uint32_t i = 0; i < n; i++) {
        size_t k;
        const uint8_t *p = sector(f, c[i], &k);
        if (!p || k < f->ssz)
            return sl_err_set(err, SL_EPARSE,
                              "the compound file is truncated: its %s's sector %u is past its "
                              "end",
                              what, c[i]);
        sl_buf_add(b, p, k);
    }
    return 0;
}

static void entry_name(cfb_entry *e, const uint8_t *p)
{
    unsigned nb = u16(p + 0x40);
    if (nb > 64)
        nb = 64;
    sl_buf b;
    char mem[sizeof e->name];
    sl_buf_init_on(&b, sizeof e->name - 1, mem, sizeof mem);
    for (unsigned i = 0; i + 1 < nb; i += 2) {
        uint32_t u = u16(p + i);
        if (!u)
            break;
        if (u >= 0xD800 && u < 0xDC00 && i + 3 < nb) {
            uint32_t v = u16(p + i + 2);
            if (v >= 0xDC00 && v < 0xE000) {
                sl_buf_add_utf8(&b, 0x10000 + ((u - 0xD800) << 10) + (v - 0xDC00));
                i += 2;
                continue;
            }
        }
        sl_buf_add_utf8(&b, u);
    }
    memcpy(e->name, b.data, b.len);
    e->name[b.len] = 0;
    sl_buf_release(&b);
}

static int check_tree(sl_cfb *f, sl_err *err);

void sl_cfb_free(sl_cfb *f)
{
    if (!f)
        return;
    free(f->fat);
    free(f->minifat);
    free(f->ms);
    free(f->ents);
    free(f->stack);
    free(f->stamp);
    free(f->mstamp);
    free(f);
}

sl_cfb *sl_cfb_open(const void *data, size_t len, const sl_extract_limits *lim, sl_err *err)
{
    const uint8_t *h = data;
    if (!sl_cfb_is(data, len)) {
        sl_err_set(err, SL_EPARSE, "not a compound file (no OLE2 signature at its start)");
        return NULL;
    }
    if (len < 512) {
        sl_err_set(err, SL_EPARSE, "the compound file is truncated: %zu bytes, shorter than its "
                   "512-byte header", len);
        return NULL;
    }
    unsigned major = u16(h + 0x1A), shift = u16(h + 0x1E);
    if (u16(h + 0x1C) != 0xFFFE || !((major == 3 && shift == 9) || (major == 4 && shift == 12)) ||
        u16(h + 0x20) != 6) {
        sl_err_set(err, SL_EPARSE,
                   "the compound file's header is not valid (version %u, sector shift %u)",
                   major, shift);
        return NULL;
    }
    sl_cfb *f = sl_xcalloc(1, sizeof *f);
    f->d = h;
    f->len = len;
    f->lim = lim;
    f->ssz = 1u << shift;
    f->cutoff = u32(h + 0x38);
    size_t ns = len > f->ssz ? (len - f->ssz + f->ssz - 1) / f->ssz : 0;
    f->nsect = ns > MAXREGSECT ? MAXREGSECT : (uint32_t)ns;
    uint32_t nfatsect = u32(h + 0x2C), ndifat = u32(h + 0x48);
    uint32_t per = f->ssz / 4;
    sl_buf b;
    sl_buf_init(&b, 0);
    uint32_t *c = NULL, n = 0;
    if (nfatsect > f->nsect || ndifat > f->nsect) {
        sl_err_set(err, SL_EPARSE,
                   "the compound file's header counts %u FAT and %u DIFAT sectors, but the "
                   "file has only %u sectors",
                   nfatsect, ndifat, f->nsect);
        goto fail;
    }
    /* the FAT's sectors: 109 in the header, the rest in the DIFAT chain */
    f->fat = sl_xmalloc(((size_t)nfatsect * per + 1) * sizeof *f->fat);
    uint32_t got = 0, dif = u32(h + 0x44), steps = 0;
    for (uint32_t i = 0; i < 109 && got < nfatsect; i++)
        f->fat[got++] = u32(h + 0x4C + 4 * i); /* sector ids first, bytes below */
    while (got < nfatsect) {
        size_t k;
        const uint8_t *p = dif <= MAXREGSECT ? sector(f, dif, &k) : NULL;
        if (!p || k < f->ssz) {
            sl_err_set(err, SL_EPARSE,
                       "the compound file's DIFAT ends (sector %u) before its %u FAT sectors "
                       "are listed",
                       dif, nfatsect);
            goto fail;
        }
        if (++steps > ndifat || steps > f->nsect) {
            sl_err_set(err, SL_EPARSE, "the compound file's DIFAT chain loops");
            goto fail;
        }
        for (uint32_t i = 0; i + 1 < per && got < nfatsect; i++)
            f->fat[got++] = u32(p + 4 * i);
        dif = u32(p + 4 * (per - 1));
    }
    /* fat[0..nfatsect) are sector ids: read them back to front into the
     * array so the ids are used before their slots are overwritten */
    uint32_t *ids = sl_xmalloc(((size_t)nfatsect + 1) * sizeof *ids);
    memcpy(ids, f->fat, (size_t)nfatsect * sizeof *ids);
    for (uint32_t i = 0; i < nfatsect; i++) {
        size_t k;
        const uint8_t *p = sector(f, ids[i], &k);
        if (!p || k < f->ssz) {
            sl_err_set(err, SL_EPARSE,
                       "the compound file is truncated: its FAT sector %u (number %u) is "
                       "past its end",
                       ids[i], i);
            free(ids);
            goto fail;
        }
        for (uint32_t j = 0; j < per; j++)
            f->fat[(size_t)i * per + j] = u32(p + 4 * j);
    }
    free(ids);
    f->nfat = nfatsect * per;

    /* the directory */
    if (fat_chain(f, u32(h + 0x30), &c, &n, "directory", err) ||
        chain_bytes(f, c, n, &b, "directory", err))
        goto fail;
    f->nents = (int)(b.len / 128);
    if (f->nents < 1) {
        sl_err_set(err, SL_EPARSE, "the compound file has no directory");
        goto fail;
    }
    f->ents = sl_xcalloc((size_t)f->nents, sizeof *f->ents);
    for (int i = 0; i < f->nents; i++) {
        const uint8_t *p = (const uint8_t *)b.data + (size_t)i * 128;
        cfb_entry *e = &f->ents[i];
        e->type = p[0x42];
        if (e->type != SL_CFB_STORAGE && e->type != SL_CFB_STREAM && e->type != SL_CFB_ROOT)
            e->type = 0;
        entry_name(e, p);
        e->left = u32(p + 0x44);
        e->right = u32(p + 0x48);
        e->child = u32(p + 0x4C);
        e->start = u32(p + 0x74);
        /* version 3 files may leave garbage in the size's high half */
        e->size = u32(p + 0x78);
        if (major == 4)
            e->size |= (uint64_t)u32(p + 0x7C) << 32;
    }
    if (f->ents[0].type != SL_CFB_ROOT) {
        sl_err_set(err, SL_EPARSE, "the compound file's first directory entry is not its root");
        goto fail;
    }
    f->stack = sl_xmalloc((size_t)f->nents * sizeof *f->stack);
    if (check_tree(f, err))
        goto fail;
    free(c);
    c = NULL;
    sl_buf_reset(&b);

    /* the mini FAT and the mini stream (the root's stream) */
    if (fat_chain(f, u32(h + 0x3C), &c, &n, "mini FAT", err) ||
        chain_bytes(f, c, n, &b, "mini FAT", err))
        goto fail;
    f->nminifat = (uint32_t)(b.len / 4);
    f->minifat = sl_xmalloc(((size_t)f->nminifat + 1) * sizeof *f->minifat);
    for (uint32_t i = 0; i < f->nminifat; i++)
        f->minifat[i] = u32((const uint8_t *)b.data + 4 * i);
    free(c);
    c = NULL;
    if (fat_chain(f, f->ents[0].start, &f->ms, &f->nms, "mini stream", err))
        goto fail;
    f->ms_size = f->ents[0].size;
    if (f->ms_size > (uint64_t)f->nms * f->ssz)
        f->ms_size = (uint64_t)f->nms * f->ssz;
    f->stamp = sl_xcalloc((size_t)f->nsect + 1, sizeof *f->stamp);
    f->mstamp = sl_xcalloc((size_t)(f->ms_size / 64) + 1, sizeof *f->mstamp);
    sl_buf_release(&b);
    return f;
fail:
    free(c);
    sl_buf_release(&b);
    sl_cfb_free(f);
    return NULL;
}

/* Checks once that the directory is a forest of trees: every entry
 * reached from the root is within the directory and reached once (a loop
 * or an entry shared by two storages would make walks endless or
 * quadratic).  Walks later need no such care. */
static int check_tree(sl_cfb *f, sl_err *err)
{
    uint8_t *seen = sl_xcalloc((size_t)f->nents, 1);
    /* storages still to walk (a stack) */
    int *dirs = sl_xmalloc((size_t)f->nents * sizeof *dirs);
    int nt = 0, rc = 0;
    dirs[nt++] = SL_CFB_ROOT_ENTRY;
    seen[SL_CFB_ROOT_ENTRY] = 1;
    while (nt && !rc) {
        int dir = dirs[--nt], sp = 0;
        uint32_t cur = f->ents[dir].child;
        for (;;) {
            while (cur != NOSTREAM) {
                if (cur >= (uint32_t)f->nents) {
                    rc = sl_err_set(err, SL_EPARSE,
                                    "the compound file's directory names entry %u, past its "
                                    "%d entries",
                                    cur, f->nents);
                    goto done;
                }
                if (seen[cur]) {
                    rc = sl_err_set(err, SL_EPARSE,
                                    "the compound file's directory tree loops (entry %u is "
                                    "reached twice)",
                                    cur);
                    goto done;
                }
                seen[cur] = 1;
                f->stack[sp++] = cur;
                cur = f->ents[cur].left;
            }
            if (!sp)
                break;
            uint32_t e = f->stack[--sp];
            if (f->ents[e].type == SL_CFB_STORAGE)
                dirs[nt++] = (int)e;
            cur = f->ents[e].right;
        }
    }
done:
    free(seen);
    free(dirs);
    return rc;
}

int sl_cfb_children(const sl_cfb *f, int dir, int *kids, int max, sl_err *err)
{
    (void)err; /* the tree was checked when the file was opened */
    if (dir < 0 || dir >= f->nents || !f->ents[dir].type || f->ents[dir].type == SL_CFB_STREAM)
        return 0;
    int sp = 0, count = 0;
    uint32_t cur = f->ents[dir].child;
    for (;;) {
        while (cur != NOSTREAM && cur < (uint32_t)f->nents && sp < f->nents) {
            f->stack[sp++] = cur;
            cur = f->ents[cur].left;
        }
        if (!sp)
            break;
        uint32_t e = f->stack[--sp];
        if (f->ents[e].type) {
            if (count < max)
                kids[count] = (int)e;
            count++;
        }
        cur = f->ents[e].right;
    }
    return count;
}

const char *sl_cfb_name(const sl_cfb *f, int i)
{
    return i >= 0 && i < f->nents ? f->ents[i].name : NULL;
}

int sl_cfb_type(const sl_cfb *f, int i)
{
    return i >= 0 && i < f->nents ? f->ents[i].type : 0;
}

uint64_t sl_cfb_size(const sl_cfb *f, int i)
{
    return i >= 0 && i < f->nents ? f->ents[i].size : 0;
}

int sl_cfb_find(const sl_cfb *f, int dir, const char *name)
{
    sl_err err = {0};
    int n = sl_cfb_children(f, dir, NULL, 0, &err);
    sl_err_clear(&err);
    if (n <= 0)
        return -1;
    int *kids = sl_xmalloc((size_t)n * sizeof *kids);
    int found = -1;
    if (sl_cfb_children(f, dir, kids, n, &err) == n)
        for (int i = 0; i < n && found < 0; i++) {
            const char *a = f->ents[kids[i]].name, *b = name;
            while (*a && *b && (*a | (*a >= 'A' && *a <= 'Z' ? 32 : 0)) ==
                                   (*b | (*b >= 'A' && *b <= 'Z' ? 32 : 0)))
                a++, b++;
            if (!*a && !*b)
                found = kids[i];
        }
    sl_err_clear(&err);
    free(kids);
    return found;
}

int sl_cfb_read(sl_cfb *f, int i, sl_buf *out, sl_err *err)
{
    if (i < 0 || i >= f->nents || f->ents[i].type != SL_CFB_STREAM)
        return sl_err_set(err, SL_EPARSE, "the compound file's entry %d is not a stream", i);
    const cfb_entry *e = &f->ents[i];
    if (e->size > f->lim->max_member)
        return sl_err_limit(err, SL_ELIMIT, "extract_max_member",
                            "the compound file's stream %s is %llu bytes, over %zu "
                            "(extract_max_member)",
                            e->name, (unsigned long long)e->size, f->lim->max_member);
    uint64_t left = e->size;
    uint32_t gen = ++f->gen;
    if (e->size < f->cutoff) {
        /* in the mini stream, 64-byte sectors chained by the mini FAT */
        uint64_t nmini = f->ms_size / 64;
        int rc = 0;
        for (uint32_t s = e->start; left > 0 && !rc;) {
            if (s >= nmini || s >= f->nminifat) {
                rc = sl_err_set(err, SL_EPARSE,
                                "the compound file's stream %s ends (mini sector %u) before "
                                "its %llu bytes",
                                e->name, s, (unsigned long long)e->size);
                break;
            }
            if (f->mstamp[s] == gen) {
                rc = sl_err_set(err, SL_EPARSE,
                                "the compound file's mini FAT chain of %s loops", e->name);
                break;
            }
            f->mstamp[s] = gen;
            uint64_t off = (uint64_t)s * 64;
            uint32_t sec = f->ms[off / f->ssz];
            size_t k;
            const uint8_t *p = sector(f, sec, &k);
            size_t in = (size_t)(off % f->ssz);
            size_t take = left < 64 ? (size_t)left : 64;
            if (!p || in + take > k) {
                rc = sl_err_set(err, SL_EPARSE,
                                "the compound file is truncated in its mini stream");
                break;
            }
            sl_buf_add(out, p + in, take);
            left -= take;
            s = f->minifat[s];
        }
        return rc;
    }
    int rc = 0;
    for (uint32_t s = e->start; left > 0;) {
        if (s >= f->nsect) {
            rc = sl_err_set(err, SL_EPARSE,
                            "the compound file's stream %s ends (sector %u) before its %llu "
                            "bytes",
                            e->name, s, (unsigned long long)e->size);
            break;
        }
        if (f->stamp[s] == gen) {
            rc = sl_err_set(err, SL_EPARSE, "the compound file's FAT chain of %s loops",
                            e->name);
            break;
        }
        f->stamp[s] = gen;
        size_t k;
        const uint8_t *p = sector(f, s, &k);
        size_t take = left < f->ssz ? (size_t)left : f->ssz;
        if (!p || take > k) {
            rc = sl_err_set(err, SL_EPARSE, "the compound file is truncated in stream %s",
                            e->name);
            break;
        }
        sl_buf_add(out, p, take);
        left -= take;
        s = s < f->nfat ? f->fat[s] : ENDOFCHAIN;
    }
    return rc;
}
