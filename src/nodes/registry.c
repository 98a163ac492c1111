/*
 * registry — the table of node types sluice runs.
 *
 * Each node type lives in its own file and defines one `sl_node_kind`.
 * A type missing from this table is refused at load with its name (see
 * engine/graph.c), never skipped.
 */
#include "nodes/registry.h"

#include <string.h>

extern const sl_node_kind sl_kind_start, sl_kind_end, sl_kind_answer;
extern const sl_node_kind sl_kind_if_else;
extern const sl_node_kind sl_kind_variable_aggregator, sl_kind_variable_assigner_legacy;
extern const sl_node_kind sl_kind_assigner;
extern const sl_node_kind sl_kind_list_operator;
extern const sl_node_kind sl_kind_iteration, sl_kind_iteration_start;
extern const sl_node_kind sl_kind_loop, sl_kind_loop_start, sl_kind_loop_end;
extern const sl_node_kind sl_kind_http_request;
extern const sl_node_kind sl_kind_code, sl_kind_command;
extern const sl_node_kind sl_kind_llm;
extern const sl_node_kind sl_kind_parameter_extractor, sl_kind_question_classifier;
extern const sl_node_kind sl_kind_agent;
extern const sl_node_kind sl_kind_template_transform;
extern const sl_node_kind sl_kind_tool;
extern const sl_node_kind sl_kind_document_extractor;
extern const sl_node_kind sl_kind_knowledge_retrieval;

static const sl_node_kind *const kinds[] = {
    &sl_kind_start, &sl_kind_end, &sl_kind_answer,
    &sl_kind_if_else,
    &sl_kind_variable_aggregator, &sl_kind_variable_assigner_legacy,
    &sl_kind_assigner,
    &sl_kind_list_operator,
    &sl_kind_iteration, &sl_kind_iteration_start,
    &sl_kind_loop, &sl_kind_loop_start, &sl_kind_loop_end,
    &sl_kind_http_request,
    &sl_kind_code, &sl_kind_command,
    &sl_kind_llm, &sl_kind_parameter_extractor, &sl_kind_question_classifier,
    &sl_kind_agent,
    &sl_kind_template_transform,
    &sl_kind_tool,
    &sl_kind_document_extractor,
    &sl_kind_knowledge_retrieval,
};

static const sl_node_kind *find(const char *type)
{
    if (!type)
        return NULL;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(kinds[i]->type, type) == 0)
            return kinds[i];
    return NULL;
}

const sl_node_kind *sl_nodes_nth(size_t i)
{
    return i < sizeof kinds / sizeof kinds[0] ? kinds[i] : NULL;
}

static bool known(const char *type)
{
    static const char *const dify[] = {
        "start", "end", "answer", "llm", "knowledge-retrieval", "if-else", "code",
        "template-transform", "question-classifier", "http-request", "tool",
        "variable-aggregator", "variable-assigner", "assigner", "loop", "loop-start",
        "loop-end", "iteration", "iteration-start", "parameter-extractor",
        "document-extractor", "list-operator", "agent", "human-input", "command",
        "trigger-webhook", "trigger-schedule", "trigger-plugin", "datasource",
        "knowledge-index", NULL};
    for (const char *const *p = dify; *p; p++)
        if (strcmp(*p, type) == 0)
            return true;
    return false;
}

const sl_node_kinds sl_nodes = {find, known};
