#!/usr/bin/env python3
"""llmd - a stand-in LLM server for the sluice tests (standard library only).

usage: llmd.py [--port PORT] [--port-file PATH] [--scripts DIR]

Listens on 127.0.0.1 (PORT 0, the default: a free port).  Once listening it
writes the port to PATH (atomically: the file appears complete), or prints
it as the only line on stdout when there is no --port-file.  Serves until
SIGTERM or SIGINT.  Every request runs on its own (daemon) thread.
--scripts DIR (else $LLMD_SCRIPTS, else tests/agent/scripts; relative to the
current directory at start) holds the JSON scripts of the script behaviour.

Endpoints
  POST /v1/chat/completions, /chat/completions   OpenAI Chat Completions;
        needs "Authorization: Bearer KEY"
  POST /v1/messages                              Anthropic Messages; needs
        x-api-key and anthropic-version headers, and max_tokens in the body
  GET  /v1/models, /models                       the behaviour names (OpenAI
        list format, same auth as chat completions)
  POST /v1/embeddings, /embeddings               OpenAI embeddings (same auth)
  POST /v1/rerank, /rerank                       Jina/Cohere rerank (same auth)
  GET  /__log     every request since the last reset, as a JSON array of
                  {method, path, headers, body}; header names lowercased,
                  authorization and x-api-key values replaced by
                  "<redacted:LEN>"; body parsed JSON (the raw text when it
                  does not parse, null when empty)
  POST /__reset   clears the log, the per-model counters and the id counter

Any API key works except the literal "bad-key" (401, as does a missing key).

The reply is chosen by the request's "model": "BEHAVIOUR" or
"BEHAVIOUR:ARG" (ARG percent-decoded; "+" stays "+").  Unknown -> 404.
"stream": true gives SSE (OpenAI chunks and "data: [DONE]"; Anthropic
message_start, ping, content_block_start/delta/stop, message_delta,
message_stop), anything else one JSON body.  With OpenAI
stream_options.include_usage every chunk carries "usage": null and a last
chunk with empty choices carries the usage.  Streams end by closing the
connection (no Content-Length, no chunked encoding).

  echo              the reply text is compact sorted JSON of {messages,
                    system, params (other top-level fields except model,
                    messages, stream, stream_options, system, tools), tools};
                    streamed 7 characters at a time
  text[:WORDS]      WORDS (default "Hello from llmd."), word by word
  think             "<think>pondering</think>The answer is 42."
  reasoning         OpenAI: reasoning_content "pondering" (3 pieces) then
                    content "The answer is 42."; Anthropic: a thinking block
                    then a text block
  json[:JSON]       exactly JSON (default {}), 7 characters at a time
  badjson           {"a": 1,
  tool[:NAME[:ARGS]]  one tool call (default get_weather {"city":"Paris"};
                    ARGS default {}), arguments in 3 pieces; ids call_1
                    (OpenAI) / toolu_1 (Anthropic)
  tools2            get_weather {"city":"Paris"} and get_time {"tz":"UTC"};
                    OpenAI pieces interleaved between indexes 0 and 1
  ollama-tools      the same two calls, OpenAI: both at index 0 with
                    different ids, one chunk each (Anthropic: two blocks)
  badargs           get_weather with the arguments {"city": "Par
  midstream-error   "Hello", " from", then an in-band error and a close;
                    blocking: status 200 with the error JSON as the body
  ratelimit:N       the first N requests with this exact model string: 429,
                    Retry-After: 1; then like text
  error500:N        the same with 500 and no Retry-After
  drop              one text piece, then the connection closes (no [DONE] /
                    message_stop); blocking: closes without any response
  slow[:MS]         "a b c d e" word by word, MS (default 100) ms before
                    each word; blocking: answers after 5*MS ms
  hang[:S]          never answers; closes after S (default 60) seconds or
                    when the client goes away
  malformed         one valid chunk, a "data: {not json" line, then [DONE]
                    (Anthropic: the normal end events); blocking: the body
                    is "{not json"
  length            "truncated", finish_reason length / stop_reason max_tokens
  usage-only-last   "Seven words of text in this reply."; usage 11/7; OpenAI
                    streaming always sends the usage, and only in a last
                    chunk with empty choices
  script:NAME       a scripted multi-turn conversation (an agent's tool
                    loop): the JSON file NAME (or NAME.json) in the scripts
                    folder; NAME is a file name (no "/", not "." or "..",
                    else 400); no such file: 404; a bad script: 400 naming
                    the turn.  Read on every request, so tests may rewrite it.

    {"turns": [
      {"tool_calls": [{"name": "bash", "arguments": {"command": "ls"}}]},
      {"expect": ["SKILL.md"], "expect_system": ["<available_skills>"],
       "text": "Done."}]}

    The turn answered is turns[T], T = the number of assistant messages
    already in the request (0 on the first call).  A turn has "text" (words, streamed word
    by word) and/or "tool_calls" ([{name, arguments: any JSON object}],
    arguments sent as a compact JSON string (OpenAI) or as the tool_use
    input (Anthropic), streamed in 3 pieces like tool; ids call_T_I /
    toolu_T_I, I counting from 1 within the turn); finish tool_calls /
    tool_use when it has calls, else stop / end_turn.  Optional checks,
    made before answering, on plain substrings:
      "expect": [...]         each must occur in the tool results sent
                              since the last assistant message (OpenAI role
                              tool content; Anthropic tool_result content,
                              a string or text blocks), joined by newlines
      "expect_system": [...]  each must occur in the system prompt (OpenAI
                              system/developer messages; Anthropic system)
    A missing one makes the reply, instead of the turn, the text
      SCRIPT MISMATCH turn T: expected "S" in the tool results, got: X
    ("in the system prompt" for expect_system; X = their first 500
    characters), finish stop.  Past the last turn: "SCRIPT END: no turn T",
    finish stop.

Usage: prompt = whitespace-separated words in all message texts (and the
Anthropic system prompt), completion = words generated (text, reasoning,
tool arguments).  Ids: chatcmpl-llmd-N / msg_llmd_N, N counting from 1
after each reset.

Embeddings: {"model", "input": string or non-empty list of strings (an
empty string: 400), "encoding_format": "float" (default) | "base64"
(little-endian float32), "dimensions": 1..4096 (optional)}.  The answer is
{"object": "list", "data": [{"object": "embedding", "index", "embedding"}],
"model", "usage": {"prompt_tokens", "total_tokens"}} with the usage the
whitespace-separated words of the input.  The model picks the behaviour:

  hash[:DIMS]       the embedding: lowercase the text, take its words (\\w+,
                    Unicode), and for each the sha256 of its UTF-8 bytes:
                    bytes 0-3 (little-endian) mod DIMS pick a bucket, the
                    low bit of byte 4 a sign (1: -1, else +1); the sum is
                    L2-normalised (all zeros for a text without words).
                    DIMS: "dimensions" when given, else the ARG, else 64.
                    Texts sharing words are close in cosine.
  flaky[:N]         429 with Retry-After: 1 for the first N (default 1)
                    requests of this model string and input; then as hash
  drop[:N]          the first N (default 1) requests of this model string
                    and input: the connection closes with no answer; then
                    as hash
  shuffled          data in reverse order, each with its correct index
  short / long      one vector fewer / one more (index = the input count)
  noindex           the last item has no index
  dupindex          item 1 has index 0 (two inputs or more)
  badindex          the last item's index is the input count
  baddims           the last vector has one dimension fewer
  varydims          8 x (the number of inputs) dimensions, whatever asked
  nan / overflow    the first value is NaN (a bare NaN token, as Python's
                    json writes it) / 1e39 (past float32)
  badvalue          the first value is the string "0.5"
  slow[:MS]         answers after MS (default 1000) ms; gives up early
                    when the client goes away
  huge[:MB]         a 200 body of MB (default 80) megabytes: a JSON start,
                    then spaces
  error200          status 200 with an OpenAI error object as the body
  Every one but huge and error200 (and nan, overflow, badvalue: their
  values) answers hash vectors of "dimensions", else 8.

Rerank: {"model", "query", "documents": [strings], "top_n"?,
"return_documents"?}.  Relevance = the fraction of the query's distinct
words (as hash sees words) found among the document's; results sorted by
it, best first, ties by index, cut to top_n; {"id", "model", "results":
[{"index", "relevance_score", "document": {"text"} when
return_documents}], "usage": {"total_tokens"}}.

  overlap           as above
  tei               TEI's answer: a top-level [{"index", "score"}]
  flaky[:N]         429 with Retry-After: 1 for the first N requests of
                    this model and query
  badindex          the first result's index is the number of documents
  dupindex          the second result repeats the first's index
  noscore           the first result has no relevance_score
  nan               the first relevance_score is NaN (a bare NaN token)
  slow[:MS]         answers after MS (default 1000) ms
An unknown embedding or rerank model: 404 naming the ones llmd knows.
"""
import argparse
import base64
import hashlib
import json
import math
import os
import re
import select
import signal
import socket
import struct
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DEFAULT_TEXT = "Hello from llmd."
CREATED = 1700000000
OPENAI_PATHS = ("/v1/chat/completions", "/chat/completions")
ANTHROPIC_PATH = "/v1/messages"
BEHAVIOURS = ("echo", "text", "think", "reasoning", "json", "badjson", "tool",
              "tools2", "ollama-tools", "badargs", "midstream-error", "ratelimit",
              "error500", "drop", "slow", "hang", "malformed", "length",
              "usage-only-last", "script")
EMBED_PATHS = ("/v1/embeddings", "/embeddings")
EMBED_BEHAVIOURS = ("hash", "flaky", "drop", "shuffled", "short", "long", "noindex", "dupindex",
                    "badindex", "baddims", "varydims", "nan", "overflow", "badvalue", "slow",
                    "huge", "error200")
RERANK_PATHS = ("/v1/rerank", "/rerank")
RERANK_BEHAVIOURS = ("overlap", "tei", "flaky", "badindex", "dupindex", "noscore", "nan",
                     "slow")


class State:
    lock = threading.Lock()
    scripts = "tests/agent/scripts"   # made absolute in main()
    log = []
    counts = {}
    next_id = 0


def new_id():
    with State.lock:
        State.next_id += 1
        return State.next_id


def compact(obj, **kw):
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False, **kw)


# ---------------------------------------------------------------- replies

class Block:
    """One logical piece of output: text, reasoning or a tool call."""

    def __init__(self, kind, pieces, call=0, name="", args=""):
        self.kind = kind          # "text" | "reasoning" | "tool"
        self.pieces = pieces      # what is streamed, in order
        self.call = call          # tool calls: 1, 2 ... or "T_I" (ids call_N / toolu_N)
        self.name = name
        self.args = args

    @property
    def text(self):
        return "".join(self.pieces)


class Reply:
    def __init__(self, blocks, finish="stop"):
        self.blocks = blocks
        self.finish = finish      # "stop" | "length" | "tool_calls"
        self.usage = None         # (prompt, completion); filled in by build()
        self.delay = 0.0          # seconds before each streamed piece
        self.cut = None           # ("error" | "drop" | "malformed", after N pieces)
        self.hang = None          # seconds to hold the request unanswered
        self.interleave = False   # tools2: OpenAI argument pieces alternate
        self.ollama = False       # ollama-tools: every call at index 0
        self.force_usage = False  # usage-only-last


class HTTPError(Exception):
    def __init__(self, status, kind, message, headers=()):
        super().__init__(message)
        self.status, self.kind, self.message, self.headers = status, kind, message, headers


def word_pieces(text):
    """Word by word, keeping the whitespace: the pieces join to text."""
    pieces = re.findall(r"\s*\S+", text)
    rest = text[sum(map(len, pieces)):]
    if rest:
        if pieces:
            pieces[-1] += rest
        else:
            pieces = [rest]
    return pieces


def fixed_pieces(text, size=7):
    return [text[i:i + size] for i in range(0, len(text), size)]


def thirds(s):
    k = len(s)
    a, b = round(k / 3), round(2 * k / 3)
    return [s[:a], s[a:b], s[b:]]


def content_text(content):
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for part in content:
            if isinstance(part, str):
                out.append(part)
            elif isinstance(part, dict):
                if isinstance(part.get("text"), str):
                    out.append(part["text"])
                elif part.get("type") == "tool_result":
                    out.append(content_text(part.get("content")))
        return " ".join(out)
    return ""


def prompt_words(body):
    n = len(content_text(body.get("system")).split())
    for m in body.get("messages") or []:
        if isinstance(m, dict):
            n += len(content_text(m.get("content")).split())
    return n


def text_reply(text, pieces=None, finish="stop"):
    return Reply([Block("text", word_pieces(text) if pieces is None else pieces)], finish)


def tool_reply(calls, pieces):
    """calls: [(name, args)]; pieces: a function splitting the arguments."""
    blocks = [Block("tool", pieces(args), i + 1, name, args)
              for i, (name, args) in enumerate(calls)]
    return Reply(blocks, "tool_calls")


# ---------------------------------------------------------------- scripts

def load_script(model, name):
    """The turns of script NAME (a list of checked dicts), or an HTTPError."""
    if not name or "/" in name or "\\" in name or "\0" in name or name in (".", ".."):
        raise HTTPError(400, "invalid",
                        "model %s: a script name is a file name in the scripts folder %s "
                        "(no \"/\", not \".\" or \"..\")" % (model, State.scripts))
    path = os.path.join(State.scripts, name)
    if not os.path.isfile(path) and os.path.isfile(path + ".json"):
        path += ".json"
    try:
        with open(path, encoding="utf-8") as f:
            script = json.load(f)
    except FileNotFoundError:
        raise HTTPError(404, "model", "model %s: no script %s (nor %s.json) in %s"
                        % (model, name, name, State.scripts))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise HTTPError(400, "invalid", "model %s: cannot read %s as JSON: %s" % (model, path, e))

    def bad(what):
        return HTTPError(400, "invalid", "model %s: %s: %s" % (model, path, what))

    turns = script.get("turns") if isinstance(script, dict) else None
    if not isinstance(turns, list):
        raise bad('the script must be an object {"turns": [turn, ...]}')
    for t, turn in enumerate(turns):
        if not isinstance(turn, dict):
            raise bad("turn %d is not an object" % t)
        unknown = set(turn) - {"text", "tool_calls", "expect", "expect_system"}
        if unknown:
            raise bad("turn %d: unknown key(s) %s" % (t, ", ".join(sorted(unknown))))
        if "text" in turn and not isinstance(turn["text"], str):
            raise bad("turn %d: text must be a string" % t)
        for key in ("expect", "expect_system"):
            v = turn.get(key, [])
            if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
                raise bad("turn %d: %s must be a list of strings" % (t, key))
        calls = turn.get("tool_calls", [])
        if not isinstance(calls, list):
            raise bad("turn %d: tool_calls must be a list" % t)
        for i, c in enumerate(calls, 1):
            if not (isinstance(c, dict) and isinstance(c.get("name"), str) and c["name"]
                    and isinstance(c.get("arguments", {}), dict)):
                raise bad("turn %d: tool call %d needs a name and arguments (an object)" % (t, i))
    return turns


def tool_results(messages):
    """The text of the tool results sent since the last assistant message."""
    last = max([i for i, m in enumerate(messages)
                if isinstance(m, dict) and m.get("role") == "assistant"], default=-1)
    out = []
    for m in messages[last + 1:]:
        if not isinstance(m, dict):
            continue
        if m.get("role") == "tool":
            out.append(content_text(m.get("content")))
        elif isinstance(m.get("content"), list):
            out += [content_text(b.get("content")) for b in m["content"]
                    if isinstance(b, dict) and b.get("type") == "tool_result"]
    return "\n".join(out)


def system_prompt(body):
    parts = [content_text(body.get("system"))] if body.get("system") is not None else []
    parts += [content_text(m.get("content")) for m in body.get("messages")
              if isinstance(m, dict) and m.get("role") in ("system", "developer")]
    return "\n".join(parts)


def script_reply(model, name, body):
    turns = load_script(model, name)
    messages = body.get("messages")
    t = sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")
    if t >= len(turns):
        return text_reply("SCRIPT END: no turn %d" % t)
    turn = turns[t]
    for key, where, text in (("expect_system", "the system prompt", system_prompt(body)),
                             ("expect", "the tool results", tool_results(messages))):
        for want in turn.get(key, []):
            if want not in text:
                return text_reply('SCRIPT MISMATCH turn %d: expected "%s" in %s, got: %s'
                                  % (t, want, where, text[:500]))
    blocks = []
    if turn.get("text"):
        blocks.append(Block("text", word_pieces(turn["text"])))
    for i, c in enumerate(turn.get("tool_calls", []), 1):
        args = compact(c.get("arguments", {}))
        blocks.append(Block("tool", thirds(args), "%d_%d" % (t, i), c["name"], args))
    if not blocks:
        return text_reply("")
    return Reply(blocks, "tool_calls" if turn.get("tool_calls") else "stop")


def int_arg(model, arg, default):
    if arg == "":
        return default
    try:
        return int(arg)
    except ValueError:
        raise HTTPError(400, "invalid",
                        "model %s: %r is not a number" % (model, arg))


def build(model, body):
    """The Reply for this request, or an HTTPError to send instead."""
    name, has_arg, raw = model.partition(":")
    arg = urllib.parse.unquote(raw)
    if name == "echo":
        params = {k: v for k, v in body.items()
                  if k not in ("model", "messages", "stream", "stream_options", "system", "tools")}
        text = compact({"messages": body.get("messages"), "system": body.get("system"),
                        "params": params, "tools": body.get("tools")}, sort_keys=True)
        reply = text_reply(text, fixed_pieces(text))
    elif name == "text":
        reply = text_reply(arg if has_arg else DEFAULT_TEXT)
    elif name == "think":
        reply = text_reply("<think>pondering</think>The answer is 42.",
                           ["<think>", "pondering", "</think>", "The", " answer", " is", " 42."])
    elif name == "reasoning":
        reply = Reply([Block("reasoning", ["pon", "der", "ing"]),
                       Block("text", word_pieces("The answer is 42."))])
    elif name == "json":
        text = arg if has_arg else "{}"
        reply = text_reply(text, fixed_pieces(text))
    elif name == "badjson":
        reply = text_reply('{"a": 1,', fixed_pieces('{"a": 1,'))
    elif name == "tool":
        tname, has_args, targs = raw.partition(":")
        tname = urllib.parse.unquote(tname) if has_arg else "get_weather"
        targs = urllib.parse.unquote(targs) if has_args else ('{}' if has_arg else '{"city":"Paris"}')
        if not tname:
            raise HTTPError(400, "invalid", "model %s: empty tool name" % model)
        reply = tool_reply([(tname, targs)], thirds)
    elif name == "tools2":
        reply = tool_reply([("get_weather", '{"city":"Paris"}'), ("get_time", '{"tz":"UTC"}')], thirds)
        reply.interleave = True
    elif name == "ollama-tools":
        reply = tool_reply([("get_weather", '{"city":"Paris"}'), ("get_time", '{"tz":"UTC"}')],
                           lambda a: [a])
        reply.ollama = True
    elif name == "badargs":
        reply = tool_reply([("get_weather", '{"city": "Par')], thirds)
    elif name == "midstream-error":
        reply = text_reply("Hello from")
        reply.cut = ("error", 2)
    elif name in ("ratelimit", "error500"):
        n = int_arg(model, arg, 1)
        with State.lock:
            count = State.counts[model] = State.counts.get(model, 0) + 1
        if count <= n:
            if name == "ratelimit":
                raise HTTPError(429, "ratelimit",
                                "Rate limit reached for %s (request %d of %d refused)" % (model, count, n),
                                [("Retry-After", "1")])
            raise HTTPError(500, "server",
                            "The server had an error processing your request (%s, request %d of %d)"
                            % (model, count, n))
        reply = text_reply(DEFAULT_TEXT)
    elif name == "drop":
        reply = text_reply(DEFAULT_TEXT)
        reply.cut = ("drop", 1)
    elif name == "slow":
        reply = text_reply("a b c d e")
        reply.delay = int_arg(model, arg, 100) / 1000.0
    elif name == "hang":
        reply = text_reply("")
        reply.hang = float(int_arg(model, arg, 60))
    elif name == "malformed":
        reply = text_reply("Hello")
        reply.cut = ("malformed", 1)
    elif name == "length":
        reply = text_reply("truncated", finish="length")
    elif name == "usage-only-last":
        reply = text_reply("Seven words of text in this reply.")
        reply.force_usage = True
        reply.usage = (11, 7)
    elif name == "script":
        reply = script_reply(model, arg, body)
    else:
        raise HTTPError(404, "model", "The model `%s` does not exist "
                        "(llmd knows: %s)" % (model, ", ".join(BEHAVIOURS)))
    if reply.usage is None:
        made = sum(len(b.text.split()) for b in reply.blocks)
        reply.usage = (prompt_words(body), made)
    return reply


# ---------------------------------------------------------------- embeddings

def words_of(text):
    """Lowercased words (\\w+, Unicode), as the hash embedding and overlap see them."""
    return re.findall(r"\w+", text.lower())


def hash_vector(text, dims):
    """Bag of words: each word's sha256 picks a bucket and a sign; L2-normalised
    (all zeros for a text without words)."""
    v = [0.0] * dims
    for w in words_of(text):
        h = hashlib.sha256(w.encode("utf-8")).digest()
        v[int.from_bytes(h[:4], "little") % dims] += -1.0 if h[4] & 1 else 1.0
    norm = math.sqrt(sum(x * x for x in v))
    return [x / norm for x in v] if norm else v


def refuse_first(model, inputs, n):
    """429 with Retry-After: 1 for the first n requests of this model and input."""
    key = (model, compact(inputs))
    with State.lock:
        count = State.counts[key] = State.counts.get(key, 0) + 1
    if count <= n:
        raise HTTPError(429, "ratelimit", "Rate limit reached for %s (request %d of %d refused)"
                        % (model, count, n), [("Retry-After", "1")])


class Embedded:
    def __init__(self, items):
        self.items = items        # [(index or None, vector)] in the order sent
        self.raw = None           # bytes sent instead (a hostile body)
        self.delay = 0.0


def embed_reply(model, texts, dims):
    name, has_arg, raw = model.partition(":")
    arg = urllib.parse.unquote(raw)
    if name not in EMBED_BEHAVIOURS:
        raise HTTPError(404, "model", "The embedding model `%s` does not exist "
                        "(llmd knows: %s)" % (model, ", ".join(EMBED_BEHAVIOURS)))
    size = dims or (int_arg(model, arg, 64) if name == "hash" else 8)
    if name == "hash" and not 1 <= size <= 4096:
        raise HTTPError(400, "invalid", "model %s: dimensions from 1 to 4096" % model)
    if name == "varydims":
        size = 8 * len(texts)
    if name == "flaky":
        refuse_first(model, texts, int_arg(model, arg, 1))
    if name == "drop":
        key = (model, compact(texts))
        with State.lock:
            count = State.counts[key] = State.counts.get(key, 0) + 1
        if count <= int_arg(model, arg, 1):
            raise Gone()
    out = Embedded([(i, hash_vector(t, size)) for i, t in enumerate(texts)])
    if name == "slow":
        out.delay = int_arg(model, arg, 1000) / 1000.0
    elif name == "shuffled":
        out.items.reverse()
    elif name == "short":
        out.items.pop()
    elif name == "long":
        out.items.append((len(texts), hash_vector("extra", size)))
    elif name == "noindex":
        out.items[-1] = (None, out.items[-1][1])
    elif name == "dupindex" and len(texts) > 1:
        out.items[1] = (0, out.items[1][1])
    elif name == "badindex":
        out.items[-1] = (len(texts), out.items[-1][1])
    elif name == "baddims":
        out.items[-1] = (out.items[-1][0], out.items[-1][1][:-1])
    elif name == "nan":
        out.items[0][1][0] = float("nan")   # json.dumps writes NaN, as Python servers do
    elif name == "overflow":
        out.items[0][1][0] = 1e39           # past float32
    elif name == "badvalue":
        out.items[0][1][0] = "0.5"
    elif name == "huge":
        mb = int_arg(model, arg, 80)
        out.raw = b'{"object": "list", "data": [' + b" " * (mb << 20) + b"]}"
    elif name == "error200":
        out.raw = {"error": {"message": "embedding backend exploded", "type": "server_error"}}
    return out


# ---------------------------------------------------------------- formats

# Error kinds: (HTTP-neutral name) -> (OpenAI type, OpenAI code, Anthropic type)
ERROR_KINDS = {
    "auth": ("invalid_request_error", "invalid_api_key", "authentication_error"),
    "invalid": ("invalid_request_error", None, "invalid_request_error"),
    "model": ("invalid_request_error", "model_not_found", "not_found_error"),
    "endpoint": ("invalid_request_error", "unknown_url", "not_found_error"),
    "ratelimit": ("requests", "rate_limit_exceeded", "rate_limit_error"),
    "server": ("server_error", None, "api_error"),
    "overloaded": ("server_error", None, "overloaded_error"),
}
STOP_REASONS = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}


def error_body(fmt, kind, message):
    otype, code, atype = ERROR_KINDS[kind]
    if fmt == "anthropic":
        return {"type": "error", "error": {"type": atype, "message": message}}
    return {"error": {"message": message, "type": otype, "param": None, "code": code}}


class Gone(Exception):
    """The reply ends here: the connection is closed (on purpose or not)."""


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def send_response(self, code, message=None):
        self.send_response_only(code, message)   # no Server or Date header

    # -- plumbing

    def read_body(self):
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline().strip():
                        pass
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n > 0 else b""

    def send_json(self, status, obj, headers=()):
        body = obj if isinstance(obj, bytes) else compact(obj).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def send_error_json(self, fmt, err):
        self.send_json(err.status, error_body(fmt, err.kind, err.message), err.headers)

    def start_sse(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def write(self, data):
        try:
            self.wfile.write(data.encode("utf-8") if isinstance(data, str) else data)
            self.wfile.flush()
        except OSError:
            raise Gone()

    def wait(self, seconds):
        """Sleeps up to seconds; ends early (Gone) when the client hangs up."""
        end = time.monotonic() + seconds
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return
            try:
                ready, _, _ = select.select([self.connection], [], [], min(left, 0.2))
                if ready and not self.connection.recv(1, socket.MSG_PEEK):
                    raise Gone()
            except OSError:
                raise Gone()
            if ready:
                time.sleep(min(left, 0.2))   # bytes waiting (pipelining): keep sleeping

    # -- routing

    def handle_any(self):
        path = urllib.parse.urlsplit(self.path).path
        raw = self.read_body()
        if path == "/__log" and self.command == "GET":
            with State.lock:
                self.send_json(200, State.log)
            return
        if path == "/__reset" and self.command == "POST":
            with State.lock:
                State.log = []
                State.counts = {}
                State.next_id = 0
            self.send_json(200, {"reset": True})
            return
        try:
            body = json.loads(raw.decode("utf-8")) if raw else None
            parsed = True
        except (UnicodeDecodeError, ValueError):
            body, parsed = raw.decode("utf-8", "replace"), False
        headers = {}
        for k, v in self.headers.items():
            k = k.lower()
            if k in ("authorization", "x-api-key"):
                v = "<redacted:%d>" % len(v)
            headers[k] = headers[k] + ", " + v if k in headers else v
        with State.lock:
            State.log.append({"method": self.command, "path": self.path,
                              "headers": headers, "body": body})
        if not parsed:
            body = None
        try:
            if path in OPENAI_PATHS and self.command == "POST":
                self.complete("openai", body, raw)
            elif path == ANTHROPIC_PATH and self.command == "POST":
                self.complete("anthropic", body, raw)
            elif path in EMBED_PATHS and self.command == "POST":
                self.embeddings(body, raw)
            elif path in RERANK_PATHS and self.command == "POST":
                self.rerank(body, raw)
            elif path in ("/v1/models", "/models") and self.command == "GET":
                self.check_auth("openai")
                self.send_json(200, {"object": "list", "data": [
                    {"id": b, "object": "model", "created": CREATED, "owned_by": "llmd"}
                    for b in BEHAVIOURS]})
            else:
                raise HTTPError(404, "endpoint", "no endpoint %s %s" % (self.command, path))
        except HTTPError as err:
            fmt = "anthropic" if path == ANTHROPIC_PATH else "openai"
            self.send_error_json(fmt, err)
        except Gone:
            self.close_connection = True

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = handle_any

    def check_auth(self, fmt):
        if fmt == "openai":
            auth = self.headers.get("Authorization") or ""
            m = re.match(r"Bearer\s+(\S.*)$", auth.strip())
            if not m:
                raise HTTPError(401, "auth",
                                "You didn't provide an API key (Authorization: Bearer KEY).")
            if m.group(1).strip() == "bad-key":
                raise HTTPError(401, "auth", "Incorrect API key provided: bad-key.")
        else:
            key = self.headers.get("x-api-key")
            if not key:
                raise HTTPError(401, "auth", "x-api-key header is required")
            if key == "bad-key":
                raise HTTPError(401, "auth", "invalid x-api-key")
            if not self.headers.get("anthropic-version"):
                raise HTTPError(401, "auth", "anthropic-version header is required")

    def complete(self, fmt, body, raw):
        self.check_auth(fmt)
        if not isinstance(body, dict):
            raise HTTPError(400, "invalid",
                            "the body is not a JSON object" if raw else "the body is empty")
        if not isinstance(body.get("model"), str) or not body["model"]:
            raise HTTPError(400, "invalid", "model: a string is required")
        if not isinstance(body.get("messages"), list):
            raise HTTPError(400, "invalid", "messages: a list is required")
        if fmt == "anthropic" and not isinstance(body.get("max_tokens"), int):
            raise HTTPError(400, "invalid", "max_tokens: Field required")
        reply = build(body["model"], body)
        stream = body.get("stream") is True
        if reply.hang is not None:
            self.close_connection = True
            self.wait(reply.hang)
            raise Gone()
        n = new_id()
        if fmt == "openai":
            (self.openai_stream if stream else self.openai_blocking)(reply, body, "chatcmpl-llmd-%d" % n)
        else:
            (self.anthropic_stream if stream else self.anthropic_blocking)(reply, body, "msg_llmd_%d" % n)

    # -- embeddings and rerank (OpenAI /embeddings; Jina/Cohere /rerank)

    def embeddings(self, body, raw):
        self.check_auth("openai")
        if not isinstance(body, dict):
            raise HTTPError(400, "invalid",
                            "the body is not a JSON object" if raw else "the body is empty")
        model = body.get("model")
        if not isinstance(model, str) or not model:
            raise HTTPError(400, "invalid", "model: a string is required")
        texts = body.get("input")
        if isinstance(texts, str):
            texts = [texts]
        if not (isinstance(texts, list) and texts and all(isinstance(t, str) for t in texts)):
            raise HTTPError(400, "invalid", "input: a string or a non-empty list of strings "
                                            "is required")
        if any(t == "" for t in texts):
            raise HTTPError(400, "invalid", "input: '$.input' is invalid (an empty string)")
        fmt = body.get("encoding_format", "float")
        if fmt not in ("float", "base64"):
            raise HTTPError(400, "invalid", "encoding_format: float or base64")
        dims = body.get("dimensions")
        if dims is not None and (not isinstance(dims, int) or isinstance(dims, bool)
                                 or not 1 <= dims <= 4096):
            raise HTTPError(400, "invalid", "dimensions: an integer from 1 to 4096")
        out = embed_reply(model, texts, dims)
        if out.delay:
            self.wait(out.delay)
        if out.raw is not None:
            self.send_json(200, out.raw)
            return
        data = []
        for i, v in out.items:
            item = {"object": "embedding"}
            if i is not None:
                item["index"] = i
            if fmt == "base64" and all(isinstance(x, float) for x in v):
                item["embedding"] = base64.b64encode(struct.pack("<%df" % len(v), *v)).decode()
            else:
                item["embedding"] = v
            data.append(item)
        words = sum(len(t.split()) for t in texts)
        self.send_json(200, {"object": "list", "data": data, "model": model,
                             "usage": {"prompt_tokens": words, "total_tokens": words}})

    def rerank(self, body, raw):
        self.check_auth("openai")
        if not isinstance(body, dict):
            raise HTTPError(400, "invalid",
                            "the body is not a JSON object" if raw else "the body is empty")
        model, query, docs = body.get("model"), body.get("query"), body.get("documents")
        if not isinstance(model, str) or not model:
            raise HTTPError(400, "invalid", "model: a string is required")
        if not isinstance(query, str):
            raise HTTPError(400, "invalid", "query: a string is required")
        if not (isinstance(docs, list) and all(isinstance(d, str) for d in docs)):
            raise HTTPError(400, "invalid", "documents: a list of strings is required")
        top_n = body.get("top_n")
        if top_n is not None and (not isinstance(top_n, int) or isinstance(top_n, bool)
                                  or top_n < 1):
            raise HTTPError(400, "invalid", "top_n: a positive integer")
        name, has_arg, raw_arg = model.partition(":")
        arg = urllib.parse.unquote(raw_arg)
        if name == "flaky":
            refuse_first(model, query, int_arg(model, arg, 1))
        elif name == "slow":
            self.wait(int_arg(model, arg, 1000) / 1000.0)
        elif name not in RERANK_BEHAVIOURS:
            raise HTTPError(404, "model", "The rerank model `%s` does not exist "
                            "(llmd knows: %s)" % (model, ", ".join(RERANK_BEHAVIOURS)))
        qwords = set(words_of(query))
        scores = []
        for i, d in enumerate(docs):
            dwords = set(words_of(d))
            scores.append((len(qwords & dwords) / len(qwords) if qwords else 0.0, i))
        scores.sort(key=lambda p: (-p[0], p[1]))
        if top_n is not None:
            scores = scores[:top_n]
        if name == "tei":
            self.send_json(200, [{"index": i, "score": sc} for sc, i in scores])
            return
        results = []
        for sc, i in scores:
            r = {"index": i, "relevance_score": sc}
            if body.get("return_documents") is True:
                r["document"] = {"text": docs[i]}
            results.append(r)
        if name == "badindex" and results:
            results[0]["index"] = len(docs)
        elif name == "dupindex" and len(results) > 1:
            results[1]["index"] = results[0]["index"]
        elif name == "noscore" and results:
            del results[0]["relevance_score"]
        elif name == "nan" and results:
            results[0]["relevance_score"] = float("nan")   # json.dumps writes NaN
        words = len(query.split()) + sum(len(d.split()) for d in docs)
        self.send_json(200, {"id": "rerank-llmd-%d" % new_id(), "model": model,
                             "results": results, "usage": {"total_tokens": words}})

    def blocking_special(self, reply, fmt):
        """Blocking replies for the cut behaviours; True when handled."""
        if reply.delay:
            self.wait(reply.delay * sum(len(b.pieces) for b in reply.blocks))
        if not reply.cut:
            return False
        kind = reply.cut[0]
        if kind == "drop":
            self.close_connection = True
            raise Gone()
        if kind == "error":
            self.send_json(200, error_body(fmt, "overloaded", "upstream overloaded"))
        else:
            self.send_json(200, b"{not json")
        return True

    # -- OpenAI

    def openai_blocking(self, reply, body, rid):
        if self.blocking_special(reply, "openai"):
            return
        texts = [b for b in reply.blocks if b.kind == "text"]
        message = {"role": "assistant",
                   "content": "".join(b.text for b in texts) if texts else None}
        for b in reply.blocks:
            if b.kind == "reasoning":
                message["reasoning_content"] = b.text
        calls = [{"id": "call_%s" % b.call, "type": "function",
                  "function": {"name": b.name, "arguments": b.args}}
                 for b in reply.blocks if b.kind == "tool"]
        if calls:
            message["tool_calls"] = calls
        p, c = reply.usage
        self.send_json(200, {
            "id": rid, "object": "chat.completion", "created": CREATED, "model": body["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": reply.finish}],
            "usage": {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}})

    def openai_deltas(self, reply):
        tools = [b for b in reply.blocks if b.kind == "tool"]

        def start(b, index, args=""):
            return {"tool_calls": [{"index": index, "id": "call_%s" % b.call, "type": "function",
                                    "function": {"name": b.name, "arguments": args}}]}

        def piece(index, p):
            return {"tool_calls": [{"index": index, "function": {"arguments": p}}]}

        if reply.ollama:
            return [start(b, 0, b.args) for b in tools]
        if reply.interleave:
            out = [start(b, i) for i, b in enumerate(tools)]
            for j in range(max(len(b.pieces) for b in tools)):
                out += [piece(i, b.pieces[j]) for i, b in enumerate(tools) if j < len(b.pieces)]
            return out
        out, index = [], 0
        for b in reply.blocks:
            if b.kind == "text":
                out += [{"content": p} for p in b.pieces]
            elif b.kind == "reasoning":
                out += [{"reasoning_content": p} for p in b.pieces]
            else:
                out.append(start(b, index))
                out += [piece(index, p) for p in b.pieces]
                index += 1
        return out

    def openai_stream(self, reply, body, rid):
        opts = body.get("stream_options")
        usage_on = reply.force_usage or (isinstance(opts, dict) and opts.get("include_usage") is True)
        p, c = reply.usage
        usage = {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}

        def chunk(delta, finish=None, last=False):
            d = {"id": rid, "object": "chat.completion.chunk", "created": CREATED,
                 "model": body["model"],
                 "choices": [] if last else [{"index": 0, "delta": delta, "finish_reason": finish}]}
            if usage_on:
                d["usage"] = usage if last else None
            self.write("data: %s\n\n" % compact(d))

        self.start_sse()
        first = True
        for i, delta in enumerate(self.openai_deltas(reply), 1):
            if reply.delay:
                self.wait(reply.delay)
            if first:
                delta, first = dict({"role": "assistant"}, **delta), False
            chunk(delta)
            if reply.cut and reply.cut[1] == i:
                kind = reply.cut[0]
                if kind == "error":
                    self.write('data: {"error": {"message": "upstream overloaded", '
                               '"type": "server_error"}}\n\n')
                elif kind == "malformed":
                    self.write("data: {not json\n\ndata: [DONE]\n\n")
                raise Gone()
        chunk({"role": "assistant", "content": ""} if first else {}, reply.finish)
        if usage_on:
            chunk(None, last=True)
        self.write("data: [DONE]\n\n")

    # -- Anthropic

    def anthropic_blocking(self, reply, body, rid):
        if self.blocking_special(reply, "anthropic"):
            return
        content = []
        for b in reply.blocks:
            if b.kind == "text":
                content.append({"type": "text", "text": b.text})
            elif b.kind == "reasoning":
                content.append({"type": "thinking", "thinking": b.text, "signature": "llmd-signature"})
            else:
                try:
                    args = json.loads(b.args)
                except ValueError:
                    args = b.args   # what else: input is not an object then
                content.append({"type": "tool_use", "id": "toolu_%s" % b.call,
                                "name": b.name, "input": args})
        p, c = reply.usage
        self.send_json(200, {
            "id": rid, "type": "message", "role": "assistant", "model": body["model"],
            "content": content, "stop_reason": STOP_REASONS[reply.finish], "stop_sequence": None,
            "usage": {"input_tokens": p, "output_tokens": c}})

    def anthropic_stream(self, reply, body, rid):
        def event(name, data):
            self.write("event: %s\ndata: %s\n\n" % (name, compact(data)))

        p, c = reply.usage
        self.start_sse()
        event("message_start", {"type": "message_start", "message": {
            "id": rid, "type": "message", "role": "assistant", "model": body["model"],
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": p, "output_tokens": 1}}})
        event("ping", {"type": "ping"})
        sent = 0
        for index, b in enumerate(reply.blocks):
            if b.kind == "text":
                block, dtype, key = {"type": "text", "text": ""}, "text_delta", "text"
            elif b.kind == "reasoning":
                block, dtype, key = {"type": "thinking", "thinking": ""}, "thinking_delta", "thinking"
            else:
                block = {"type": "tool_use", "id": "toolu_%s" % b.call, "name": b.name, "input": {}}
                dtype, key = "input_json_delta", "partial_json"
            event("content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": block})
            for piece in b.pieces:
                if reply.delay:
                    self.wait(reply.delay)
                event("content_block_delta", {"type": "content_block_delta", "index": index,
                                               "delta": {"type": dtype, key: piece}})
                sent += 1
                if reply.cut and reply.cut[1] == sent:
                    kind = reply.cut[0]
                    if kind == "error":
                        event("error", {"type": "error", "error": {
                            "type": "overloaded_error", "message": "upstream overloaded"}})
                        raise Gone()
                    if kind == "drop":
                        raise Gone()
                    self.write("event: content_block_delta\ndata: {not json\n\n")
            if b.kind == "reasoning":
                event("content_block_delta", {"type": "content_block_delta", "index": index,
                                               "delta": {"type": "signature_delta",
                                                         "signature": "llmd-signature"}})
            event("content_block_stop", {"type": "content_block_stop", "index": index})
        event("message_delta", {"type": "message_delta",
                                "delta": {"stop_reason": STOP_REASONS[reply.finish],
                                          "stop_sequence": None},
                                "usage": {"output_tokens": c}})
        event("message_stop", {"type": "message_stop"})


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64

    def handle_error(self, request, client_address):
        # Clients hang up on purpose (timeouts, cancellation): no traceback.
        if not isinstance(sys.exc_info()[1], (ConnectionError, Gone)):
            super().handle_error(request, client_address)


def main():
    ap = argparse.ArgumentParser(description="stand-in LLM server for the sluice tests")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    ap.add_argument("--scripts", help="folder of the script:NAME behaviour's JSON scripts")
    args = ap.parse_args()
    State.scripts = os.path.abspath(args.scripts or os.environ.get("LLMD_SCRIPTS")
                                    or "tests/agent/scripts")
    server = Server(("127.0.0.1", args.port), Handler)
    port = server.server_address[1]
    if args.port_file:
        tmp = "%s.%d.tmp" % (args.port_file, os.getpid())
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.replace(tmp, args.port_file)
    else:
        print(port, flush=True)

    def stop(*_):
        # shutdown() waits for serve_forever, so call it off the main thread.
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    server.serve_forever(poll_interval=0.1)
    server.server_close()


if __name__ == "__main__":
    main()
