/*
 * cfb — a reader of OLE2 Compound File Binary files ([MS-CFB]), the
 * container of Outlook .msg (and legacy .doc, .xls, .ppt): a small file
 * system of storages (folders) and streams in fixed-size sectors, chained
 * through a FAT, small streams in a mini stream chained through a
 * mini FAT.
 *
 * The file is hostile: every sector number is checked against the file's
 * size, every chain is followed at most as many steps as the file has
 * sectors (a longer one loops), the FAT's sector count is bounded by the
 * file's, the directory tree is walked with each entry visited once, and a
 * stream's size is bounded by sl_extract_limits.max_member.  Errors
 * (SL_EPARSE, or SL_ELIMIT for a limit) say what is wrong with the file.
 *
 * The reader does not copy the file: `data` must outlive the sl_cfb.
 */
#ifndef SL_CFB_H
#define SL_CFB_H

#include <stdint.h>

#include "extract/extract.h"

typedef struct sl_cfb sl_cfb;

enum { SL_CFB_STORAGE = 1, SL_CFB_STREAM = 2, SL_CFB_ROOT = 5 };

/* Is data a compound file (its signature)? */
int sl_cfb_is(const void *data, size_t len);

/* Reads the header, the FAT, the mini FAT and the directory; NULL with
 * err when the file is not a compound file or is broken. */
sl_cfb *sl_cfb_open(const void *data, size_t len, const sl_extract_limits *lim, sl_err *err);
void sl_cfb_free(sl_cfb *f);

/* The root storage's entry (0). */
#define SL_CFB_ROOT_ENTRY 0

/* The children of storage `dir` (the root, or a storage this gave), in
 * the directory's order (names sorted as [MS-CFB] compares them: shorter
 * first, then upper-cased), into kids[0..max); their count (which may be
 * over max).  sl_cfb_open checked the tree: err is kept for readers that
 * check less. */
int sl_cfb_children(const sl_cfb *f, int dir, int *kids, int max, sl_err *err);

/* Entry i's name as UTF-8 (static to f), type and stream size; NULL name
 * for an entry that does not exist. */
const char *sl_cfb_name(const sl_cfb *f, int i);
int sl_cfb_type(const sl_cfb *f, int i);
uint64_t sl_cfb_size(const sl_cfb *f, int i);

/* The child of storage `dir` named `name` (ASCII, compared without case,
 * as [MS-CFB] does), or -1. */
int sl_cfb_find(const sl_cfb *f, int dir, const char *name);

/* Appends stream i's bytes to out; -1 with err. */
int sl_cfb_read(sl_cfb *f, int i, sl_buf *out, sl_err *err);

#endif
