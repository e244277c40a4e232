/* jsonrd.c — strict JSON getters with path-naming errors (see jsonrd.h). */
#include "jsonrd.h"
#include "str.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* A reader carries the file name and error sink through nested objects. */

static const char *jtype(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "a value";
}

/* Short printable form of a JSON value for "got ..." in messages. */
void jr_show(const json_t *v, char *buf, size_t n)
{
    if (json_is_string(v)) {
        snprintf(buf, n, "\"%.60s\"", json_string_value(v));
    } else if (json_is_integer(v)) {
        snprintf(buf, n, "%lld", (long long)json_integer_value(v));
    } else if (json_is_real(v)) {
        snprintf(buf, n, "%g", json_real_value(v));
    } else if (json_is_boolean(v)) {
        snprintf(buf, n, "%s", json_is_true(v) ? "true" : "false");
    } else {
        snprintf(buf, n, "%s", jtype(v));
    }
}

void jr_subpath(char *out, size_t n, const char *base, const char *key)
{
    snprintf(out, n, "%s.%s", base, key);
}

int jr_bad(jr *r, const char *path, const char *expected, const json_t *got)
{
    char g[96];
    jr_show(got, g, sizeof g);
    return sc_err_set(r->err, SC_EINPUT, r->src, path, "expected %s, got %s", expected, g);
}

/* Reject keys not in allowed[] (NULL-terminated). */
int jr_only_keys(jr *r, const json_t *obj, const char *path, const char *const *allowed)
{
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)obj, key, val) {
        int ok = 0;
        for (int i = 0; allowed[i]; i++)
            if (!strcmp(key, allowed[i]))
                ok = 1;
        if (!ok) {
            char p[128];
            jr_subpath(p, sizeof p, path, key);
            char near[160];
            if (str_nearest_all(key, allowed, near, sizeof near))
                return sc_err_set(r->err, SC_EINPUT, r->src, p, "unknown key; did you mean %s?", near);
            /* whole names only: a list longer than the message ends with "..." */
            char list[200] = "";
            size_t used = 0;
            for (int i = 0; allowed[i]; i++) {
                size_t w = strlen(allowed[i]) + (i ? 2 : 0);
                if (used + w + 5 >= sizeof list) {
                    snprintf(list + used, sizeof list - used, ", ...");
                    break;
                }
                used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", allowed[i]);
            }
            return sc_err_set(r->err, SC_EINPUT, r->src, p, "unknown key (expected one of: %s)", list);
        }
    }
    return 0;
}

int jr_missing(jr *r, const char *path, const char *what)
{
    return sc_err_set(r->err, SC_EINPUT, r->src, path, "missing required key (expected %s)", what);
}

/* Positive finite number. required=0: absent leaves *out untouched. */
int jr_pos(jr *r, const json_t *obj, const char *base, const char *key, int required, double *out)
{
    char p[128];
    jr_subpath(p, sizeof p, base, key);
    json_t *v = json_object_get(obj, key);
    if (!v)
        return required ? jr_missing(r, p, "a positive number") : 0;
    if (!json_is_number(v))
        return jr_bad(r, p, "a positive number", v);
    double x = json_number_value(v);
    if (!isfinite(x) || x <= 0)
        return jr_bad(r, p, "a positive number", v);
    if (!jr_plausible(x))
        return jr_bad(r, p, "a positive number from 1e-09 to 1e+15", v);
    *out = x;
    return 0;
}

int jr_plausible(double x) { return isfinite(x) && (x == 0 || (fabs(x) >= JR_TINY && fabs(x) <= JR_HUGE)); }

/* Number >= lo (finite). */
int jr_min(jr *r, const json_t *obj, const char *base, const char *key, double lo, int required,
                   double *out)
{
    char p[128], want[64];
    jr_subpath(p, sizeof p, base, key);
    snprintf(want, sizeof want, "a number >= %g", lo);
    json_t *v = json_object_get(obj, key);
    if (!v)
        return required ? jr_missing(r, p, want) : 0;
    if (!json_is_number(v))
        return jr_bad(r, p, want, v);
    double x = json_number_value(v);
    if (!isfinite(x) || x < lo)
        return jr_bad(r, p, want, v);
    if (!jr_plausible(x)) {
        snprintf(want, sizeof want, "0 or a number from 1e-09 to 1e+15");
        return jr_bad(r, p, want, v);
    }
    *out = x;
    return 0;
}

/* A probability from 0 to below 1 (a dropout rate); absent: *out untouched (knobs35's dropout keys,
 * read by the spec and the Hugging Face loaders). */
int jr_prob(jr *r, const json_t *obj, const char *base, const char *key, double *out)
{
    json_t *v = json_object_get(obj, key);
    if (!v)
        return 0;
    char p[128];
    jr_subpath(p, sizeof p, base, key);
    if (!json_is_number(v) || !(json_number_value(v) >= 0 && json_number_value(v) < 1))
        return jr_bad(r, p, "a probability from 0 to below 1", v);
    *out = json_number_value(v);
    return 0;
}

/* Integer in [lo, hi]. */
int jr_int(jr *r, const json_t *obj, const char *base, const char *key, long lo, long hi, int required,
                   int *out)
{
    char p[128], want[80];
    jr_subpath(p, sizeof p, base, key);
    if (hi == lo)
        snprintf(want, sizeof want, "the integer %ld", lo);
    else
        snprintf(want, sizeof want, "an integer from %ld to %ld", lo, hi);
    json_t *v = json_object_get(obj, key);
    if (!v)
        return required ? jr_missing(r, p, want) : 0;
    if (!json_is_integer(v))
        return jr_bad(r, p, want, v);
    json_int_t x = json_integer_value(v);
    if (x < lo || x > hi)
        return jr_bad(r, p, want, v);
    *out = (int)x;
    return 0;
}

int jr_bool(jr *r, const json_t *obj, const char *base, const char *key, int *out)
{
    char p[128];
    jr_subpath(p, sizeof p, base, key);
    json_t *v = json_object_get(obj, key);
    if (!v)
        return 0;
    if (!json_is_boolean(v))
        return jr_bad(r, p, "true or false", v);
    *out = json_is_true(v);
    return 0;
}

/* String into buf (non-empty, fits). */
int jr_str(jr *r, const json_t *obj, const char *base, const char *key, int required, char *buf,
                   size_t n)
{
    char p[128];
    jr_subpath(p, sizeof p, base, key);
    json_t *v = json_object_get(obj, key);
    if (!v)
        return required ? jr_missing(r, p, "a string") : 0;
    if (!json_is_string(v) || json_string_length(v) == 0)
        return jr_bad(r, p, "a non-empty string", v);
    if (json_string_length(v) >= n) {
        char want[64];
        snprintf(want, sizeof want, "a string of at most %zu characters", n - 1);
        return jr_bad(r, p, want, v);
    }
    const char *s = json_string_value(v);
    if (strlen(s) != json_string_length(v))
        return jr_bad(r, p, "a string without NUL characters", v);
    for (const char *q = s; *q; q++)
        if ((unsigned char)*q < 0x20 || *q == 0x7f)
            return jr_bad(r, p, "a string without control characters", v);
    snprintf(buf, n, "%s", s);
    return 0;
}

/* String that must be one of choices[]; *out = its index. */
int jr_enum(jr *r, const json_t *obj, const char *base, const char *key, const char *const *choices,
                    int required, int *out)
{
    char p[128], want[160] = "one of ";
    jr_subpath(p, sizeof p, base, key);
    for (int i = 0; choices[i]; i++) {
        size_t l = strlen(want);
        snprintf(want + l, sizeof want - l, "%s\"%s\"", i ? ", " : "", choices[i]);
    }
    json_t *v = json_object_get(obj, key);
    if (!v)
        return required ? jr_missing(r, p, want) : 0;
    if (json_is_string(v))
        for (int i = 0; choices[i]; i++)
            if (!strcmp(json_string_value(v), choices[i])) {
                *out = i;
                return 0;
            }
    return jr_bad(r, p, want, v);
}

int jr_obj(jr *r, const json_t *obj, const char *base, const char *key, int required, json_t **out)
{
    char p[128];
    jr_subpath(p, sizeof p, base, key);
    json_t *v = json_object_get(obj, key);
    *out = NULL;
    if (!v)
        return required ? jr_missing(r, p, "an object") : 0;
    if (!json_is_object(v))
        return jr_bad(r, p, "an object", v);
    *out = v;
    return 0;
}

/* jr_slurp. The path is opened once: a named FIFO is read to its end from that one open (a
 * second open waited for a second writer). A failure in sc_err_unreadable's one wording (until
 * polish15 the JSON loaders said "cannot read: unable to open PATH: why", Jansson's words, and
 * the others "cannot read: why"). */
static int slurp(const char *path, size_t max, char **out, size_t *len, sc_err *err)
{
    *out = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return sc_err_unreadable(err, path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
        fclose(f);
        return sc_err_unreadable(err, path, S_ISDIR(st.st_mode) ? "is a directory, expected a file"
                                                                : "is a device, expected a file");
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    int rc = 0;
    while (buf && !rc) {
        if (n + 1 >= cap) {
            char *nb = cap > max ? NULL : realloc(buf, cap * 2);
            if (!nb) {
                rc = cap > max ? sc_err_set(err, SC_EINPUT, path, "", "cannot read: longer than %zu MiB", max >> 20)
                               : sc_err_set(err, SC_ERUNTIME, path, "", "out of memory reading the file");
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0)
            break;
        if (n > max)
            rc = sc_err_set(err, SC_EINPUT, path, "", "cannot read: longer than %zu MiB", max >> 20);
    }
    int bad = ferror(f), e = errno;
    fclose(f);
    if (!buf)
        return sc_err_set(err, SC_ERUNTIME, path, "", "out of memory reading the file");
    if (!rc && bad)
        rc = sc_err_unreadable(err, path, strerror(e));
    if (rc) {
        free(buf);
        return rc;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return 0;
}

int jr_slurp(const char *path, size_t max, char **out, size_t *len, sc_err *err)
{
    return slurp(path, max, out, len, err);
}

/* Parse text (or a file when text == NULL) into an object root. */
int jr_load_root(jr *r, const char *text, json_t **root)
{
    json_error_t je;
    *root = NULL;
    char *file = NULL;
    size_t len = 0;
    if (!text) {
        int rc = slurp(r->src, JR_MAX_FILE, &file, &len, r->err);
        if (rc)
            return rc;
        if (str_blank(file, len)) {
            free(file);
            return sc_err_empty(r->err, r->src, "a JSON object");
        }
    }
    *root = text ? json_loads(text, JSON_REJECT_DUPLICATES, &je) : json_loadb(file, len, JSON_REJECT_DUPLICATES, &je);
    free(file);
    if (!*root) {
        if (!text && je.line < 0)
            return sc_err_set(r->err, SC_EINPUT, r->src, "", "cannot read: %s", je.text);
        return sc_err_set(r->err, SC_EINPUT, r->src, "", "invalid JSON at line %d column %d: %s", je.line,
                          je.column, je.text);
    }
    if (!json_is_object(*root)) {
        int rc = jr_bad(r, "$", "an object", *root);
        json_decref(*root);
        *root = NULL;
        return rc;
    }
    return 0;
}

