/*
 * extract_isolate — documents are read in a confined process of their
 * own: what it may not do, and how its end reaches the caller.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "extract/isolate.h"
#include "tap.h"
#include "util.h"

static bool always(void *ud)
{
    (void)ud;
    return true;
}

int main(void)
{
    /* the filter itself, in a child: files, sockets, processes, exec */
    int p[2];
    if (pipe(p))
        return 1;
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        char r[5] = "....";
        if (sl_extract_confine())
            _exit(2);
        r[0] = open("/etc/hostname", O_RDONLY) < 0 && errno == EPERM ? 'y' : 'n';
        r[1] = socket(AF_INET, SOCK_STREAM, 0) < 0 && errno == EPERM ? 'y' : 'n';
        r[2] = fork() < 0 && errno == EPERM ? 'y' : 'n';
        char *argv[] = {"true", NULL};
        r[3] = execv("/bin/true", argv) < 0 && errno == EPERM ? 'y' : 'n';
        if (write(p[1], r, 4) != 4)
            _exit(3);
        _exit(0);
    }
    close(p[1]);
    char got[5] = "";
    ssize_t n = read(p[0], got, 4);
    close(p[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK(n == 4 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "a confined process still writes and "
          "exits (%.4s, status %d)", got, st);
    CHECK(got[0] == 'y', "a confined process cannot open a file");
    CHECK(got[1] == 'y', "a confined process cannot make a socket");
    CHECK(got[2] == 'y', "a confined process cannot start a process");
    CHECK(got[3] == 'y', "a confined process cannot exec");

    sl_extract_run r;
    sl_extract_run_default(&r);
    sl_buf out;
    sl_buf_init(&out, 0);
    sl_err err = {0};
    CHECK(sl_extract_isolated(SL_DOC_CSV, "a,b\n", 4, &r, &out, &err) == -1 &&
              err.code == SL_EUNSUPPORTED && strstr(err.msg, "sl_extract_set_helper"),
          "without a helper program set, reading is refused and says so: %s", err.msg);
    sl_err_clear(&err);
    CHECK(sl_extract_isolated(SL_DOC_DOC, "x", 1, &r, &out, &err) == -1 &&
              err.code == SL_EUNSUPPORTED &&
              !strcmp(err.msg, "Unstructured API URL is not configured for DOC file processing."),
          "a format no reader reads is refused as Dify does, with no process started: %s",
          err.msg);
    sl_err_clear(&err);

    const char *helper = built_sluice();
    if (!helper) {
        for (int i = 0; i < 5; i++)
            SKIP("the reader's text and errors", "no sluice is built beside this test");
        sl_buf_release(&out);
        return tap_done();
    }
    sl_extract_set_helper(helper);
    CHECK(sl_extract_isolated(SL_DOC_CSV, "a,b\n1,2\n", 8, &r, &out, &err) == 0 &&
              out.len == 30 && !memcmp(out.data, "| a | b |\n| - | - |\n| 1 | 2 |\n", 30),
          "a CSV comes back from the reader as Dify's table (%zu bytes)", out.len);
    out.len = 0;
    CHECK(sl_extract_isolated(SL_DOC_JSON, "{", 1, &r, &out, &err) == -1 &&
              err.code == SL_EPARSE &&
              !strncmp(err.msg, "Failed to decode or parse JSON file: ", 37) && out.len == 0,
          "the reader's own error comes back whole: %s", err.msg);
    sl_err_clear(&err);
    r.timeout_s = 1e-9;  /* over before the reader has started */
    CHECK(sl_extract_isolated(SL_DOC_CSV, "a,b\n", 4, &r, &out, &err) == -1 &&
              err.code == SL_ETIMEOUT && err.setting &&
              !strcmp(err.setting, "extract_timeout_s") && out.len == 0,
          "a reader past extract_timeout_s is stopped, and the error names the limit: %s",
          err.msg);
    sl_err_clear(&err);
    r.timeout_s = 60;
    r.stop = always;
    CHECK(sl_extract_isolated(SL_DOC_CSV, "a,b\n", 4, &r, &out, &err) == -1 &&
              err.code == SL_ECANCELED,
          "a stopped run stops the reader: %s", err.msg);
    sl_err_clear(&err);
    r.stop = NULL;
    /* a limit the reader hit comes back with its setting: multiparts
     * nested past extract_xml_depth */
    sl_buf eml, inner;
    sl_buf_init(&eml, 0);
    sl_buf_init(&inner, 0);
    sl_buf_adds(&eml, "Content-Type: text/plain\r\n\r\ndeep");
    for (int i = 5; i >= 0; i--) {
        sl_buf_reset(&inner);
        sl_buf_addf(&inner, "Content-Type: multipart/mixed; boundary=\"b%d\"\r\n\r\n--b%d\r\n", i,
                    i);
        sl_buf_add(&inner, eml.data, eml.len);
        sl_buf_addf(&inner, "\r\n--b%d--\r\n", i);
        sl_buf_reset(&eml);
        sl_buf_add(&eml, inner.data, inner.len);
    }
    sl_buf_release(&inner);
    r.lim.max_xml_depth = 3;
    CHECK(sl_extract_isolated(SL_DOC_EML, eml.data, eml.len, &r, &out, &err) == -1 &&
              err.code == SL_ELIMIT && err.setting && !strcmp(err.setting, "extract_xml_depth"),
          "a reader's limit comes back naming its setting (%s: %s)",
          err.setting ? err.setting : "none", err.msg);
    sl_err_clear(&err);
    sl_buf_release(&eml);
    r.lim.max_xml_depth = 256;
    sl_extract_set_helper("/nonexistent/sluice");
    CHECK(sl_extract_isolated(SL_DOC_CSV, "a,b\n", 4, &r, &out, &err) == -1 && err.msg &&
              strstr(err.msg, "/nonexistent/sluice"),
          "a helper that cannot start is named: %s", err.msg);
    sl_err_clear(&err);
    sl_buf_release(&out);
    return tap_done();
}
