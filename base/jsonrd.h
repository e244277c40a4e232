/* jsonrd.h — strict readers for spec JSON (Jansson): each getter checks type and range, and
 * on failure fills sc_err with the file, the JSON path, what was expected and what was found.
 * Shared by the spec and calibration loaders; not a general JSON library. */
#ifndef SC_JSONRD_H
#define SC_JSONRD_H

#include <jansson.h>
#include <stddef.h>

#include "err.h"

typedef struct jr {
    const char *src; /* file name (or "<input>") for messages */
    sc_err *err;
} jr;

/* The bytes of the file at path, NUL-terminated, at most max of them: regular files and pipes;
 * a directory, a device (/dev/zero would never end) or a longer file is SC_EINPUT naming path. */
int jr_slurp(const char *path, size_t max, char **out, size_t *len, sc_err *err) SC_MUST_CHECK;
#define JR_MAX_FILE ((size_t)256 << 20) /* specs, calibrations, measurements */

/* Parse text (or the file r->src when text == NULL) into an object root. */
int jr_load_root(jr *r, const char *text, json_t **root) SC_MUST_CHECK;
/* Reject keys not in allowed[] (NULL-terminated). */
int jr_only_keys(jr *r, const json_t *obj, const char *path, const char *const *allowed) SC_MUST_CHECK;
int jr_bad(jr *r, const char *path, const char *expected, const json_t *got) SC_MUST_CHECK;
int jr_missing(jr *r, const char *path, const char *what) SC_MUST_CHECK;
void jr_show(const json_t *v, char *buf, size_t n);
void jr_subpath(char *out, size_t n, const char *base, const char *key);
/* The magnitudes any number of any input may have: 0, or from JR_TINY to JR_HUGE in the key's
 * own unit (GB/s, us, GiB, TFLOPS, bytes, ...). Outside it a value is a typo or an attack, not a
 * machine: 1e-320 (a denormal) or 1e308 turn into Inf and NaN in the first product. */
#define JR_TINY 1e-9
#define JR_HUGE 1e15
int jr_plausible(double x);
/* Getters: `required` = 0 leaves *out untouched when the key is absent. */
int jr_pos(jr *r, const json_t *obj, const char *base, const char *key, int required, double *out) SC_MUST_CHECK;
int jr_min(jr *r, const json_t *obj, const char *base, const char *key, double lo, int required, double *out)
    SC_MUST_CHECK;
/* A probability from 0 to below 1; absent: *out untouched. */
int jr_prob(jr *r, const json_t *obj, const char *base, const char *key, double *out) SC_MUST_CHECK;
int jr_int(jr *r, const json_t *obj, const char *base, const char *key, long lo, long hi, int required, int *out)
    SC_MUST_CHECK;
int jr_bool(jr *r, const json_t *obj, const char *base, const char *key, int *out) SC_MUST_CHECK;
int jr_str(jr *r, const json_t *obj, const char *base, const char *key, int required, char *buf, size_t n)
    SC_MUST_CHECK;
int jr_enum(jr *r, const json_t *obj, const char *base, const char *key, const char *const *choices, int required,
            int *out) SC_MUST_CHECK;
int jr_obj(jr *r, const json_t *obj, const char *base, const char *key, int required, json_t **out) SC_MUST_CHECK;

#endif
