/* meas_step.c — one measurement of the harness (harness.h): the real sharded step of ZeRO-3 and MiCS, timed per op, and its Chrome trace.
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
#include "../../model/layout_kind.h"
#include "../../traces/trace.h"

/* ---- the real sharded step ------------------------------------------------------------------- */
enum { OP_COMPUTE, OP_AG, OP_RS, OP_AR, N_OPS };
static const char *const OP_NAMES[N_OPS] = {"compute", "all-gather", "reduce-scatter", "all-reduce"};

typedef struct span {
    char name[24];
    int32_t stream; /* 0 compute, 1 communication */
    int32_t layer;
    double t0, dur, bytes;
} span;

typedef struct step {
    bench_ctx *r;
    int p, hier;
    bench_comm *part, *repl, *rail, *intra;
    int n_part, n_repl, n_rail;
    size_t T;                 /* tokens of a micro-step                                      */
    cal_step_gemm g[CAL_STEP_GEMMS]; /* a layer's GEMMs and their weights (calibrate/step.h)  */
    size_t P, shard, full;    /* parameters of one layer; this rank's shard; padded p x shard */
    char *wshard, *gshard, *gsync, *wfull, *gfull, *tmp;
    char *X, *QKV, *Y, *F, *Z, *dZ, *dF, *dY, *dX, *dQKV;
    double t_start, op_t[N_OPS];
    span *spans;
    int n_spans, max_spans, tracing;
} step;

static void step_note(step *s, int op, const char *name, int layer, double t_issue, double dur, double bytes)
{
    s->op_t[op] += dur;
    if (s->tracing && s->n_spans < s->max_spans) {
        span *sp = &s->spans[s->n_spans++];
        memset(sp, 0, sizeof *sp);
        snprintf(sp->name, sizeof sp->name, "%s", name);
        sp->stream = op == OP_COMPUTE ? 0 : 1;
        sp->layer = layer;
        sp->t0 = t_issue - s->t_start;
        sp->dur = dur;
        sp->bytes = bytes;
    }
}

static void step_gemm(step *s, const char *name, int layer, int ta, int tb, size_t m, size_t n, size_t k,
                      const void *A, const void *B, void *C)
{
    const bench_ctx *r = s->r;
    double t, t0 = r->be->now();
    if (r->be->gemm(r->be->dtype, ta, tb, (int)m, (int)n, (int)k, 1, 0, A, B, C, &t))
        bench_die(r, "step GEMM");
    step_note(s, OP_COMPUTE, name, layer, t0, t, 2.0 * (double)m * (double)n * (double)k);
}

static void step_coll(step *s, int op, const char *name, int layer, bench_comm *c, bench_coll kind, const void *send,
                      void *recv, size_t count, int n)
{
    const bench_ctx *r = s->r;
    double t, t0 = r->be->now();
    if (r->be->coll(c, kind, r->be->dtype, send, recv, count, &t))
        bench_die(r, bench_coll_name(kind));
    double bytes = (double)count * (double)r->esz * (kind == BENCH_ALLREDUCE ? 1 : n);
    step_note(s, op, name, layer, t0, t, bytes);
}

/* Parameters of layer l, gathered (or the local copy when the partition is one rank). */
static char *gather_layer(step *s, int l, const char *pass)
{
    const size_t e = s->r->esz;
    char *mine = s->wshard + (size_t)l * s->shard * e;
    if (s->n_part == 1)
        return mine;
    char name[24];
    if (s->hier) { /* MiCS hierarchical: rail across nodes, then inside the node */
        snprintf(name, sizeof name, "%s AG rail L%d", pass, l);
        step_coll(s, OP_AG, name, l, s->rail, BENCH_ALLGATHER, mine, s->tmp, s->shard, s->n_rail);
        snprintf(name, sizeof name, "%s AG intra L%d", pass, l);
        step_coll(s, OP_AG, name, l, s->intra, BENCH_ALLGATHER, s->tmp, s->wfull, s->shard * (size_t)s->n_rail,
                  s->n_part / s->n_rail);
    } else {
        snprintf(name, sizeof name, "%s AG L%d", pass, l);
        step_coll(s, OP_AG, name, l, s->part, BENCH_ALLGATHER, mine, s->wfull, s->shard, s->n_part);
    }
    return s->wfull;
}

/* One micro-step: forward over the layers, backward in reverse, gradients reduce-scattered. */
static void micro_step(step *s)
{
    const bench_ctx *r = s->r;
    const size_t e = r->esz, T = s->T;
    const int L = r->o->shape.layers;
    const cal_step_gemm *g = s->g;
    /* each GEMM's input (T x k) and output (T x n) activations, and their gradients */
    char *const in[CAL_STEP_GEMMS] = {s->X, s->X, s->Y, s->F}, *const out[CAL_STEP_GEMMS] = {s->QKV, s->Y, s->F, s->Z};
    char *const d_in[CAL_STEP_GEMMS] = {s->dX, s->dX, s->dY, s->dF};
    char *const d_out[CAL_STEP_GEMMS] = {s->dQKV, s->dY, s->dF, s->dZ};
    char name[24];
    for (int l = 0; l < L; l++) {
        char *W = gather_layer(s, l, "fwd");
        for (int i = 0; i < CAL_STEP_GEMMS; i++) {
            snprintf(name, sizeof name, "fwd %s", g[i].name);
            step_gemm(s, name, l, 0, 0, T, g[i].n, g[i].k, in[i], W + g[i].w_off * e, out[i]);
        }
    }
    for (int l = L - 1; l >= 0; l--) {
        char *W = gather_layer(s, l, "bwd");
        char *dW = s->n_part == 1 ? s->gshard + (size_t)l * s->shard * e : s->gfull;
        /* each forward C = A W gives dA = dC W^T and dW = A^T dC, the last GEMM's first */
        for (int i = CAL_STEP_GEMMS - 1; i >= 0; i--) {
            snprintf(name, sizeof name, "bwd %s dA", g[i].name);
            step_gemm(s, name, l, 0, 1, T, g[i].k, g[i].n, d_out[i], W + g[i].w_off * e, d_in[i]);
            snprintf(name, sizeof name, "bwd %s dW", g[i].name);
            step_gemm(s, name, l, 1, 0, g[i].k, g[i].n, T, in[i], d_out[i], dW + g[i].w_off * e);
        }
        if (s->n_part > 1) {
            snprintf(name, sizeof name, "bwd RS L%d", l);
            step_coll(s, OP_RS, name, l, s->part, BENCH_REDUCESCATTER, s->gfull, s->gshard + (size_t)l * s->shard * e,
                      s->shard, s->n_part);
        }
    }
}

static void one_step(step *s)
{
    const bench_ctx *r = s->r;
    memset(s->op_t, 0, sizeof s->op_t);
    s->n_spans = 0;
    bench_sync(r);
    s->t_start = r->be->now();
    for (int a = 0; a < r->o->shape.grad_accum; a++)
        micro_step(s);
    if (s->n_repl > 1) /* MiCS 2-hop: gradient shards all-reduced across replicas at the boundary */
        step_coll(s, OP_AR, "AR grads", -1, s->repl, BENCH_ALLREDUCE, s->gshard, s->gsync,
                  s->shard * (size_t)r->o->shape.layers, s->n_repl);
}

/* FILE for the first layout, FILE with ".<layout>" before its extension for the others. */
static void trace_path(const char *base, const char *layout, int first, char *out, size_t n)
{
    if (first) {
        snprintf(out, n, "%s", base);
        return;
    }
    char tag[64];
    snprintf(tag, sizeof tag, "%s", layout);
    for (char *c = tag; *c; c++)
        if (*c == ':' || *c == '=' || *c == ',')
            *c = '-';
    const char *dot = strrchr(base, '.'), *slash = strrchr(base, '/');
    if (!dot || (slash && dot < slash))
        snprintf(out, n, "%s.%s", base, tag);
    else
        snprintf(out, n, "%.*s.%s%s", (int)(dot - base), base, tag, dot);
}

/* Rank 0 gathers every rank's spans of the last measured step and writes the Chrome trace:
 * one process per node, tid = local_rank * 8 + 0 (compute) or 1 (communication). */
static int write_trace(step *s, const char *path, const char *layout, sc_err *err)
{
    const bench_ctx *r = s->r;
    const int N = r->N;
    int cnt = s->n_spans;
    int *counts = r->h->rank == 0 ? calloc((size_t)N, sizeof(int)) : NULL;
    span *all = r->h->rank == 0 ? calloc((size_t)N * (size_t)s->max_spans, sizeof(span)) : NULL;
    if (r->h->rank == 0 && (!counts || !all)) {
        fprintf(stderr, "shardcast-bench: out of memory for the trace\n");
        r->be->abort(1);
        exit(1);
    }
    if (r->be->host_gather(&cnt, sizeof cnt, counts) ||
        r->be->host_gather(s->spans, sizeof(span) * (size_t)s->max_spans, all))
        bench_die(r, "gathering trace spans");
    int rc = 0;
    if (r->h->rank == 0) {
        tr_writer *w;
        if ((rc = tr_open(path, &w, err)) == 0) {
            for (int nd = 0; nd < r->h->nodes; nd++) {
                char nm[64];
                snprintf(nm, sizeof nm, "node %d", nd);
                tr_process_name(w, nd, nm);
            }
            for (int q = 0; q < N; q++) {
                char nm[64];
                int pid = r->node_of[q], tid = TR_TID(r->local_of[q], TR_STREAM_COMPUTE);
                snprintf(nm, sizeof nm, "rank %d compute", q);
                tr_thread_name(w, pid, tid, nm);
                snprintf(nm, sizeof nm, "rank %d comm", q);
                tr_thread_name(w, pid, TR_TID(r->local_of[q], TR_STREAM_COMM), nm);
                for (int i = 0; i < counts[q] && i < s->max_spans; i++) {
                    const span *sp = &all[(size_t)q * (size_t)s->max_spans + (size_t)i];
                    char args[160];
                    if (sp->stream)
                        snprintf(args, sizeof args, "{\"layout\":\"%s\",\"layer\":%d,\"bytes\":%.0f}", layout,
                                 sp->layer, sp->bytes);
                    else
                        snprintf(args, sizeof args, "{\"layout\":\"%s\",\"layer\":%d,\"flops\":%.0f}", layout,
                                 sp->layer, sp->bytes);
                    tr_span(w, pid, TR_TID(r->local_of[q], sp->stream ? TR_STREAM_COMM : TR_STREAM_COMPUTE), sp->name,
                            sp->stream ? TR_CAT_COLLECTIVE : TR_CAT_COMPUTE, sp->t0, sp->dur, args);
                }
            }
            rc = tr_close(w, err);
        }
    }
    free(counts);
    free(all);
    return rc;
}

int bench_measure_step(bench_ctx *r, const spec_layout *lay, int first, sc_err *err)
{
    const bench_opts *o = r->o;
    const bench_backend *be = r->be;
    const int N = r->N;
    char lname[64];
    spec_layout_str(lay, lname, sizeof lname);
    step s;
    memset(&s, 0, sizeof s);
    s.r = r;
    s.p = spec_layout_shard(lay, N); /* zero3: every rank; mics: p */
    if (s.p < 1 || s.p > N || N % s.p)
        return sc_err_set(err, SC_EINPUT, "--step", "", "%s: expected a partition size dividing the %d ranks, got %d",
                          lname, N, s.p);
    const layout_kind_row *kr = layout_kind_row_of(lay->kind);
    s.hier = kr && kr->hier_gather && lay->hier && r->G > 1 && s.p > r->G && s.p % r->G == 0;
    s.T = cal_step_tokens(&o->shape);
    s.P = cal_step_layer((size_t)o->shape.hidden, (size_t)o->shape.ffn, s.g);
    const size_t e = r->esz, T = s.T;
    const cal_step_gemm *g = s.g;
    s.shard = (s.P + (size_t)s.p - 1) / (size_t)s.p;
    s.full = s.shard * (size_t)s.p;
    const size_t L = (size_t)o->shape.layers;

    s.part = s.p == N ? r->world : bench_split_kind(r, GRP_PARTITION, s.p);
    s.repl = bench_split_kind(r, GRP_REPLICA, s.p);
    s.n_part = be->comm_size(s.part);
    s.n_repl = be->comm_size(s.repl);
    if (s.hier) {
        s.rail = bench_split_kind(r, GRP_RAIL, s.p);
        s.intra = bench_split_kind(r, GRP_INTRA, s.p);
        s.n_rail = be->comm_size(s.rail);
    }
    s.wshard = bench_alloc(r, L * s.shard * e, "parameter shards");
    s.gshard = bench_alloc(r, L * s.shard * e, "gradient shards");
    s.gsync = bench_alloc(r, L * s.shard * e, "synchronised gradients");
    s.wfull = bench_alloc(r, s.full * e, "gathered layer");
    s.gfull = bench_alloc(r, s.full * e, "layer gradients");
    s.tmp = bench_alloc(r, s.hier ? s.shard * (size_t)s.n_rail * e : 16, "rail gather");
    char **acts[] = {&s.X, &s.QKV, &s.Y, &s.F, &s.Z, &s.dZ, &s.dF, &s.dY, &s.dX, &s.dQKV};
    const size_t widths[] = {g[CAL_STEP_QKV].k, g[CAL_STEP_QKV].n, g[CAL_STEP_PROJ].n, g[CAL_STEP_FC1].n,
                             g[CAL_STEP_FC2].n, g[CAL_STEP_FC2].n, g[CAL_STEP_FC1].n, g[CAL_STEP_PROJ].n,
                             g[CAL_STEP_QKV].k, g[CAL_STEP_QKV].n}; /* X, QKV, Y, F, Z and their gradients */
    for (int i = 0; i < 10; i++) {
        *acts[i] = bench_alloc(r, T * widths[i] * e, "activations");
        bench_fill(r, *acts[i], T * widths[i], be->dtype, i);
    }
    bench_fill(r, s.wshard, L * s.shard, be->dtype, 7);
    bench_fill(r, s.gfull, s.full, be->dtype, 8);
    bench_fill(r, s.gshard, L * s.shard, be->dtype, 9);

    /* per layer: up to 2 all-gathers (hierarchical) in each pass, the GEMMs (3 each), 1 reduce-scatter */
    s.max_spans = o->shape.grad_accum * o->shape.layers * (2 * 2 + 3 * CAL_STEP_GEMMS + 1) + 1;
    s.spans = calloc((size_t)s.max_spans, sizeof(span));
    const int n_t = o->timed_steps;
    double *v = calloc((size_t)n_t * (N_OPS + 1), sizeof(double));
    if (!s.spans || !v)
        bench_die(r, "out of memory");
    for (int i = 0; i < (o->warmup > 0 ? o->warmup : 1); i++)
        one_step(&s);
    for (int i = 0; i < n_t; i++) {
        s.tracing = o->trace && i == n_t - 1;
        one_step(&s);
        v[i] = be->now() - s.t_start;
        for (int k = 0; k < N_OPS; k++)
            v[(size_t)n_t * (size_t)(k + 1) + (size_t)i] = s.op_t[k];
    }
    bench_max_over_ranks(r, v, n_t * (N_OPS + 1));
    double per_op[N_OPS];
    for (int k = 0; k < N_OPS; k++) {
        per_op[k] = 0;
        for (int i = 0; i < n_t; i++)
            per_op[k] += v[(size_t)n_t * (size_t)(k + 1) + (size_t)i];
        per_op[k] /= n_t;
    }
    bench_stats st = bench_stats_of(v, n_t);
    int rc = 0;
    if (r->h->rank == 0) {
        json_t *ops = json_object();
        for (int k = 0; k < N_OPS; k++)
            json_object_set_new(ops, OP_NAMES[k], json_real(per_op[k]));
        json_array_append_new(r->steps,
                              json_pack("{s:s, s:i, s:i, s:i, s:i, s:i, s:i, s:s, s:f, s:f, s:o}", "layout", lname,
                                        "layers", o->shape.layers, "hidden", o->shape.hidden, "ffn", o->shape.ffn, "seq_len", o->shape.seq_len,
                                        "micro_batch", o->shape.micro_batch, "grad_accum", o->shape.grad_accum, "dtype",
                                        be->dtype == BENCH_BF16 ? "bf16" : "fp32", "step_s", st.mean, "step_min_s",
                                        st.min, "per_op_s", ops));
    }
    if (r->print) {
        printf("  %-16s %4d %4d %4d %10.4f %10.4f %10.4f %10.4f %10.4f %10.4f\n", lname, s.n_part, s.n_repl,
               o->shape.layers, st.mean, st.min, per_op[OP_COMPUTE], per_op[OP_AG], per_op[OP_RS], per_op[OP_AR]);
        fflush(stdout);
    }
    if (o->trace) {
        char path[4200];
        trace_path(o->trace, lname, first, path, sizeof path);
        rc = write_trace(&s, path, lname, err);
        if (!rc && r->print)
            printf("  trace: %s\n", path);
    }
    free(v);
    free(s.spans);
    for (int i = 0; i < 10; i++)
        be->release(*acts[i]);
    be->release(s.wshard), be->release(s.gshard), be->release(s.gsync);
    be->release(s.wfull), be->release(s.gfull), be->release(s.tmp);
    if (s.part != r->world)
        be->comm_free(s.part);
    be->comm_free(s.repl);
    if (s.hier) {
        be->comm_free(s.rail);
        be->comm_free(s.intra);
    }
    return rc;
}
