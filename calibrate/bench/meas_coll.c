/* meas_coll.c — one measurement of the harness (harness.h): collectives across sizes over every planned communicator, each checked for correctness.
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

static float pat(int q, size_t j) { return (float)((q * 5 + (int)(j % 11)) % 11 + 1); }

/* Run the collective once on patterned input and count wrong output elements on this rank. */
static long coll_check(const bench_ctx *r, bench_comm *c, bench_coll kind, void *send, void *recv, size_t count)
{
    const bench_backend *be = r->be;
    int n = be->comm_size(c), q = be->comm_rank(c);
    size_t n_send = kind == BENCH_REDUCESCATTER ? count * (size_t)n : count;
    size_t n_recv = kind == BENCH_ALLGATHER ? count * (size_t)n : count;
    for (size_t j = 0; j < n_send; j++)
        r->host[j] = pat(q, j);
    if (be->upload(send, r->host, n_send * 4))
        bench_die(r, "upload");
    memset(r->host, 0, n_recv * 4);
    if (be->upload(recv, r->host, n_recv * 4))
        bench_die(r, "upload");
    double t;
    if (be->coll(c, kind, BENCH_F32, send, recv, count, &t))
        bench_die(r, bench_coll_name(kind));
    if (be->download(r->host, recv, n_recv * 4))
        bench_die(r, "download");
    double sums[11]; /* sum over ranks of pat(s, j) depends on j mod 11 only */
    for (int res = 0; res < 11; res++) {
        sums[res] = 0;
        for (int s = 0; s < n; s++)
            sums[res] += pat(s, (size_t)res);
    }
    long bad = 0;
    for (size_t i = 0; i < n_recv; i++) {
        double want;
        if (kind == BENCH_ALLGATHER)
            want = pat((int)(i / count), i % count);
        else if (kind == BENCH_REDUCESCATTER)
            want = sums[((size_t)q * count + i) % 11];
        else
            want = sums[i % 11];
        bad += r->host[i] != (float)want;
    }
    return bad;
}


/* ---- collectives --------------------------------------------------------------------------- */
void bench_measure_collectives(bench_ctx *r)
{
    const bench_backend *be = r->be;
    const bench_opts *o = r->o;
    bench_grp groups[256];
    int ng = bench_plan_groups(r, groups, 256);
    if (r->print) {
        printf("\n# collectives: fp32 sum, out-of-place; time per op = max over ranks, over %d iterations after %d "
               "warm-up; algbw/busbw as nccl-tests\n",
               o->iters, o->warmup);
        printf("# %-9s %4s %3s %3s %4s %-14s %12s %10s %10s %10s %8s %8s %6s\n", "group", "n", "k", "m", "conc",
               "collective", "bytes", "time_us", "min_us", "p95_us", "algbw", "busbw", "errors");
        printf("# %-9s %4s %3s %3s %4s %-14s %12s %10s %10s %10s %8s %8s %6s\n", "", "", "", "", "", "", "", "", "", "",
               "GB/s", "GB/s", "");
    }
    size_t cap = o->max_bytes + 64;
    void *send = bench_alloc(r, cap, "collective send buffer"), *recv = bench_alloc(r, cap, "collective receive buffer");
    double *t = malloc(sizeof(double) * (size_t)o->iters);
    if (!t)
        bench_die(r, "out of memory");
    for (int gi = 0; gi < ng; gi++) {
        const bench_grp *gr = &groups[gi];
        bench_comm *c = gr->kind == GRP_WORLD ? r->world : bench_split_kind(r, gr->kind, gr->p);
        int n = be->comm_size(c);
        for (int kind = 0; kind < BENCH_N_COLLS; kind++) {
            for (size_t S = o->min_bytes; S <= o->max_bytes; S *= 2) {
                size_t count = kind == BENCH_ALLREDUCE ? S / 4 : S / (4 * (size_t)n);
                if (!count)
                    continue;
                size_t bytes = kind == BENCH_ALLREDUCE ? count * 4 : count * 4 * (size_t)n;
                double errs = (double)coll_check(r, c, (bench_coll)kind, send, recv, count);
                if (be->host_allreduce(&errs, 1, 0))
                    bench_die(r, "reduction over ranks");
                for (int i = 0; i < o->warmup; i++)
                    if (be->coll(c, (bench_coll)kind, BENCH_F32, send, recv, count, &t[0]))
                        bench_die(r, bench_coll_name((bench_coll)kind));
                for (int i = 0; i < o->iters; i++) {
                    bench_sync(r);
                    if (be->coll(c, (bench_coll)kind, BENCH_F32, send, recv, count, &t[i]))
                        bench_die(r, bench_coll_name((bench_coll)kind));
                }
                bench_max_over_ranks(r, t, o->iters);
                bench_stats st = bench_stats_of(t, o->iters);
                double algbw = st.mean > 0 ? (double)bytes / st.mean / 1e9 : 0;
                double busbw = algbw * bench_busbw_factor((bench_coll)kind, n);
                if (r->h->rank == 0) {
                    json_t *rec = json_pack(
                        "{s:s, s:s, s:i, s:i, s:i, s:i, s:I, s:f, s:f, s:f, s:f, s:f, s:i, s:I}", "kind",
                        bench_coll_name((bench_coll)kind), "group", layout_group_name(gr->kind), "n", n, "k", gr->k, "m",
                        gr->m, "concurrent", gr->concurrent, "bytes", (json_int_t)bytes, "time_us", st.mean * 1e6,
                        "time_min_us", st.min * 1e6, "time_p95_us", st.p95 * 1e6, "algbw_GBps", algbw, "busbw_GBps",
                        busbw, "iters", o->iters, "errors", (json_int_t)errs);
                    json_array_append_new(r->colls, rec);
                }
                if (r->print) {
                    printf("  %-9s %4d %3d %3d %4d %-14s %12zu %10.2f %10.2f %10.2f %8.3f %8.3f %6.0f\n",
                           layout_group_name(gr->kind), n, gr->k, gr->m, gr->concurrent,
                           bench_coll_name((bench_coll)kind), bytes, st.mean * 1e6, st.min * 1e6, st.p95 * 1e6, algbw,
                           busbw, errs);
                    fflush(stdout);
                }
                if (S > SIZE_MAX / 2)
                    break;
            }
        }
        if (c != r->world)
            be->comm_free(c);
    }
    free(t);
    be->release(send);
    be->release(recv);
}
