#include "core/map.h"
#include "core/err.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static unsigned hash_str(const char *s)
{
    unsigned h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h ? h : 1;
}

void sl_map_init(sl_map *m)
{
    m->slots = NULL;
    m->n = m->cap = 0;
}

void sl_map_release(sl_map *m)
{
    for (size_t i = 0; i < m->cap; i++)
        free(m->slots[i].key);
    free(m->slots);
    sl_map_init(m);
}

static sl_map_slot *find(const sl_map *m, const char *key, unsigned h)
{
    size_t mask = m->cap - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        sl_map_slot *s = &m->slots[i];
        if (!s->key || (s->hash == h && strcmp(s->key, key) == 0))
            return s;
    }
}

static void grow(sl_map *m)
{
    sl_map_slot *old = m->slots;
    size_t oldcap = m->cap;
    m->cap = oldcap ? oldcap * 2 : 16;
    m->slots = sl_xcalloc(m->cap, sizeof *m->slots);
    for (size_t i = 0; i < oldcap; i++) {
        if (old[i].key) {
            sl_map_slot *s = find(m, old[i].key, old[i].hash);
            *s = old[i];
        }
    }
    free(old);
}

void sl_map_reserve(sl_map *m, size_t n)
{
    while ((n + 1) * 4 > m->cap * 3)
        grow(m);
}

void *sl_map_put(sl_map *m, const char *key, void *val)
{
    if ((m->n + 1) * 4 > m->cap * 3)
        grow(m);
    unsigned h = hash_str(key);
    sl_map_slot *s = find(m, key, h);
    if (s->key) {
        void *prev = s->val;
        s->val = val;
        return prev;
    }
    s->key = sl_xstrdup(key);
    s->hash = h;
    s->val = val;
    m->n++;
    return NULL;
}

void *sl_map_get(const sl_map *m, const char *key)
{
    if (!m->cap)
        return NULL;
    sl_map_slot *s = find(m, key, hash_str(key));
    return s->key ? s->val : NULL;
}
