/*
 * skills — Agent Skills loading (agent/skills): SKILL.md frontmatter rules,
 * lenient warnings and skips with their reasons, folder scanning (links
 * refused, caps), the system-prompt catalog and its XML escaping.
 */
#include <errno.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/skills.h"
#include "tap.h"
#include "util.h"

static char root[64];

/* Writes root/rel (making the folders on the way). */
static void put(const char *rel, const char *text)
{
    char *path = sl_xasprintf("%s/%s", root, rel);
    for (char *p = path + strlen(root) + 1; *p; p++) {
        if (*p == '/') {
            *p = 0;
            mkdir(path, 0755);
            *p = '/';
        }
    }
    FILE *f = fopen(path, "wb");
    if (!f) {
        perror(path);
        abort();
    }
    fputs(text, f);
    fclose(f);
    free(path);
}

static char *at(const char *rel)
{
    return sl_xasprintf("%s/%s", root, rel);
}

/* Parses text as SKILL.md of `folder`; returns rc, fills *sk, err. */
static int parse(const char *text, const char *folder, sl_skill *sk, sl_err *err)
{
    sl_err_clear(err);
    return sl_skills_parse(text, strlen(text), folder, sk, err);
}

static bool has_note(const sl_skill *sk, const char *part)
{
    for (size_t i = 0; i < sk->nnotes; i++)
        if (strstr(sk->notes[i], part))
            return true;
    return false;
}

static void show_notes(const sl_skill *sk)
{
    for (size_t i = 0; i < sk->nnotes; i++)
        printf("#   note: %s\n", sk->notes[i]);
}

static void test_parse(void)
{
    sl_skill sk;
    sl_err err = {0};
    int rc = parse("---\nname: pdf\ndescription: Extract text from PDFs.\n---\n# PDF\n", "pdf", &sk,
                   &err);
    CHECK(rc == 0 && !strcmp(sk.name, "pdf") && !strcmp(sk.description, "Extract text from PDFs.") &&
              sk.nnotes == 0 && !sk.license && !sk.compatibility && !sk.allowed_tools &&
              !sk.metadata && !sk.folder && !sk.location,
          "minimal SKILL.md: name and description, no notes");
    sl_skill_release(&sk);

    rc = parse("---\nname: pdf\ndescription: d\nlicense: Apache-2.0\ncompatibility: needs poppler\n"
               "metadata:\n  author: example-org\n  version: 1.0\nallowed-tools: Bash(git:*) Read\n"
               "---\n",
               "pdf", &sk, &err);
    char *m = show(sk.metadata);
    CHECK(rc == 0 && !strcmp(sk.license, "Apache-2.0") && !strcmp(sk.compatibility, "needs poppler") &&
              !strcmp(sk.allowed_tools, "Bash(git:*) Read") &&
              !strcmp(m, "{\"author\":\"example-org\",\"version\":\"1.0\"}") && sk.nnotes == 0,
          "optional fields: license, compatibility, metadata as text (%s), allowed-tools", m);
    free(m);
    sl_skill_release(&sk);

    rc = parse("---\nname: pdf\ndescription: d\nallowed-tools: [Read, Bash]\n---\n", "pdf", &sk, &err);
    CHECK(rc == 0 && !strcmp(sk.allowed_tools, "Read Bash"), "allowed-tools as a YAML list is joined");
    sl_skill_release(&sk);

    rc = parse("\xEF\xBB\xBF---\r\nname: pdf\r\ndescription: crlf text\r\n---  \r\nbody\r\n", "pdf", &sk,
               &err);
    CHECK(rc == 0 && !strcmp(sk.description, "crlf text"), "a BOM, CRLF line ends and a --- with trailing spaces");
    sl_skill_release(&sk);

    rc = parse("---\nname: pdf\ndescription: >\n  folded\n  text\n---\n", "pdf", &sk, &err);
    CHECK(rc == 0 && !strcmp(sk.description, "folded text\n"), "a folded description (%s)",
          rc ? err.msg : esc(sk.description));
    sl_skill_release(&sk);

    rc = parse("---\nname: pdf\ndescription: d\n---", "pdf", &sk, &err);
    CHECK(rc == 0, "the closing --- may end the file");
    sl_skill_release(&sk);

    /* skipped: no frontmatter, unclosed, not YAML, not a mapping */
    rc = parse("# PDF\nname: pdf\n", "pdf", &sk, &err);
    CHECK(rc == -1 && err.code == SL_EPARSE &&
              !strcmp(err.msg, "SKILL.md does not start with a `---` line opening the frontmatter; "
                               "begin it with ---, name: and description: lines, then ---") &&
              !sk.name && !sk.nnotes,
          "no frontmatter: skipped (%s)", err.msg);
    rc = parse("", NULL, &sk, &err);
    CHECK(rc == -1 && strstr(err.msg, "does not start with"), "an empty file: skipped");
    rc = parse("\n---\nname: pdf\ndescription: d\n---\n", "pdf", &sk, &err);
    CHECK(rc == -1 && strstr(err.msg, "does not start with"), "frontmatter not on the first line: skipped");
    rc = parse("---\nname: pdf\ndescription: d\n", "pdf", &sk, &err);
    CHECK(rc == -1 && !strcmp(err.msg, "the frontmatter has no closing `---` line; add one after the description"),
          "unclosed frontmatter: skipped (%s)", err.msg);
    rc = parse("---\nname: pdf\ndescription: [unclosed\n---\n", "pdf", &sk, &err);
    CHECK(rc == -1 && !strncmp(err.msg, "the frontmatter is not valid YAML (SKILL.md:", 44) &&
              strstr(err.msg, "); fix it"),
          "unparsable YAML: skipped with the parser's place (%s)", err.msg);
    rc = parse("---\n- a\n- b\n---\n", "pdf", &sk, &err);
    CHECK(rc == -1 && strstr(err.msg, "not a mapping of `key: value` lines"), "a list as frontmatter: skipped (%s)",
          err.msg);

    /* the common invalid YAML from other clients: an unquoted colon */
    rc = parse("---\nname: pdf\ndescription: Use this skill when: the user asks \"about\" PDFs\n---\n",
               "pdf", &sk, &err);
    CHECK(rc == 0 && !strcmp(sk.description, "Use this skill when: the user asks \"about\" PDFs") &&
              sk.nnotes == 1 && has_note(&sk, "not valid YAML") && has_note(&sk, "put such values in quotes"),
          "description with `: ` loads as quoted text, with a note (%s)", rc ? err.msg : sk.description);
    show_notes(&sk);
    sl_skill_release(&sk);

    /* description: missing, empty, not text */
    const char *nodesc = "the frontmatter has no description; add `description: <what the skill does "
                         "and when to use it>`";
    rc = parse("---\nname: pdf\n---\n", "pdf", &sk, &err);
    CHECK(rc == -1 && !strcmp(err.msg, nodesc), "no description: skipped (%s)", err.msg);
    rc = parse("---\n---\n", "pdf", &sk, &err);
    CHECK(rc == -1 && !strcmp(err.msg, nodesc), "empty frontmatter: skipped as no description");
    rc = parse("---\nname: pdf\ndescription:\n---\n", "pdf", &sk, &err);
    CHECK(rc == -1 && !strcmp(err.msg, nodesc), "description: null: skipped as no description");
    rc = parse("---\nname: pdf\ndescription: \"  \"\n---\n", "pdf", &sk, &err);
    CHECK(rc == -1 && strstr(err.msg, "the description is empty"), "a blank description: skipped (%s)", err.msg);
    rc = parse("---\nname: pdf\ndescription: [a, b]\n---\n", "pdf", &sk, &err);
    CHECK(rc == -1 && strstr(err.msg, "the description is not text"), "a list description: skipped (%s)",
          err.msg);
    rc = parse("---\nname: pdf\ndescription: 42\n---\n", "pdf", &sk, &err);
    CHECK(rc == 0 && !strcmp(sk.description, "42"), "a number description reads as its text");
    sl_skill_release(&sk);

    /* description over 1024 characters: cut (by characters), kept */
    sl_buf b;
    sl_buf_init(&b, 0);
    sl_buf_adds(&b, "---\nname: pdf\ndescription: ");
    for (int i = 0; i < 1030; i++)
        sl_buf_adds(&b, "é");
    sl_buf_adds(&b, "\n---\n");
    rc = parse(b.data, "pdf", &sk, &err);
    CHECK(rc == 0 && strlen(sk.description) == 2048 &&
              has_note(&sk, "the description is 1030 characters long; the spec allows 1024"),
          "a 1030-character description loads, cut to 1024 characters, with a note");
    sl_skill_release(&sk);
    sl_buf_release(&b);

    /* name rules: warn, load anyway */
    struct {
        const char *name, *note;
    } names[] = {
        {"PDF_Tools", "should use only lowercase letters, digits and hyphens"},
        {"-pdf", "should not start or end with a hyphen"},
        {"pdf-", "should not start or end with a hyphen"},
        {"pdf--tools", "two hyphens in a row"},
        {"a234567890123456789012345678901234567890123456789012345678901234x",
         "the name is 65 characters long; the spec allows at most 64"},
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char *t = sl_xasprintf("---\nname: %s\ndescription: d\n---\n", names[i].name);
        rc = parse(t, names[i].name, &sk, &err);
        CHECK(rc == 0 && !strcmp(sk.name, names[i].name) && sk.nnotes == 1 && has_note(&sk, names[i].note),
              "name %s: loads with the note \"%s\"", names[i].name, names[i].note);
        if (rc == 0 && sk.nnotes != 1)
            show_notes(&sk);
        sl_skill_release(&sk);
        free(t);
    }
    rc = parse("---\nname: a234567890123456789012345678901234567890123456789012345678901234\n"
               "description: d\n---\n",
               "a234567890123456789012345678901234567890123456789012345678901234", &sk, &err);
    CHECK(rc == 0 && sk.nnotes == 0, "a 64-character name is fine");
    sl_skill_release(&sk);
    rc = parse("---\nname: data-tools\ndescription: d\n---\n", "data", &sk, &err);
    CHECK(rc == 0 && !strcmp(sk.name, "data-tools") && sk.nnotes == 1 &&
              !strcmp(sk.notes[0], "the name `data-tools` differs from its folder `data`; rename one so they match"),
          "name differs from the folder: loads under its name, with a note");
    sl_skill_release(&sk);
    rc = parse("---\nname: data-tools\ndescription: d\n---\n", NULL, &sk, &err);
    CHECK(rc == 0 && sk.nnotes == 0, "without a folder the name is not compared");
    sl_skill_release(&sk);
    rc = parse("---\ndescription: d\n---\n", "pdf", &sk, &err);
    CHECK(rc == 0 && !strcmp(sk.name, "pdf") && sk.nnotes == 1 &&
              !strcmp(sk.notes[0], "the frontmatter has no name; the folder name `pdf` stands in (add `name: pdf`)"),
          "no name: the folder's stands in, with a note");
    sl_skill_release(&sk);
    rc = parse("---\ndescription: d\n---\n", NULL, &sk, &err);
    CHECK(rc == -1 && !strcmp(err.msg, "the frontmatter has no name; add `name: <skill-name>`"),
          "no name and no folder: skipped");

    /* optional fields that break their rules */
    sl_buf_init(&b, 0);
    sl_buf_adds(&b, "---\nname: pdf\ndescription: d\ncompatibility: ");
    for (int i = 0; i < 501; i++)
        sl_buf_addc(&b, 'c');
    sl_buf_adds(&b, "\nlicense: [a]\nmetadata:\n  ok: yes\n  n: 3\n  nested: {a: 1}\n---\n");
    rc = parse(b.data, "pdf", &sk, &err);
    m = show(sk.metadata);
    CHECK(rc == 0 && strlen(sk.compatibility) == 501 && !sk.license &&
              has_note(&sk, "`compatibility` is 501 characters long; the spec allows at most 500") &&
              has_note(&sk, "`license` is not text; ignored") &&
              has_note(&sk, "`metadata.nested` is not text; ignored") &&
              !strcmp(m, "{\"ok\":\"true\",\"n\":\"3\"}"),
          "over-long compatibility kept, non-text license and metadata values ignored (%s)", m);
    free(m);
    sl_skill_release(&sk);
    sl_buf_release(&b);
    rc = parse("---\nname: pdf\ndescription: d\nmetadata: plain\n---\n", "pdf", &sk, &err);
    CHECK(rc == 0 && !sk.metadata && has_note(&sk, "`metadata` is not a mapping"), "metadata not a mapping: ignored");
    sl_skill_release(&sk);
    rc = parse("---\nname: pdf\ndescription: d\nversion: 2\nauthor: me\n---\n", "pdf", &sk, &err);
    CHECK(rc == 0 && sk.nnotes == 1 &&
              !strcmp(sk.notes[0], "unknown frontmatter fields `author`, `version` ignored; the spec knows "
                                   "name, description, license, compatibility, metadata and allowed-tools "
                                   "(put your own keys under metadata)"),
          "unknown fields: one note naming them, sorted");
    sl_skill_release(&sk);
    sl_err_clear(&err);
}

static int mkskill(const char *folder, const char *fm)
{
    char *rel = sl_xasprintf("skills/%s/SKILL.md", folder);
    char *t = sl_xasprintf("---\n%s---\n# %s\n", fm, folder);
    put(rel, t);
    free(rel);
    free(t);
    return 0;
}

static const sl_skill_warning *warning_for(const sl_skills *s, const char *folder)
{
    for (size_t i = 0; i < s->nwarnings; i++)
        if (!strcmp(s->warnings[i].folder, folder))
            return &s->warnings[i];
    return NULL;
}

static void test_load(void)
{
    sl_skills s;
    sl_err err = {0};
    char *dir = at("skills");

    CHECK(sl_skills_load(dir, "/skills", &s, &err) == 0 && s.n == 0 && s.nwarnings == 0,
          "a missing skills folder: no skills, no warnings, no error");
    sl_buf cat;
    sl_buf_init(&cat, 0);
    sl_skills_catalog(&s, &cat);
    CHECK(cat.len == 0, "no skills: the catalog is empty (no <available_skills/>)");
    sl_skills_release(&s);
    CHECK(sl_skills_load(NULL, NULL, &s, &err) == 0 && s.n == 0, "a NULL skills folder: no skills");
    sl_skills_release(&s);

    put("skills", "not a folder");
    CHECK(sl_skills_load(dir, "/skills", &s, &err) == -1 && err.code == SL_EIO && strstr(err.msg, "skills must be a folder"),
          "skills as a file: an error (%s)", err.msg);
    sl_skills_release(&s);
    sl_err_clear(&err);
    unlink(dir);

    /* a fixture tree with every case */
    mkskill("pdf", "name: pdf\ndescription: Extract text & tables from <PDF> files.\n");
    mkskill("alpha", "name: alpha\ndescription: First in order.\n");
    mkskill("data", "name: data-tools\ndescription: Analyse data.\n");
    mkskill("nodesc", "name: nodesc\n");
    put("skills/noyaml/SKILL.md", "# just markdown\n");
    mkskill("zz-dup", "name: pdf\ndescription: Another pdf.\n");
    put("skills/lower/skill.md", "---\nname: lower\ndescription: d\n---\n");
    put("skills/README.md", "not a skill\n");
    mkskill(".hidden", "name: hidden\ndescription: h\n");
    put("skills/empty/notes.txt", "no SKILL.md here\n");
    put("outside/evil/SKILL.md", "---\nname: evil\ndescription: outside\n---\n");
    char *evil = at("outside/evil"), *link = at("skills/evil");
    CHECK(symlink(evil, link) == 0, "fixture: skills/evil -> outside/evil");
    free(link);
    put("skills/linked/notes.txt", "");
    char *evilmd = at("outside/evil/SKILL.md");
    link = at("skills/linked/SKILL.md");
    CHECK(symlink(evilmd, link) == 0, "fixture: skills/linked/SKILL.md -> outside");
    free(link);
    free(evilmd);
    free(evil);
    link = at("skills/readme-link");
    CHECK(symlink("README.md", link) == 0, "fixture: a link to a file");
    free(link);
    put("skills/fifo/notes.txt", "");
    char *fifo = at("skills/fifo/SKILL.md");
    CHECK(mkfifo(fifo, 0644) == 0, "fixture: a FIFO as SKILL.md");
    free(fifo);

    int rc = sl_skills_load(dir, "/skills/", &s, &err);
    CHECK(rc == 0, "load: 0 (%s)", err.msg ? err.msg : "");
    sl_buf names;
    sl_buf_init(&names, 0);
    for (size_t i = 0; i < s.n; i++)
        sl_buf_addf(&names, "%s%s@%s", i ? " " : "", s.v[i].name, s.v[i].location);
    CHECK(!strcmp(names.data ? names.data : "",
                  "alpha@/skills/alpha/SKILL.md data-tools@/skills/data/SKILL.md pdf@/skills/pdf/SKILL.md"),
          "loaded, sorted by name, located in the sandbox: %s", names.data);
    sl_buf_release(&names);

    sl_value *w = sl_skills_warnings(&s);
    char *ws = show(w);
    printf("# warnings: %s\n", ws);
    CHECK(json_array_size(w) == s.nwarnings && s.nwarnings == 8, "8 warnings (got %zu)", s.nwarnings);
    free(ws);

    const sl_skill_warning *x = warning_for(&s, "data");
    char *want = sl_xasprintf("%s/data/SKILL.md", dir);
    CHECK(x && !x->skipped && !strcmp(x->path, want) && strstr(x->reason, "differs from its folder `data`"),
          "data: a name/folder mismatch warns but loads");
    free(want);
    x = warning_for(&s, "nodesc");
    CHECK(x && x->skipped && strstr(x->reason, "has no description"), "nodesc: skipped, no description");
    x = warning_for(&s, "noyaml");
    CHECK(x && x->skipped && strstr(x->reason, "does not start with a `---` line"), "noyaml: skipped, no frontmatter");
    x = warning_for(&s, "zz-dup");
    CHECK(x && x->skipped &&
              !strcmp(x->reason, "the skill folder `pdf` came first with the name `pdf`; rename one of them"),
          "zz-dup: the same name as pdf: skipped, the first folder wins");
    x = warning_for(&s, "lower");
    CHECK(x && x->skipped && strstr(x->reason, "a file named skill.md; rename it SKILL.md"),
          "lower: skill.md in small letters: skipped with a hint");
    x = warning_for(&s, "evil");
    want = sl_xasprintf("%s/evil", dir);
    CHECK(x && x->skipped && !strcmp(x->path, want) && strstr(x->reason, "is a symbolic link; sluice does not follow"),
          "evil: a symlinked skill folder is refused");
    free(want);
    x = warning_for(&s, "linked");
    CHECK(x && x->skipped && strstr(x->reason, "SKILL.md is a symbolic link"), "linked: a symlinked SKILL.md is refused");
    x = warning_for(&s, "fifo");
    CHECK(x && x->skipped && strstr(x->reason, "not a regular file"), "fifo: not read (and no hang)");
    CHECK(!warning_for(&s, "empty") && !warning_for(&s, ".hidden") && !warning_for(&s, "README.md") &&
              !warning_for(&s, "readme-link"),
          "a folder without SKILL.md, hidden folders, files and links to files: passed over silently");

    /* the warnings as JSON */
    sl_value *w0 = NULL;
    for (size_t i = 0; i < json_array_size(w); i++)
        if (!strcmp(json_string_value(json_object_get(json_array_get(w, i), "folder")), "nodesc"))
            w0 = json_array_get(w, i);
    char *msg = sl_xasprintf("%s/nodesc/SKILL.md: skipped: the frontmatter has no description; add "
                             "`description: <what the skill does and when to use it>`",
                             dir);
    CHECK(w0 && json_is_true(json_object_get(w0, "skipped")) &&
              !strcmp(json_string_value(json_object_get(w0, "message")), msg) && json_object_get(w0, "reason") &&
              json_object_get(w0, "path"),
          "warning JSON: {folder, path, reason, skipped, message}");
    free(msg);
    json_decref(w);

    const sl_skill *f = sl_skills_find(&s, "pdf");
    CHECK(f && !strcmp(f->folder, "pdf") && !sl_skills_find(&s, "nope") && !sl_skills_find(&s, "zz-dup"),
          "sl_skills_find by name");

    /* the catalog, exact */
    sl_skills_catalog(&s, &cat);
    const char *want_cat =
        "The following skills provide specialized instructions for specific tasks.\n"
        "When a task matches a skill's description, read the SKILL.md at its location\n"
        "(with your file-read tool, or cat) before you go on.  Paths a skill mentions\n"
        "are relative to its folder (the one holding SKILL.md); use absolute paths in\n"
        "tool calls.\n"
        "\n"
        "<available_skills>\n"
        "  <skill>\n"
        "    <name>alpha</name>\n"
        "    <description>First in order.</description>\n"
        "    <location>/skills/alpha/SKILL.md</location>\n"
        "  </skill>\n"
        "  <skill>\n"
        "    <name>data-tools</name>\n"
        "    <description>Analyse data.</description>\n"
        "    <location>/skills/data/SKILL.md</location>\n"
        "  </skill>\n"
        "  <skill>\n"
        "    <name>pdf</name>\n"
        "    <description>Extract text &amp; tables from &lt;PDF&gt; files.</description>\n"
        "    <location>/skills/pdf/SKILL.md</location>\n"
        "  </skill>\n"
        "</available_skills>\n";
    CHECK(cat.data && !strcmp(cat.data, want_cat), "the catalog, exactly (XML-escaped)");
    if (!cat.data || strcmp(cat.data, want_cat))
        printf("# got:\n%s\n", cat.data ? cat.data : "(nothing)");
    sl_skills_release(&s);

    /* deterministic: a second load gives the same */
    sl_buf again;
    sl_buf_init(&again, 0);
    sl_skills_load(dir, "/skills", &s, &err);
    sl_skills_catalog(&s, &again);
    CHECK(again.data && !strcmp(again.data, cat.data), "loading again gives the same catalog");
    sl_skills_release(&s);
    sl_buf_release(&again);
    sl_buf_release(&cat);

    /* sandbox_dir NULL: locations under skills_dir */
    sl_skills_load(dir, NULL, &s, &err);
    want = sl_xasprintf("%s/alpha/SKILL.md", dir);
    CHECK(s.n && !strcmp(s.v[0].location, want), "no sandbox folder: locations under skills_dir (%s)",
          s.n ? s.v[0].location : "");
    free(want);
    sl_skills_release(&s);
    free(dir);
}

/* Control characters and escapes in the catalog; all skills skipped. */
static void test_catalog_text(void)
{
    sl_skills s = {0};
    sl_skill sk;
    sl_err err = {0};
    const char *t = "---\nname: \"a<b>&c\"\ndescription: \"x\\x01y\\n<z/>\"\n---\n";
    CHECK(sl_skills_parse(t, strlen(t), NULL, &sk, &err) == 0, "parse escaped text");
    sk.location = sl_xstrdup("/s/a&b/SKILL.md");
    s.v = &sk;
    s.n = 1;
    sl_buf cat;
    sl_buf_init(&cat, 0);
    sl_skills_catalog(&s, &cat);
    CHECK(strstr(cat.data, "<name>a&lt;b&gt;&amp;c</name>\n    <description>x\xEF\xBF\xBDy\n&lt;z/&gt;</description>\n"
                           "    <location>/s/a&amp;b/SKILL.md</location>"),
          "name, description and location escaped; a control character replaced");
    sl_buf_release(&cat);
    sl_skill_release(&sk);

    char tmpl[80];
    snprintf(tmpl, sizeof tmpl, "%s/only-bad", root);
    mkdir(tmpl, 0755);
    char *p = sl_xasprintf("%s/x", tmpl);
    mkdir(p, 0755);
    free(p);
    p = sl_xasprintf("%s/x/SKILL.md", tmpl);
    FILE *fp = fopen(p, "w");
    fputs("---\nname: x\n---\n", fp);
    fclose(fp);
    free(p);
    CHECK(sl_skills_load(tmpl, "/s", &s, &err) == 0 && s.n == 0 && s.nwarnings == 1, "every skill skipped: none load");
    sl_buf_init(&cat, 0);
    sl_skills_catalog(&s, &cat);
    CHECK(cat.len == 0, "every skill skipped: an empty catalog");
    sl_buf_release(&cat);
    sl_skills_release(&s);
}

static void test_caps(void)
{
    char *dir = at("many");
    mkdir(dir, 0755);
    for (int i = 0; i < SL_SKILLS_MAX + 2; i++) {
        char rel[64], fm[128];
        snprintf(rel, sizeof rel, "many/s%03d/SKILL.md", i);
        snprintf(fm, sizeof fm, "---\nname: s%03d\ndescription: skill %d\n---\n", i, i);
        put(rel, fm);
    }
    sl_skills s;
    sl_err err = {0};
    sl_skills_load(dir, "/skills", &s, &err);
    CHECK(s.n == SL_SKILLS_MAX && !strcmp(s.v[SL_SKILLS_MAX - 1].name, "s199"),
          "202 skills: the first 200 load (got %zu)", s.n);
    CHECK(s.nwarnings == 1 && s.warnings[0].skipped && !strcmp(s.warnings[0].folder, "") &&
              !strcmp(s.warnings[0].reason, "2 more skills were not loaded: sluice loads at most 200 skills "
                                            "from one folder; remove the ones this app does not need"),
          "one warning for the rest (%s)", s.nwarnings ? s.warnings[0].reason : "none");
    sl_skills_release(&s);
    free(dir);

    /* SKILL.md over the 1 MiB read cap */
    sl_buf b;
    sl_buf_init(&b, 0);
    sl_buf_adds(&b, "---\nname: big\ndescription: a big body\n---\n");
    while (b.len <= SL_SKILLS_READ_CAP + 100)
        sl_buf_adds(&b, "body text body text body text\n");
    put("big/big/SKILL.md", b.data);
    sl_buf_reset(&b);
    sl_buf_adds(&b, "---\nname: huge\ndescription: d\n");
    while (b.len <= SL_SKILLS_READ_CAP + 100)
        sl_buf_adds(&b, "# a comment line that keeps the frontmatter going\n");
    sl_buf_adds(&b, "---\n");
    put("big/huge/SKILL.md", b.data);
    sl_buf_release(&b);
    dir = at("big");
    sl_skills_load(dir, "/s", &s, &err);
    const sl_skill_warning *w = s.nwarnings ? &s.warnings[0] : NULL;
    CHECK(s.n == 1 && !strcmp(s.v[0].name, "big"), "a SKILL.md over 1 MiB with its frontmatter at the top loads");
    CHECK(s.nwarnings == 1 && w && w->skipped && !strcmp(w->folder, "huge") &&
              strstr(w->reason, "frontmatter does not end within the first 1 MiB"),
          "frontmatter past the 1 MiB cap: skipped (%s)", w ? w->reason : "none");
    sl_skills_release(&s);
    free(dir);
}

static void rm_rf(const char *path)
{
    char *cmd = sl_xasprintf("rm -rf '%s'", path);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", path);
    free(cmd);
}

int main(void)
{
    snprintf(root, sizeof root, "/tmp/sluice-skills-XXXXXX");
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        return 1;
    }
    test_parse();
    test_load();
    test_catalog_text();
    test_caps();
    rm_rf(root);
    return tap_done();
}
