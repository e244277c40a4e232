/* read.c — Chrome traces read back (see read.h). */
#include "read.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/jsonrd.h"
#include "schema.h"

static const char *const KIND_NAME[TR_N_KINDS] = {"compute", "all-gather", "reduce-scatter", "all-reduce",
                                                  "optimizer", "other collective"};

const char *tr_kind_name(tr_kind k) { return k < TR_N_KINDS ? KIND_NAME[k] : ""; }

/* Span class from cat and name ("all-gather world 100.7 MB", "optimizer", "forward"). */
static tr_kind span_kind(const char *cat, const char *name)
{
    if (!strcmp(cat, TR_CAT_COMPUTE))
        return strncmp(name, "optimizer", 9) ? TR_K_COMPUTE : TR_K_OPT;
    if (!strncmp(name, "all-gather", 10))
        return TR_K_AG;
    if (!strncmp(name, "reduce-scatter", 14))
        return TR_K_RS;
    if (!strncmp(name, "all-reduce", 10))
        return TR_K_AR;
    return TR_K_OTHER;
}

/* A compute or collective "X" event, validated; returns 1 if it is one, 0 if not, <0 error. */
static int trace_span(const char *path, json_t *ev, size_t i, tr_read_span *sp, sc_err *err)
{
    char where[128];
    if (!json_is_object(ev)) {
        snprintf(where, sizeof where, "$.traceEvents[%zu]", i);
        return sc_err_set(err, SC_EINPUT, path, where, "expected an event object");
    }
    const char *ph = json_string_value(json_object_get(ev, "ph"));
    const char *cat = json_string_value(json_object_get(ev, "cat"));
    if (!ph || strcmp(ph, "X") || !cat ||
        (strcmp(cat, TR_CAT_COMPUTE) && strcmp(cat, TR_CAT_COLLECTIVE) && strcmp(cat, TR_CAT_COLLECTIVE_LEGACY)))
        return 0;
    if (!strcmp(cat, TR_CAT_COLLECTIVE_LEGACY)) /* measured traces written before the schema */
        cat = TR_CAT_COLLECTIVE;
    const char *name = json_string_value(json_object_get(ev, "name"));
    if (!name)
        name = "";
    static const char *const INTS[2] = {"pid", "tid"}, *const NUMS[2] = {"ts", "dur"};
    long *iv[2] = {&sp->pid, &sp->tid};
    double *nv[2] = {&sp->ts_us, &sp->dur_us};
    for (int k = 0; k < 2; k++) {
        json_t *v = json_object_get(ev, INTS[k]);
        snprintf(where, sizeof where, "$.traceEvents[%zu].%s", i, INTS[k]);
        if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 1000000000)
            return sc_err_set(err, SC_EINPUT, path, where, "expected a non-negative integer");
        *iv[k] = (long)json_integer_value(v);
    }
    for (int k = 0; k < 2; k++) {
        json_t *v = json_object_get(ev, NUMS[k]);
        snprintf(where, sizeof where, "$.traceEvents[%zu].%s", i, NUMS[k]);
        double d = json_is_number(v) ? json_number_value(v) : NAN;
        if (!(d >= 0 && d < 1e18))
            return sc_err_set(err, SC_EINPUT, path, where, "expected a non-negative number of microseconds");
        *nv[k] = d;
    }
    sp->kind = span_kind(cat, name);
    return 1;
}

void tr_doc_free(tr_doc *d)
{
    free(d->spans);
    free(d->names);
    memset(d, 0, sizeof *d);
}

int tr_read(const char *path, tr_doc *out, sc_err *err)
{
    memset(out, 0, sizeof *out);
    char *text;
    size_t len;
    int rc = jr_slurp(path, (size_t)1 << 30, &text, &len, err); /* at most 1 GiB; no devices */
    if (rc)
        return rc;
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je); /* a key twice: which is meant? */
    size_t lead = strspn(text, " \t\r\n");
    int csv = !root && text[lead] && text[lead] != '{' && text[lead] != '[' && strchr(text, ','); /* a sweep CSV */
    free(text);
    if (!root && csv) /* as the CSV reader names a trace given for a plot of a sweep */
        return sc_err_set(err, SC_EINPUT, path, "line 1",
                          "expected a trace (from 'shardcast predict --trace'), found CSV (a sweep? use --kind "
                          "scaling, efficiency, memory or breakdown)");
    if (!root)
        return sc_err_set(err, SC_EINPUT, path, "", "invalid JSON at line %d column %d: %s", je.line, je.column, je.text);
    json_t *evs = json_is_array(root) ? root : json_object_get(root, "traceEvents");
    if (!json_is_array(evs)) {
        json_decref(root);
        return sc_err_set(err, SC_EINPUT, path, "$.traceEvents",
                          "expected an array of trace events (a trace from 'shardcast predict --trace')");
    }
    size_t n_ev = json_array_size(evs);
    out->spans = malloc(sizeof *out->spans * (n_ev ? n_ev : 1));
    out->names = malloc(sizeof *out->names * (n_ev ? n_ev : 1));
    if (!out->spans || !out->names) {
        rc = sc_err_set(err, SC_ERUNTIME, path, "", "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n_ev; i++) {
        json_t *ev = json_array_get(evs, i);
        int is = trace_span(path, ev, i, &out->spans[out->n_spans], err);
        if (is < 0) {
            rc = is;
            goto out;
        }
        if (is) {
            out->n_spans++;
            continue;
        }
        /* rank numbers from the thread names the simulator writes ("rank 5 compute") */
        const char *ph = json_string_value(json_object_get(ev, "ph"));
        const char *mn = json_string_value(json_object_get(ev, "name"));
        json_t *pid = json_object_get(ev, "pid"), *tid = json_object_get(ev, "tid");
        const char *tname = json_string_value(json_object_get(json_object_get(ev, "args"), "name"));
        long r;
        if (ph && !strcmp(ph, "M") && mn && !strcmp(mn, "thread_name") && tname && json_is_integer(pid) &&
            json_integer_value(pid) == TR_NOTES_PID && json_is_integer(tid) && json_integer_value(tid) == TR_NOTE_TITLE) {
            snprintf(out->title, sizeof out->title, "%s", tname);
            continue;
        }
        if (!ph || strcmp(ph, "M") || !mn || strcmp(mn, "thread_name") || !json_is_integer(pid) ||
            !json_is_integer(tid) || !tname || sscanf(tname, "rank %ld", &r) != 1 || r < 0)
            continue;
        const char *sq = strstr(tname, "(stage ");
        long q;
        if (!sq || sscanf(sq, "(stage %ld)", &q) != 1 || q < 0)
            q = -1;
        out->names[out->n_names++] =
            (tr_rank_name){(long)json_integer_value(pid), (long)json_integer_value(tid), r, q};
    }
    if (!out->n_spans)
        rc = sc_err_set(err, SC_EINPUT, path, "$.traceEvents",
                        "expected compute or collective spans (\"ph\":\"X\"), found none");
out:
    json_decref(root);
    if (rc)
        tr_doc_free(out);
    return rc;
}
