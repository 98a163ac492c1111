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
 * The file's `sandbox` mapping is kept as it is for the engine, which
 * overlays each app's `sluice.sandbox` on it (see engine/graph.h).
 */
#ifndef SL_ENGINE_CONFIG_H
#define SL_ENGINE_CONFIG_H

#include <stdbool.h>

#include "core/err.h"
#include "llm/llm.h"

typedef struct sl_config sl_config;

/* Loads the process's configuration (path may be NULL: see above) and
 * makes it the one sl_config_get() returns.  Call before loading
 * workflows; a second call replaces the first. */
int sl_config_load(const char *path, sl_err *err);
/* The process's configuration; loaded from the environment on first use
 * when sl_config_load was not called. */
const sl_config *sl_config_get(void);

/* The endpoint and model name for a DSL model.  NULL when the provider is
 * not configured; `why` then says which setting to add. */
const sl_llm_endpoint *sl_config_resolve(const sl_config *c, const char *provider,
                                      const char *model, const char **model_out, char *why,
                                      size_t n);
/* While a tape is replayed no call leaves the process, so providers need
 * not be configured: unconfigured ones then resolve to a placeholder. */
void sl_config_offline(bool on);

/* The config file's `sandbox` mapping: the defaults for apps' sandboxes
 * (provider, network, limits) and each provider's settings
 * (sandbox.ssh, sandbox.e2b); NULL when the file has none.  Borrowed. */
const sl_value *sl_config_sandbox(const sl_config *c);

/* Price per million tokens for a model; false when the table has none. */
bool sl_config_price(const sl_config *c, const char *model, double *input, double *output,
                  const char **currency);

#endif
