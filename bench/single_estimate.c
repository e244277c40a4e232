/* single_estimate.c — the cost of one closed-form estimate without the sweep memo (issue 32 item 3):
 * a bare an_predict for 96-layer GPT-3 175B on p4d.24xlarge, 9 sharded layouts x 16/32/64/128 nodes
 * x grad-accum 1/4/16 = 108 configurations a pass, with the built-in default calibration or a
 * calibration file. Written against the API every tree since d0ad5ef shares (an_predict, wl_build,
 * spec_*, cost_calib_*), so that the same file compiles against each tree's library and runs in that
 * tree (which reads its own configs): bench/single_estimate.sh does that side by side. Not a test and
 * not part of `make bench` (which builds bench_*.c only): it prints the CPU time per configuration
 * and a checksum of the step times.
 *
 *   single_estimate default|CALIB.json PASSES
 *
 * Instructions: `valgrind --tool=callgrind --toggle-collect=an_predict single_estimate ... 3`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/analytic.h"

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: single_estimate default|CALIB.json PASSES\n");
        return 2;
    }
    static const char *const L[] = {"ddp", "zero1", "zero2", "zero3", "mics:p=8", "mics:p=16", "mics:p=64,hier=0",
                                    "hsdp:p=8", "zeropp:hpz=8"};
    static const int NODES[] = {16, 32, 64, 128}, ACC[] = {1, 4, 16};
    spec_cluster c;
    spec_model m;
    sc_err e;
    cost_calib cal;
    if (spec_load_cluster("configs/clusters/p4d.24xlarge.json", &c, &e) ||
        spec_load_model("configs/models/gpt3-175b.json", &m, &e)) {
        fprintf(stderr, "single_estimate: %s: %s: %s\n", e.source, e.path, e.text);
        return 2;
    }
    if (!strcmp(argv[1], "default"))
        cost_calib_defaults(&c, &cal);
    else if (cost_calib_load(argv[1], &cal, &e)) {
        fprintf(stderr, "single_estimate: %s: %s: %s\n", e.source, e.path, e.text);
        return 2;
    }
    spec_layout lay[9];
    for (int i = 0; i < 9; i++)
        if (spec_layout_parse(L[i], &lay[i], &e)) {
            fprintf(stderr, "single_estimate: %s: %s\n", L[i], e.text);
            return 2;
        }
    spec_training t;
    spec_training_defaults(&t);
    wl w;
    wl_build(&m, &t, &w);
    const long passes = atol(argv[2]);
    double sink = 0, t0 = cpu_s();
    long n = 0;
    for (long p = 0; p < passes; p++)
        for (int a = 0; a < 3; a++) {
            t.grad_accum = ACC[a];
            for (int ni = 0; ni < 4; ni++)
                for (int li = 0; li < 9; li++) {
                    an_result r;
                    an_predict(&w, &t, &lay[li], &c, NODES[ni], &cal, &r);
                    sink += r.step_s;
                    n++;
                }
        }
    double cpu = cpu_s() - t0;
    printf("%ld configurations, %.4f us of CPU each [checksum %.17g]\n", n, n ? 1e6 * cpu / (double)n : 0.0, sink);
    return 0;
}
