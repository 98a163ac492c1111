/*
 * sheet — a worksheet as pandas sees it, and its markdown table as Dify
 * prints it (docextract_research §3.8).  The xlsx reader (ooxml.c) and
 * the xls reader (xls.c) each turn their file into sl_sheet cells, typed
 * as the Python engine under pandas types them (openpyxl, xlrd); this
 * module does the rest the same way for both: pandas' header row
 * ("Unnamed: N", "a.1"), its column types and missing values,
 * dropna(how="all"), iterrows' upcasting and Python's str() of each value.
 *
 * An sl_sheet owns its cells and its string pool; a cell's string is in
 * the pool or in a table its reader keeps alive until the sheet is
 * rendered.  Nothing here fails: sl_sheet_render appends to a capped
 * sl_buf, whose toobig flag the reader turns into its limit error.
 */
#ifndef SL_SHEET_H
#define SL_SHEET_H

#include <stdbool.h>
#include <stdint.h>

#include "core/buf.h"

typedef enum {
    SL_CELL_EMPTY,
    SL_CELL_NUM,
    SL_CELL_STR,
    SL_CELL_BOOL,
    SL_CELL_DATE,
    SL_CELL_TIME,
    SL_CELL_ERR, /* NaN to pandas */
} sl_cell_kind;

typedef struct {
    uint32_t row, col; /* 1-based */
    uint32_t seq;      /* order of sl_sheet_add: the later of two cells at one place wins */
    uint8_t kind;
    bool integral;     /* SL_CELL_NUM: an int in Python (the engine's int, or an integral float) */
    double num;        /* SL_CELL_NUM, SL_CELL_BOOL (0/1) */
    int64_t us;        /* SL_CELL_DATE: µs since 1970-01-01; SL_CELL_TIME: since midnight */
    const char *s;     /* SL_CELL_STR */
} sl_sheet_cell;

/* Strings owned by a table: each one malloc'd, freed with the table. */
typedef struct {
    char **v;
    size_t n;
} sl_sheet_strs;

void sl_sheet_strs_add(sl_sheet_strs *t, char *s);
void sl_sheet_strs_free(sl_sheet_strs *t);

typedef struct {
    sl_sheet_cell *v;
    size_t n, alloc;
    sl_sheet_strs pool; /* strings of this sheet's cells that no shared table holds */
    bool bad;           /* the engine would raise ValueError: Dify skips the sheet */
    /* The rows and columns the engine gives pandas, when more than the
     * cells span (xlrd counts cells that pandas then sees as missing);
     * 0: what the cells span. */
    uint32_t nrows, ncols;
} sl_sheet;

/* Adds a copy of *c (its seq is set). */
void sl_sheet_add(sl_sheet *sh, const sl_sheet_cell *c);
/* Sorts the cells by row then column; of two at one place the later
 * added is kept.  Call once all are added, before rendering. */
void sl_sheet_sort(sl_sheet *sh);
/* Appends the sheet's table and "\n\n" as Dify prints it. */
void sl_sheet_render(const sl_sheet *sh, sl_buf *out);
void sl_sheet_release(sl_sheet *sh);

/* Days from 1970-01-01 to y-m-d, proleptic Gregorian. */
int64_t sl_sheet_days(int64_t y, unsigned m, unsigned d);
#define SL_SHEET_US_DAY INT64_C(86400000000)

/* A number pandas holds as an int64 (integral and in range). */
bool sl_sheet_as_int(double v);

#endif
