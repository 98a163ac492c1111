/*
 * isolate — reading a hostile document in a process of its own.
 *
 * sl_extract_isolated hands the document to a fresh sluice process
 * (`sluice __extract`, the helper) through a sealed memfd and reads the
 * text back on a pipe.  The helper loads what its reader needs, then
 * limits itself (address space, CPU time, no files or processes) and
 * loads a seccomp filter that leaves it reading and writing the
 * descriptors it has, memory and exit: a parser bug a document exploits
 * finds no file, socket, process or exec to reach.  The host kills it at
 * the deadline, when its text passes the limit, or when the run stops.
 */
#ifndef SL_EXTRACT_ISOLATE_H
#define SL_EXTRACT_ISOLATE_H

#include <stdbool.h>

#include "extract/extract.h"

typedef struct {
    sl_extract_limits lim;
    double timeout_s;       /* wall seconds (extract_timeout_s) */
    size_t memory_bytes;    /* the helper's address space (extract_max_memory) */
    bool (*stop)(void *ud); /* polled: true ends the helper (the run was stopped) */
    void *ud;
} sl_extract_run;

/* Fills lim with sl_extract_limits_default and the defaults of `sluice
 * limits` (60 s, 1 GiB). */
void sl_extract_run_default(sl_extract_run *r);

/* The program that serves as the helper: the sluice binary (its
 * `__extract` command).  sluice's main sets /proc/self/exe; test programs
 * name the built sluice.  Not copied: a static string. */
void sl_extract_set_helper(const char *exe);

/* sl_extract_text, in the helper.  Errors as sl_extract_text's, and
 * SL_ETIMEOUT (extract_timeout_s), SL_ELIMIT (extract_max_output),
 * SL_ECANCELED, or SL_EPARSE when the helper died (out of memory under
 * extract_max_memory, or a crash), each naming the format. */
int sl_extract_isolated(sl_doc_kind kind, const void *data, size_t len, const sl_extract_run *r,
                        sl_buf *out, sl_err *err);

/* What the helper does to itself before it parses: no new privileges, not
 * dumpable, and the seccomp filter (read, write, close, lseek, fstat,
 * memory, futex, signals' return, clocks, getrandom, exit; anything else
 * EPERM, another ABI killed).  0, or -1 with errno. */
int sl_extract_confine(void);

/* The helper's side: `sluice __extract KIND OUTPUT MEMBER UNPACKED DEPTH
 * NODES MEMORY SECONDS` with the document on descriptor 3.  Returns the
 * exit status (0: the text is on stdout; 3: "code\tsetting\tmessage" is
 * on stderr). */
int sl_extract_helper_main(int argc, char **argv);

#endif
