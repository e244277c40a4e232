/* driver.c — the harness loop over any backend (see driver.h): communicators from the layout
 * membership rules, collectives across sizes with a correctness check, GEMMs, memory bandwidth,
 * GEMMs beside concurrent communication (interference), the real sharded step of ZeRO-3 and
 * MiCS, statistics, tables and measurements.json. This file is the core (context, statistics,
 * patterns, communicators, output and the loop); each measurement is its own meas_*.c.
 * Timing (every measurement): untimed warm-up; then per timed iteration a world barrier and one
 * blocking operation timed by the backend (CUDA events / MPI_Wtime), i.e. isolated latency as a
 * training step sees it, not nccl-tests' pipelined mean; per iteration the max over ranks; then
 * mean, min and p95 over iterations. Not here: MPI, CUDA, BLAS (backend.h), options (main.c). */
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



const char *bench_coll_name(bench_coll kind)
{
    static const char *const n[] = {"all-gather", "reduce-scatter", "all-reduce"};
    return kind < BENCH_N_COLLS ? n[kind] : "?";
}

double bench_busbw_factor(bench_coll kind, int n)
{
    if (n < 1)
        return 0;
    double f = (double)(n - 1) / n;
    return kind == BENCH_ALLREDUCE ? 2 * f : f;
}

/* A failed operation leaves the other ranks waiting inside a collective: end them all. */
void bench_die(const bench_ctx *r, const char *what)
{
    fprintf(stderr, "shardcast-bench: rank %d: %s: %s\n", r->h->rank, what, r->be->error());
    fflush(stderr);
    r->be->abort(1);
    exit(1);
}

void *bench_alloc(const bench_ctx *r, size_t bytes, const char *what)
{
    void *p = r->be->alloc(bytes ? bytes : 16);
    if (!p) {
        fprintf(stderr, "shardcast-bench: rank %d: cannot allocate %zu bytes for %s\n", r->h->rank, bytes, what);
        fflush(stderr);
        r->be->abort(1);
        exit(1);
    }
    return p;
}

void bench_sync(const bench_ctx *r)
{
    if (r->be->barrier())
        bench_die(r, "barrier");
}

void bench_max_over_ranks(const bench_ctx *r, double *v, int n)
{
    if (r->be->host_allreduce(v, n, 1))
        bench_die(r, "reduction over ranks");
}

/* ---- statistics ---------------------------------------------------------------------------- */

int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Mean, min and p95 (nearest rank) of n samples; sorts v. */
bench_stats bench_stats_of(double *v, int n)
{
    bench_stats s = {0, 0, 0};
    if (n < 1)
        return s;
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    for (int i = 0; i < n; i++)
        s.mean += v[i];
    s.mean /= n;
    s.min = v[0];
    int k = (int)ceil(0.95 * n) - 1;
    s.p95 = v[k < 0 ? 0 : k];
    return s;
}

/* ---- element patterns ------------------------------------------------------------------------ */
static uint16_t to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    u += 0x7FFFu + ((u >> 16) & 1u); /* round to nearest even */
    return (uint16_t)(u >> 16);
}

/* Fill `elems` elements of device memory with small exact values in [-0.75, 0.75] (never
 * denormal, exact in bf16), in chunks through the host scratch. */
void bench_fill(const bench_ctx *r, void *dev, size_t elems, bench_dtype dt, int seed)
{
    size_t esz = dt == BENCH_BF16 ? 2 : 4;
    size_t chunk = r->host_bytes / esz;
    for (size_t off = 0; off < elems; off += chunk) {
        size_t n = elems - off < chunk ? elems - off : chunk;
        for (size_t i = 0; i < n; i++) {
            float v = (float)((int)((off + i) * 7 % 13) - 6 + seed % 3) / 8.0f;
            if (dt == BENCH_BF16)
                ((uint16_t *)r->host)[i] = to_bf16(v);
            else
                r->host[i] = v;
        }
        if (r->be->upload((char *)dev + off * esz, r->host, n * esz))
            bench_die(r, "upload");
    }
}

/* Correctness pattern of collectives (fp32, small integers: sums stay exact). */
/* ---- communicators ------------------------------------------------------------------------- */
/* The geometry every consumer of the layout graph uses; layout_group_members needs only these. */
static void geometry(const bench_ctx *r, int p, lo_graph *g)
{
    memset(g, 0, sizeof *g);
    g->n_ranks = r->N;
    g->gpus_per_node = r->G;
    g->layout.kind = LAYOUT_MICS;
    g->layout.p = p;
}


/* Shape of the communicators of this kind (all of them alike when p aligns with nodes):
 * measured from the actual node of every rank. */
static void grp_shape(const bench_ctx *r, bench_grp *gr)
{
    lo_graph g;
    geometry(r, gr->p, &g);
    int *mem = malloc(sizeof(int) * (size_t)r->N), *seen = calloc((size_t)r->N, sizeof(int));
    if (!mem || !seen) {
        free(mem), free(seen);
        gr->n = 0;
        return;
    }
    gr->n = layout_group_members(&g, gr->kind, 0, mem);
    int k = 0;
    for (int i = 0; i < gr->n; i++)
        if (!seen[r->node_of[mem[i]]]++)
            k++;
    gr->k = k;
    gr->m = k ? gr->n / k : 0;
    /* groups with members on node 0: one per distinct lowest member */
    memset(seen, 0, sizeof(int) * (size_t)r->N);
    int conc = 0;
    for (int w = 0; w < r->N; w++)
        if (r->node_of[w] == 0) {
            layout_group_members(&g, gr->kind, w, mem);
            if (!seen[mem[0]]++)
                conc++;
        }
    gr->concurrent = conc;
    free(mem);
    free(seen);
}

/* Split the world into this rank's communicators of a kind: color = lowest member. */
bench_comm *bench_split_kind(const bench_ctx *r, lo_group_kind kind, int p)
{
    lo_graph g;
    geometry(r, p, &g);
    int *mem = malloc(sizeof(int) * (size_t)r->N);
    if (!mem) {
        fprintf(stderr, "shardcast-bench: out of memory\n");
        r->be->abort(1);
        exit(1);
    }
    layout_group_members(&g, kind, r->h->rank, mem);
    bench_comm *c = NULL;
    if (r->be->split(r->world, mem[0], r->h->rank, &c))
        bench_die(r, "communicator split");
    free(mem);
    return c;
}

static int p_aligned(int p, int N, int G) { return p >= 1 && N % p == 0 && (G % p == 0 || p % G == 0); }

/* The communicators to measure: the world, and per partition size p its partition, replica,
 * and (spanning nodes) rail and intra-node groups; identical shapes of a kind measured once. */
int bench_plan_groups(const bench_ctx *r, bench_grp *out, int max)
{
    const bench_opts *o = r->o;
    int ps[64], n_ps = 0;
    if (!o->world_only) {
        if (o->n_p)
            for (int i = 0; i < o->n_p && n_ps < 64; i++)
                ps[n_ps++] = o->p[i];
        else
            for (int p = 1; p <= r->N && n_ps < 64; p++)
                if (p_aligned(p, r->N, r->G))
                    ps[n_ps++] = p;
    }
    int n = 0;
    bench_grp cand[4 * 64 + 1];
    int nc = 0;
    cand[nc++] = (bench_grp){.kind = GRP_WORLD, .p = r->N};
    for (int i = 0; i < n_ps; i++) {
        int p = ps[i];
        if (p > 1 && p < r->N)
            cand[nc++] = (bench_grp){.kind = GRP_PARTITION, .p = p};
        if (p > 1 && r->N / p > 1)
            cand[nc++] = (bench_grp){.kind = GRP_REPLICA, .p = p};
        if (p > r->G && p % r->G == 0 && p / r->G > 1)
            cand[nc++] = (bench_grp){.kind = GRP_RAIL, .p = p};
        if (p > r->G && p % r->G == 0 && r->G > 1)
            cand[nc++] = (bench_grp){.kind = GRP_INTRA, .p = p};
    }
    for (int i = 0; i < nc && n < max; i++) {
        grp_shape(r, &cand[i]);
        if (cand[i].n < 2)
            continue;
        int dup = 0;
        for (int j = 0; j < n; j++)
            dup |= out[j].kind == cand[i].kind && out[j].n == cand[i].n && out[j].k == cand[i].k &&
                   out[j].m == cand[i].m && out[j].concurrent == cand[i].concurrent;
        if (!dup)
            out[n++] = cand[i];
    }
    return n;
}

/* ---- output ---------------------------------------------------------------------------------- */
static int write_json(const bench_ctx *r, json_t *root, sc_err *err)
{
    const char *path = r->o->out;
    char *txt = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(8));
    if (!txt)
        return sc_err_set(err, SC_ERUNTIME, path, "", "out of memory building JSON");
    at_file *f;
    int rc = at_begin(path, &f, err);
    if (!rc) {
        size_t len = strlen(txt);
        if (fwrite(txt, 1, len, at_stream(f)) != len || fputc('\n', at_stream(f)) == EOF) {
            at_abort(f);
            rc = sc_err_set(err, SC_ERUNTIME, path, "", "cannot write measurements");
        } else {
            rc = at_commit(f, AT_CHECK_NONE, err);
        }
    }
    free(txt);
    return rc;
}

static json_t *host_json(const bench_ctx *r)
{
    const bench_host *h = r->h;
    char date[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    char note[1024];
    int len = snprintf(note, sizeof note,
                       "%d ranks on %d node(s), %d per node; %d cores per host", h->ranks, h->nodes, h->ranks_per_node,
                       h->cores);
    if (!strcmp(r->be->name, "cpu") && len > 0 && (size_t)len < sizeof note)
        len += snprintf(note + len, sizeof note - (size_t)len, " shared by its ranks, %d BLAS thread(s) per rank",
                        h->blas_threads);
    if (len > 0 && (size_t)len < sizeof note)
        len += snprintf(note + len, sizeof note - (size_t)len,
                        "; per-op times after a world barrier (isolated, not pipelined), max over ranks");
    if (h->uneven_nodes && len > 0 && (size_t)len < sizeof note)
        len += snprintf(note + len, sizeof note - (size_t)len, "; WARNING: nodes hold different rank counts");
    if (r->o->note && len > 0 && (size_t)len < sizeof note)
        snprintf(note + len, sizeof note - (size_t)len, "; %s", r->o->note);
    return json_pack("{s:s, s:s, s:i, s:i, s:i, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "backend", r->be->name,
                     "device", h->device, "ranks", h->ranks, "nodes", h->nodes, "ranks_per_node", h->ranks_per_node,
                     "driver", h->driver, "cuda", h->cuda, "nccl", h->nccl, "mpi", h->mpi, "blas", h->blas, "date",
                     date, "hostname", h->hostname, "note", note);
}

int bench_run(const bench_backend *be, const bench_host *host, const bench_opts *o, sc_err *err)
{
    bench_ctx r;
    memset(&r, 0, sizeof r);
    r.be = be;
    r.h = host;
    r.o = o;
    r.world = be->world();
    r.N = host->ranks;
    r.G = host->ranks_per_node > 0 ? host->ranks_per_node : 1;
    r.esz = be->dtype == BENCH_BF16 ? 2 : 4;
    r.print = host->rank == 0 && !o->quiet;

    /* every rank's node and local index (each rank fills its slot, the sum spreads them) */
    double *slots = calloc((size_t)r.N * 2, sizeof(double));
    r.node_of = calloc((size_t)r.N, sizeof(int));
    r.local_of = calloc((size_t)r.N, sizeof(int));
    r.host_bytes = o->max_bytes + 64;
    if (r.host_bytes < 16 * MiB)
        r.host_bytes = 16 * MiB;
    r.host = malloc(r.host_bytes);
    if (!slots || !r.node_of || !r.local_of || !r.host) {
        free(slots), free(r.node_of), free(r.local_of), free(r.host);
        return sc_err_set(err, SC_ERUNTIME, "", "", "out of memory");
    }
    slots[host->rank] = host->node;
    slots[r.N + host->rank] = host->local_rank;
    if (be->host_allreduce(slots, 2 * r.N, 0))
        bench_die(&r, "reduction over ranks");
    for (int i = 0; i < r.N; i++) {
        r.node_of[i] = (int)slots[i];
        r.local_of[i] = (int)slots[r.N + i];
    }
    free(slots);

    /* every rank checks the step layouts the same way before measuring anything */
    int rc = 0;
    for (int i = 0; i < o->n_steps && !rc; i++) {
        int p = o->step[i].kind == LAYOUT_ZERO3 ? r.N : o->step[i].p;
        if (p < 1 || p > r.N || r.N % p) {
            char nm[64];
            rc = sc_err_set(err, SC_EINPUT, "--step", "", "%s: expected a partition size dividing the %d ranks, got %d",
                            spec_layout_str(&o->step[i], nm, sizeof nm), r.N, p);
        }
    }
    for (int i = 0; i < o->n_p && !rc; i++)
        if (r.N % o->p[i])
            rc = sc_err_set(err, SC_EINPUT, "--groups", "", "expected p dividing the %d ranks, got %d", r.N, o->p[i]);
    if (rc) {
        free(r.node_of), free(r.local_of), free(r.host);
        return rc;
    }

    r.colls = json_array();
    r.gemms = json_array();
    r.membw = json_array();
    r.interf = json_array();
    r.steps = json_array();
    if (r.print) {
        printf("# shardcast-bench (%s): %d ranks, %d node(s) x %d; %s", be->name, r.N, host->nodes, r.G, host->device);
        if (*host->nccl)
            printf("; NCCL %s", host->nccl);
        printf("; %s; %s\n", *host->mpi ? host->mpi : "no MPI", host->blas);
        fflush(stdout);
    }
    if (!o->skip_coll)
        bench_measure_collectives(&r);
    if (!o->skip_gemm && (o->gemm_max > 0 || o->n_model_gemms))
        bench_measure_gemms(&r);
    if (!o->skip_membw && o->membw_bytes)
        bench_measure_membw(&r);
    if (!o->skip_interf && o->interf_bytes)
        bench_measure_interference(&r);
    if (o->n_steps && r.print) {
        printf("\n# sharded step (%s, %d layers, hidden %d, ffn %d, %d tokens x %d micro-steps): seconds, max over "
               "ranks, %d steps\n",
               be->dtype == BENCH_BF16 ? "bf16" : "fp32", o->layers, o->hidden, o->ffn, o->seq * o->micro_batch,
               o->grad_accum, o->timed_steps);
        printf("# %-16s %4s %4s %4s %10s %10s %10s %10s %10s %10s\n", "layout", "p", "repl", "L", "step_s", "min_s",
               "compute", "all-gather", "red-scat", "all-reduce");
    }
    for (int i = 0; i < o->n_steps && !rc; i++)
        rc = bench_measure_step(&r, &o->step[i], i == 0, err);

    if (!rc && host->rank == 0) {
        json_t *root = json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:o}", "schema", "shardcast-measurements/1", "host",
                                 host_json(&r), "collectives", r.colls, "gemms", r.gemms, "membw", r.membw,
                                 "interference", r.interf, "steps", r.steps);
        if (!root)
            rc = sc_err_set(err, SC_ERUNTIME, o->out, "", "out of memory building JSON");
        else {
            rc = write_json(&r, root, err);
            json_decref(root);
        }
        if (!rc && r.print)
            printf("\nwrote %s\n", o->out);
    } else {
        json_decref(r.colls), json_decref(r.gemms), json_decref(r.membw), json_decref(r.interf);
        json_decref(r.steps);
    }
    free(r.node_of), free(r.local_of), free(r.host);
    return rc;
}
