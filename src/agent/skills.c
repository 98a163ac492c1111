/*
 * skills — see skills.h.  The rules are the agentskills.io specification's
 * (field names and limits) with the leniency of its client guide (warn on
 * cosmetic problems, skip only what cannot be used).
 */
#include "agent/skills.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dsl/yaml.h"

/* What the model reads before the catalog: how to use a skill.  The
 * agent's tools read files, so activation is reading SKILL.md. */
static const char CATALOG_INTRO[] =
    "The following skills provide specialized instructions for specific tasks.\n"
    "When a task matches a skill's description, read the SKILL.md at its location\n"
    "(with your file-read tool, or cat) before you go on.  Paths a skill mentions\n"
    "are relative to its folder (the one holding SKILL.md); use absolute paths in\n"
    "tool calls.\n\n";

/* ---------------------------------------------------------------- text */

static size_t utf8_chars(const char *s)
{
    size_t n = 0, len = strlen(s);
    const unsigned char *p = (const unsigned char *)s;
    while (len) {
        bool ok;
        size_t k = sl_utf8_step(p, len, &ok);
        p += k, len -= k, n++;
    }
    return n;
}

/* The first `max` characters of s (heap). */
static char *utf8_cut(const char *s, size_t max)
{
    size_t len = strlen(s), at = 0;
    const unsigned char *p = (const unsigned char *)s;
    for (size_t n = 0; at < len && n < max; n++) {
        bool ok;
        at += sl_utf8_step(p + at, len - at, &ok);
    }
    return sl_xstrndup(s, at);
}

/* User text shown inside a message: at most 60 characters, control
 * characters as '?', so one message stays one short line. */
static char *disp(const char *s)
{
    char *cut = utf8_cut(s, 60);
    for (char *p = cut; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    if (strlen(cut) == strlen(s))
        return cut;
    char *r = sl_xasprintf("%s…", cut);
    free(cut);
    return r;
}

static bool blank(const char *s)
{
    for (; *s; s++)
        if (!strchr(" \t\r\n\f\v", *s))
            return false;
    return true;
}

static void note(sl_skill *sk, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(sl_skill *sk, const char *fmt, ...)
{
    char tmp[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    sk->notes = sl_xrealloc(sk->notes, (sk->nnotes + 1) * sizeof *sk->notes);
    sk->notes[sk->nnotes++] = sl_xstrdup(tmp);
}

/* A scalar as text (heap); NULL for null, arrays and objects. */
static char *scalar_text(const sl_value *v)
{
    if (!v || json_is_null(v) || json_is_array(v) || json_is_object(v))
        return NULL;
    if (json_is_string(v))
        return sl_xstrndup(json_string_value(v), json_string_length(v));
    sl_buf b;
    sl_buf_init(&b, 0);
    sl_value_text(v, &b);
    return sl_buf_detach(&b);
}

/* ---------------------------------------------------------------- frontmatter */

/* The line starting at t[i]: its length without the line end, and where
 * the next one starts. */
static size_t line_at(const char *t, size_t len, size_t i, size_t *next)
{
    const char *nl = memchr(t + i, '\n', len - i);
    size_t end = nl ? (size_t)(nl - t) : len;
    *next = nl ? end + 1 : len;
    if (end > i && t[end - 1] == '\r')
        end--;
    return end - i;
}

static bool is_fence(const char *s, size_t n)
{
    if (n < 3 || memcmp(s, "---", 3))
        return false;
    for (size_t i = 3; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t')
            return false;
    return true;
}

enum { FM_OK, FM_NONE, FM_OPEN };

/* Finds the frontmatter: [*from, *to) runs from the opening `---` line
 * (kept, so YAML sees a document start and line numbers match the file's)
 * to the start of the closing one. */
static int frontmatter(const char *t, size_t len, size_t *from, size_t *to)
{
    size_t i = 0, next;
    if (len >= 3 && !memcmp(t, "\xEF\xBB\xBF", 3))
        i = 3;
    if (!is_fence(t + i, line_at(t, len, i, &next)))
        return FM_NONE;
    *from = i;
    for (i = next; i < len; i = next) {
        size_t n = line_at(t, len, i, &next);
        if (is_fence(t + i, n)) {
            *to = i;
            return FM_OK;
        }
    }
    return FM_OPEN;
}

/* Skills written for other clients often hold `description: Use when: …`,
 * which YAML refuses (a colon and a space inside a plain value).  This
 * rewrites such top-level values as double-quoted strings; NULL when no
 * line needed it.  Line count is kept, so YAML errors keep their lines. */
static char *requote(const char *t, size_t len, size_t *outlen)
{
    sl_buf b;
    sl_buf_init(&b, 0);
    bool changed = false;
    size_t next;
    for (size_t i = 0; i < len; i = next) {
        size_t n = line_at(t, len, i, &next);
        const char *s = t + i;
        size_t k = 0;
        while (k < n && (strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-", s[k])))
            k++;
        size_t v = k + 1;
        while (v < n && (s[v] == ' ' || s[v] == '\t'))
            v++;
        size_t e = n;
        while (e > v && (s[e - 1] == ' ' || s[e - 1] == '\t'))
            e--;
        bool plain = k > 0 && k + 1 < n && s[k] == ':' && (s[k + 1] == ' ' || s[k + 1] == '\t') &&
                     v < e && !strchr("\"'|>[{&*!%@`#", s[v]);
        bool colon = false;
        for (size_t j = v; plain && j < e && !colon; j++)
            colon = s[j] == ':' && (j + 1 == e || s[j + 1] == ' ' || s[j + 1] == '\t');
        if (plain && colon) {
            sl_buf_add(&b, s, k);
            sl_buf_adds(&b, ": \"");
            for (size_t j = v; j < e; j++) {
                if (s[j] == '"' || s[j] == '\\')
                    sl_buf_addc(&b, '\\');
                sl_buf_addc(&b, s[j]);
            }
            sl_buf_addc(&b, '"');
            sl_buf_add(&b, s + n, next - i - n); /* the line end as it was */
            changed = true;
        } else {
            sl_buf_add(&b, s, next - i);
        }
    }
    if (!changed) {
        sl_buf_release(&b);
        return NULL;
    }
    *outlen = b.len;
    return sl_buf_detach(&b);
}

/* ---------------------------------------------------------------- fields */

static const char *const KNOWN[] = {"name", "description", "license", "compatibility",
                                    "metadata", "allowed-tools", NULL};

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void check_unknown(sl_skill *sk, sl_value *root)
{
    const char *key;
    sl_value *v;
    const char **unknown = NULL;
    size_t n = 0;
    json_object_foreach(root, key, v) {
        bool known = false;
        for (const char *const *k = KNOWN; *k && !known; k++)
            known = strcmp(key, *k) == 0;
        if (!known) {
            unknown = sl_xrealloc(unknown, (n + 1) * sizeof *unknown);
            unknown[n++] = key;
        }
    }
    if (!n)
        return;
    qsort(unknown, n, sizeof *unknown, cmp_str);
    sl_buf list;
    sl_buf_init(&list, 0);
    for (size_t i = 0; i < n && i < 5; i++) {
        char *d = disp(unknown[i]);
        sl_buf_addf(&list, "%s`%s`", i ? ", " : "", d);
        free(d);
    }
    if (n > 5)
        sl_buf_addf(&list, " and %zu more", n - 5);
    note(sk, "unknown frontmatter field%s %s ignored; the spec knows name, description, license, "
             "compatibility, metadata and allowed-tools (put your own keys under metadata)",
         n > 1 ? "s" : "", list.data);
    sl_buf_release(&list);
    free(unknown);
}

static void check_name(sl_skill *sk, const char *folder)
{
    const char *s = sk->name;
    char *d = disp(s);
    size_t chars = utf8_chars(s);
    if (chars > SL_SKILLS_NAME_MAX)
        note(sk, "the name is %zu characters long; the spec allows at most %d (shorten it)", chars,
             SL_SKILLS_NAME_MAX);
    bool bad = false;
    for (const char *p = s; *p && !bad; p++)
        bad = !((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-');
    if (bad)
        note(sk, "the name `%s` should use only lowercase letters, digits and hyphens", d);
    size_t len = strlen(s);
    if (len && (s[0] == '-' || s[len - 1] == '-'))
        note(sk, "the name `%s` should not start or end with a hyphen", d);
    if (strstr(s, "--"))
        note(sk, "the name `%s` should not hold two hyphens in a row", d);
    if (folder && strcmp(s, folder)) {
        char *f = disp(folder);
        note(sk, "the name `%s` differs from its folder `%s`; rename one so they match", d, f);
        free(f);
    }
    free(d);
}

/* An optional text field: absent -> NULL; not text -> NULL and a note. */
static char *opt_text(sl_skill *sk, sl_value *root, const char *key)
{
    sl_value *v = json_object_get(root, key);
    if (!v || json_is_null(v))
        return NULL;
    char *s = scalar_text(v);
    if (!s)
        note(sk, "`%s` is not text; ignored", key);
    return s;
}

static char *allowed_tools(sl_skill *sk, sl_value *root)
{
    sl_value *v = json_object_get(root, "allowed-tools");
    if (!json_is_array(v))
        return opt_text(sk, root, "allowed-tools");
    /* A YAML list (as some clients write it) becomes the spec's string. */
    sl_buf b;
    sl_buf_init(&b, 0);
    size_t i;
    sl_value *item;
    json_array_foreach(v, i, item) {
        char *s = scalar_text(item);
        if (!s) {
            note(sk, "`allowed-tools` item %zu is not text; ignored", i + 1);
            continue;
        }
        if (b.len)
            sl_buf_addc(&b, ' ');
        sl_buf_adds(&b, s);
        free(s);
    }
    return sl_buf_detach(&b);
}

static sl_value *metadata(sl_skill *sk, sl_value *root)
{
    sl_value *v = json_object_get(root, "metadata");
    if (!v || json_is_null(v))
        return NULL;
    if (!json_is_object(v)) {
        note(sk, "`metadata` is not a mapping of keys to text; ignored");
        return NULL;
    }
    sl_value *m = json_object();
    const char *key;
    sl_value *item;
    json_object_foreach(v, key, item) {
        char *s = scalar_text(item);
        if (!s) {
            char *d = disp(key);
            note(sk, "`metadata.%s` is not text; ignored", d);
            free(d);
            continue;
        }
        json_object_set_new(m, key, json_string(s));
        free(s);
    }
    return m;
}

static int skip(sl_skill *sk, sl_err *err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int skip(sl_skill *sk, sl_err *err, const char *fmt, ...)
{
    char tmp[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    sl_skill_release(sk);
    return sl_err_set(err, SL_EPARSE, "%s", tmp);
}

int sl_skills_parse(const char *text, size_t len, const char *folder, sl_skill *out, sl_err *err)
{
    memset(out, 0, sizeof *out);
    size_t from = 0, to = 0;
    int fm = frontmatter(text, len, &from, &to);
    if (fm == FM_NONE)
        return skip(out, err, "SKILL.md does not start with a `---` line opening the frontmatter; "
                              "begin it with ---, name: and description: lines, then ---");
    if (fm == FM_OPEN)
        return skip(out, err, "the frontmatter has no closing `---` line; add one after the "
                              "description");

    sl_yaml_doc doc;
    sl_err yerr = {0};
    if (sl_yaml_parse_ex(text + from, to - from, "SKILL.md", &doc, true, &yerr) < 0) {
        size_t qlen;
        char *q = requote(text + from, to - from, &qlen);
        sl_err qerr = {0};
        int rc = q ? sl_yaml_parse_ex(q, qlen, "SKILL.md", &doc, true, &qerr) : -1;
        free(q);
        sl_err_clear(&qerr);
        if (rc < 0) {
            rc = skip(out, err, "the frontmatter is not valid YAML (%s); fix it", yerr.msg);
            sl_err_clear(&yerr);
            return rc;
        }
        note(out, "the frontmatter is not valid YAML (%s); it loaded with values holding `: ` read "
                  "as quoted text: put such values in quotes",
             yerr.msg);
        sl_err_clear(&yerr);
    }
    sl_value *root = doc.root;
    if (!json_is_object(root) && !json_is_null(root)) {
        sl_yaml_doc_release(&doc);
        return skip(out, err, "the frontmatter is not a mapping of `key: value` lines; write "
                              "name: and description: lines between the --- lines");
    }
    if (json_is_null(root)) {
        sl_yaml_doc_release(&doc);
        return skip(out, err, "the frontmatter has no description; add `description: <what the "
                              "skill does and when to use it>`");
    }

    sl_value *dv = json_object_get(root, "description");
    char *desc = scalar_text(dv);
    if (!desc || blank(desc)) {
        bool other = dv && !json_is_null(dv) && !desc;
        bool empty = desc != NULL;
        free(desc);
        sl_yaml_doc_release(&doc);
        if (other)
            return skip(out, err, "the description is not text; write it as one string");
        if (empty)
            return skip(out, err, "the description is empty; say what the skill does and when "
                                  "to use it");
        return skip(out, err, "the frontmatter has no description; add `description: <what the "
                              "skill does and when to use it>`");
    }
    size_t dchars = utf8_chars(desc);
    if (dchars > SL_SKILLS_DESCRIPTION_MAX) {
        note(out, "the description is %zu characters long; the spec allows %d and the catalog "
                  "shows only the first %d (shorten it)",
             dchars, SL_SKILLS_DESCRIPTION_MAX, SL_SKILLS_DESCRIPTION_MAX);
        char *cut = utf8_cut(desc, SL_SKILLS_DESCRIPTION_MAX);
        free(desc);
        desc = cut;
    }
    out->description = desc;

    char *name = scalar_text(json_object_get(root, "name"));
    if (!name || !*name) {
        free(name);
        if (!folder || !*folder) {
            sl_yaml_doc_release(&doc);
            return skip(out, err, "the frontmatter has no name; add `name: <skill-name>`");
        }
        char *d = disp(folder);
        note(out, "the frontmatter has no name; the folder name `%s` stands in (add `name: %s`)", d,
             d);
        free(d);
        name = sl_xstrdup(folder);
    }
    out->name = name;
    check_name(out, folder);

    out->license = opt_text(out, root, "license");
    out->compatibility = opt_text(out, root, "compatibility");
    if (out->compatibility) {
        size_t c = utf8_chars(out->compatibility);
        if (c > SL_SKILLS_COMPATIBILITY_MAX)
            note(out, "`compatibility` is %zu characters long; the spec allows at most %d "
                      "(shorten it)",
                 c, SL_SKILLS_COMPATIBILITY_MAX);
    }
    out->allowed_tools = allowed_tools(out, root);
    out->metadata = metadata(out, root);
    check_unknown(out, root);
    sl_yaml_doc_release(&doc);
    return 0;
}

void sl_skill_release(sl_skill *sk)
{
    if (!sk)
        return;
    free(sk->name);
    free(sk->description);
    free(sk->license);
    free(sk->compatibility);
    free(sk->allowed_tools);
    if (sk->metadata)
        json_decref(sk->metadata);
    free(sk->folder);
    free(sk->location);
    for (size_t i = 0; i < sk->nnotes; i++)
        free(sk->notes[i]);
    free(sk->notes);
    memset(sk, 0, sizeof *sk);
}

/* ---------------------------------------------------------------- loading */

static void warn(sl_skills *s, const char *folder, const char *path, bool skipped,
                 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void warn(sl_skills *s, const char *folder, const char *path, bool skipped,
                 const char *fmt, ...)
{
    char tmp[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    s->warnings = sl_xrealloc(s->warnings, (s->nwarnings + 1) * sizeof *s->warnings);
    s->warnings[s->nwarnings++] = (sl_skill_warning){
        .folder = sl_xstrdup(folder), .path = sl_xstrdup(path), .reason = sl_xstrdup(tmp),
        .skipped = skipped};
}

/* Reads up to SL_SKILLS_READ_CAP bytes of an open file; *more when the file
 * is longer than that. */
static char *read_capped(int fd, size_t size, size_t *len, bool *more)
{
    size_t want = size < SL_SKILLS_READ_CAP ? size : SL_SKILLS_READ_CAP;
    char *p = sl_xmalloc(want + 1);
    size_t n = 0;
    while (n < want) {
        ssize_t r = read(fd, p + n, want - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            free(p);
            return NULL;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    p[n] = 0;
    *len = n;
    *more = size > SL_SKILLS_READ_CAP;
    return p;
}

/* A file in the folder whose name is SKILL.md in other letter case. */
static char *case_variant(int fd)
{
    int d = dup(fd);
    DIR *dir = d >= 0 ? fdopendir(d) : NULL;
    if (!dir) {
        if (d >= 0)
            close(d);
        return NULL;
    }
    char *found = NULL;
    struct dirent *e;
    while (!found && (e = readdir(dir)))
        if (!strcasecmp(e->d_name, "SKILL.md"))
            found = sl_xstrdup(e->d_name);
    closedir(dir);
    return found;
}

typedef struct {
    const char *dir, *sandbox;
    int dfd;
    sl_skills *out;
} loader;

/* 1 when `name` is a folder holding a SKILL.md (not following links). */
static bool has_skill(int dfd, const char *name)
{
    struct stat st;
    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
        return false;
    char *p = sl_xasprintf("%s/SKILL.md", name);
    bool ok = fstatat(dfd, p, &st, AT_SYMLINK_NOFOLLOW) == 0;
    free(p);
    return ok;
}

static void load_one(loader *L, const char *folder)
{
    sl_skills *s = L->out;
    char *dpath = sl_xasprintf("%s/%s", L->dir, folder);
    char *path = sl_xasprintf("%s/SKILL.md", dpath);
    struct stat st;
    int sub = -1, fd = -1;
    char *text = NULL;
    if (fstatat(L->dfd, folder, &st, AT_SYMLINK_NOFOLLOW) < 0)
        goto done;
    if (S_ISLNK(st.st_mode)) {
        /* Only a link to a folder could be a skill; others are not ours. */
        if (fstatat(L->dfd, folder, &st, 0) == 0 && S_ISDIR(st.st_mode))
            warn(s, folder, dpath, true,
                 "the skill folder is a symbolic link; sluice does not follow links out of the "
                 "skills folder: copy the skill in instead");
        goto done;
    }
    if (!S_ISDIR(st.st_mode))
        goto done;
    sub = openat(L->dfd, folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub < 0) {
        warn(s, folder, dpath, true, "cannot open the skill folder: %s", strerror(errno));
        goto done;
    }
    fd = openat(sub, "SKILL.md", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        if (e == ENOENT) {
            char *other = case_variant(sub);
            if (other)
                warn(s, folder, path, true,
                     "no SKILL.md, but a file named %s; rename it SKILL.md (in capitals)", other);
            free(other);
        } else if (e == ELOOP) {
            warn(s, folder, path, true,
                 "SKILL.md is a symbolic link; sluice does not follow links out of the skills "
                 "folder: put the file itself there");
        } else {
            warn(s, folder, path, true, "cannot open SKILL.md: %s", strerror(e));
        }
        goto done;
    }
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        warn(s, folder, path, true, "SKILL.md is not a regular file");
        goto done;
    }
    size_t len;
    bool more;
    text = read_capped(fd, (size_t)st.st_size, &len, &more);
    if (!text) {
        warn(s, folder, path, true, "cannot read SKILL.md: %s", strerror(errno));
        goto done;
    }
    size_t a, b;
    if (more && frontmatter(text, len, &a, &b) == FM_OPEN) {
        warn(s, folder, path, true,
             "SKILL.md is over 1 MiB and its frontmatter does not end within the first 1 MiB; "
             "keep the frontmatter short and at the top");
        goto done;
    }
    sl_skill sk;
    sl_err err = {0};
    if (sl_skills_parse(text, len, folder, &sk, &err) < 0) {
        warn(s, folder, path, true, "%s", err.msg);
        sl_err_clear(&err);
        goto done;
    }
    for (size_t i = 0; i < s->n; i++) {
        if (strcmp(s->v[i].name, sk.name))
            continue;
        char *f = disp(s->v[i].folder), *d = disp(sk.name);
        warn(s, folder, path, true,
             "the skill folder `%s` came first with the name `%s`; rename one of them", f, d);
        free(f);
        free(d);
        sl_skill_release(&sk);
        goto done;
    }
    for (size_t i = 0; i < sk.nnotes; i++)
        warn(s, folder, path, false, "%s", sk.notes[i]);
    sk.folder = sl_xstrdup(folder);
    sk.location = sl_xasprintf("%s/%s/SKILL.md", L->sandbox, folder);
    s->v = sl_xrealloc(s->v, (s->n + 1) * sizeof *s->v);
    s->v[s->n++] = sk;
done:
    free(text);
    if (fd >= 0)
        close(fd);
    if (sub >= 0)
        close(sub);
    free(dpath);
    free(path);
}

static int cmp_skill(const void *a, const void *b)
{
    return strcmp(((const sl_skill *)a)->name, ((const sl_skill *)b)->name);
}

int sl_skills_load(const char *skills_dir, const char *sandbox_dir, sl_skills *out, sl_err *err)
{
    memset(out, 0, sizeof *out);
    if (!skills_dir)
        return 0;
    int dfd = open(skills_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        if (errno == ENOENT)
            return 0;
        return sl_err_set(err, SL_EIO, "cannot read the skills folder %s: %s%s", skills_dir,
                          strerror(errno),
                          errno == ENOTDIR ? " (skills must be a folder of skill folders)" : "");
    }
    int d2 = dup(dfd);
    DIR *dir = d2 >= 0 ? fdopendir(d2) : NULL;
    if (!dir) {
        int e = errno;
        if (d2 >= 0)
            close(d2);
        close(dfd);
        return sl_err_set(err, SL_EIO, "cannot read the skills folder %s: %s", skills_dir,
                          strerror(e));
    }
    char **names = NULL;
    size_t n = 0;
    bool overflow = false;
    struct dirent *e;
    while ((e = readdir(dir))) {
        if (e->d_name[0] == '.') /* ., .. and hidden folders (.git) */
            continue;
        if (n == SL_SKILLS_MAX_ENTRIES) {
            overflow = true;
            break;
        }
        names = sl_xrealloc(names, (n + 1) * sizeof *names);
        names[n++] = sl_xstrdup(e->d_name);
    }
    closedir(dir);
    if (n)
        qsort(names, n, sizeof *names, cmp_str);

    char *sandbox = sl_xstrdup(sandbox_dir ? sandbox_dir : skills_dir);
    for (size_t k = strlen(sandbox); k > 0 && sandbox[k - 1] == '/'; k--)
        sandbox[k - 1] = 0;
    loader L = {.dir = skills_dir, .sandbox = sandbox, .dfd = dfd, .out = out};
    size_t over = 0;
    for (size_t i = 0; i < n; i++) {
        if (out->n >= SL_SKILLS_MAX)
            over += has_skill(dfd, names[i]);
        else
            load_one(&L, names[i]);
        free(names[i]);
    }
    free(names);
    free(sandbox);
    close(dfd);
    if (over)
        warn(out, "", skills_dir, true,
             "%zu more skill%s not loaded: sluice loads at most %d skills from one folder; "
             "remove the ones this app does not need",
             over, over > 1 ? "s were" : " was", SL_SKILLS_MAX);
    if (overflow)
        warn(out, "", skills_dir, false,
             "the skills folder has more than %d entries; only %d were looked at",
             SL_SKILLS_MAX_ENTRIES, SL_SKILLS_MAX_ENTRIES);
    if (out->n)
        qsort(out->v, out->n, sizeof *out->v, cmp_skill);
    return 0;
}

const sl_skill *sl_skills_find(const sl_skills *s, const char *name)
{
    if (!s || !s->n || !name)
        return NULL;
    sl_skill key = {.name = (char *)name};
    return bsearch(&key, s->v, s->n, sizeof *s->v, cmp_skill);
}

/* ---------------------------------------------------------------- output */

/* Text for a prompt: invalid UTF-8 replaced, &, < and > escaped, control
 * characters (which XML 1.0 refuses) as U+FFFD. */
static void xml_text(sl_buf *out, const char *s)
{
    sl_buf clean;
    sl_buf_init(&clean, 0);
    sl_utf8_clean(s, strlen(s), &clean);
    for (const char *p = clean.data ? clean.data : ""; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '&')
            sl_buf_adds(out, "&amp;");
        else if (c == '<')
            sl_buf_adds(out, "&lt;");
        else if (c == '>')
            sl_buf_adds(out, "&gt;");
        else if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f)
            sl_buf_adds(out, "\xEF\xBF\xBD");
        else
            sl_buf_addc(out, (char)c);
    }
    sl_buf_release(&clean);
}

void sl_skills_catalog(const sl_skills *s, sl_buf *out)
{
    if (!s || !s->n)
        return;
    sl_buf_adds(out, CATALOG_INTRO);
    sl_buf_adds(out, "<available_skills>\n");
    for (size_t i = 0; i < s->n; i++) {
        sl_buf_adds(out, "  <skill>\n    <name>");
        xml_text(out, s->v[i].name);
        sl_buf_adds(out, "</name>\n    <description>");
        xml_text(out, s->v[i].description);
        sl_buf_adds(out, "</description>\n    <location>");
        xml_text(out, s->v[i].location ? s->v[i].location : "");
        sl_buf_adds(out, "</location>\n  </skill>\n");
    }
    sl_buf_adds(out, "</available_skills>\n");
}

/* A JSON string from any bytes (folder names need not be UTF-8). */
static sl_value *jstr(const char *s)
{
    sl_buf b;
    sl_buf_init(&b, 0);
    sl_utf8_clean(s, strlen(s), &b);
    sl_value *v = json_stringn(b.data ? b.data : "", b.len);
    sl_buf_release(&b);
    return v ? v : json_string("");
}

sl_value *sl_skills_warnings(const sl_skills *s)
{
    sl_value *arr = json_array();
    for (size_t i = 0; s && i < s->nwarnings; i++) {
        const sl_skill_warning *w = &s->warnings[i];
        char *msg = sl_xasprintf("%s: %s%s", w->path, w->skipped ? "skipped: " : "", w->reason);
        sl_value *o = json_object();
        json_object_set_new(o, "folder", jstr(w->folder));
        json_object_set_new(o, "path", jstr(w->path));
        json_object_set_new(o, "reason", jstr(w->reason));
        json_object_set_new(o, "skipped", json_boolean(w->skipped));
        json_object_set_new(o, "message", jstr(msg));
        free(msg);
        json_array_append_new(arr, o);
    }
    return arr;
}

void sl_skills_release(sl_skills *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        sl_skill_release(&s->v[i]);
    free(s->v);
    for (size_t i = 0; i < s->nwarnings; i++) {
        free(s->warnings[i].folder);
        free(s->warnings[i].path);
        free(s->warnings[i].reason);
    }
    free(s->warnings);
    memset(s, 0, sizeof *s);
}
