/* core/opt: one table parses argv in one pass and prints the usage. */
#include <stdlib.h>
#include <string.h>

#include "core/opt.h"
#include "tap.h"

enum { O_QUIET = 1, O_INPUT, O_OUT };

static const sl_opt opts[] = {
    {"--input", NULL, "NAME=VALUE", "a start input\n(repeatable)", O_INPUT},
    {"-o", NULL, "OUT", "the file to write", O_OUT},
    {"--quiet", "-q", NULL, "no progress", O_QUIET},
    {NULL, NULL, NULL, NULL, 0},
};

static const sl_optspec spec = {"sluice t", "usage: sluice t FILE\n", opts, "end\n", false};

typedef struct {
    char seen[256];
    int refuse; /* an id the callback refuses */
} log_t;

static int record(void *ud, int id, const char *v)
{
    log_t *l = ud;
    size_t n = strlen(l->seen);
    snprintf(l->seen + n, sizeof l->seen - n, "%d:%s;", id, v ? v : "-");
    return id == l->refuse ? -1 : 0;
}

static int parse(const sl_optspec *s, log_t *l, int *next, int argc, char **argv)
{
    memset(l->seen, 0, sizeof l->seen);
    FILE *saved = stdout;
    stdout = fopen("/dev/null", "w"); /* --help's usage */
    int rc = sl_opt_parse(s, argc, argv, 1, record, l, next);
    fclose(stdout);
    stdout = saved;
    return rc;
}

int main(void)
{
    log_t l = {.refuse = -9};
    char *a1[] = {"t", "f.yml", "--input", "x=1", "-q", "--quiet", "-o", "o.txt", "-"};
    CHECK(parse(&spec, &l, NULL, 9, a1) == SL_OPT_OK, "a valid argv parses");
    CHECK(!strcmp(l.seen, "0:f.yml;2:x=1;1:-;1:-;3:o.txt;0:-;"),
          "every word reaches the callback once, in order, both spellings (%s)", l.seen);

    char *a2[] = {"t", "--bogus"};
    CHECK(parse(&spec, &l, NULL, 2, a2) == SL_OPT_BAD, "an unknown option is refused");
    char *a3[] = {"t", "--input"};
    CHECK(parse(&spec, &l, NULL, 2, a3) == SL_OPT_BAD && !*l.seen,
          "an option without its value is refused");
    char *a4[] = {"t", "--input=x"};
    CHECK(parse(&spec, &l, NULL, 2, a4) == SL_OPT_BAD, "--name=value is not a spelling");
    char *a5[] = {"t", "--input", "--help"};
    CHECK(parse(&spec, &l, NULL, 3, a5) == SL_OPT_OK && !strcmp(l.seen, "2:--help;"),
          "a value that looks like an option is the value");
    char *a6[] = {"t", "x", "-h", "--bogus"};
    CHECK(parse(&spec, &l, NULL, 4, a6) == SL_OPT_HELP, "-h asks for help before a later error");
    l.refuse = O_OUT;
    char *a7[] = {"t", "-o", "x", "-q"};
    CHECK(parse(&spec, &l, NULL, 4, a7) == SL_OPT_BAD && !strcmp(l.seen, "3:x;"),
          "the callback's refusal stops the parse");
    l.refuse = -9;

    sl_optspec stop = spec;
    stop.stop_at_arg = true;
    int next = 0;
    char *a8[] = {"t", "-q", "cmd", "-q"};
    CHECK(parse(&stop, &l, &next, 4, a8) == SL_OPT_OK && next == 2 && !strcmp(l.seen, "1:-;"),
          "stop_at_arg: the first other word ends the options (next %d)", next);
    char *a9[] = {"t", "-q", "--", "-q"};
    CHECK(parse(&stop, &l, &next, 4, a9) == SL_OPT_OK && next == 3, "and -- ends them too");

    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    sl_opt_usage(&spec, f);
    fclose(f);
    CHECK(!strcmp(text, "usage: sluice t FILE\n"
                        "  --input NAME=VALUE    a start input\n"
                        "                        (repeatable)\n"
                        "  -o OUT                the file to write\n"
                        "  -q, --quiet           no progress\n"
                        "end\n"),
          "the usage lists each option with its value and help");
    free(text);
    CHECK(sl_opt_find(opts, "-q") == &opts[2] && !sl_opt_find(opts, "--out"), "find by spelling");
    return tap_done();
}
