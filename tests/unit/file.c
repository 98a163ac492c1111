/*
 * file — the Dify file value sluice makes: Dify's keys in Dify's order
 * (clients compare the JSON as text), null where a field is not known, the
 * optional sha256 and url only when given.
 */
#include <stdlib.h>
#include <string.h>

#include "core/file.h"
#include "tap.h"

static void same(sl_value *v, const char *want, const char *what)
{
    char *got = v ? json_dumps(v, JSON_COMPACT) : NULL;
    CHECK(got && !strcmp(got, want), "%s: %s", what, got ? got : "(null)");
    free(got);
    json_decref(v);
}

int main(void)
{
    same(sl_file_new(&(sl_file){.id = "6f1c", .type = "document", .transfer_method = "tool_file",
                                .related_id = "6f1c", .filename = "a.pdf", .extension = ".pdf",
                                .mime_type = "application/pdf", .size = 12, .sha256 = "ab",
                                .url = "/files/6f1c"}),
         "{\"dify_model_identity\":\"__dify__file__\",\"id\":\"6f1c\",\"type\":\"document\","
         "\"transfer_method\":\"tool_file\",\"remote_url\":null,\"related_id\":\"6f1c\","
         "\"filename\":\"a.pdf\",\"extension\":\".pdf\",\"mime_type\":\"application/pdf\","
         "\"size\":12,\"sha256\":\"ab\",\"url\":\"/files/6f1c\"}",
         "every field, in Dify's order");
    same(sl_file_new(&(sl_file){.type = "custom", .transfer_method = "remote_url",
                                .remote_url = "https://e.x/a", .filename = "a", .extension = "",
                                .size = -1, .url = "https://e.x/a"}),
         "{\"dify_model_identity\":\"__dify__file__\",\"id\":null,\"type\":\"custom\","
         "\"transfer_method\":\"remote_url\",\"remote_url\":\"https://e.x/a\","
         "\"related_id\":null,\"filename\":\"a\",\"extension\":\"\",\"mime_type\":null,"
         "\"size\":-1,\"url\":\"https://e.x/a\"}",
         "a remote file: unknown fields null, size -1, no sha256");
    same(sl_file_new(&(sl_file){0}),
         "{\"dify_model_identity\":\"__dify__file__\",\"id\":null,\"type\":null,"
         "\"transfer_method\":null,\"remote_url\":null,\"related_id\":null,\"filename\":null,"
         "\"extension\":null,\"mime_type\":null,\"size\":0}",
         "nothing given: nulls, and neither sha256 nor url");
    sl_value *f = sl_file_new(&(sl_file){.filename = "x", .size = 1});
    CHECK(sl_value_is_file(f), "sluice takes it for a file value");
    json_decref(f);
    CHECK(sl_file_new(&(sl_file){.filename = "bad\xff.txt"}) == NULL,
          "a name that is not UTF-8 makes no value");
    CHECK(sl_file_new(&(sl_file){.filename = "a", .url = "\xc3"}) == NULL,
          "nor does a url that is not");
    return tap_done();
}
