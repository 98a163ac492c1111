/*
 * pool — the variable pool of a run.
 *
 * Holds every published value by [node_id, name]: node outputs, sys.*,
 * env.*, conversation.*.  Pools are layered: an iteration or loop round gets
 * a child layer whose writes stay local and whose reads fall through to the
 * parent, so parallel rounds never see each other's values.
 *
 * Values in the pool are immutable once published (see core/value.h);
 * sl_pool_get returns a new reference.  A pool is safe to read and write
 * from several threads.
 */
#ifndef SL_POOL_H
#define SL_POOL_H

#include <pthread.h>

#include "core/map.h"
#include "core/value.h"

typedef struct sl_pool sl_pool;

sl_pool *sl_pool_new(sl_pool *parent);
/* Room for n node entries up front (a run knows its graph's size). */
void sl_pool_reserve(sl_pool *p, size_t n);
void sl_pool_free(sl_pool *p);

/* Publishes all outputs of a node (an object; steals). */
void sl_pool_set_node(sl_pool *p, const char *node_id, sl_value *outputs);
/* Sets one variable in this layer (steals). */
void sl_pool_set(sl_pool *p, const char *node_id, const char *name, sl_value *v);
/* Sets a variable in the nearest layer that holds node_id (conversation
 * vars, loop vars); returns -1 when no layer has it.  Steals v. */
int sl_pool_assign(sl_pool *p, const char *node_id, const char *name, sl_value *v);

/* Value at selector parts [node_id, name, path...]: new reference or NULL. */
sl_value *sl_pool_get(sl_pool *p, const char *const *parts, int nparts);
/* Same for a selector value (array of strings). */
sl_value *sl_pool_get_sel(sl_pool *p, const sl_value *selector);
/* The whole output object of a node in this layer or above (new ref). */
sl_value *sl_pool_node(sl_pool *p, const char *node_id);

/* A selector as Python prints a list, ['node', 'var'], the way Dify's
 * messages quote it (cut to fit n). */
void sl_pool_selector_text(const sl_value *selector, char *out, size_t n);

#endif
