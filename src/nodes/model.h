/*
 * model — what the LLM-driven nodes (llm, parameter-extractor,
 * question-classifier) share: the node's `model` field checked at load
 * (the provider must be configured; the message says which setting to
 * add), its completion_params turned into request params, and one call
 * that streams, uses the run's tape, adds usage and price to the node and
 * the run, and fails the node with a clear message.
 */
#ifndef SL_NODES_MODEL_H
#define SL_NODES_MODEL_H

#include "llm/llm.h"
#include "engine/node.h"

/* Load-time check of data.model. */
int sl_model_check(sl_check *c, const struct sl_gnode *n);
/* The same for a model value elsewhere ({provider, name | model,
 * completion_params}, as agent nodes' model selectors carry); `field`
 * names it in messages. */
int sl_model_check_value(sl_check *c, const struct sl_gnode *n, const sl_value *m,
                         const char *field);

/* Fills req's "model" and "params" from the node's data.model and calls.
 * On failure the node has failed (sl_exec_fail) and -1 is returned.
 * *resp (new reference) gets "usage" extended with prices and latency. */
int sl_model_call(sl_node_exec *x, sl_value *req, const sl_llm_stream *stream, sl_value **resp);
/* The same with the model value m instead of data.model. */
int sl_model_call_with(sl_node_exec *x, const sl_value *m, sl_value *req,
                       const sl_llm_stream *stream, sl_value **resp);

/* Request params from data.model.completion_params (new object). */
sl_value *sl_model_params(const sl_value *model);

/* Vision: the image files of data.vision's variable (default sys.files)
 * join the last message when it is the user's, else a new user message;
 * by URL, or as data: URLs from their bytes.  Files used are appended to
 * `used` (may be NULL). */
int sl_model_add_images(sl_node_exec *x, sl_value *msgs, sl_value *used);

/* The conversation's earlier turns as prompt text ("Human: …\nAssistant:
 * …"), the memory window's last `size` of them; "" without memory or
 * history.  Heap string. */
char *sl_model_history_text(sl_node_exec *x);
/* The first of n earlier turns the memory window keeps. */
size_t sl_model_history_from(const sl_value *memory, size_t n);

/* The text of a value for a prompt (strings as they are, others as JSON). */
void sl_model_text(const sl_value *v, sl_buf *out);

#endif
