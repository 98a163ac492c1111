/*
 * split — Dify's text cleaning and chunking for knowledge bases: the
 * pre-processing rules (CleanProcessor), the general ("paragraph") splitter
 * in its automatic and custom modes, and parent-child chunking
 * (docs/knowledge.md, "Chunking").
 *
 * Lengths are Unicode code points, as in Dify since PR #18097 (2025-04),
 * although Dify still calls the field max_tokens.  Text comes in as UTF-8
 * and must be valid (callers extract it first); invalid UTF-8 is an
 * SL_EINVAL error naming the byte offset.
 *
 * Ownership: chunks are the caller's; release them with
 * sl_split_chunks_release() / sl_split_parents_release() (also after a
 * failure, which may leave some chunks behind).  Errors come back through
 * sl_err; a limit that was hit is SL_ELIMIT with err->setting naming it:
 * `knowledge_max_input` (bytes of input) and `knowledge_max_chunks` (chunks
 * made, parents and children together).  Those two settings will be carried
 * by `sluice limits`; here the caller passes them in.  Nothing is truncated
 * silently.
 *
 * sl_split and sl_split_parent_child do not clean: callers run sl_clean
 * first, as Dify's index processors do.
 */
#ifndef SL_KNOWLEDGE_SPLIT_H
#define SL_KNOWLEDGE_SPLIT_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/value.h"

/* Dify's bounds on a custom chunk length (INDEXING_MAX_SEGMENTATION_TOKENS_LENGTH
 * is 4000 by default) and the automatic mode's fixed setting. */
#define SL_SPLIT_MIN_LENGTH 50
#define SL_SPLIT_MAX_LENGTH 4000
#define SL_SPLIT_AUTO_LENGTH 500
#define SL_SPLIT_AUTO_OVERLAP 50
/* A separator longer than this (bytes, as typed) is refused. */
#define SL_SPLIT_MAX_SEPARATOR 256

typedef struct {
    bool remove_extra_spaces;  /* "\n\n\n…" → "\n\n", runs of spaces → " " */
    bool remove_urls_emails;   /* emails and URLs go; markdown images stay */
    size_t max_input;          /* bytes (knowledge_max_input); 0: no limit */
    bool by_code_points;       /* tests: the reference path, not the byte stream */
} sl_clean_rules;

/* The text after Dify's pre-processing: always "<|" → "<", "|>" → ">" and
 * control characters (but \t \n \r) and U+FFFE removed, then the rules
 * that are on.  Appends to out (its cap bounds the result). */
int sl_clean(const char *text, size_t len, const sl_clean_rules *rules, sl_buf *out, sl_err *err);

typedef enum {
    SL_SPLIT_AUTOMATIC = 0, /* Dify's "automatic": 500/50, recursive separators */
    SL_SPLIT_CUSTOM,        /* "custom"/"hierarchical": fixed separator first */
} sl_split_mode;

typedef struct {
    sl_split_mode mode;
    /* custom only: the fixed separator as typed in Dify (\n, \t and \\
     * escapes are translated; NULL means "\n"; "" splits nothing), the
     * chunk length (1..SL_SPLIT_MAX_LENGTH; Dify's floor of
     * SL_SPLIT_MIN_LENGTH is applied by sl_split_rule_read) and the
     * overlap (0..max_length). */
    const char *separator;
    long max_length;
    long overlap;
    size_t max_chunks;      /* knowledge_max_chunks; 0: no limit */
    size_t max_input;       /* knowledge_max_input (bytes); 0: no limit */
} sl_split_opts;

typedef struct {
    char *text;             /* UTF-8, NUL-terminated, owned */
    size_t len;             /* bytes */
    size_t chars;           /* code points: Dify's length and word_count */
} sl_split_chunk;

typedef struct {
    sl_split_chunk *v;
    size_t n, alloc;
} sl_split_chunks;

void sl_split_chunks_release(sl_split_chunks *c);

/* General mode: chunks as Dify's paragraph index processor stores them
 * (leading punctuation removed, trimmed, empty ones dropped), appended to
 * out. */
int sl_split(const char *text, size_t len, const sl_split_opts *o, sl_split_chunks *out,
             sl_err *err);

typedef enum {
    SL_SPLIT_PARENT_PARAGRAPH = 0, /* parents split from the text */
    SL_SPLIT_PARENT_FULL_DOC,      /* the whole text is the one parent */
} sl_split_parent_mode;

typedef struct {
    sl_split_parent_mode parent_mode;
    sl_split_opts parent;   /* separator/max_length/overlap of the parents
                               (paragraph mode; mode is taken as custom) */
    sl_split_opts child;    /* the same for the children */
    size_t max_chunks;      /* knowledge_max_chunks: parents + children */
    size_t max_input;       /* knowledge_max_input (bytes) */
} sl_split_pc_opts;

typedef struct {
    sl_split_chunk parent;
    sl_split_chunks children;
} sl_split_parent;

typedef struct {
    sl_split_parent *v;
    size_t n, alloc;
} sl_split_parents;

void sl_split_parents_release(sl_split_parents *p);

/* Parent-child ("hierarchical") mode: parents, each with the children
 * split from its text; both only lose one leading "." or "。" and
 * surrounding white space, and empty ones are dropped (a parent whose
 * children are all empty is kept, with none).  A full-doc parent is the
 * text as it is (none when it is only white space). */
int sl_split_parent_child(const char *text, size_t len, const sl_split_pc_opts *o,
                          sl_split_parents *out, sl_err *err);

/* A Dify process rule ({"mode": …, "rules": {…}}, as in a dataset's
 * process_rule or the API's) read into options.  *hierarchical tells which
 * of split / pc was filled.  Errors carry Dify's messages ("No rules found
 * in process rule.", …); limits are left 0 for the caller to set.  The
 * separators point into process_rule, which must outlive the options. */
typedef struct {
    bool hierarchical;
    sl_clean_rules clean;
    sl_split_opts split;
    sl_split_pc_opts pc;
} sl_split_rule;

int sl_split_rule_read(const sl_value *process_rule, sl_split_rule *out, sl_err *err);

#endif
