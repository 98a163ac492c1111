/* A run's life: its options, sl_run_new/exec/free, events, secrets, results
 * (engine/run.h; the parts are listed in engine/run_int.h). */
#include "engine/run_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/rand.h"
#include "core/secret.h"

/* ---- ids and events ---- */

static unsigned long long rng_next(unsigned long long *s)
{
    /* splitmix64 from a getrandom seed: ids unique and not guessable,
     * without a system call for each node's */
    unsigned long long z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void sl_rx_uuid(sl_run *r, char out[40])
{
    pthread_mutex_lock(&r->ev_lock);
    unsigned long long a = rng_next(&r->rng), b = rng_next(&r->rng);
    pthread_mutex_unlock(&r->ev_lock);
    snprintf(out, 40, "%08llx-%04llx-4%03llx-%04llx-%012llx", a >> 32, (a >> 16) & 0xffff,
             a & 0xfff, ((b >> 48) & 0x3fff) | 0x8000, b & 0xffffffffffffULL);
}

void sl_rx_emit(sl_run *r, const char *event, sl_value *data)
{
    if (!r->opts.on_event) {
        json_decref(data);
        return;
    }
    sl_value *m = sl_secret_mask_value(data);  /* every secret sluice knows */
    json_decref(data);
    data = m;
    pthread_mutex_lock(&r->ev_lock);
    r->opts.on_event(event, data, r->opts.event_ud);
    pthread_mutex_unlock(&r->ev_lock);
    json_decref(data);
}

/* ---- runs ---- */

void sl_run_opts_init(sl_run_opts *o)
{
    memset(o, 0, sizeof *o);
    sl_limits_default(&o->limits);
}

const char *sl_run_status_name(sl_run_status s)
{
    switch (s) {
    case SL_RUN_RUNNING: return "running";
    case SL_RUN_SUCCEEDED: return "succeeded";
    case SL_RUN_FAILED: return "failed";
    case SL_RUN_STOPPED: return "stopped";
    case SL_RUN_PARTIAL: return "partial-succeeded";
    }
    return "unknown";
}

/* Converts a declared variable's value (env/conversation) to its type. */
static sl_value *typed_value(const sl_value *decl, const sl_value *given)
{
    const char *t = json_string_value(json_object_get(decl, "value_type"));
    const sl_value *v = given ? given : json_object_get(decl, "value");
    if (!v)
        v = json_null();
    if (t && strcmp(t, "number") == 0 && json_is_string(v)) {
        sl_value *num = sl_value_number_from_text(json_string_value(v));
        if (num)
            return num;
    }
    if (t && (strcmp(t, "object") == 0 || strncmp(t, "array", 5) == 0) && json_is_string(v)) {
        json_error_t je;
        sl_value *pv = json_loads(json_string_value(v), JSON_DECODE_ANY, &je);
        if (pv)
            return pv;
    }
    if (t && strcmp(t, "string") == 0 && !json_is_string(v) && !json_is_null(v)) {
        sl_buf b;
        sl_buf_init(&b, 0);
        sl_value_text(v, &b);
        sl_value *s = json_stringn(b.data ? b.data : "", b.len);
        sl_buf_release(&b);
        return s ? s : json_string("");
    }
    return json_incref((sl_value *)v);
}

/* The run's sandbox policy (sandbox/policy.h): sluice.yml's, the app's,
 * then the caller's overrides; its sizes and times go into L. */
static void policy_init(sl_run *r)
{
    const sl_value *cfg = sl_config_sandbox(r->opts.config);
    sl_sandbox_policy *p = &r->policy;
    sl_sandbox_policy_init(p, r->g->sandboxed);
    p->memory_bytes = r->L.sandbox_memory_bytes;
    p->disk_bytes = r->L.sandbox_disk_bytes;
    p->cpu_cores = r->L.sandbox_cpu_cores;
    p->max_procs = r->L.sandbox_max_procs;
    p->command_timeout_s = r->L.command_timeout_s;
    sl_sandbox_policy_layer(p, cfg);
    sl_sandbox_policy_layer(p, r->g->sandbox);
    if (r->opts.sandbox_provider)
        snprintf(p->provider, sizeof p->provider, "%s", r->opts.sandbox_provider);
    if (r->opts.net_given)
        sl_sandbox_policy_net(p, r->opts.net, r->opts.net_allow);
    sl_sandbox_policy_settings(p, cfg, r->g->sandbox);
    r->L.sandbox_memory_bytes = p->memory_bytes;
    r->L.sandbox_disk_bytes = p->disk_bytes;
    r->L.sandbox_cpu_cores = p->cpu_cores;
    r->L.sandbox_max_procs = p->max_procs;
    r->L.command_timeout_s = p->command_timeout_s;
}

sl_run *sl_run_new(const sl_graph *g, const sl_run_opts *opts)
{
    sl_run *r = sl_xcalloc(1, sizeof *r);
    r->g = g;
    r->opts = *opts;
    r->L = opts->limits;
    if (r->L.workers < 1)
        r->L.workers = 1;
    policy_init(r);
    r->pool = sl_pool_new(NULL);
    sl_pool_reserve(r->pool, (size_t)g->nnodes + 3);
    r->outputs = json_object();
    pthread_mutex_init(&r->ev_lock, NULL);
    pthread_mutex_init(&r->sb_lock, NULL);
    r->made = json_object();
    r->resources = json_array();
    /* Workflows show their answers only in events; a chat's make its answer. */
    if (opts->on_event || !strcmp(g->mode, "advanced-chat"))
        r->plan = g->stream_plan;
    sl_buf_init(&r->answer, r->L.max_string_bytes ? r->L.max_string_bytes * 4 : 0);
    sl_rand_bytes(&r->rng, sizeof r->rng, &r->no_rand);  /* sl_run_exec refuses */
    if (opts->run_id && *opts->run_id)
        snprintf(r->id, sizeof r->id, "%s", opts->run_id);
    else
        sl_rx_uuid(r, r->id);

    /* env.* and conversation.* */
    sl_value *env = json_object();
    for (size_t i = 0; i < json_array_size(g->env_vars); i++) {
        const sl_value *d = json_array_get(g->env_vars, i);
        const char *name = json_string_value(json_object_get(d, "name"));
        if (!name)
            continue;
        const sl_value *given = json_object_get(opts->env_override, name);
        sl_value *v = typed_value(d, given);
        const char *t = json_string_value(json_object_get(d, "value_type"));
        if (t && strcmp(t, "secret") == 0 && json_is_string(v) && json_string_length(v) >= 4) {
            sl_run_secret(r, json_string_value(v));
        }
        json_object_set_new(env, name, v);
    }
    sl_pool_set_node(r->pool, "env", env);
    sl_value *conv = json_object();
    for (size_t i = 0; i < json_array_size(g->conv_vars); i++) {
        const sl_value *d = json_array_get(g->conv_vars, i);
        const char *name = json_string_value(json_object_get(d, "name"));
        if (name)
            json_object_set_new(conv, name,
                                typed_value(d, json_object_get(opts->conversation, name)));
    }
    sl_pool_set_node(r->pool, "conversation", conv);
    return r;
}

static void set_sys(sl_run *r)
{
    const sl_run_opts *o = &r->opts;
    sl_value *sys = json_object();
    json_object_set_new(sys, "query", json_string(o->query ? o->query : ""));
    json_object_set_new(sys, "files", json_array());
    json_object_set_new(sys, "user_id", json_string(o->user_id ? o->user_id : "sluice-cli"));
    json_object_set_new(sys, "conversation_id",
                        json_string(o->conversation_id ? o->conversation_id : ""));
    json_object_set_new(sys, "dialogue_count", json_integer(1));
    json_object_set_new(sys, "app_id", json_string(""));
    json_object_set_new(sys, "workflow_id", json_string(r->opts.workflow_id ? r->opts.workflow_id : ""));
    json_object_set_new(sys, "workflow_run_id", json_string(r->id));
    json_object_set_new(sys, "timestamp", json_integer(sl_rx_wall()));
    if (!strcmp(r->g->mode, "workflow"))
        json_object_del(sys, "query");
    sl_pool_set_node(r->pool, "sys", sys);
}

int sl_run_exec(sl_run *r, sl_err *err)
{
    if (r->no_rand.code) {
        r->status = SL_RUN_FAILED;
        r->error = sl_xstrdup(r->no_rand.msg);
        r->error_code = r->no_rand.code;
        sl_err_move(err, &r->no_rand);
        return -1;
    }
    r->t0 = sl_clock_s();
    long long created = sl_rx_wall();
    r->created_at = created;
    set_sys(r);
    r->status = SL_RUN_RUNNING;
    if (r->opts.on_event) {
        sl_value *d = json_object();
        json_object_set_new(d, "id", json_string(r->id));
        json_object_set_new(d, "workflow_id",
                            json_string(r->opts.workflow_id ? r->opts.workflow_id : ""));
        json_object_set_new(d, "inputs", r->opts.inputs ? json_incref(r->opts.inputs)
                                                        : json_object());
        json_object_set_new(d, "created_at", json_integer(created));
        sl_rx_emit(r, "workflow_started", d);
    }
    sched s;
    sl_rx_sched_init(&s, r, -1, 0, r->pool, r->L.workers);
    sl_rx_sched_run(&s, r->g->start);
    r->steps = s.steps;
    if (s.stopped || atomic_load(&r->cancel)) {
        r->status = SL_RUN_STOPPED;
        r->error = sl_xstrdup("the run was stopped");
        r->error_code = SL_ECANCELED;
        r->error_type = sl_xstrdup("Stopped");
    } else if (s.abort) {
        r->status = SL_RUN_FAILED;
        r->error = sl_xstrdup(s.fail_msg ? s.fail_msg : "failed");
        r->error_code = s.fail_code ? s.fail_code : SL_ENODE;
        r->error_type = s.fail_type ? sl_xstrdup(s.fail_type) : NULL;
        r->error_setting = s.fail_setting;
    } else {
        r->status = atomic_load(&r->exceptions) ? SL_RUN_PARTIAL : SL_RUN_SUCCEEDED;
    }
    sl_rx_sched_release(&s);
    pthread_mutex_lock(&r->sb_lock);
    sl_sandbox_destroy(r->sandbox);
    r->sandbox = NULL;
    pthread_mutex_unlock(&r->sb_lock);
    if (!strcmp(r->g->mode, "advanced-chat"))
        json_object_set_new(r->outputs, "answer",
                            json_stringn(r->answer.data ? r->answer.data : "", r->answer.len));
    r->conversation = sl_pool_node(r->pool, "conversation");
    /* What the run shows from here on (results, stored runs, the CLI)
     * carries no secret sluice knows. */
    sl_secret_mask_inplace(&r->error);
    sl_value *shown = sl_secret_mask_value(r->outputs);
    json_decref(r->outputs);
    r->outputs = shown;
    r->t1 = sl_clock_s();
    r->finished_at = sl_rx_wall();
    if (r->opts.on_event) {
        sl_value *d = json_object();
        json_object_set_new(d, "id", json_string(r->id));
        json_object_set_new(d, "workflow_id",
                            json_string(r->opts.workflow_id ? r->opts.workflow_id : ""));
        json_object_set_new(d, "status", json_string(sl_run_status_name(r->status)));
        json_object_set_new(d, "outputs", json_incref(r->outputs));
        json_object_set_new(d, "error", r->error ? json_string(r->error) : json_null());
        json_object_set_new(d, "elapsed_time", json_real(r->t1 - r->t0));
        json_object_set_new(d, "total_tokens", json_integer(atomic_load(&r->tokens)));
        json_object_set_new(d, "total_steps", json_integer(r->steps));
        json_object_set_new(d, "exceptions_count", json_integer(atomic_load(&r->exceptions)));
        json_object_set_new(d, "created_at", json_integer(created));
        json_object_set_new(d, "finished_at", json_integer(r->finished_at));
        sl_rx_emit(r, "workflow_finished", d);
    }
    if (!r->error)
        return 0;
    sl_err_set(err, r->error_code, "%s", r->error);
    if (err) {
        sl_err_set_type(err, r->error_type);
        err->setting = r->error_setting;
    }
    return -1;
}

void sl_run_cancel(sl_run *r)
{
    atomic_store(&r->cancel, 1);
}

void sl_run_free(sl_run *r)
{
    if (!r)
        return;
    sl_pool_free(r->pool);
    json_decref(r->outputs);
    json_decref(r->conversation);
    free(r->error);
    free(r->error_type);
    sl_err_clear(&r->no_rand);
    for (int i = 0; i < r->nsecrets; i++)
        sl_secret_free(r->secrets[i]);
    free(r->secrets);
    sl_buf_release(&r->answer);
    pthread_mutex_destroy(&r->ev_lock);
    sl_sandbox_destroy(r->sandbox);
    free(r->sandbox_error);
    sl_sandbox_policy_release(&r->policy);
    sl_rx_files_cleanup(r);
    free(r->files_dir);
    json_decref(r->made);
    json_decref(r->resources);
    pthread_mutex_destroy(&r->sb_lock);
    free(r);
}

sl_value *sl_run_mask(sl_run *r, const sl_value *v)
{
    (void)r;
    return sl_secret_mask_value((sl_value *)v);
}

void sl_run_secret(sl_run *r, const char *s)
{
    if (!s || strlen(s) < SL_SECRET_MIN)
        return;
    pthread_mutex_lock(&r->sb_lock);
    r->secrets = sl_xrealloc(r->secrets, (size_t)(r->nsecrets + 1) * sizeof *r->secrets);
    r->secrets[r->nsecrets++] = sl_xstrdup(s);
    sl_secret_add(s);
    pthread_mutex_unlock(&r->sb_lock);
}

sl_run_status sl_run_status_of(const sl_run *r) { return r->status; }
const sl_value *sl_run_outputs(const sl_run *r) { return r->outputs; }
const char *sl_run_error(const sl_run *r) { return r->error; }
int sl_run_steps(const sl_run *r) { return r->steps; }
double sl_run_elapsed(const sl_run *r) { return r->t1 - r->t0; }
const char *sl_run_id(const sl_run *r) { return r->id; }
long long sl_run_tokens(const sl_run *r) { return atomic_load(&r->tokens); }
long long sl_run_created_at(const sl_run *r) { return r->created_at; }
long long sl_run_finished_at(const sl_run *r) { return r->finished_at; }
const sl_value *sl_run_conversation(const sl_run *r) { return r->conversation; }
const sl_value *sl_run_retriever_resources(const sl_run *r) { return r->resources; }

