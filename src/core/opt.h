/*
 * opt — a command's options as one table: the table parses argv in one
 * pass and prints the command's usage, so the two cannot drift apart.
 *
 * Spellings are exact words: "--input VALUE", never "--input=VALUE" or
 * clustered short letters.  "--help" and "-h" are every command's own.
 */
#ifndef SL_OPT_H
#define SL_OPT_H

#include <stdbool.h>
#include <stdio.h>

/* One option.  A table ends with an entry whose name is NULL. */
typedef struct sl_opt {
    const char *name;  /* "--input", or a short-only spelling ("-o") */
    const char *alias; /* another spelling ("-q" for "--quiet"), or NULL */
    const char *arg;   /* the value's placeholder ("NAME=VALUE"); NULL: takes none */
    const char *help;  /* usage text; '\n' continues it on the next line */
    int id;            /* what the parse callback is told; SL_OPT_ARG is taken */
} sl_opt;

/* The id a parse callback gets for a word that is not an option. */
#define SL_OPT_ARG 0

/* A command: its messages' prefix, its usage around the option lines. */
typedef struct sl_optspec {
    const char *cmd;     /* "sluice run": starts every message and usage line */
    const char *head;    /* usage before the option lines (ends with '\n') */
    const sl_opt *opts;  /* the table */
    const char *tail;    /* usage after the option lines, or NULL */
    bool stop_at_arg;    /* the first word that is no option, or "--", ends options */
} sl_optspec;

/* Called once per option (id, its value or NULL) and per other word
 * (SL_OPT_ARG, the word), in argv order.  Returns 0, or -1 after printing
 * what is wrong on stderr: parsing stops there. */
typedef int (*sl_opt_fn)(void *ud, int id, const char *value);

enum { SL_OPT_OK = 0, SL_OPT_HELP = 1, SL_OPT_BAD = -1 };

/* Parses argv[first..argc) in one pass.  SL_OPT_HELP when --help or -h came
 * (the usage is printed on stdout); SL_OPT_BAD after a message on stderr
 * naming the word (an unknown option, a missing value, or fn's -1).  With
 * stop_at_arg, *next is the index of the first word left (after "--");
 * next may be NULL. */
int sl_opt_parse(const sl_optspec *s, int argc, char **argv, int first, sl_opt_fn fn, void *ud,
                 int *next);

/* Writes the usage: head, one line (or more) per option, tail. */
void sl_opt_usage(const sl_optspec *s, FILE *f);

/* The table's entry for the word `a` (either spelling), or NULL. */
const sl_opt *sl_opt_find(const sl_opt *opts, const char *a);

#endif
