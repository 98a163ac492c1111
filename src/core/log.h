/*
 * log — what a long-running sluice (serve, workers) tells its operator on
 * stderr: failures nobody else hears about (a store write after a run, a
 * library's complaint), never a user's error, which goes back to the user
 * through sl_err.
 *
 * A line reads "sluice[ WHERE]: LEVEL: message".  Lines below the level
 * (SLUICE_LOG=error|warn|info|debug, default info) are dropped.  Repeats are
 * rate-limited per call site (its format string): within a window the first
 * line is printed and the rest are counted, and the next line from that site
 * says "(and N more like it in the last S s)"; past a total of lines per
 * window, the rest are counted and reported once when the window turns.
 * Thread-safe; a line is written with one write(2).  The limits exist
 * because a flood of refused connections once made serve write 1.27 GB of
 * stderr in 45 s.
 */
#ifndef SL_LOG_H
#define SL_LOG_H

#include <stdarg.h>

typedef enum { SL_LOG_ERROR, SL_LOG_WARN, SL_LOG_INFO, SL_LOG_DEBUG } sl_log_level;

/* Reads SLUICE_LOG; an unknown value leaves the level at info and says so. */
void sl_log_init(const char *where);
void sl_log_set_level(sl_log_level level);
/* Rate limit: the window in seconds and the lines any window may hold
 * (defaults 10 s and 50). */
void sl_log_set_rate(double window_s, int max_lines);
/* Where lines go (default stderr's descriptor); for tests. */
void sl_log_set_fd(int fd);

void sl_log(sl_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sl_logv(sl_log_level level, const char *fmt, va_list ap);
/* As sl_log, rate-limited under `site` instead of fmt (for messages that
 * pass through one format, such as a library's, told apart by the site). */
void sl_log_site(sl_log_level level, const void *site, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
