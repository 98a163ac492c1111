/*
 * registry — the node types sluice runs, as the table the engine takes.
 *
 * The engine knows no node type by name (engine/node.h): every caller that
 * loads a graph (the CLI, the server, tests, benches) passes &sl_nodes.
 */
#ifndef SL_REGISTRY_H
#define SL_REGISTRY_H

#include "engine/node.h"

/* find: each type in src/nodes/; known: the rest of Dify's node types. */
extern const sl_node_kinds sl_nodes;

/* The i-th type sluice runs, in the table's order; NULL past the last
 * (for lists shown to people, such as sluice --help). */
const sl_node_kind *sl_nodes_nth(size_t i);

#endif
