/* meas_membw.c — one measurement of the harness (harness.h): memory bandwidth: device copies of growing size.
 * Timing as driver.c describes. Not here: the loop, output, backends. */
#include "harness.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../base/atomic.h"
#include "../../model/layout.h"
#include "../../traces/trace.h"

/* ---- memory bandwidth ------------------------------------------------------------------------ */
void bench_measure_membw(bench_ctx *r)
{
    const bench_backend *be = r->be;
    const bench_opts *o = r->o;
    if (r->print) {
        printf("\n# memory bandwidth (copy; GB/s counts reads + writes = 2 x bytes), every rank at once\n");
        printf("# %12s %12s %10s %10s\n", "bytes", "time_us", "min_us", "GB/s");
    }
    double *t = malloc(sizeof(double) * (size_t)o->iters);
    if (!t)
        bench_die(r, "out of memory");
    size_t top = o->membw_bytes;
    size_t first = MiB < top ? MiB : top;
    for (size_t bytes = first; bytes > 0;) {
        void *src = bench_alloc(r, bytes, "copy source"), *dst = bench_alloc(r, bytes, "copy destination");
        bench_fill(r, src, bytes / 4, BENCH_F32, 0);
        for (int i = 0; i < o->warmup; i++)
            if (be->membw(dst, src, bytes, &t[0]))
                bench_die(r, "memory copy");
        for (int i = 0; i < o->iters; i++) {
            bench_sync(r);
            if (be->membw(dst, src, bytes, &t[i]))
                bench_die(r, "memory copy");
        }
        bench_max_over_ranks(r, t, o->iters);
        bench_stats st = bench_stats_of(t, o->iters);
        double gbps = st.mean > 0 ? 2.0 * (double)bytes / st.mean / 1e9 : 0;
        if (r->h->rank == 0)
            json_array_append_new(r->membw, json_pack("{s:I, s:f, s:f}", "bytes", (json_int_t)bytes, "time_us",
                                                      st.mean * 1e6, "GBps", gbps));
        if (r->print) {
            printf("  %12zu %12.2f %10.2f %10.2f\n", bytes, st.mean * 1e6, st.min * 1e6, gbps);
            fflush(stdout);
        }
        be->release(src);
        be->release(dst);
        if (bytes >= top)
            break;
        bytes = bytes > top / 4 ? top : bytes * 4; /* 1 MiB, 4 MiB, ..., and the largest */
    }
    free(t);
}
