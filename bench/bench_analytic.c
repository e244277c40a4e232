/* bench_analytic.c — configurations per second of the analytical engine on one core, for a
 * 96-layer model (GPT-3 175B) on p4d.24xlarge: layouts x node counts x grad-accum, each a full
 * an_predict (op graph, costs, recurrence, throughput, memory). Each rate is given plain and through
 * a sweep memo (an_predict_memo: layer compute and collective times shared across the grid), after
 * checking that the memo's results are bit-identical to the plain ones; then the same grid through
 * the front door (predict/eval), as predict calls it; last the headline, the front door with a
 * sweep memo and the shipped NCCL calibration, as sweep and plan call it, in configurations per
 * CPU second (`bench_analytic quick PASSES [fresh|sweep|plain]`: that alone). Not a test: prints rates. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../model/analytic.h"
#include "../predict/eval.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Configurations per second of `layouts` x 4 node counts x 3 grad-accum values, for at least
 * `secs` seconds, plain (memo NULL) or through a memo. */
static const int NODES[] = {16, 32, 64, 128};
static const int ACC[] = {1, 4, 16};

static double rate_of(an_memo *memo, const wl *w, spec_training t, const spec_layout *lay, int nl,
                      const spec_cluster *c, const cost_calib *cal, double secs, double *sink)
{
    long n = 0;
    double t0 = now_s(), t1;
    do {
        for (int a = 0; a < 3; a++) {
            t.grad_accum = ACC[a];
            for (int ni = 0; ni < 4; ni++)
                for (int li = 0; li < nl; li++) {
                    an_result r;
                    an_predict_memo(memo, w, &t, &lay[li], c, NODES[ni], cal, &r);
                    *sink += r.step_s;
                    n++;
                }
        }
        t1 = now_s();
    } while (t1 - t0 < secs);
    return (double)n / (t1 - t0);
}

/* 1 when every configuration gives the same bytes through the memo as without it. */
static int memo_identical(an_memo *memo, const wl *w, spec_training t, const spec_layout *lay, int nl,
                          const spec_cluster *c, const cost_calib *cal)
{
    for (int pass = 0; pass < 2; pass++) /* the second pass hits the memo everywhere */
        for (int a = 0; a < 3; a++) {
            t.grad_accum = ACC[a];
            for (int ni = 0; ni < 4; ni++)
                for (int li = 0; li < nl; li++) {
                    an_result x, y;
                    memset(&x, 0, sizeof x);
                    memset(&y, 0, sizeof y);
                    an_predict(w, &t, &lay[li], c, NODES[ni], cal, &x);
                    an_predict_memo(memo, w, &t, &lay[li], c, NODES[ni], cal, &y);
                    if (memcmp(&x, &y, sizeof x))
                        return 0;
                }
        }
    return 1;
}

/* CPU seconds of this process (user + system): the rate per core on a shared machine. */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* `bench_analytic quick PASSES`: only the headline measurement, a fixed amount of work (for
 * profiles and side-by-side timing): PASSES x the 108 configurations of the 9 sharded layouts
 * with the shipped p4d (NCCL) calibration, through the front door (pred_eval_finite) with one
 * sweep memo, as sweep and plan call it. mode 0: one memo for all passes (warm after the first);
 * 1 (fresh): a new memo for every pass (each pass one sweep of 108 points, as one `sweep` run);
 * 2 (sweep): the same with micro-batch 1, 2, 4 in place of grad-accum 1, 4, 16 (grad-accum 1), the
 * grid `shardcast sweep --micro-batches 1,2,4` evaluates, where no graph repeats; 3 (plain): the
 * grid without a memo (what predict and the accuracy suite run per point). */
static int quick(const spec_cluster *c, const spec_model *m, const spec_layout *lay, long passes, int mode)
{
    static const int MB[] = {1, 2, 4};
    const int fresh = mode == 1 || mode == 2;
    cost_calib ncal;
    sc_err e;
    if (cost_calib_load("configs/calibrations/p4d.24xlarge.json", &ncal, &e)) {
        fprintf(stderr, "bench: %s: %s: %s\n", e.source, e.path, e.text);
        return 1;
    }
    spec_training t;
    spec_training_defaults(&t);
    an_memo *memo = an_memo_new();
    if (!memo)
        return 1;
    double sink = 0, c0 = 0, t0 = 0;
    long n = 0;
    int same = 1;
    for (long p = -2; p < passes; p++) { /* p < 0: checked, not timed */
        const int check = p < 0;
        if (p == 0) {
            an_memo_reset(memo);
            n = 0;
            sink = 0;
            c0 = cpu_s();
            t0 = now_s();
        }
        if (fresh && p > 0)
            an_memo_reset(memo);
        for (int a = 0; a < 3; a++) {
            t.grad_accum = mode == 2 ? 1 : ACC[a];
            t.micro_batch = mode == 2 ? MB[a] : 1;
            for (int ni = 0; ni < 4; ni++)
                for (int li = 0; li < 9; li++) {
                    pred_input in = {c, m, &t, NODES[ni], &lay[li], &ncal, mode == 3 ? NULL : memo};
                    pred_result r;
                    if (!pred_eval_finite(&in, PRED_MODEL, NULL, &r, &e))
                        sink += r.r.step_s;
                    n++;
                    if (check && mode != 3) { /* two passes (memo cold, then warm): every byte as without it */
                        pred_input bare = in;
                        bare.memo = NULL;
                        pred_result b;
                        if (pred_eval_finite(&bare, PRED_MODEL, NULL, &b, &e) || memcmp(&b.r, &r.r, sizeof b.r))
                            same = 0;
                    }
                }
        }
    }
    double cpu = cpu_s() - c0, wall = now_s() - t0;
    static const char *const what[] = {"a warm memo", "a fresh memo per 108-point grid",
                                       "a fresh memo per 108-point grid, micro-batch 1/2/4 x grad-accum 1 (sweep's grid)",
                                       "no memo"};
    printf("front door + %s, nccl calibration: %ld configurations, %.0f configs/s of CPU time (%.3f us each), "
           "%.0f/s wall; results bit-identical to the front door without a memo: %s [checksum %.6g]\n", what[mode], n, (double)n / cpu, 1e6 * cpu / (double)n, (double)n / wall, same ? "yes" : "NO", sink);
    an_memo_free(memo);
    return same ? 0 : 1;
}

/* The grids of main (9 sharded layouts with the default and the NCCL calibration, 6 tensor-parallel
 * ones) through a sweep memo, after checking that it changes no bit of any result: the rates
 * plain and memoized, side by side. Returns whether the results were bit-identical (-1: out of
 * memory). */
static int memo_rates(const wl *w, spec_training t, const spec_layout *lay, const spec_layout *tl, const spec_cluster *c,
                      const cost_calib *cal, const cost_calib *ncal, double *sink)
{
    /* the same grids through a sweep memo (what sweep and plan do), after checking that it
     * changes no bit of any result */
    an_memo *memo = an_memo_new();
    if (!memo)
        return -1;
    t.grad_accum = 1;
    int same = memo_identical(memo, w, t, lay, 9, c, cal) && memo_identical(memo, w, t, lay, 9, c, ncal) &&
               memo_identical(memo, w, t, tl, 6, c, cal);
    printf("memo: results bit-identical to an_predict on all %d configurations x 3 grids: %s\n", 9 * 12,
           same ? "yes" : "NO");
    an_memo_reset(memo);
    double plain = rate_of(NULL, w, t, lay, 9, c, cal, 1.0, sink);
    double memod = rate_of(memo, w, t, lay, 9, c, cal, 2.0, sink);
    printf("analytic, sweep memo: %.0f configs/s (%.2f us each; plain %.0f configs/s in the same minute, x%.2f)\n",
           memod, 1e6 / memod, plain, memod / plain);
    plain = rate_of(NULL, w, t, lay, 9, c, ncal, 1.0, sink);
    memod = rate_of(memo, w, t, lay, 9, c, ncal, 2.0, sink);
    printf("analytic, nccl calibration, sweep memo: %.0f configs/s (%.2f us each; plain %.0f, x%.2f)\n", memod,
           1e6 / memod, plain, memod / plain);
    plain = rate_of(NULL, w, t, tl, 6, c, cal, 1.0, sink);
    memod = rate_of(memo, w, t, tl, 6, c, cal, 2.0, sink);
    printf("analytic, tp / axonn layouts, sweep memo: %.0f configs/s (%.2f us each; plain %.0f, x%.2f) [checksum %.3g]\n",
           memod, 1e6 / memod, plain, memod / plain, *sink);
    long lh, lm, ch, cm;
    an_memo_stats(memo, &lh, &lm, &ch, &cm);
    printf("memo: layers %ld hits / %ld misses, collectives %ld hits / %ld misses\n", lh, lm, ch, cm);
    an_memo_free(memo);
    return same;
}

int main(int argc, char **argv)
{
    spec_cluster c;
    spec_model m;
    sc_err e;
    if (spec_load_cluster("configs/clusters/p4d.24xlarge.json", &c, &e) ||
        spec_load_model("configs/models/gpt3-175b.json", &m, &e)) {
        fprintf(stderr, "bench: %s: %s: %s\n", e.source, e.path, e.text);
        return 1;
    }
    cost_calib cal;
    cost_calib_defaults(&c, &cal);
    static const char *const L[] = {"ddp", "zero1", "zero2", "zero3", "mics:p=8", "mics:p=16", "mics:p=64,hier=0",
                                    "hsdp:p=8", "zeropp:hpz=8"};
    spec_layout lay[9];
    for (int i = 0; i < 9; i++)
        if (spec_layout_parse(L[i], &lay[i], &e)) {
            fprintf(stderr, "bench_analytic: %s: %s\n", L[i], e.text);
            return 1;
        }
    if (argc >= 3 && !strcmp(argv[1], "quick"))
        return quick(&c, &m, lay, atol(argv[2]), argc < 4 ? 0 : !strcmp(argv[3], "fresh") ? 1 : !strcmp(argv[3], "sweep") ? 2 : !strcmp(argv[3], "plain") ? 3 : 0);
    spec_training t;
    spec_training_defaults(&t);
    wl w;
    wl_build(&m, &t, &w);

    long n = 0;
    double sink = 0, t0, t1;
    double rate = rate_of(NULL, &w, t, lay, 9, &c, &cal, 2.0, &sink);
    printf("analytic (bare an_predict, no memo, built-in default calibration): %.0f configs/s (%.2f us each), "
           "96-layer GPT-3 175B, p4d 16-128 nodes, 9 layouts, grad-accum 1/4/16 [checksum %.3g]\n",
           rate, 1e6 / rate, sink);
    const double bare_rate = rate; /* for the front door's comparison below */

    /* the same with the shipped p4d calibration: NCCL's algorithms and protocols (model/nccl.c),
     * every collective choosing among 5 algorithms x 3 protocols */
    cost_calib ncal;
    if (cost_calib_load("configs/calibrations/p4d.24xlarge.json", &ncal, &e)) {
        fprintf(stderr, "bench: %s: %s: %s\n", e.source, e.path, e.text);
        return 1;
    }
    rate = rate_of(NULL, &w, t, lay, 9, &c, &ncal, 2.0, &sink);
    printf("analytic, nccl calibration (p4d.24xlarge.json): %.0f configs/s (%.2f us each)\n", rate, 1e6 / rate);

    /* with the workload rebuilt per configuration (a sweep over micro-batch sizes) */
    n = 0;
    t0 = now_s();
    do {
        for (int li = 0; li < 9; li++) {
            t.micro_batch = 1 + (int)(n % 4);
            wl_build(&m, &t, &w);
            an_result r;
            an_predict(&w, &t, &lay[li], &c, 64, &cal, &r);
            sink += r.step_s;
            n++;
        }
        t1 = now_s();
    } while (t1 - t0 < 1.0);
    printf("analytic incl. workload build: %.0f configs/s\n", (double)n / (t1 - t0));

    /* tensor-parallel layouts (inline all-reduces, local GEMM shapes: the row's localize per build) */
    static const char *const TL[] = {"tp:t=8", "tp:t=4,zero1=0", "axonn:x=2,y=2,z=2", "axonn:x=4,y=2,z=8",
                                     "axonn:x=2,y=2,z=2,overlap=0", "axonn:x=1,y=1,z=64,placement=zdxy"};
    spec_layout tl[6];
    for (int i = 0; i < 6; i++)
        if (spec_layout_parse(TL[i], &tl[i], &e)) {
            fprintf(stderr, "bench_analytic: %s: %s\n", TL[i], e.text);
            return 1;
        }
    t.micro_batch = 1;
    wl_build(&m, &t, &w);
    rate = rate_of(NULL, &w, t, tl, 6, &c, &cal, 1.0, &sink);
    printf("analytic, tp / axonn layouts: %.0f configs/s (%.2f us each) [checksum %.3g]\n", rate, 1e6 / rate, sink);

    int same = memo_rates(&w, t, lay, tl, &c, &cal, &ncal, &sink);
    if (same < 0)
        return 1;
    /* what users call: the front door (predict/eval: checks, the analytical engine, the finite
     * result) on the same grid as the first measurement, and its cost over a bare an_predict */
    t.grad_accum = 1;
    n = 0;
    sink = 0;
    t0 = now_s();
    do {
        for (int a = 0; a < 3; a++) {
            t.grad_accum = ACC[a];
            for (int ni = 0; ni < 4; ni++)
                for (int li = 0; li < 9; li++) {
                    pred_input in = {&c, &m, &t, NODES[ni], &lay[li], &cal, NULL};
                    pred_result r;
                    if (!pred_eval_finite(&in, PRED_MODEL, NULL, &r, &e))
                        sink += r.r.step_s;
                    n++;
                }
        }
        t1 = now_s();
    } while (t1 - t0 < 2.0);
    double front = (double)n / (t1 - t0);
    printf("front door (pred_eval_finite, analytical): %.0f configs/s (%.2f us each; the bare an_predict above runs %.2fx as many: "
           "the front door also builds the workload and checks the point) "
           "[checksum %.3g]\n", front, 1e6 / front, bare_rate / front, sink);
    /* the headline: what sweep and plan run (the front door with a memo per grid, the shipped
     * NCCL calibration), per CPU second */
    for (int mode = 0; mode < 4 && same; mode++)
        if (quick(&c, &m, lay, mode == 3 ? 100 : 1000, mode))
            return 1;
    return same ? 0 : 1;
}
