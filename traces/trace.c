/* trace.c — Chrome trace-event JSON writer (see trace.h): integer-nanosecond times. */
#include "trace.h"

#include "../base/atomic.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct tr_writer {
    FILE *f;     /* at_stream(af) */
    at_file *af; /* whole or absent (base/atomic.h) */
    int n;   /* events written */
    int bad; /* a write failed */
};

int tr_open(const char *path, tr_writer **out, sc_err *err)
{
    tr_writer *w = calloc(1, sizeof *w);
    if (!w)
        return sc_err_set(err, SC_ERUNTIME, path, "", "out of memory");
    int rc = at_begin(path, &w->af, err);
    if (rc) {
        free(w);
        return rc;
    }
    w->f = at_stream(w->af);
    fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n", w->f);
    *out = w;
    return 0;
}

/* JSON string body with escapes. */
static void put_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void sep(tr_writer *w)
{
    if (w->n++)
        fputs(",\n", w->f);
}

void tr_process_name(tr_writer *w, int pid, const char *name)
{
    sep(w);
    fprintf(w->f, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":", pid);
    put_str(w->f, name);
    fputs("}}", w->f);
}

void tr_thread_name(tr_writer *w, int pid, int tid, const char *name)
{
    sep(w);
    fprintf(w->f, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":", pid, tid);
    put_str(w->f, name);
    fputs("}}", w->f);
}

void tr_title(tr_writer *w, const char *title)
{
    tr_process_name(w, TR_NOTES_PID, "shardcast");
    tr_thread_name(w, TR_NOTES_PID, TR_NOTE_TITLE, title);
}

long long tr_ns(double t_s)
{
    if (!(t_s > 0) || !isfinite(t_s))
        return 0;
    return llround(t_s * 1e9);
}

/* Integer nanoseconds as microseconds with three decimals, exactly. */
static void put_us(FILE *f, long long ns) { fprintf(f, "%lld.%03lld", ns / 1000, ns % 1000); }

/* A viewer (Perfetto, speedscope) reads ts and dur as doubles and ends a slice at ts + dur in
 * double arithmetic, which can land a hair past the decimal end (1.001 + 0.002 >
 * 1.003): then a slice starting there is a partial overlap. The duration, in ns, whose printed
 * value added to the printed start as doubles does not pass the printed end b (a nanosecond
 * less where it would; at most a few). */
static long long doubles_fit(long long a, long long b)
{
    char ts[32], end[32], dur[32];
    snprintf(ts, sizeof ts, "%lld.%03lld", a / 1000, a % 1000);
    snprintf(end, sizeof end, "%lld.%03lld", b / 1000, b % 1000);
    double t = strtod(ts, NULL), e = strtod(end, NULL);
    long long d = b - a;
    for (; d > 0; d--) {
        snprintf(dur, sizeof dur, "%lld.%03lld", d / 1000, d % 1000);
        if (t + strtod(dur, NULL) <= e)
            break;
    }
    return d;
}

void tr_span_at(tr_writer *w, int pid, int tid, const char *name, const char *cat, double t0_s, double t1_s,
                const char *args_json)
{
    long long a = tr_ns(t0_s), b = tr_ns(t1_s);
    if (b < a)
        b = a;
    long long d = doubles_fit(a, b);
    sep(w);
    fputs("{\"ph\":\"X\",\"name\":", w->f);
    put_str(w->f, name);
    fputs(",\"cat\":", w->f);
    put_str(w->f, cat ? cat : "op");
    fprintf(w->f, ",\"pid\":%d,\"tid\":%d,\"ts\":", pid, tid);
    put_us(w->f, a);
    fputs(",\"dur\":", w->f);
    put_us(w->f, d);
    if (args_json)
        fprintf(w->f, ",\"args\":%s", args_json);
    fputc('}', w->f);
}

void tr_span(tr_writer *w, int pid, int tid, const char *name, const char *cat, double t_s, double dur_s,
             const char *args_json)
{
    tr_span_at(w, pid, tid, name, cat, t_s, t_s + dur_s, args_json);
}

void tr_counter(tr_writer *w, int pid, const char *name, double t_s, double value)
{
    sep(w);
    fputs("{\"ph\":\"C\",\"name\":", w->f);
    put_str(w->f, name);
    fprintf(w->f, ",\"pid\":%d,\"ts\":", pid);
    put_us(w->f, tr_ns(t_s));
    fprintf(w->f, ",\"args\":{\"value\":%.6g}}", value);
}

int tr_close(tr_writer *w, sc_err *err)
{
    fputs("\n]}\n", w->f);
    int rc = at_commit(w->af, AT_CHECK_NONE, err);
    free(w);
    return rc;
}

void tr_abort(tr_writer *w)
{
    if (!w)
        return;
    at_abort(w->af);
    free(w);
}
