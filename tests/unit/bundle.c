/*
 * Unit tests for dsl/bundle: Dify app bundles (.zip) read, extracted and
 * written.  The hostile archives come from tests/tools/mkzip.py (one kind
 * per refusal); the zip bombs run first so the memory they may take shows
 * in the peak RSS before anything else has grown it.
 */
#include <errno.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "core/clock.h"
#include "dsl/bundle.h"
#include "tap.h"
#include "util.h"

static char tmp[64];

static char *mkzip(const char *kind, size_t *len)
{
    char path[256], cmd[512];
    snprintf(path, sizeof path, "%s/%s.zip", tmp, kind);
    snprintf(cmd, sizeof cmd, "python3 tests/tools/mkzip.py '%s' '%s'", kind, path);
    if (system(cmd) != 0)
        return NULL;
    return slurp(path, len);
}

static int run(const char *cmd)
{
    int rc = system(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static long peak_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* Reads bytes that must be refused; the message must contain `want`. */
static void refuse_bytes(const char *what, const void *z, size_t len, const sl_bundle_limits *lim,
                         const char *want)
{
    sl_bundle b;
    sl_err err = {0};
    int rc = sl_bundle_read(z, len, lim, &b, &err);
    CHECK(rc == -1 && err.msg && strstr(err.msg, want), "%s refused (%s): %s", what, want,
          esc(err.msg ? err.msg : "accepted"));
    CHECK(b.manifest == NULL && b.files == NULL && b.dsl == NULL, "%s: nothing left to free", what);
    sl_err_clear(&err);
}

static void refuse(const char *kind, const char *want)
{
    size_t len = 0;
    char *z = mkzip(kind, &len);
    if (!z) {
        CHECK(0, "mkzip %s", kind);
        return;
    }
    refuse_bytes(kind, z, len, NULL, want);
    free(z);
}

static void test_bombs(void)
{
    size_t len;
    char *z = mkzip("bomb", &len);
    long before = peak_kb();
    double t = sl_clock_s();
    refuse_bytes("1 GiB bomb, honest header", z, len, NULL, "would pass the limit");
    CHECK(sl_clock_s() - t < 1.0, "honest bomb refused in %.3fs (before inflating)", sl_clock_s() - t);
    free(z);

    z = mkzip("bomb-lying", &len);
    CHECK(z && len < 300000, "lying bomb is %zu bytes of zip", len);
    t = sl_clock_s();
    refuse_bytes("200 MiB bomb, headers say 1000 bytes", z, len, NULL, "zeros.bin");
    double dt = sl_clock_s() - t;
    long grew = peak_kb() - before;
    CHECK(dt < 5.0, "lying bomb refused in %.2fs", dt);
    CHECK(grew < 160 * 1024, "lying bomb grew the peak RSS by %ld KB (cap 50 MB)", grew);

    sl_bundle_limits small = {.max_total = 1 << 20};
    t = sl_clock_s();
    refuse_bytes("lying bomb, 1 MB limit", z, len, &small, "limit of 1048576 bytes");
    CHECK(sl_clock_s() - t < 0.5, "refused at 1 MB in %.3fs", sl_clock_s() - t);
    free(z);
}

static void test_dify(void)
{
    size_t len;
    char *z = mkzip("dify", &len);
    sl_bundle b;
    sl_err err = {0};
    int rc = sl_bundle_read(z, len, NULL, &b, &err);
    CHECK(rc == 0, "Dify-style bundle reads: %s", esc(err.msg));
    if (rc) {
        free(z);
        sl_err_clear(&err);
        return;
    }
    CHECK(!strcmp(b.dsl_name, "Doc Helper.yml") && !strcmp(b.app_dir, "Doc Helper"),
          "names: %s, %s/", b.dsl_name, b.app_dir);
    CHECK(b.dsl_len == strlen(b.dsl) && !strncmp(b.dsl, "app:\n  mode: workflow", 20),
          "DSL text (%zu bytes)", b.dsl_len);
    CHECK(b.nfiles == 3, "3 files (%zu)", b.nfiles);
    if (b.nfiles == 3) {
        CHECK(!strcmp(b.files[0].path, "data/table.csv") &&
                  !strcmp(b.files[1].path, "skills/pdf/SKILL.md") &&
                  !strcmp(b.files[2].path, "skills/pdf/scripts/extract.sh"),
              "sorted paths relative to the app folder");
        CHECK(!b.files[0].exec && !b.files[1].exec && b.files[2].exec, "exec bit on the script");
        CHECK(!strcmp(b.files[1].node_id, "6f1d8a52-0c1e-4a43-9f55-7b6a3c2e1d03"),
              "node id from files[]: %s", b.files[1].node_id);
        CHECK(b.files[0].len == 26 && !memcmp(b.files[0].data, "name,value\n", 11),
              "file bytes (%zu)", b.files[0].len);
    }
    CHECK(json_is_string(json_object_get(b.manifest, "generated_at")), "manifest kept");

    /* extract */
    char dir[128], path[256];
    snprintf(dir, sizeof dir, "%s/out", tmp);
    rc = sl_bundle_extract(&b, dir, &err);
    CHECK(rc == 0, "extract: %s", esc(err.msg));
    struct stat st;
    snprintf(path, sizeof path, "%s/skills/pdf/scripts/extract.sh", dir);
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0755, "script extracted 0755 (%o)",
          st.st_mode & 0777);
    snprintf(path, sizeof path, "%s/skills/pdf/SKILL.md", dir);
    size_t n = 0;
    char *txt = slurp(path, &n);
    CHECK(txt && stat(path, &st) == 0 && (st.st_mode & 0777) == 0644 && n == b.files[1].len &&
              !memcmp(txt, b.files[1].data, n),
          "SKILL.md extracted 0644 with its bytes");
    free(txt);
    snprintf(path, sizeof path, "%s/skills", dir);
    CHECK(stat(path, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0755,
          "folders 0755");
    sl_err_clear(&err);
    rc = sl_bundle_extract(&b, dir, &err);
    CHECK(rc == -1 && err.msg && strstr(err.msg, "not empty"), "extract into a non-empty folder: %s",
          esc(err.msg));
    sl_err_clear(&err);

    /* a symlink as the target folder is not followed */
    char link[128];
    snprintf(link, sizeof link, "%s/link", tmp);
    snprintf(path, sizeof path, "%s/empty", tmp);
    mkdir(path, 0755);
    symlink(path, link);
    rc = sl_bundle_extract(&b, link, &err);
    CHECK(rc == -1 && err.msg && strstr(err.msg, "symlink"), "extract through a symlink: %s",
          esc(err.msg));
    sl_err_clear(&err);

    /* a hand-made bundle with a bad path is refused before anything is written */
    char *saved = b.files[0].path;
    b.files[0].path = (char *)"../escape.txt";
    snprintf(path, sizeof path, "%s/out2", tmp);
    rc = sl_bundle_extract(&b, path, &err);
    CHECK(rc == -1 && err.msg && strstr(err.msg, "'..'"), "extract refuses '..': %s",
          esc(err.msg));
    b.files[0].path = saved;
    sl_err_clear(&err);
    sl_bundle_release(&b);
    free(z);
}

static void accept_kind(const char *kind, size_t nfiles, const char *app_dir)
{
    size_t len;
    char *z = mkzip(kind, &len);
    sl_bundle b;
    sl_err err = {0};
    int rc = z ? sl_bundle_read(z, len, NULL, &b, &err) : -1;
    CHECK(rc == 0 && b.nfiles == nfiles && !strcmp(b.app_dir, app_dir), "%s reads: %s", kind,
          esc(err.msg));
    if (!rc)
        sl_bundle_release(&b);
    sl_err_clear(&err);
    free(z);
}

static void test_refusals(void)
{
    refuse_bytes("text", "hello, world", 12, NULL, "not a zip archive");
    refuse_bytes("empty input", "", 0, NULL, "not a zip archive");
    /* an empty zip: just the end record */
    static const char empty[22] = "PK\x05\x06";
    refuse_bytes("empty zip", empty, sizeof empty, NULL, "no manifest.json");

    refuse("no-manifest", "no manifest.json at the top");
    refuse("bad-json", "manifest.json is not valid JSON");
    refuse("schema", "schema_version is \"2.0\"");
    refuse("dsl-mismatch", "dsl_filename is \"Other App.yml\" but the zip has no such entry (it has "
                           "\"Doc Helper.yml\")");
    refuse("count", "integrity.file_count is 5 but the Doc Helper/ folder holds 3 files");
    refuse("files-missing", "files[2] names \"data/missing.csv\", which is not in");
    refuse("outside", "\"notes.txt\": is outside the bundle layout");
    refuse("macosx", "\"__MACOSX/._Doc Helper.yml\": is outside the bundle layout");
    refuse("traversal", "\"Doc Helper/../../evil.sh\": the path contains '..'");
    refuse("absolute", "\"/etc/cron.d/evil\": an absolute path");
    refuse("backslash", "\"Doc Helper\\\\..\\\\evil.txt\": the name contains a backslash");
    refuse("control", "\"Doc Helper/a\\x0ab.txt\": the name contains a control character");
    refuse("nul", "\"Doc Helper/safe\\x00name.txt\": the name contains a NUL byte");
    refuse("symlink", "\"Doc Helper/link\": is a symbolic link (to \"/etc/passwd\")");
    refuse("device", "\"Doc Helper/dev\": is a device, FIFO or socket");
    refuse("fifo", "\"Doc Helper/fifo\": is a device, FIFO or socket");
    refuse("duplicate", "\"Doc Helper/data/table.csv\": appears twice");
    refuse("under-file", "lies under \"Doc Helper/data/table.csv\", which is a file");

    size_t len;
    char *z = mkzip("dify", &len);
    sl_bundle_limits few = {.max_entries = 5};
    refuse_bytes("too many entries", z, len, &few, "more than the limit of 5");
    sl_bundle_limits tiny = {.max_total = 600};
    refuse_bytes("over a small total", z, len, &tiny, "limit of 600 bytes");
    /* truncated: the end record gone, then half the file gone */
    refuse_bytes("truncated (no end record)", z, len - 10, NULL, "end-of-central-directory record is missing");
    refuse_bytes("truncated (half)", z, len / 2, NULL, "bundle");
    /* corrupt: a flipped byte in SKILL.md's deflate data */
    const char *nm = "Doc Helper/skills/pdf/SKILL.md";
    char *at = NULL;
    for (char *p = z; p + 30 + strlen(nm) < z + len; p++)
        if (!memcmp(p, "PK\x03\x04", 4) && !memcmp(p + 30, nm, strlen(nm))) {
            at = p;
            break;
        }
    if (at) {
        size_t extra = (unsigned char)at[28] | (unsigned char)at[29] << 8;
        at[30 + strlen(nm) + extra + 8] ^= 0x55;
        refuse_bytes("corrupt deflate data", z, len, NULL, "SKILL.md\": cannot be decompressed");
    } else {
        CHECK(0, "SKILL.md local header found");
    }
    free(z);

    accept_kind("empty-app", 0, "Doc Helper");
    accept_kind("yaml-ext", 3, "Doc Helper");

    CHECK(sl_bundle_is_zip("PK\x03\x04", 4) && sl_bundle_is_zip("PK\x05\x06", 4) &&
              !sl_bundle_is_zip("PK", 2) && !sl_bundle_is_zip("%PDF", 4),
          "sl_bundle_is_zip");
    char path[128];
    snprintf(path, sizeof path, "%s/dify.zip", tmp);
    CHECK(sl_bundle_path_is_zip(path) && !sl_bundle_path_is_zip("tests/unit/bundle.c") &&
              !sl_bundle_path_is_zip("/nonexistent"),
          "sl_bundle_path_is_zip");
}

static void put(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
    chmod(path, mode);
}

static void test_write(void)
{
    char src[128], zip[160], cmd[1024], p[256];
    snprintf(src, sizeof src, "%s/src", tmp);
    snprintf(cmd, sizeof cmd,
             "mkdir -p '%s/skills/greet/scripts' '%s/data' '%s/empty'", src, src, src);
    run(cmd);
    snprintf(p, sizeof p, "%s/skills/greet/SKILL.md", src);
    put(p, "---\nname: greet\ndescription: Says hello.\n---\nRun scripts/hi.sh\n", 0644);
    snprintf(p, sizeof p, "%s/skills/greet/scripts/hi.sh", src);
    put(p, "#!/bin/sh\necho hi\n", 0755);
    snprintf(p, sizeof p, "%s/data/caf\xc3\xa9 notes.txt", src);
    put(p, "d\xc3\xa9j\xc3\xa0 vu\n", 0644);
    const char *dsl = "app:\n  name: 'My: App'\n  mode: workflow\nkind: app\nversion: 0.6.0\n";

    snprintf(zip, sizeof zip, "%s/mine.zip", tmp);
    sl_err err = {0};
    int rc = sl_bundle_write(zip, " My: App/..? ", dsl, strlen(dsl), src, NULL, &err);
    CHECK(rc == 0, "write: %s", esc(err.msg));
    sl_err_clear(&err);

    size_t len;
    char *z = slurp(zip, &len);
    sl_bundle b;
    rc = z ? sl_bundle_read(z, len, NULL, &b, &err) : -1;
    CHECK(rc == 0, "read back: %s", esc(err.msg));
    free(z);
    if (rc)
        return;
    CHECK(!strcmp(b.dsl_name, "My_ App_.._.yml") && !strcmp(b.app_dir, "My_ App_.._"),
          "sanitised the Dify way: \"%s\"", b.dsl_name);
    CHECK(b.dsl_len == strlen(dsl) && !memcmp(b.dsl, dsl, b.dsl_len), "DSL round trip");
    CHECK(b.nfiles == 3, "3 files (%zu)", b.nfiles);
    if (b.nfiles == 3) {
        CHECK(!strcmp(b.files[0].path, "data/caf\xc3\xa9 notes.txt") && !b.files[0].exec &&
                  !strcmp((char *)b.files[0].data, "d\xc3\xa9j\xc3\xa0 vu\n"),
              "UTF-8 name and bytes: %s", b.files[0].path);
        CHECK(!strcmp(b.files[2].path, "skills/greet/scripts/hi.sh") && b.files[2].exec,
              "exec bit kept");
    }
    const sl_value *m = b.manifest;
    CHECK(!strcmp(json_string_value(json_object_get(m, "schema_version")), "1.0") &&
              json_integer_value(json_object_get(json_object_get(m, "integrity"), "file_count")) == 3,
          "schema 1.0, file_count 3");
    const char *when = json_string_value(json_object_get(m, "generated_at"));
    CHECK(when && strlen(when) == 20 && when[10] == 'T' && when[19] == 'Z', "generated_at %s",
          when ? when : "?");
    const sl_value *nodes = json_object_get(json_object_get(json_object_get(m, "app_assets"), "tree"), "nodes");
    CHECK(json_array_size(nodes) == 8, "tree: 5 folders + 3 files (%zu)", json_array_size(nodes));
    const sl_value *first = json_array_get(nodes, 0);
    char *shown_first = show(first);
    CHECK(!strcmp(json_string_value(json_object_get(first, "name")), "data") &&
              json_is_null(json_object_get(first, "parent_id")) &&
              !strcmp(json_string_value(json_object_get(first, "node_type")), "folder") &&
              strlen(json_string_value(json_object_get(first, "id"))) == 36,
          "a folder node: %s", esc(shown_first));
    free(shown_first);

    /* Dify's side: the manifest model, the DSL, each file under the prefix */
    snprintf(cmd, sizeof cmd, "python3 tests/tools/mkzip.py --check-dify '%s' >/dev/null", zip);
    CHECK(run(cmd) == 0, "Dify's import reads our bundle (mkzip.py --check-dify)");
    /* Dify's zip strategies: unzip the bundle and zip it again with zip -r */
    snprintf(cmd, sizeof cmd,
             "mkdir '%s/unz' && cd '%s/unz' && unzip -q '../mine.zip' && zip -qr ../rezip.zip .",
             tmp, tmp);
    rc = run(cmd);
    CHECK(rc == 0, "unzip + zip -r of our bundle (exit %d)", rc);
    snprintf(p, sizeof p, "%s/rezip.zip", tmp);
    z = slurp(p, &len);
    sl_bundle b2;
    rc = z ? sl_bundle_read(z, len, NULL, &b2, &err) : -1;
    CHECK(rc == 0 && b2.nfiles == 3 && b2.files[2].exec, "zip -r bundle reads: %s", esc(err.msg));
    if (!rc)
        sl_bundle_release(&b2);
    sl_err_clear(&err);
    free(z);

    /* node ids survive a write with the old manifest as file_refs */
    char zip2[160];
    snprintf(zip2, sizeof zip2, "%s/again.zip", tmp);
    rc = sl_bundle_write(zip2, "My: App", dsl, strlen(dsl), src, b.manifest, &err);
    z = slurp(zip2, &len);
    rc = rc || !z ? -1 : sl_bundle_read(z, len, NULL, &b2, &err);
    CHECK(rc == 0, "write with file_refs: %s", esc(err.msg));
    if (!rc) {
        bool same = b2.nfiles == b.nfiles;
        for (size_t i = 0; same && i < b.nfiles; i++)
            same = !strcmp(b.files[i].node_id, b2.files[i].node_id);
        const sl_value *n2 = json_object_get(json_object_get(json_object_get(b2.manifest, "app_assets"), "tree"),
                                        "nodes");
        for (size_t i = 0; same && i < json_array_size(nodes); i++)
            same = json_equal(json_object_get(json_array_get(nodes, i), "id"),
                              json_object_get(json_array_get(n2, i), "id"));
        CHECK(same, "file and folder node ids kept");
        sl_bundle_release(&b2);
    }
    free(z);
    sl_err_clear(&err);

    /* the array form: [{node_id, path}] */
    sl_value *refs = J("[{\"node_id\": \"kept-id\", \"path\": \"data/caf\xc3\xa9 notes.txt\"}]");
    rc = sl_bundle_write(zip2, "x", dsl, strlen(dsl), src, refs, &err);
    z = slurp(zip2, &len);
    rc = rc || !z ? -1 : sl_bundle_read(z, len, NULL, &b2, &err);
    CHECK(rc == 0 && !strcmp(b2.files[0].node_id, "kept-id") &&
              strcmp(b2.files[1].node_id, "kept-id"),
          "file_refs as a files[] list: %s", esc(err.msg));
    if (!rc)
        sl_bundle_release(&b2);
    json_decref(refs);
    free(z);
    sl_err_clear(&err);

    /* no files at all, and an empty app name */
    rc = sl_bundle_write(zip2, " .. ", dsl, strlen(dsl), NULL, NULL, &err);
    z = slurp(zip2, &len);
    rc = rc || !z ? -1 : sl_bundle_read(z, len, NULL, &b2, &err);
    CHECK(rc == 0 && b2.nfiles == 0 && !strcmp(b2.dsl_name, "app.yml"),
          "no files, name \" .. \" becomes app.yml: %s", esc(err.msg));
    if (!rc)
        sl_bundle_release(&b2);
    free(z);
    sl_err_clear(&err);
    sl_bundle_release(&b);

    /* refusals: a symlink, a FIFO, a name with a backslash; the old zip
     * stays and no temporary file is left behind */
    char zip3[160];
    snprintf(zip3, sizeof zip3, "%s/bad.zip", tmp);
    snprintf(p, sizeof p, "%s/skills/greet/passwd", src);
    symlink("/etc/passwd", p);
    rc = sl_bundle_write(zip3, "x", dsl, strlen(dsl), src, NULL, &err);
    CHECK(rc == -1 && err.msg && strstr(err.msg, "skills/greet/passwd is a symbolic link"),
          "symlink refused: %s", esc(err.msg));
    sl_err_clear(&err);
    unlink(p);
    snprintf(p, sizeof p, "%s/data/pipe", src);
    mkfifo(p, 0644);
    rc = sl_bundle_write(zip3, "x", dsl, strlen(dsl), src, NULL, &err);
    CHECK(rc == -1 && err.msg && strstr(err.msg, "data/pipe is a device, FIFO or socket"),
          "FIFO refused: %s", esc(err.msg));
    sl_err_clear(&err);
    unlink(p);
    snprintf(p, sizeof p, "%s/data/a\\b.txt", src);
    put(p, "x", 0644);
    rc = sl_bundle_write(zip2, "x", dsl, strlen(dsl), src, NULL, &err);
    CHECK(rc == -1 && err.msg && strstr(err.msg, "backslash"), "backslash name refused: %s",
          esc(err.msg));
    sl_err_clear(&err);
    unlink(p);
    struct stat st;
    snprintf(cmd, sizeof cmd, "ls '%s' | grep -c '\\.tmp\\.' >/dev/null", tmp);
    CHECK(stat(zip3, &st) < 0 && errno == ENOENT && stat(zip2, &st) == 0 && run(cmd) != 0,
          "failed writes leave no zip and no temporary file");
    rc = sl_bundle_write(zip3, "x", "\xff", 1, NULL, NULL, &err);
    CHECK(rc == -1 && err.msg && strstr(err.msg, "UTF-8"), "non-UTF-8 DSL refused: %s",
          esc(err.msg));
    sl_err_clear(&err);
}

/* A bundle file read from disk, its files unpacked into a private
 * folder and that folder removed (run after test_write: mine.zip). */
static void test_tmp(void)
{
    char zip[160], p[512];
    snprintf(zip, sizeof zip, "%s/mine.zip", tmp);
    sl_bundle b;
    sl_err err = {0};
    CHECK(sl_bundle_read_file(zip, &b, &err) == 0 && b.nfiles == 3,
          "read_file: a bundle on disk (%s)", esc(err.msg));
    sl_err_clear(&err);
    sl_bundle other;
    CHECK(sl_bundle_read_file("tests/unit/bundle.c", &other, &err) < 0 && err.msg &&
              strstr(err.msg, "tests/unit/bundle.c: "),
          "read_file: a file that is no bundle is refused, named: %s", esc(err.msg));
    sl_err_clear(&err);
    CHECK(sl_bundle_read_file("/nonexistent.zip", &other, &err) < 0 && err.code == SL_EIO,
          "read_file: a missing file: %s", esc(err.msg));
    sl_err_clear(&err);

    const char *old = getenv("TMPDIR");
    char *saved = old ? sl_xstrdup(old) : NULL;
    setenv("TMPDIR", tmp, 1);
    char *dir = NULL, *files = NULL;
    int rc = sl_bundle_extract_tmp(&b, "mine.zip", &dir, &files, &err);
    snprintf(p, sizeof p, "%s/skills/greet/scripts/hi.sh", files ? files : "");
    struct stat st;
    CHECK(rc == 0 && dir && !strncmp(dir, tmp, strlen(tmp)) && strstr(dir, "/sluice-app-") &&
              files && !strncmp(files, dir, strlen(dir)) && !stat(p, &st) &&
              (st.st_mode & 0111),
          "extract_tmp: the files in a new folder under $TMPDIR (%s)", esc(err.msg));
    sl_err_clear(&err);
    /* a symlink in the folder to something outside it */
    char outside[128], keep[160], link[512];
    snprintf(outside, sizeof outside, "%s/outside", tmp);
    mkdir(outside, 0755);
    snprintf(keep, sizeof keep, "%s/keep", outside);
    put(keep, "stay\n", 0644);
    snprintf(link, sizeof link, "%s/out", files ? files : tmp);
    CHECK(symlink(outside, link) == 0, "a symlink placed in the folder");
    sl_bundle_remove_dir(dir);
    CHECK(dir && stat(dir, &st) < 0 && errno == ENOENT && stat(keep, &st) == 0,
          "remove_dir: the folder is gone, what a symlink in it named is not");
    free(dir);
    free(files);

    snprintf(p, sizeof p, "%s/no/such/folder", tmp);
    setenv("TMPDIR", p, 1);
    dir = files = NULL;
    rc = sl_bundle_extract_tmp(&b, "mine.zip", &dir, &files, &err);
    CHECK(rc < 0 && !dir && !files && err.code == SL_EIO && strstr(err.msg, "mine.zip"),
          "extract_tmp: no folder to make it in: %s", esc(err.msg));
    sl_err_clear(&err);
    if (saved)
        setenv("TMPDIR", saved, 1);
    else
        unsetenv("TMPDIR");
    free(saved);
    sl_bundle_remove_dir(NULL);
    sl_bundle_release(&b);
}

int main(void)
{
    snprintf(tmp, sizeof tmp, "/tmp/sluice-bundle-XXXXXX");
    if (!mkdtemp(tmp)) {
        perror("mkdtemp");
        return 1;
    }
    test_bombs();
    test_dify();
    test_refusals();
    test_write();
    test_tmp();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    run(cmd);
    return tap_done();
}
