/*
 * secret — the one place that knows which strings must never be shown.
 *
 * Secrets come from many places (secret environment variables, provider
 * API keys, Authorization values a node sends, passwords of connection
 * strings and sandbox providers) and leave through many (error messages,
 * events, stored runs and logs, the CLI's output).  Rather than mask at
 * every exit, everything that knows a secret registers it here, and the
 * choke points every shown string passes — sl_err_set(), a node's failure,
 * the run's events, outputs and error, the store — mask with the one
 * registry.  Each secret is masked in its raw, URL-encoded and
 * JSON-escaped forms.
 *
 * Registrations are counted: two runs with the same secret both add it,
 * and it stays until both removed it.  Thread-safe.  Strings shorter than
 * SL_SECRET_MIN are not registered (masking them would blank ordinary
 * text).
 */
#ifndef SL_SECRET_H
#define SL_SECRET_H

#include <stdbool.h>
#include <stddef.h>

#include "core/value.h"

#define SL_SECRET_MIN 4

void sl_secret_add(const char *s);
void sl_secret_remove(const char *s);
/* For the holder of a secret it registered: removes s, wipes its bytes
 * (a wipe the compiler may not drop) and frees it.  NULL is fine. */
void sl_secret_free(char *s);

/* s with every registered secret masked, as a new heap string; NULL when
 * s holds none (the common case, and no allocation). */
char *sl_secret_mask(const char *s);
/* Masks *s in place (frees and replaces it when it changed). */
void sl_secret_mask_inplace(char **s);
/* v with every string masked: a new reference, v itself (incref'd) when
 * nothing changed. */
sl_value *sl_secret_mask_value(sl_value *v);
/* A secret is shown as "******", or, when it is 24 characters or longer,
 * as Dify shows tokens: the first 6, "************" and the last 2 (Dify
 * does so from 9 characters on, which gives most of a short secret away). */

#endif
