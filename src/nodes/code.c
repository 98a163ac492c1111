/*
 * code — Dify's code node: python3 or javascript `main(...)` returning a
 * dict, run in the run's sandbox (sandbox/), outputs checked the way Dify
 * checks them.
 *
 * Fields: code_language (python3 | javascript), code, variables[{variable,
 * value_selector}], outputs{name: {type, children}}; `dependencies` is
 * read and ignored, as in Dify.
 *
 * The inputs travel as JSON on the program's stdin, never pasted into
 * source text.  The runner keeps a private copy of stdout for the result
 * and points the user's stdout at stderr, so print() cannot corrupt the
 * result; what the code printed is shown in process_data.logs.  Python
 * calls main(**inputs); JavaScript calls main(inputs) and, unlike Dify,
 * awaits a main that returns a Promise.
 *
 * Output checks follow Dify's CodeNode._transform_result (messages
 * verbatim, limits from sl_limits code_*): missing outputs, types, string
 * length (in characters; NULs removed), number range and precision, array
 * lengths, nesting depth, and undeclared keys (CodeNodeError).  Two Dify
 * quirks are left out: strings that look like "1e+5" stay strings, and
 * nested paths read "obj.x" (graphon's fix), not ".obj.x".
 */
#include <math.h>
#include <time.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rand.h"
#include "engine/graph.h"
#include "engine/limits.h"
#include "sandbox/sandbox.h"
#include "nodes/code.h"
#include "engine/node.h"

/* The runners.  The program's stdout and stderr are the user's, as in
 * Dify: what the code prints goes to stdout, errors and tracebacks to
 * stderr, and stderr is the node's error when the code fails.  The result
 * is written last on stdout after a marker the host made up for this run
 * (`marker` in the payload), so prints cannot be mistaken for it.
 *
 * The python3 runner uses the _json accelerator directly: importing the
 * json package pulls in re and enum, which costs more than starting the
 * interpreter. */
static const char py_runner[] =
    "import _json, os, sys\n"
    "def _sluice_run():\n"
    "    class Ctx: pass\n"
    "    c = Ctx(); c.strict = True; c.object_hook = None; c.object_pairs_hook = None\n"
    "    c.parse_float = float; c.parse_int = int; c.parse_constant = float; c.memo = {}\n"
    "    data = _json.make_scanner(c)(sys.stdin.buffer.read().decode('utf-8'), 0)[0]\n"
    "    code = data['code']\n"
    "    def done(status, text=None):\n"
    "        if text: sys.stderr.write(text)\n"
    "        sys.stdout.flush(); sys.stderr.flush()\n"
    "        os._exit(status)\n"
    "    g = {'__name__': '__main__', '__builtins__': __builtins__}\n"
    "    try:\n"
    "        exec(compile(code, '<code>', 'exec'), g)\n"
    "        main = g.get('main')\n"
    "        if not callable(main):\n"
    "            raise NameError('the code defines no function main(...)')\n"
    "        result = main(**data['inputs'])\n"
    "    except BaseException as e:\n"
    "        import linecache, traceback\n"
    "        linecache.cache['<code>'] = (len(code), None, code.splitlines(True), '<code>')\n"
    "        tb = e.__traceback__\n"
    "        while tb is not None and tb.tb_frame.f_code.co_filename != '<code>':\n"
    "            tb = tb.tb_next\n"
    "        done(1, ''.join(traceback.format_exception(type(e), e, tb)))\n"
    "    if not isinstance(result, dict):\n"
    "        done(3, 'Result must be a dict, got %s\\n' % type(result).__name__)\n"
    "    def fix(v):\n"
    "        if isinstance(v, bool) or v is None: return v\n"
    "        if isinstance(v, float) and v in (float('inf'), float('-inf')):\n"
    "            return 1.7e308 if v > 0 else -1.7e308\n"
    "        if isinstance(v, int): return v if -2**63 <= v < 2**63 else float(v)\n"
    "        if isinstance(v, dict): return {str(k): fix(x) for k, x in v.items()}\n"
    "        if isinstance(v, (list, tuple)): return [fix(x) for x in v]\n"
    "        return v\n"
    "    def default(o):\n"
    "        raise TypeError('Object of type %s is not JSON serializable' % type(o).__name__)\n"
    "    enc = _json.make_encoder({}, default, _json.encode_basestring_ascii, None, ': ', ', ',\n"
    "                             False, False, False)\n"
    "    try:\n"
    "        text = data['marker'] + ''.join(enc(fix(result), 0))\n"
    "    except (TypeError, ValueError, RecursionError) as e:\n"
    "        done(3, 'the result cannot be sent as JSON: %s\\n' % e)\n"
    "    sys.stdout.flush()\n"
    "    view = memoryview(text.encode('ascii'))\n"
    "    while view:\n"
    "        view = view[os.write(1, view):]\n"
    "    done(0)\n"
    "_sluice_run()\n";

static const char js_runner[] =
    "(() => {\n"
    "const fs = require('fs');\n"
    "const data = JSON.parse(fs.readFileSync(0, 'utf8'));\n"
    "const fail = (e, code) => {\n"
    "  let text = e && e.stack ? e.stack : String(e);\n"
    "  text = text.split('\\n').filter((l) => !/^\\s+at (\\[eval\\]|.*node:internal|eval \\(<anonymous>)/.test(l))\n"
    "    .map((l) => l.replace(/\\(?eval at [^,]*, <anonymous>:(\\d+):(\\d+)\\)?/, '(<code>:$1:$2)'))\n"
    "    .join('\\n');\n"
    "  process.stderr.write(text + '\\n', () => process.exit(code || 1));\n"
    "};\n"
    "let fn;\n"
    "try {\n"
    "  fn = (0, eval)(data.code + '\\n;typeof main === \"function\" ? main : undefined');\n"
    "} catch (e) { return fail(e); }\n"
    "if (typeof fn !== 'function')\n"
    "  return fail(new ReferenceError('the code defines no function main(...)'));\n"
    "Promise.resolve().then(() => fn(data.inputs)).then((r) => {\n"
    "  if (r === null || typeof r !== 'object' || Array.isArray(r)) {\n"
    "    const t = r === null ? 'NoneType' : Array.isArray(r) ? 'list'\n"
    "      : typeof r === 'string' ? 'str' : typeof r === 'boolean' ? 'bool'\n"
    "      : typeof r === 'number' ? (Number.isInteger(r) ? 'int' : 'float')\n"
    "      : r === undefined ? 'undefined (main returned nothing)' : typeof r;\n"
    "    return fail('Result must be a dict, got ' + t, 3);\n"
    "  }\n"
    "  let text;\n"
    "  try { text = JSON.stringify(r); }\n"
    "  catch (e) { return fail('the result cannot be sent as JSON: ' + e.message, 3); }\n"
    "  process.stdout.write(data.marker + text, () => process.exit(0));\n"
    "}, (e) => fail(e));\n"
    "})();\n";

static const char *const output_types[] = {"string",        "number",        "object",
                                           "boolean",       "array[string]", "array[number]",
                                           "array[object]", "array[boolean]", NULL};

static bool known_type(const char *t)
{
    for (const char *const *p = output_types; *p; p++)
        if (t && !strcmp(*p, t))
            return true;
    return false;
}

/* ---- load-time checks ---- */

static int check_outputs(sl_check *c, const sl_gnode *n, const sl_value *outs, const char *path,
                         int depth)
{
    int bad = 0;
    const char *name;
    const sl_value *o;
    char f[256];
    if (depth > 8) {
        sl_check_error(c, n, outs, NULL, path, "outputs nest deeper than 8 levels");
        return -1;
    }
    json_object_foreach((sl_value *)outs, name, o) {
        snprintf(f, sizeof f, "%s.%s", path, name);
        if (!json_is_object(o)) {
            sl_check_error(c, n, outs, name, f, "must be a mapping {type, children}");
            bad = 1;
            continue;
        }
        const char *t = json_string_value(json_object_get(o, "type"));
        if (!known_type(t)) {
            sl_check_error(c, n, o, "type", f,
                           "output type '%s' is not one a code node can produce; use string, "
                           "number, boolean, object or array[string|number|object|boolean]",
                           t ? t : "(none)");
            bad = 1;
            continue;
        }
        const sl_value *ch = json_object_get(o, "children");
        if (ch && !json_is_null(ch)) {
            if (!json_is_object(ch)) {
                sl_check_error(c, n, o, "children", f, "children must be a mapping of outputs");
                bad = 1;
            } else {
                bad |= check_outputs(c, n, ch, f, depth + 1) < 0;
            }
        }
    }
    return bad ? -1 : 0;
}

static int check(sl_check *c, const sl_gnode *n)
{
    const sl_value *d = n->data;
    int bad = 0;
    const char *lang = json_string_value(json_object_get(d, "code_language"));
    if (!lang || (strcmp(lang, "python3") && strcmp(lang, "javascript"))) {
        sl_check_error(c, n, d, "code_language", "code_language",
                       "code language '%s' is not supported; use python3 or javascript",
                       lang ? lang : "(none)");
        bad = 1;
    }
    if (!json_is_string(json_object_get(d, "code"))) {
        sl_check_error(c, n, d, "code", "code", "the node has no code (a text defining main)");
        bad = 1;
    }
    const sl_value *vars = json_object_get(d, "variables");
    if (vars && !json_is_null(vars) && !json_is_array(vars)) {
        sl_check_error(c, n, d, "variables", "variables", "must be a list of {variable, "
                       "value_selector}");
        bad = 1;
    }
    char f[64];
    for (size_t i = 0; json_is_array(vars) && i < json_array_size(vars); i++) {
        const sl_value *v = json_array_get(vars, i);
        snprintf(f, sizeof f, "variables[%zu]", i);
        if (!json_is_object(v) || !json_is_string(json_object_get(v, "variable"))) {
            sl_check_error(c, n, v, NULL, f, "must be a mapping with a variable name and a "
                           "value_selector");
            bad = 1;
            continue;
        }
        snprintf(f, sizeof f, "variables[%zu].value_selector", i);
        bad |= sl_check_selector(c, n, v, "value_selector", f, false) < 0;
    }
    const sl_value *outs = json_object_get(d, "outputs");
    if (!json_is_object(outs)) {
        sl_check_error(c, n, d, "outputs", "outputs", "must be a mapping of output names to "
                       "{type, children}");
        bad = 1;
    } else {
        bad |= check_outputs(c, n, outs, "outputs", 1) < 0;
    }
    return bad ? -1 : 0;
}

/* ---- output checks (Dify's _transform_result) ---- */

typedef struct {
    const struct sl_limits *L;
    sl_err err;  /* why the result was refused; its type is the error_type */
} vctx;

static sl_value *no_value(int rc)
{
    (void)rc;
    return NULL;
}

/* Refuses the result: SL_EINVAL with Dify's error class; NULL. */
#define vfail(v, type, ...) no_value(sl_err_typed(&(v)->err, SL_EINVAL, (type), __VA_ARGS__))

/* Python's name for the type of a JSON value, and type()'s repr. */
static const char *pyname(const sl_value *x)
{
    switch (json_typeof(x)) {
    case JSON_STRING: return "str";
    case JSON_INTEGER: return "int";
    case JSON_REAL: return "float";
    case JSON_TRUE:
    case JSON_FALSE: return "bool";
    case JSON_NULL: return "NoneType";
    case JSON_OBJECT: return "dict";
    case JSON_ARRAY: return "list";
    }
    return "object";
}

static const char *pyclass(const sl_value *x, char *buf, size_t n)
{
    snprintf(buf, n, "<class '%s'>", pyname(x));
    return buf;
}


/* Decimal places of a float as Python's Decimal(str(v)).normalize() sees them. */
static int precision_of(double d)
{
    char s[32];
    sl_fmt_double(d, s);
    const char *dot = strchr(s, '.'), *e = strpbrk(s, "eE");
    int frac = 0;
    if (dot) {
        const char *end = e ? e : s + strlen(s);
        const char *last = end - 1;
        while (last > dot && *last == '0')
            last--;
        frac = (int)(last - dot);
    }
    int exp = e ? atoi(e + 1) : 0;
    int p = frac - exp;
    return p > 0 ? p : 0;
}

/* Checks a number; a bool becomes 1/0 as in Python.  New reference. */
static sl_value *check_number(vctx *v, const sl_value *x, const char *path)
{
    if (json_is_null(x))
        return json_null();
    if (json_is_boolean(x))
        return json_integer(json_is_true(x));
    double d = sl_value_number(x);
    /* compared exactly, as Python compares a float with an int: 2**63 as a
     * float is out of range although it equals (double)INT64_MAX */
    bool out = json_is_integer(x) ? json_integer_value(x) < -9223372036854775807LL
                                  : !isfinite(d) || d >= 0x1p63 || d <= -0x1p63;
    if (out)
        return vfail(v, "OutputValidationError",
                     "Output variable `%s` is out of range, it must be between "
                     "-9223372036854775807 and 9223372036854775807.",
                     path);
    if (json_is_real(x) && precision_of(d) > v->L->code_max_precision)
        return vfail(v, "OutputValidationError",
                     "Output variable `%s` has too high precision, it must be less than %d digits.",
                     path, v->L->code_max_precision);
    return json_incref((sl_value *)x);
}

static sl_value *check_string(vctx *v, const sl_value *x, const char *path)
{
    if (json_is_null(x))
        return json_null();
    const char *s = json_string_value(x);
    size_t n = json_string_length(x);
    if (sl_utf8_chars(s, n) > v->L->code_max_string_length)
        return vfail(v, "OutputValidationError",
                     "The length of output variable `%s` must be less than %zu characters", path,
                     v->L->code_max_string_length);
    if (!memchr(s, 0, n))
        return json_incref((sl_value *)x);
    sl_buf b;
    sl_buf_init(&b, 0);
    for (size_t i = 0; i < n; i++)
        if (s[i])
            sl_buf_addc(&b, s[i]);
    sl_value *r = json_stringn(b.data ? b.data : "", b.len);
    sl_buf_release(&b);
    return r;
}

static sl_value *transform(vctx *v, const sl_value *schema, const sl_value *result,
                           const char *prefix, int depth);

/* An object declared without children: checked by what it holds, kept as is. */
static int check_untyped(vctx *v, const sl_value *obj, const char *prefix, int depth)
{
    if (depth > v->L->code_max_depth) {
        vfail(v, "DepthLimitError", "Depth limit %d reached, object too deep.",
              v->L->code_max_depth);
        return -1;
    }
    const char *k;
    const sl_value *x;
    char path[512];
    json_object_foreach((sl_value *)obj, k, x) {
        snprintf(path, sizeof path, "%s.%s", prefix, k);
        sl_value *r = NULL;
        if (json_is_object(x)) {
            if (check_untyped(v, x, path, depth + 1))
                return -1;
            continue;
        }
        if (json_is_boolean(x) || json_is_null(x))
            continue;
        if (json_is_number(x))
            r = check_number(v, x, path);
        else if (json_is_string(x))
            r = check_string(v, x, path);
        else if (json_is_array(x)) {
            /* Dify looks at the first element: None there means no check;
             * otherwise every element is None or of its kind (bool, int
             * and float are all numbers to Python). */
            json_type t = json_array_size(x) ? json_typeof(json_array_get(x, 0)) : JSON_NULL;
            if (t == JSON_TRUE || t == JSON_FALSE || t == JSON_REAL)
                t = JSON_INTEGER;
            for (size_t i = 0; t != JSON_NULL && i < json_array_size(x); i++) {
                const sl_value *e = json_array_get(x, i);
                json_type et = json_typeof(e);
                if (et == JSON_NULL)
                    continue;
                if (et == JSON_TRUE || et == JSON_FALSE || et == JSON_REAL)
                    et = JSON_INTEGER;
                if (et != t) {
                    vfail(v, "OutputValidationError",
                          "Output %s is not a valid array. make sure all elements are of the same "
                          "type.",
                          path);
                    return -1;
                }
                char epath[600];
                snprintf(epath, sizeof epath, "%.560s[%zu]", path, i);
                if (et == JSON_OBJECT && check_untyped(v, e, epath, depth + 1))
                    return -1;
                if (et == JSON_INTEGER && !json_is_boolean(e) && !(r = check_number(v, e, epath)))
                    return -1;
                if (et == JSON_STRING && !(r = check_string(v, e, epath)))
                    return -1;
                json_decref(r);
                r = NULL;
            }
            continue;
        }
        if (!r)
            return -1;
        json_decref(r);
    }
    return 0;
}

static sl_value *check_array(vctx *v, const char *t, const sl_value *x, const sl_value *children,
                             const char *path, int depth)
{
    char cls[48];
    if (json_is_null(x))
        return json_null();
    if (!json_is_array(x))
        return vfail(v, "OutputValidationError", "Output %s is not an array, got %s instead.",
                     path, pyclass(x, cls, sizeof cls));
    size_t n = json_array_size(x);
    size_t max = !strcmp(t, "array[number]")   ? (size_t)v->L->code_max_number_array_length
                 : !strcmp(t, "array[string]") ? (size_t)v->L->code_max_string_array_length
                 : !strcmp(t, "array[object]") ? (size_t)v->L->code_max_object_array_length
                                               : (size_t)-1;
    if (n > max)
        return vfail(v, "OutputValidationError",
                     "The length of output variable `%s` must be less than %zu elements.", path,
                     max);
    sl_value *out = json_array();
    char ipath[640];
    for (size_t i = 0; i < n; i++) {
        const sl_value *e = json_array_get(x, i);
        snprintf(ipath, sizeof ipath, "%s[%zu]", path, i);
        sl_value *r = NULL;
        if (!strcmp(t, "array[number]")) {
            if (!json_is_number(e) && !json_is_boolean(e)) {
                json_decref(out);
                return vfail(v, "OutputValidationError",
                             "The element at index %zu of output variable `%s` must be a number.",
                             i, path);
            }
            r = check_number(v, e, ipath);
        } else if (!strcmp(t, "array[string]")) {
            if (!json_is_string(e) && !json_is_null(e)) {
                json_decref(out);
                return vfail(v, "OutputValidationError",
                             "Output %s must be a string, got %s instead.", ipath, pyname(e));
            }
            r = check_string(v, e, ipath);
        } else if (!strcmp(t, "array[object]")) {
            if (json_is_null(e)) {
                r = json_null();
            } else if (!json_is_object(e)) {
                json_decref(out);
                return vfail(v, "OutputValidationError",
                             "Output %s is not an object, got %s instead at index %zu.", ipath,
                             pyclass(e, cls, sizeof cls), i);
            } else if (json_is_object(children)) {
                r = transform(v, children, e, ipath, depth + 1);
            } else {
                r = check_untyped(v, e, ipath, depth + 1) ? NULL : json_incref((sl_value *)e);
            }
        } else { /* array[boolean] */
            if (!json_is_boolean(e) && !json_is_null(e)) {
                json_decref(out);
                return vfail(v, "OutputValidationError",
                             "Output %s is not a boolean, got %s instead.", ipath,
                             pyclass(e, cls, sizeof cls));
            }
            r = json_incref((sl_value *)e);
        }
        if (!r) {
            json_decref(out);
            return NULL;
        }
        json_array_append_new(out, r);
    }
    return out;
}

static sl_value *transform(vctx *v, const sl_value *schema, const sl_value *result,
                           const char *prefix, int depth)
{
    if (depth > v->L->code_max_depth)
        return vfail(v, "DepthLimitError", "Depth limit %d reached, object too deep.",
                     v->L->code_max_depth);
    sl_value *out = json_object();
    const char *name;
    const sl_value *cfg;
    char path[600], cls[48];
    json_object_foreach((sl_value *)schema, name, cfg) {
        if (*prefix)
            snprintf(path, sizeof path, "%s.%s", prefix, name);
        else
            snprintf(path, sizeof path, "%s", name);
        const sl_value *x = json_object_get(result, name);
        if (!x) {
            json_decref(out);
            return vfail(v, "OutputValidationError", "Output %s is missing.", path);
        }
        const char *t = json_string_value(json_object_get(cfg, "type"));
        const sl_value *children = json_object_get(cfg, "children");
        sl_value *r = NULL;
        if (!t) {
            r = json_incref((sl_value *)x);
        } else if (!strcmp(t, "object")) {
            if (json_is_null(x))
                r = json_null();
            else if (!json_is_object(x))
                r = vfail(v, "OutputValidationError", "Output %s is not an object, got %s instead.",
                          path, pyclass(x, cls, sizeof cls));
            else if (json_is_object(children))
                r = transform(v, children, x, path, depth + 1);
            else
                r = check_untyped(v, x, path, depth + 1) ? NULL : json_incref((sl_value *)x);
        } else if (!strcmp(t, "number")) {
            if (!json_is_null(x) && !json_is_number(x) && !json_is_boolean(x))
                r = vfail(v, "OutputValidationError", "Output %s is not a number, got %s instead.",
                          path, pyclass(x, cls, sizeof cls));
            else
                r = check_number(v, x, path);
        } else if (!strcmp(t, "string")) {
            if (!json_is_null(x) && !json_is_string(x))
                r = vfail(v, "OutputValidationError", "Output %s must be a string, got %s instead.",
                          path, pyname(x));
            else
                r = check_string(v, x, path);
        } else if (!strcmp(t, "boolean")) {
            r = json_incref((sl_value *)x);  /* Dify does not check booleans */
        } else {
            r = check_array(v, t, x, children, path, depth);
        }
        if (!r) {
            json_decref(out);
            return NULL;
        }
        json_object_set_new(out, name, r);
    }
    if (json_object_size(out) != json_object_size(result)) {
        sl_buf extra;
        sl_buf_init(&extra, 512);
        const char *k;
        const sl_value *x;
        json_object_foreach((sl_value *)result, k, x) {
            if (!json_object_get(schema, k))
                sl_buf_addf(&extra, "%s'%s'", extra.len ? ", " : "", k);
        }
        vfail(v, "CodeNodeError",
              "Not all output parameters are validated: main returned %s%s%s, which the node "
              "does not declare; declare it as an output or leave it out of the result.",
              extra.data ? extra.data : "", *prefix ? " in " : "", prefix);
        sl_buf_release(&extra);
        json_decref(out);
        return NULL;
    }
    return out;
}

/* ---- run ---- */

static bool exec_cancelled(void *ud)
{
    return sl_exec_cancelled(ud);
}

/* The last `keep` bytes of text, at a line start where possible. */
static const char *tail(const sl_buf *b, size_t keep)
{
    if (!b->data)
        return "";
    if (b->len <= keep)
        return b->data;
    const char *p = b->data + b->len - keep;
    const char *nl = strchr(p, '\n');
    return nl && nl[1] ? nl + 1 : p;
}

int sl_code_marker(char out[SL_CODE_MARKER_SIZE], sl_err *err)
{
    char r[33];
    if (sl_rand_hex(r, 16, err))
        return -1;
    snprintf(out, SL_CODE_MARKER_SIZE, "\n<<sluice-result-%s>>", r);
    return 0;
}

int sl_code_exec(sl_sandbox *sb, bool python, const char *code, const sl_value *inputs,
                 const char *marker, double timeout_s, size_t max_output,
                 bool (*cancelled)(void *), void *ud, sl_sandbox_result *res, sl_err *err)
{
    sl_value *payload = json_pack("{s:s, s:O, s:s}", "code", code, "inputs", (sl_value *)inputs,
                                  "marker", marker);
    sl_buf in;
    sl_buf_init(&in, 0);
    sl_value_json(payload, &in);
    json_decref(payload);
    const char *argv_py[] = {"python3", "-c", py_runner, NULL};
    const char *argv_js[] = {"node", "-e", js_runner, NULL};
    sl_sandbox_cmd cmd = {.argv = python ? argv_py : argv_js,
                          .stdin_data = in.data ? in.data : "",
                          .stdin_len = in.len,
                          .timeout_s = timeout_s,
                          .max_output_bytes = max_output,
                          .cancelled = cancelled,
                          .ud = ud};
    int rc = sl_sandbox_exec(sb, &cmd, res, err);
    sl_buf_release(&in);
    return rc;
}

static int run(sl_node_exec *x)
{
    const sl_value *d = sl_exec_data(x);
    const struct sl_limits *L = sl_exec_limits(x);
    const char *lang = json_string_value(json_object_get(d, "code_language"));
    const char *code = json_string_value(json_object_get(d, "code"));
    bool py = !strcmp(lang, "python3");
    sl_value *inputs = json_object();
    const sl_value *vars = json_object_get(d, "variables");
    for (size_t i = 0; i < json_array_size(vars); i++) {
        const sl_value *var = json_array_get(vars, i);
        const char *name = json_string_value(json_object_get(var, "variable"));
        const sl_value *sel = json_object_get(var, "value_selector");
        sl_value *val = json_is_array(sel) && json_array_size(sel) ? sl_exec_get(x, sel) : NULL;
        json_object_set_new(inputs, name, val ? val : json_null());
        sl_exec_input(x, name, json_incref(json_object_get(inputs, name)));
    }
    sl_err err = {0};
    sl_sandbox_result res;
    sl_sandbox_result_init(&res);
    sl_sandbox *sb = sl_exec_sandbox(x, &err);
    if (!sb) {
        json_decref(inputs);
        int rc = sl_exec_fail(x, "CodeExecutionError", "the code could not run: %s", err.msg);
        sl_err_clear(&err);
        return rc;
    }
    double left = sl_exec_time_left(x);
    double timeout = L->code_timeout_s > 0 && L->code_timeout_s < left ? L->code_timeout_s : left;
    char marker[SL_CODE_MARKER_SIZE];
    int rc = sl_code_marker(marker, &err);
    if (!rc)
        rc = sl_code_exec(sb, py, code, inputs, marker, timeout, L->sandbox_output_bytes,
                          exec_cancelled, x, &res, &err);
    json_decref(inputs);
    if (rc) {
        rc = sl_exec_fail(x, "CodeExecutionError", "the code could not run: %s", err.msg);
        goto out;
    }
    /* stdout: what the code printed, then the marker and the result */
    const char *out = res.out.data ? res.out.data : "";
    const char *mark = NULL;
    for (const char *p = out; (p = memmem(p, res.out.len - (size_t)(p - out), marker,
                                          strlen(marker)));
         p++)
        mark = p;
    size_t printed = mark ? (size_t)(mark - out) : res.out.len;
    if (printed) {
        sl_buf b;
        sl_buf_init(&b, 0);
        size_t keep = printed > L->code_log_bytes ? L->code_log_bytes : printed;
        sl_utf8_clean(out + (printed - keep), keep, &b);
        sl_exec_process(x, "stdout", json_stringn(b.data ? b.data : "", b.len));
        sl_buf_release(&b);
    }
    if (res.err.len) {
        sl_buf b;
        sl_buf_init(&b, 0);
        const char *t = tail(&res.err, L->code_log_bytes);
        sl_utf8_clean(t, strlen(t), &b);
        sl_exec_process(x, "stderr", json_stringn(b.data ? b.data : "", b.len));
        sl_buf_release(&b);
    }
    switch (res.kind) {
    case SL_EXIT_TIMEOUT:
        rc = sl_exec_fail(x, "CodeExecutionError",
                          "the code ran for %.0f s and was stopped (limit code_timeout_s=%g)",
                          res.seconds, timeout);
        goto out;
    case SL_EXIT_CANCELED:
        rc = sl_exec_fail(x, "CodeExecutionError", "the run was stopped while the code ran");
        goto out;
    case SL_EXIT_LIMIT:
        rc = sl_exec_fail(x, "CodeExecutionError",
                          "the code was killed: it went over the sandbox's %s limit%s",
                          res.limit,
                          res.hit == SL_SBLIMIT_MEMORY   ? " (sandbox_memory_bytes)"
                          : res.hit == SL_SBLIMIT_OUTPUT ? " (sandbox_output_bytes)"
                          : res.hit == SL_SBLIMIT_CPU || res.hit == SL_SBLIMIT_CPU_OR_FILE_SIZE
                              ? " (sandbox_cpu_seconds)"
                              : "");
        goto out;
    case SL_EXIT_SIGNALED:
        rc = sl_exec_fail(x, "CodeExecutionError", "the code was killed by signal %d (%s)%s%s",
                          res.sig, strsignal(res.sig), res.note[0] ? "; " : "", res.note);
        goto out;
    case SL_EXIT_EXITED:
        break;
    }
    if (res.code != 0) {
        /* the error is what the program wrote on stderr (the traceback),
         * as in Dify */
        const char *text = tail(&res.err, L->code_error_bytes);
        size_t n = strlen(text);
        while (n && (text[n - 1] == '\n' || text[n - 1] == ' '))
            n--;
        if (!n)
            rc = sl_exec_fail(x, "CodeExecutionError", "the %s process exited with %d%s%s",
                              py ? "python3" : "node", res.code, res.note[0] ? "; " : "",
                              res.note);
        else
            rc = sl_exec_fail(x, "CodeExecutionError", "%.*s", (int)n, text);
        goto out;
    }
    if (!mark) {
        rc = sl_exec_fail(x, "CodeExecutionError",
                          "the code ended without a result (did it call exit() or close stdout?)");
        goto out;
    }
    const char *rj = mark + strlen(marker);
    size_t rn = res.out.len - (size_t)(rj - out);
    json_error_t je;
    sl_value *result = json_loadb(rj, rn, JSON_ALLOW_NUL, &je);
    if (!result && json_error_code(&je) == json_error_numeric_overflow)
        /* JavaScript writes 2**63 as 9223372036854776000; read numbers as
         * floats so the range check can name the output */
        result = json_loadb(rj, rn, JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL, &je);
    if (!json_is_object(result)) {
        json_decref(result);
        rc = sl_exec_fail(x, "CodeExecutionError", "the code's result could not be read (%s)",
                          je.text);
        goto out;
    }
    vctx v = {.L = L};
    sl_value *outs = transform(&v, json_object_get(d, "outputs"), result, "", 1);
    json_decref(result);
    if (!outs) {
        rc = sl_exec_fail(x, sl_err_type(&v.err, NULL), "%s", v.err.msg ? v.err.msg : "");
        sl_err_clear(&v.err);
        goto out;
    }
    const char *k;
    sl_value *val;
    json_object_foreach(outs, k, val) sl_exec_output(x, k, json_incref(val));
    json_decref(outs);
    rc = 0;
out:
    sl_err_clear(&err);
    sl_sandbox_result_release(&res);
    return rc;
}

const sl_node_kind sl_kind_code = {.type = "code", .check = check, .run = run};
