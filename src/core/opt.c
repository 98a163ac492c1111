/*
 * opt — parse a command's argv and print its usage from one option table.
 */
#include "core/opt.h"

#include <string.h>

/* Option lines' help starts in this column, as the hand-made texts did. */
#define HELP_COL 24

const sl_opt *sl_opt_find(const sl_opt *opts, const char *a)
{
    for (const sl_opt *o = opts; o->name; o++)
        if (!strcmp(a, o->name) || (o->alias && !strcmp(a, o->alias)))
            return o;
    return NULL;
}

static bool is_help(const char *a)
{
    return !strcmp(a, "--help") || !strcmp(a, "-h");
}

int sl_opt_parse(const sl_optspec *s, int argc, char **argv, int first, sl_opt_fn fn, void *ud,
                 int *next)
{
    int i = first;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (is_help(a)) {
            sl_opt_usage(s, stdout);
            return SL_OPT_HELP;
        }
        bool option = a[0] == '-' && a[1];
        if (s->stop_at_arg && (!option || !strcmp(a, "--"))) {
            i += option;
            break;
        }
        if (!option) {
            if (fn(ud, SL_OPT_ARG, a) < 0)
                return SL_OPT_BAD;
            continue;
        }
        const sl_opt *o = sl_opt_find(s->opts, a);
        if (!o) {
            fprintf(stderr, "%s: unknown option '%s' (see %s --help)\n", s->cmd, a, s->cmd);
            return SL_OPT_BAD;
        }
        const char *v = NULL;
        if (o->arg) {
            if (i + 1 >= argc) {
                fprintf(stderr, "%s: %s needs a value (see %s --help)\n", s->cmd, a, s->cmd);
                return SL_OPT_BAD;
            }
            v = argv[++i];
        }
        if (fn(ud, o->id, v) < 0)
            return SL_OPT_BAD;
    }
    if (next)
        *next = i;
    return SL_OPT_OK;
}

void sl_opt_usage(const sl_optspec *s, FILE *f)
{
    fputs(s->head, f);
    for (const sl_opt *o = s->opts; o->name; o++) {
        int w = fprintf(f, "  %s%s%s%s%s", o->alias ? o->alias : "", o->alias ? ", " : "",
                        o->name, o->arg ? " " : "", o->arg ? o->arg : "");
        /* a long spelling keeps its help on the next line */
        if (w > HELP_COL - 2) {
            fputc('\n', f);
            w = 0;
        }
        fprintf(f, "%*s", HELP_COL - w, "");
        for (const char *h = o->help; *h; h++) {
            fputc(*h, f);
            if (*h == '\n')
                fprintf(f, "%*s", HELP_COL, "");
        }
        fputc('\n', f);
    }
    if (s->tail)
        fputs(s->tail, f);
}
