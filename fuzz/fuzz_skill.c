/*
 * fuzz_skill — libFuzzer target for the SKILL.md reader (agent/skills):
 * frontmatter fences, the YAML parse and its quoting fallback, the field
 * rules, the catalog and the warning records.
 *
 * The first byte picks the folder the skill sits in (none, one matching
 * the usual name, one that does not); the rest is SKILL.md.  Checks
 * besides memory errors: parsing is deterministic; a loaded skill has a
 * name and a non-blank description of at most 1024 characters; a skipped
 * one leaves nothing behind but a reason; the catalog is valid UTF-8 with
 * exactly its own ten tags (everything the file says is escaped); every
 * note becomes a warning record.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/skills.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t count_lt(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '<';
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 65536)
        return 0;
    static const char *const folders[] = {NULL, "pdf", "Some Folder"};
    const char *folder = folders[data[0] % 3];
    const char *text = (const char *)data + 1;
    size--;

    sl_skill a, b;
    sl_err ea = {0}, eb = {0};
    int ra = sl_skills_parse(text, size, folder, &a, &ea);
    int rb = sl_skills_parse(text, size, folder, &b, &eb);
    if (ra != rb)
        abort();
    if (ra < 0) {
        if (!ea.msg || !eb.msg || strcmp(ea.msg, eb.msg) || a.name || a.description || a.nnotes)
            abort();
    } else {
        if (!a.name || !*a.name || !a.description || strcmp(a.name, b.name) ||
            strcmp(a.description, b.description) || a.nnotes != b.nnotes || a.folder || a.location)
            abort();
        size_t chars = 0;
        for (const unsigned char *p = (const unsigned char *)a.description; *p; p++)
            chars += (*p & 0xC0) != 0x80;
        if (chars > SL_SKILLS_DESCRIPTION_MAX)
            abort();
        bool blank = true;
        for (const char *p = a.description; *p && blank; p++)
            blank = strchr(" \t\r\n\f\v", *p) != NULL;
        if (blank)
            abort();

        a.location = sl_xstrdup("/skills/x/SKILL.md");
        sl_skill_warning *w = calloc(a.nnotes ? a.nnotes : 1, sizeof *w);
        for (size_t i = 0; i < a.nnotes; i++)
            w[i] = (sl_skill_warning){.folder = "x", .path = "/skills/x/SKILL.md",
                                      .reason = a.notes[i]};
        sl_skills s = {.v = &a, .n = 1, .warnings = w, .nwarnings = a.nnotes};
        sl_buf cat;
        sl_buf_init(&cat, 0);
        sl_skills_catalog(&s, &cat);
        if (!cat.data || !sl_utf8_valid(cat.data, cat.len) || count_lt(cat.data) != 10 ||
            cat.len != strlen(cat.data))
            abort();
        sl_value *wj = sl_skills_warnings(&s);
        if (json_array_size(wj) != a.nnotes)
            abort();
        for (size_t i = 0; i < a.nnotes; i++)
            if (!json_is_string(json_object_get(json_array_get(wj, i), "message")))
                abort();
        json_decref(wj);
        sl_buf_release(&cat);
        free(w);
    }
    sl_skill_release(&a);
    sl_skill_release(&b);
    sl_err_clear(&ea);
    sl_err_clear(&eb);
    return 0;
}
