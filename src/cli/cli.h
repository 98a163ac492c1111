/*
 * cli — subcommands of the sluice command line, one entry point each.
 * Each returns the process exit status.
 */
#ifndef SL_CLI_H
#define SL_CLI_H

int sl_cli_sandbox(int argc, char **argv);
int sl_cli_serve(int argc, char **argv);
int sl_cli_app(int argc, char **argv);
int sl_cli_tools(int argc, char **argv);
int sl_cli_extract(int argc, char **argv);
int sl_cli_kb(int argc, char **argv);

/* The store in --data DIR (given may be NULL: $SLUICE_DATA, else
 * ./sluice-data), or NULL after saying why on stderr. */
struct sl_store;
struct sl_store *sl_cli_open_store(const char *given);

#endif
