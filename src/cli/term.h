/*
 * term — printing text that came from workflows to a terminal.
 *
 * Outputs, answers and error messages can hold what a sandboxed program or
 * a model wrote, including terminal control sequences (ESC [ … that move
 * the cursor or hide text, OSC 52 that writes the clipboard, a title that
 * types into the shell).  On a terminal those are shown escaped (\x1b);
 * to a pipe or file the bytes go unchanged, so scripts get exact output.
 */
#ifndef SL_CLI_TERM_H
#define SL_CLI_TERM_H

#include <stddef.h>
#include <stdio.h>

/* Writes s[0..n) to f: control characters other than newline and tab
 * (C0, DEL, C1) as \xNN when f is a terminal, as they are otherwise. */
void sl_term_write(FILE *f, const char *s, size_t n);
void sl_term_puts(FILE *f, const char *s);

#endif
