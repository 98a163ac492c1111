#include "engine/pool.h"
#include "core/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"

struct sl_pool {
    sl_pool *parent;
    pthread_rwlock_t lock;
    sl_map nodes; /* node id -> sl_value* object (owned) */
};

sl_pool *sl_pool_new(sl_pool *parent)
{
    sl_pool *p = sl_xcalloc(1, sizeof *p);
    p->parent = parent;
    pthread_rwlock_init(&p->lock, NULL);
    sl_map_init(&p->nodes);
    return p;
}

void sl_pool_reserve(sl_pool *p, size_t n)
{
    pthread_rwlock_wrlock(&p->lock);
    sl_map_reserve(&p->nodes, n);
    pthread_rwlock_unlock(&p->lock);
}

void sl_pool_free(sl_pool *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nodes.cap; i++)
        if (p->nodes.slots[i].key)
            json_decref(p->nodes.slots[i].val);
    sl_map_release(&p->nodes);
    pthread_rwlock_destroy(&p->lock);
    free(p);
}

void sl_pool_set_node(sl_pool *p, const char *node_id, sl_value *outputs)
{
    pthread_rwlock_wrlock(&p->lock);
    sl_value *old = sl_map_put(&p->nodes, node_id, outputs);
    pthread_rwlock_unlock(&p->lock);
    json_decref(old);
}

/* Published objects are immutable: replacing one variable means a shallow
 * copy of the node's object, so readers holding the old one are safe. */
static void set_locked(sl_pool *p, const char *node_id, const char *name, sl_value *v)
{
    sl_value *old = sl_map_get(&p->nodes, node_id);
    sl_value *obj = old ? json_copy(old) : json_object();
    json_object_set_new(obj, name, v);
    sl_map_put(&p->nodes, node_id, obj);
    json_decref(old);
}

void sl_pool_set(sl_pool *p, const char *node_id, const char *name, sl_value *v)
{
    pthread_rwlock_wrlock(&p->lock);
    set_locked(p, node_id, name, v);
    pthread_rwlock_unlock(&p->lock);
}

int sl_pool_assign(sl_pool *p, const char *node_id, const char *name, sl_value *v)
{
    for (sl_pool *l = p; l; l = l->parent) {
        pthread_rwlock_wrlock(&l->lock);
        if (sl_map_get(&l->nodes, node_id)) {
            set_locked(l, node_id, name, v);
            pthread_rwlock_unlock(&l->lock);
            return 0;
        }
        pthread_rwlock_unlock(&l->lock);
    }
    json_decref(v);
    return -1;
}

sl_value *sl_pool_node(sl_pool *p, const char *node_id)
{
    for (sl_pool *l = p; l; l = l->parent) {
        pthread_rwlock_rdlock(&l->lock);
        sl_value *o = sl_map_get(&l->nodes, node_id);
        if (o) {
            json_incref(o);
            pthread_rwlock_unlock(&l->lock);
            return o;
        }
        pthread_rwlock_unlock(&l->lock);
    }
    return NULL;
}

/* Walks a path below a variable: object keys, array indexes written as
 * numbers, and file attributes (files are objects). */
static sl_value *walk(sl_value *v, const char *part)
{
    if (json_is_object(v))
        return json_object_get(v, part);
    if (json_is_array(v)) {
        char *end;
        long i = strtol(part, &end, 10);
        if (*part && !*end && i >= 0)
            return json_array_get(v, (size_t)i);
    }
    return NULL;
}

sl_value *sl_pool_get(sl_pool *p, const char *const *parts, int nparts)
{
    if (nparts < 2)
        return NULL;
    sl_value *obj = sl_pool_node(p, parts[0]);
    if (!obj)
        return NULL;
    sl_value *v = json_object_get(obj, parts[1]);
    for (int i = 2; v && i < nparts; i++)
        v = walk(v, parts[i]);
    json_incref(v);
    json_decref(obj);
    return v;
}

sl_value *sl_pool_get_sel(sl_pool *p, const sl_value *selector)
{
    const char *parts[16];
    size_t n = json_array_size(selector);
    if (n < 2 || n > 16)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        parts[i] = json_string_value(json_array_get(selector, i));
        if (!parts[i])
            return NULL;
    }
    return sl_pool_get(p, parts, (int)n);
}

void sl_pool_selector_text(const sl_value *selector, char *out, size_t n)
{
    sl_buf b;
    sl_buf_init(&b, n);
    sl_buf_addc(&b, '[');
    for (size_t i = 0; i < json_array_size(selector); i++) {
        const char *part = json_string_value(json_array_get(selector, i));
        sl_buf_addf(&b, "%s'%s'", i ? ", " : "", part ? part : "?");
    }
    sl_buf_addc(&b, ']');
    snprintf(out, n, "%s", b.data ? b.data : "[]");
    sl_buf_release(&b);
}
