/*
 * map — string-keyed hash map (open addressing, linear probing).
 *
 * Keys are copied into the map; values are opaque pointers the caller owns.
 * Not thread-safe: build it, then share it read-only.
 */
#ifndef SL_MAP_H
#define SL_MAP_H

#include <stddef.h>

typedef struct {
    char *key;
    void *val;
    unsigned hash;
} sl_map_slot;

typedef struct {
    sl_map_slot *slots;
    size_t n, cap;
} sl_map;

void sl_map_init(sl_map *m);
/* Makes room for n keys up front (no rehashing while they go in). */
void sl_map_reserve(sl_map *m, size_t n);
void sl_map_release(sl_map *m);
/* Returns the previous value (or NULL) and stores the new one. */
void *sl_map_put(sl_map *m, const char *key, void *val);
void *sl_map_get(const sl_map *m, const char *key);

#endif
