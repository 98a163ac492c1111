/*
 * cli — subcommands of the sluice command line, one entry point each.
 * Each returns the process exit status.
 */
#ifndef SL_CLI_H
#define SL_CLI_H

int sl_cli_sandbox(int argc, char **argv);
int sl_cli_serve(int argc, char **argv);
int sl_cli_worker(int argc, char **argv);
int sl_cli_app(int argc, char **argv);
int sl_cli_tools(int argc, char **argv);
int sl_cli_extract(int argc, char **argv);
int sl_cli_kb(int argc, char **argv);
int sl_cli_store(int argc, char **argv);

/* Where the store is: --data/--store (given), else $SLUICE_STORE, else
 * $SLUICE_DATA, else the settings' `store:` (cfg may be NULL), else
 * ./sluice-data. */
struct sl_config;
const char *sl_cli_store_where(const char *given, const struct sl_config *cfg);
/* Keeps --data/--store's value in *slot; -1 after saying so when the
 * store was given already (cmd: "sluice serve"). */
int sl_cli_set_store(const char *cmd, const char **slot, const char *value);
/* The store there, or NULL after saying why on stderr. */
struct sl_store;
struct sl_store *sl_cli_open_store(const char *given, const struct sl_config *cfg);

#endif
