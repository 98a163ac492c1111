/*
 * config — sluice's settings (sluice.yml): which endpoint serves the models
 * a workflow names, their prices, and the sandbox policy apps start from.
 *
 * Dify DSL files name a provider ("openai", "langgenius/openai/openai",
 * "deepseek", "openai_api_compatible", …) and a model.  sluice maps them to
 * endpoints from, in order:
 *   1. the config file (`--config FILE`, else $SLUICE_CONFIG, else
 *      ./sluice.yml when present):
 *        llm:
 *          providers:             # endpoints
 *            local: {style: openai, base_url: http://127.0.0.1:11434/v1,
 *                    api_key_env: LOCAL_KEY, connect_timeout: 10,
 *                    read_timeout: 600, retries: 3}
 *          aliases:               # DSL provider name -> a provider above
 *            openai_api_compatible: local
 *          models:                # "provider/model" or "model" -> override
 *            gpt-4o: {provider: local, name: llama3.1}
 *          prices:                # per million tokens
 *            gpt-4o-mini: {input: 0.15, output: 0.6, currency: USD}
 *   2. well-known environment variables: OPENAI_API_KEY / OPENAI_BASE_URL,
 *      ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL, DEEPSEEK_API_KEY,
 *      OPENROUTER_API_KEY, OLLAMA_BASE_URL, ZHIPUAI_API_KEY,
 *      SILICONFLOW_API_KEY, DASHSCOPE_API_KEY (tongyi), MOONSHOT_API_KEY;
 *   3. a catch-all endpoint for every other provider: SLUICE_LLM_BASE_URL,
 *      SLUICE_LLM_API_KEY, SLUICE_LLM_STYLE (openai|anthropic), and
 *      SLUICE_LLM_MODEL to run every model as that one.
 * API keys live only in endpoints; nothing here prints them.
 *
 * The file's `tools` mapping binds the tools DSL files name to real ones
 * (tools/binding.h, docs/tools.md).
 *
 * The file's `sandbox` mapping is kept as it is for the engine, which
 * overlays each app's `sluice.sandbox` on it (see engine/graph.h).
 *
 * The file's `knowledge` mapping binds the dataset ids of knowledge-retrieval
 * nodes to sluice knowledge bases or External Knowledge API services
 * (docs/knowledge.md):
 *        knowledge:
 *          datasets:
 *            6c7f…: my-kb        # a knowledge base by name or id
 *            9a1e…: {external: {endpoint: https://kb.example/api,
 *                     api_key_env: KB_KEY, knowledge_id: abc, top_k: 4,
 *                     score_threshold: 0.5, allow_private: false, timeout: 60}}
 */
#ifndef SL_ENGINE_CONFIG_H
#define SL_ENGINE_CONFIG_H

#include <stdbool.h>

#include "core/err.h"
#include "llm/llm.h"

/* Ownership: the caller (the CLI, the server, a test) loads the settings
 * once, lends them to every graph load (sl_graph_load_*) and run
 * (sl_run_opts.config) that uses them, and frees them after the last.
 * Nothing here is process-wide: two configurations may serve two runs at
 * once.  A configuration is read-only once lent, so runs on several
 * threads may share it.  Every reader takes NULL as "nothing configured". */
typedef struct sl_config sl_config;

/* Loads the settings: the environment's (see above), overlaid with the
 * file at path (NULL: $SLUICE_CONFIG, else ./sluice.yml when present).
 * *out is new (sl_config_free), NULL on failure. */
int sl_config_load(const char *path, sl_config **out, sl_err *err);
/* The settings of the environment alone (no file).  Never fails. */
sl_config *sl_config_env(void);
/* sl_config_load(NULL), or the environment alone when that file does not
 * load: for commands that judge or export a workflow without running it
 * (they say nothing of a broken sluice.yml; `sluice run` does).  New. */
sl_config *sl_config_default(void);
void sl_config_free(sl_config *c);

/* While a tape is replayed no call leaves the process, so providers need
 * not be configured: with on, unconfigured ones resolve to a placeholder.
 * Set it before lending the configuration. */
void sl_config_set_offline(sl_config *c, bool on);
bool sl_config_offline(const sl_config *c);  /* false for NULL */

/* Problems of this machine's configuration (a model provider not
 * configured) are errors when a load is meant to run; with on, loads
 * checked against c report them as warnings (sluice validate without
 * --strict judges the file alone).  Set it before lending c. */
void sl_config_set_lenient(sl_config *c, bool on);
/* Whether c is lenient; false for NULL. */
bool sl_config_lenient(const sl_config *c);

/* The endpoint and model name for a DSL model.  NULL when the provider is
 * not configured, with err (SL_ENOTFOUND) saying which setting to add.  The
 * endpoint is borrowed from c. */
const sl_llm_endpoint *sl_config_resolve(const sl_config *c, const char *provider,
                                         const char *model, const char **model_out,
                                         sl_err *err);

/* The config file's `sandbox` mapping: the defaults for apps' sandboxes
 * (provider, network, limits) and each provider's settings
 * (sandbox.ssh, sandbox.e2b); NULL when the file has none.  Borrowed. */
const sl_value *sl_config_sandbox(const sl_config *c);
/* The file's `store:` (a folder, sqlite:FOLDER or postgres://…), or NULL;
 * --data/--store and $SLUICE_STORE come first (cli). */
const char *sl_config_store(const sl_config *c);
/* The file's `files_dir`: the folder every machine mounts where apps'
 * bundle files are kept on a shared store (PostgreSQL), or NULL
 * ($SLUICE_FILES_DIR comes first). */
const char *sl_config_files_dir(const sl_config *c);
/* Whether app_id's runs are run again from the start when the process
 * running them is lost (its lease ran out): the file's
 * `retry_on_worker_loss`, true for every app or a list of app ids; off by
 * default, as a run may have had effects (an HTTP call, a message sent). */
bool sl_config_retry_on_worker_loss(const sl_config *c, const char *app_id);

/* The tool bindings of the file's `tools` mapping (never NULL for a
 * loaded configuration; NULL for c NULL).  Borrowed. */
struct sl_bindings;
const struct sl_bindings *sl_config_tools(const sl_config *c);
/* The same, to add bindings made in this process before c is lent. */
struct sl_bindings *sl_config_tools_edit(sl_config *c);
/* ---- knowledge bases ---- */

struct sl_kb;

/* One line of the file's knowledge.datasets.  Strings are borrowed from c. */
typedef struct {
    const char *dataset_id;     /* the id DSL files name */
    const char *kb;             /* a sluice knowledge base's name or id; NULL: external */
    /* external (Dify's External Knowledge API, knowledge/external.h) */
    const char *endpoint;
    const char *api_key;        /* NULL: none (a registered secret) */
    const char *knowledge_id;
    int top_k;                  /* 4 unless given */
    bool threshold_enabled;     /* score_threshold given */
    double score_threshold;
    bool allow_private;         /* the endpoint may be on this host or a private network */
    double timeout_s;           /* 60 unless given */
    const char *where;          /* "FILE:LINE:COL" of the line, for messages */
} sl_kb_binding;

/* The binding of a dataset id, or NULL when the file has none. */
const sl_kb_binding *sl_config_kb_binding(const sl_config *c, const char *dataset_id);
/* The knowledge bases the caller opened (knowledge/kb.h), which loads check
 * dataset ids against (a dataset id that is a knowledge base's own id or
 * name binds without a line); NULL: none open.  Borrowed; set it before
 * lending c. */
void sl_config_set_kb(sl_config *c, struct sl_kb *kb);
struct sl_kb *sl_config_kb(const sl_config *c);

/* Price per million tokens for a model; false when the table has none. */
bool sl_config_price(const sl_config *c, const char *model, double *input, double *output,
                     const char **currency);

#endif
