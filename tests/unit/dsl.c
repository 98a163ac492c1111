/*
 * DSL files as text (dsl/dsl.h): reading one within Dify's cap, and
 * exporting a parsed document without test entries, canvas notes and,
 * unless asked, secret values.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dsl/dsl.h"
#include "dsl/yaml.h"
#include "tap.h"
#include "util.h"

static void test_read(void)
{
    char path[] = "/tmp/sluice-dsl-XXXXXX";
    int fd = mkstemp(path);
    const char *yml = "app: {name: a}\n";
    if (fd < 0 || write(fd, yml, strlen(yml)) != (ssize_t)strlen(yml))
        abort();
    char *text = NULL;
    size_t len = 0;
    sl_err err = {0};
    CHECK(sl_dsl_read_file(path, &text, &len, &err) == 0 && len == strlen(yml) && text &&
              !strcmp(text, yml),
          "a DSL file is read whole");
    free(text);
    /* one byte over the cap */
    if (ftruncate(fd, (off_t)SL_DSL_MAX_BYTES + 1))
        abort();
    close(fd);
    text = NULL;
    CHECK(sl_dsl_read_file(path, &text, &len, &err) < 0 && err.code == SL_ELIMIT && !text &&
              strstr(err.msg, "larger than 10 MB"),
          "a file over 10 MB is refused: %s", err.msg ? err.msg : "");
    sl_err_clear(&err);
    unlink(path);
    CHECK(sl_dsl_read_file(path, &text, &len, &err) < 0 && err.code == SL_EIO &&
              strstr(err.msg, path),
          "a missing file names its path: %s", err.msg ? err.msg : "");
    sl_err_clear(&err);
}

static void test_export(void)
{
    const char *yml = "app: {name: a, mode: workflow}\n"
                      "kind: app\n"
                      "version: 0.1.5\n"
                      "workflow:\n"
                      "  environment_variables:\n"
                      "  - {name: k, value: s3cr3t-value, value_type: secret}\n"
                      "  - {name: p, value: plain, value_type: string}\n"
                      "  graph:\n"
                      "    nodes:\n"
                      "    - {id: s, type: custom, data: {type: start, title: S}}\n"
                      "    - {id: n, type: custom-note, data: {text: hi}}\n"
                      "sluice_test:\n"
                      "- {name: t}\n";
    sl_yaml_doc doc;
    sl_err err = {0};
    if (sl_yaml_parse(yml, strlen(yml), "t.yml", &doc, &err)) {
        CHECK(0, "the test document parses: %s", err.msg);
        return;
    }
    sl_buf out;
    sl_buf_init(&out, 0);
    CHECK(sl_dsl_export(doc.root, false, &out, &err) == 0 && out.data, "a document exports");
    const char *t = out.data ? out.data : "";
    CHECK(!strstr(t, "sluice_test") && !strstr(t, "custom-note") && strstr(t, "start"),
          "without its test entries and canvas notes");
    CHECK(!strstr(t, "s3cr3t-value") && strstr(t, "plain"),
          "a secret's value is emptied, other values stay");
    sl_buf_release(&out);
    sl_buf_init(&out, 0);
    CHECK(sl_dsl_export(doc.root, true, &out, &err) == 0 && out.data &&
              strstr(out.data, "s3cr3t-value"),
          "include_secrets keeps it");
    CHECK(json_object_get(doc.root, "sluice_test") != NULL,
          "the document itself is left as it was");
    sl_buf_release(&out);
    sl_yaml_doc_release(&doc);
}

int main(void)
{
    test_read();
    test_export();
    return tap_done();
}
