/* driver.c — the harness loop over any backend (see driver.h): communicators from the layout
 * membership rules, collectives across sizes with a correctness check, GEMMs, memory bandwidth,
 * GEMMs beside concurrent communication (interference), the real sharded step of ZeRO-3 and
 * MiCS, statistics, tables and measurements.json. This file is the loop and the
 * output; the shared helpers are harness.c, each measurement its own meas_*.c.
 * Timing (every measurement): untimed warm-up; then per timed iteration a world barrier and one
 * blocking operation timed by the backend (CUDA events / MPI_Wtime), i.e. isolated latency as a
 * training step sees it, not nccl-tests' pipelined mean; per iteration the max over ranks; then
 * mean, min and p95 over iterations. Not here: MPI, CUDA, BLAS (backend.h), options (main.c). */
#include "driver.h"

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
                        "; per-op times after a world barrier (isolated, not pipelined; GEMMs back to back), max over ranks");
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
        int p = spec_layout_shard(&o->step[i], r.N); /* zero3: every rank; mics: p */
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
               be->dtype == BENCH_BF16 ? "bf16" : "fp32", o->shape.layers, o->shape.hidden, o->shape.ffn, o->shape.seq_len * o->shape.micro_batch,
               o->shape.grad_accum, o->timed_steps);
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
