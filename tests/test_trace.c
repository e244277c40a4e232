/* test_trace.c — the Chrome trace writer (traces/trace.c) and the schema (traces/schema.h):
 * integer-nanosecond times so that back-to-back spans never overlap on a lane, checked on the
 * writer directly and on whole simulated steps (every lane of every traced rank), which is what
 * a viewer's loader (speedscope, Perfetto) needs to nest slices. Not here: the simulator's
 * numbers (test_exec.c). */
#include "suites.h"

#include "../model/framework.h"
#include "../model/workload.h"
#include "../sim/exec.h"
#include "../traces/read.h"
#include "../traces/schema.h"
#include "../traces/trace.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void tmp_path(char *out, size_t n, const char *name)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(out, n, "%s/sc_test_trace_%d_%s", tmp && *tmp ? tmp : "/tmp", (int)getpid(), name);
}

/* "ts"/"dur" are microseconds with three decimals: back to integer nanoseconds exactly. */
static long long ns_of(json_t *v) { return llround(json_number_value(v) * 1000.0); }

typedef struct span_ns {
    long pid, tid;
    long long t0, t1;
    double ts, end; /* as a viewer reads them: ts and ts + dur in doubles (microseconds) */
    char name[64];
} span_ns;

static int cmp_span(const void *a, const void *b)
{
    const span_ns *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return (x->t0 > y->t0) - (x->t0 < y->t0);
}

/* Loads the trace, checks that no two spans on one (pid, tid) lane overlap; returns the number
 * of spans of category cat (NULL: all) seen. */
static int check_no_overlap(const char *path, const char *cat)
{
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    ck_assert_msg(root != NULL, "%s:%d: %s", path, je.line, je.text);
    json_t *ev = json_object_get(root, "traceEvents");
    size_t n = json_array_size(ev), m = 0;
    span_ns *sp = calloc(n ? n : 1, sizeof *sp);
    ck_assert_ptr_nonnull(sp);
    int n_cat = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(ev, i);
        if (strcmp(json_string_value(json_object_get(e, "ph")), "X"))
            continue;
        const char *c = json_string_value(json_object_get(e, "cat"));
        ck_assert_msg(!strcmp(c, TR_CAT_COMPUTE) || !strcmp(c, TR_CAT_COLLECTIVE) || !strcmp(c, TR_CAT_FLOW),
                      "category %s is not in traces/schema.h", c);
        n_cat += !cat || !strcmp(c, cat);
        sp[m].pid = (long)json_integer_value(json_object_get(e, "pid"));
        sp[m].tid = (long)json_integer_value(json_object_get(e, "tid"));
        sp[m].t0 = ns_of(json_object_get(e, "ts"));
        sp[m].t1 = sp[m].t0 + ns_of(json_object_get(e, "dur"));
        sp[m].ts = json_number_value(json_object_get(e, "ts"));
        sp[m].end = sp[m].ts + json_number_value(json_object_get(e, "dur"));
        snprintf(sp[m].name, sizeof sp[m].name, "%s", json_string_value(json_object_get(e, "name")));
        m++;
    }
    qsort(sp, m, sizeof *sp, cmp_span);
    for (size_t i = 1; i < m; i++)
        if (sp[i].pid == sp[i - 1].pid && sp[i].tid == sp[i - 1].tid)
            ck_assert_msg(sp[i].t0 >= sp[i - 1].t1, "%s: pid %ld tid %ld: \"%s\" [%lld, %lld) ns overlaps \"%s\" from %lld ns",
                          path, sp[i].pid, sp[i].tid, sp[i - 1].name, sp[i - 1].t0, sp[i - 1].t1, sp[i].name, sp[i].t0);
    /* and as doubles, the way Perfetto and speedscope add ts + dur: no slice passes the next
     * one's start on its lane (nesting is not what shardcast writes: lanes are sequential) */
    for (size_t i = 1; i < m; i++)
        if (sp[i].pid == sp[i - 1].pid && sp[i].tid == sp[i - 1].tid)
            ck_assert_msg(sp[i].ts >= sp[i - 1].end, "%s: pid %ld tid %ld: \"%s\" ends at %.17g us (as doubles), past \"%s\" at %.17g",
                          path, sp[i].pid, sp[i].tid, sp[i - 1].name, sp[i - 1].end, sp[i].name, sp[i].ts);
    free(sp);
    json_decref(root);
    return n_cat;
}

/* Three spans back to back at times that are not whole nanoseconds in binary (1/3 s, 0.1 s
 * steps) and one whose end rounds up: each end equals the next start exactly. */
START_TEST(test_back_to_back)
{
    char path[512];
    tmp_path(path, sizeof path, "b2b.json");
    tr_writer *w;
    sc_err err;
    ck_assert_int_eq(tr_open(path, &w, &err), 0);
    double t[5] = {1.0 / 3, 0.1 + 1.0 / 3, 0.1 + 0.2 + 1.0 / 3, 0.7000000004999, 0.7000000015};
    for (int i = 0; i < 4; i++)
        tr_span_at(w, 0, TR_TID(0, TR_STREAM_COMM), "s", TR_CAT_COLLECTIVE, t[i], t[i + 1], NULL);
    /* a start + duration pair whose sum lands on the next start */
    tr_span(w, 0, TR_TID(0, TR_STREAM_COMPUTE), "a", TR_CAT_COMPUTE, 0.1, 0.2, NULL);
    tr_span(w, 0, TR_TID(0, TR_STREAM_COMPUTE), "b", TR_CAT_COMPUTE, 0.1 + 0.2, 0.05, NULL);
    ck_assert_int_eq(tr_close(w, &err), 0);
    ck_assert_int_eq(check_no_overlap(path, NULL), 6);
    /* 1/3 s = 333333333.33 ns -> 333333.333 us; 0.7000000004999 s -> 700000.000 us */
    FILE *f = fopen(path, "r");
    char buf[4096];
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    buf[len] = 0;
    fclose(f);
    ck_assert_ptr_nonnull(strstr(buf, "\"ts\":333333.333,"));
    ck_assert_ptr_nonnull(strstr(buf, "\"ts\":700000.000,\"dur\":0.002")); /* 700000001.5 ns rounds to ...002 */
    ck_assert_int_eq(tr_ns(-1.0), 0);
    ck_assert_int_eq(tr_ns(2.5e-9), 3); /* llround: half away from zero */
    unlink(path);
}
END_TEST

/* A whole simulated step on a shipped cluster: every lane of every traced rank (compute,
 * collectives, flows per NIC channel) free of overlaps, for ZeRO-3 (per-layer gathers across
 * nodes), MiCS (2-hop sync at the boundary) and with jitter (durations no longer round). */
static void sim_trace_fw(const char *layout, double jitter, spec_framework fw);
static void sim_trace(const char *layout, double jitter) { sim_trace_fw(layout, jitter, FW_IDEAL); }

static void sim_trace_fw(const char *layout, double jitter, spec_framework fw)
{
    spec_cluster c;
    spec_model m;
    cost_calib k;
    sc_err err;
    char msg[600];
    ck_assert_msg(spec_load_cluster("configs/clusters/p4d.24xlarge.json", &c, &err) == 0, "%s",
                  sc_err_str(&err, msg, sizeof msg));
    ck_assert_int_eq(spec_load_model("configs/models/gpt3-1.3b.json", &m, &err), 0);
    ck_assert_int_eq(cost_calib_load("configs/calibrations/p4d.24xlarge.json", &k, &err), 0);
    spec_training tr;
    spec_training_defaults(&tr);
    tr.grad_accum = 2;
    tr.framework = fw;
    spec_layout l;
    ck_assert_int_eq(spec_layout_parse(layout, &l, &err), 0);
    if (fw_check(fw, &l, NULL))
        return; /* the framework does not run this layout */
    wl *w = malloc(sizeof *w);
    lo_graph *g = malloc(sizeof *g);
    an_timed *t = malloc(sizeof *t);
    ck_assert(w && g && t);
    wl_build(&m, &tr, w);
    layout_build(w, &tr, &l, &c, 2, g);
    an_time(g, w, &k, &c, t);
    char path[512];
    tmp_path(path, sizeof path, "sim.json");
    tr_writer *tw;
    ck_assert_int_eq(tr_open(path, &tw, &err), 0);
    exec_opts o;
    memset(&o, 0, sizeof o);
    o.seed = 3;
    o.jitter = jitter;
    o.trace = tw;
    exec_result r;
    ck_assert_msg(exec_run(g, t, &k, &c, &o, &r, &err) == 0, "%s", err.text);
    ck_assert_int_eq(tr_close(tw, &err), 0);
    ck_assert_int_gt(check_no_overlap(path, TR_CAT_COLLECTIVE), 0);
    unlink(path);
    free(w);
    free(g);
    free(t);
}

START_TEST(test_sim_no_overlap)
{
    sim_trace("zero3", 0);
    sim_trace("mics:p=8", 0);
    sim_trace("zero3", 0.05);
}
END_TEST

/* The same under every framework (issue 30: DeepSpeed's concurrent streams put 1,520 flows
 * partly over one another on one channel's lane), with the layouts each runs. */
START_TEST(test_sim_no_overlap_frameworks)
{
    static const char *const lays[] = {"zero3", "zero2", "mics:p=8", "hsdp:p=8", "ddp", "zeropp:hpz=8"};
    for (int fw = 0; fw < N_FRAMEWORKS; fw++)
        for (size_t i = 0; i < sizeof lays / sizeof lays[0]; i++)
            sim_trace_fw(lays[i], 0, (spec_framework)fw);
}
END_TEST

/* The reader (traces/read) gives back what the writer wrote: spans of the compute and collective
 * categories with their lane and kind (by name: "optimizer" on the compute stream, "all-gather
 * ..." etc. on a comm stream), the legacy "comm" category as collective, no flow spans, and the
 * rank a thread name carries. */
START_TEST(test_read_back)
{
    char path[512];
    tmp_path(path, sizeof path, "read.json");
    tr_writer *w;
    sc_err err;
    ck_assert_int_eq(tr_open(path, &w, &err), 0);
    tr_thread_name(w, 1, TR_TID(0, TR_STREAM_COMPUTE), "rank 8 compute");
    tr_span(w, 1, TR_TID(0, TR_STREAM_COMPUTE), "forward", TR_CAT_COMPUTE, 0, 1e-3, NULL);
    tr_span(w, 1, TR_TID(0, TR_STREAM_COMPUTE), "optimizer", TR_CAT_COMPUTE, 1e-3, 2e-3, NULL);
    tr_span(w, 1, TR_TID(0, TR_STREAM_COMM), "all-gather world 1 MB", TR_CAT_COLLECTIVE, 0, 5e-4, NULL);
    tr_span(w, 1, TR_TID(0, TR_STREAM_COMM), "reduce-scatter world 1 MB", TR_CAT_COLLECTIVE_LEGACY, 5e-4, 5e-4, NULL);
    tr_span(w, 1, TR_TID(0, TR_STREAM_FLOW0), "flow", TR_CAT_FLOW, 0, 1e-4, NULL);
    ck_assert_int_eq(tr_close(w, &err), 0);
    tr_doc d;
    ck_assert_int_eq(tr_read(path, &d, &err), 0);
    ck_assert_uint_eq(d.n_spans, 4); /* the flow is not read */
    ck_assert_int_eq(d.spans[0].kind, TR_K_COMPUTE);
    ck_assert_int_eq(d.spans[1].kind, TR_K_OPT);
    ck_assert_int_eq(d.spans[2].kind, TR_K_AG);
    ck_assert_int_eq(d.spans[3].kind, TR_K_RS); /* legacy "comm" reads as a collective */
    ck_assert_int_eq(d.spans[2].tid, TR_TID(0, TR_STREAM_COMM));
    ck_assert_double_eq_tol(d.spans[1].ts_us, 1000, 1e-9); /* 1 ms */
    ck_assert_double_eq_tol(d.spans[1].dur_us, 2000, 1e-9);
    ck_assert_uint_eq(d.n_names, 1);
    ck_assert_int_eq(d.names[0].rank, 8);
    ck_assert_str_eq(tr_kind_name(TR_K_OTHER), "other collective");
    tr_doc_free(&d);
    unlink(path);
}
END_TEST

Suite *trace_suite(void)
{
    Suite *s = suite_create("trace");
    TCase *tc = tcase_create("trace");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_back_to_back);
    tcase_add_test(tc, test_sim_no_overlap);
    tcase_add_test(tc, test_sim_no_overlap_frameworks);
    tcase_add_test(tc, test_read_back);
    suite_add_tcase(s, tc);
    return s;
}
