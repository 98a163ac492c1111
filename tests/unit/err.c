/*
 * err — the fields callers decide on (code, type, setting), and the callers
 * that decide on them instead of on message text.
 */
#include "core/err.h"

#include <stdlib.h>
#include <string.h>

#include "tap.h"

static void test_fields(void)
{
    sl_err e = {0};
    CHECK(sl_err_typed(&e, SL_ENODE, "HTTPRequestError", "bad %s", "url") == -1 &&
              e.code == SL_ENODE && !strcmp(e.msg, "bad url") &&
              !strcmp(e.type, "HTTPRequestError") && !e.setting,
          "err: typed sets code, message and error_type");
    CHECK(!strcmp(sl_err_type(&e, "NodeError"), "HTTPRequestError"),
          "err: type() prefers the error's own type");
    sl_err_prefix(&e, "node 'x'");
    CHECK(!strcmp(e.msg, "node 'x': bad url") && !strcmp(e.type, "HTTPRequestError"),
          "err: prefix keeps the type");
    sl_err_set(&e, SL_EINVAL, "plain");
    CHECK(!e.type && !e.setting && !strcmp(sl_err_type(&e, "NodeError"), "NodeError"),
          "err: set replaces the type too; type() falls back");
    CHECK(!strcmp(sl_err_type(NULL, "X"), "X"), "err: type() of no error is the fallback");
    CHECK(sl_err_limit(&e, SL_ELIMIT, "agent_max_turns", "used %d turns", 30) == -1 &&
              e.code == SL_ELIMIT && !strcmp(e.setting, "agent_max_turns") &&
              !strcmp(e.msg, "used 30 turns") && !e.type,
          "err: limit names the setting to raise");
    sl_err_set_type(&e, "AgentLimitError");
    CHECK(!strcmp(e.type, "AgentLimitError") && !strcmp(e.setting, "agent_max_turns"),
          "err: set_type adds a type and keeps the setting");
    sl_err_set_type(&e, e.type);  /* its own type: copied before it is freed */
    CHECK(!strcmp(e.type, "AgentLimitError"), "err: set_type with its own type");
    sl_err_set_type(&e, NULL);
    CHECK(!e.type, "err: set_type(NULL) removes the type");
    sl_err_limit(&e, SL_ETIMEOUT, "max_time_s", "slow");
    sl_err_set_type(&e, "WorkflowTimeout");
    sl_err d = {0};
    sl_err_set(&d, SL_EIO, "old");
    sl_err_move(&d, &e);
    CHECK(d.code == SL_ETIMEOUT && !strcmp(d.msg, "slow") && !strcmp(d.type, "WorkflowTimeout") &&
              !strcmp(d.setting, "max_time_s"),
          "err: move carries every field");
    CHECK(e.code == SL_OK && !e.msg && !e.type && !e.setting, "err: move leaves the source clear");
    sl_err_move(NULL, &d);
    CHECK(d.code == SL_OK && !d.msg && !d.type, "err: move to NULL releases the error");
    CHECK(sl_err_typed(NULL, SL_EIO, "T", "x") == -1 && sl_err_limit(NULL, SL_ELIMIT, "s", "x") == -1,
          "err: NULL err is allowed");
    sl_err_set(&e, SL_ENOTFOUND, "no app with id 'x'");
    CHECK(!strcmp(sl_errcode_name(e.code), "not-found"), "err: not-found code has a name");
    sl_err_clear(&e);
    CHECK(e.code == SL_OK && !e.msg && !e.type && !e.setting, "err: clear releases every field");
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    test_fields();
    return tap_done();
}
