/* trainlog.c — training logs read into a step time or rate (see trainlog.h). Each format is a
 * key to find on a line and the number after it; lines without it are skipped (a log is mostly
 * other things). Not here: what a rate means for a job's step (the caller). */
#include "trainlog.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/jsonrd.h"
#include "../base/str.h"

/* The keys of a format, tried in order on each line (the first found counts), the metric of
 * their value and its scale to the metric's unit. */
typedef struct tl_key {
    const char *key;
    tl_metric metric;
    double scale;
} tl_key;

typedef struct tl_format {
    const char *name;
    tl_key keys[3];
    const char *mfu_key; /* a second value of the same line (torchtitan's mfu %), or NULL */
} tl_format;

/* Key texts as the tools print them (source files at the commits they were read from are named
 * in docs/CALIBRATE.md "Training logs"). */
static const tl_format FORMATS[] = {
    {"deepspeed",
     {{"CurrSamplesPerSec=", TL_SAMPLES_PER_S, 1}, {"SamplesPerSec=", TL_SAMPLES_PER_S, 1},
      {"samples/sec:", TL_SAMPLES_PER_S, 1}},
     NULL},
    {"megatron", {{"elapsed time per iteration (ms):", TL_STEP_S, 1e-3}}, NULL},
    {"torchtitan", {{"tps:", TL_TOKENS_PER_S_PER_GPU, 1}}, "mfu:"},
    {"composer", {{"throughput/tokens_per_sec:", TL_TOKENS_PER_S, 1}}, NULL},
    {"hf-trainer",
     {{"'train_samples_per_second':", TL_SAMPLES_PER_S, 1}, {"train_samples_per_second =", TL_SAMPLES_PER_S, 1},
      {"\"train_samples_per_second\":", TL_SAMPLES_PER_S, 1}},
     NULL},
    {"nanotron", {{"tokens_per_sec_per_gpu:", TL_TOKENS_PER_S_PER_GPU, 1}}, NULL},
};
#define N_FORMATS (int)(sizeof FORMATS / sizeof FORMATS[0])

const char *tl_metric_name(tl_metric m)
{
    static const char *const n[] = {"step_s", "samples_per_s", "tokens_per_s", "tokens_per_s_per_gpu"};
    return m <= TL_TOKENS_PER_S_PER_GPU ? n[m] : "?";
}

/* The number after key in line (spaces skipped; thousands separators "5,642" and a K/M suffix
 * as torchtitan prints them: "tps: 5,642"), or NAN. */
static double number_after(const char *line, const char *key)
{
    const char *p = strstr(line, key);
    if (!p)
        return NAN;
    p += strlen(key);
    while (*p == ' ' || *p == '\t')
        p++;
    char buf[64];
    size_t n = 0;
    for (; *p && n + 1 < sizeof buf; p++) {
        if (*p == ',' && p[1] >= '0' && p[1] <= '9')
            continue;
        if ((*p >= '0' && *p <= '9') || *p == '.' || *p == 'e' || *p == 'E' || *p == '+' ||
            (*p == '-' && (!n || buf[n - 1] == 'e' || buf[n - 1] == 'E'))) /* a sign, or an exponent's: 2.5e-3 */
            buf[n++] = *p;
        else
            break;
    }
    buf[n] = '\0';
    char *end;
    double v = strtod(buf, &end);
    if (end == buf || !isfinite(v))
        return NAN;
    if (*p == 'K' || *p == 'k')
        v *= 1e3;
    else if (*p == 'M')
        v *= 1e6;
    return v; /* +-inf where the suffix overflows it ("1e308K"): refused by the caller */
}

static double median_spread(double *v, int n, double *spread)
{
    double mean = gsl_stats_mean(v, 1, (size_t)n), sd = n > 1 ? gsl_stats_sd_m(v, 1, (size_t)n, mean) : 0;
    gsl_sort(v, 1, (size_t)n);
    double med = gsl_stats_median_from_sorted_data(v, 1, (size_t)n);
    *spread = med > 0 ? sd / med : 0;
    return med;
}

int tl_parse(const char *format, const char *text, const char *file, int warmup, tl_result *out, sc_err *err)
{
    memset(out, 0, sizeof *out);
    const tl_format *f = NULL;
    for (int i = 0; i < N_FORMATS; i++)
        if (!strcmp(FORMATS[i].name, format))
            f = &FORMATS[i];
    if (!f) { /* a typo of a format's name ("deepspeeed", "DeepSpeed") names it */
        const char *names[N_FORMATS + 1];
        for (int i = 0; i < N_FORMATS; i++)
            names[i] = FORMATS[i].name;
        names[N_FORMATS] = NULL;
        char say[160];
        str_did_you_mean(format, names, say, sizeof say);
        return sc_err_set(err, SC_EINPUT, "--log", "",
                          "expected FORMAT:FILE with FORMAT deepspeed, megatron, torchtitan, composer, hf-trainer or "
                          "nanotron, got \"%.40s\"%s",
                          format, say);
    }
    snprintf(out->format, sizeof out->format, "%s", f->name);
    size_t cap = 64;
    int n = 0, n_mfu = 0, metric = -1;
    double *v = malloc(sizeof(double) * cap), *mfu = malloc(sizeof(double) * cap);
    int rc = !v || !mfu ? sc_err_set(err, SC_ERUNTIME, file, "", "out of memory") : 0;
    for (const char *line = text; line && *line && !rc;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        char buf[4096];
        snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), line);
        line = nl ? nl + 1 : NULL;
        for (int k = 0; k < 3 && f->keys[k].key; k++) {
            double x = number_after(buf, f->keys[k].key);
            if (isnan(x))
                continue;
            if (metric >= 0 && metric != (int)f->keys[k].metric)
                break; /* a line of another kind: not mixed in */
            metric = (int)f->keys[k].metric;
            if ((size_t)n == cap) {
                cap *= 2;
                double *a = realloc(v, sizeof(double) * cap), *b = realloc(mfu, sizeof(double) * cap);
                v = a ? a : v, mfu = b ? b : mfu;
                if (!a || !b) {
                    rc = sc_err_set(err, SC_ERUNTIME, file, "", "out of memory");
                    break;
                }
            }
            if (!(x > 0) || !isfinite(x)) {
                rc = sc_err_set(err, SC_EINPUT, file, "", "expected a positive finite %s after \"%s\", got %g (entry %d)",
                                tl_metric_name(f->keys[k].metric), f->keys[k].key, x, n + 1);
                break;
            }
            v[n++] = x * f->keys[k].scale;
            double m = f->mfu_key ? number_after(buf, f->mfu_key) : NAN;
            if (isfinite(m))
                mfu[n_mfu++] = m / 100;
            break;
        }
    }
    if (!rc && !n)
        rc = sc_err_set(err, SC_EINPUT, file, "", "no %s entries found (expected lines with \"%s\")", f->name,
                        f->keys[0].key);
    int drop = warmup >= 0 ? warmup : n >= 3 ? (n / 5 > 1 ? n / 5 : 1) : 0;
    if (!rc && drop >= n)
        rc = sc_err_set(err, SC_EINPUT, file, "", "all %d entries are warm-up (--warmup %d)", n, drop);
    if (!rc) {
        out->metric = (tl_metric)metric;
        out->n_found = n;
        out->n_warmup = drop;
        out->median = median_spread(v + drop, n - drop, &out->spread_rel);
        double s;
        if (n_mfu > drop)
            out->mfu = median_spread(mfu + drop, n_mfu - drop, &s);
    }
    free(v), free(mfu);
    return rc;
}

int tl_read(const char *spec, int warmup, tl_result *out, sc_err *err)
{
    const char *colon = strchr(spec, ':');
    if (!colon || colon == spec || !colon[1])
        return sc_err_set(err, SC_EINPUT, "--log", "", "expected FORMAT:FILE, got \"%.100s\"", spec);
    char format[32];
    snprintf(format, sizeof format, "%.*s", (int)(colon - spec) < 31 ? (int)(colon - spec) : 31, spec);
    char *text;
    size_t len;
    int rc = jr_slurp(colon + 1, JR_MAX_FILE, &text, &len, err);
    if (rc)
        return rc;
    rc = tl_parse(format, text, colon + 1, warmup, out, err);
    free(text);
    return rc;
}
