/* harness.h — what the harness's files share: its options (bench_opts, filled by main.c), one
 * run's context, statistics, communicators planned from the layout membership rules (harness.c),
 * and one entry per measurement, each in its own file as nccl-tests keeps one file per
 * collective: meas_coll.c, meas_gemm.c, meas_membw.c, meas_interf.c, meas_step.c. The loop that
 * runs them is driver.c (driver.h). */
#ifndef SC_BENCH_HARNESS_H
#define SC_BENCH_HARNESS_H

#include <jansson.h>
#include <stddef.h>

#include "../../model/layout.h"
#include "../../model/spec.h"
#include "../../model/workload.h"
#include "../step.h"
#include "backend.h"

#define MiB ((size_t)1 << 20)

#define BENCH_MAX_P 32
#define BENCH_MAX_STEPS 8

typedef struct bench_opts {
    /* collectives */
    size_t min_bytes, max_bytes; /* nccl-tests S, doubling from min to max                  */
    int iters, warmup;           /* timed and untimed iterations of every measurement        */
    int world_only;              /* --groups world: only the world communicator              */
    int n_p;                     /* --groups p=P,...: partition sizes (0 = every aligned p)   */
    int p[BENCH_MAX_P];
    int skip_coll, skip_gemm, skip_membw, skip_interf;
    /* GEMMs: square grid 128 .. gemm_max (0 = none), then the shapes of a model's layer       */
    int gemm_max;
    double gemm_warm_s;          /* each GEMM shape runs back to back this long before timing  */
    char gemm_model[64];
    int n_model_gemms;
    wl_gemm model_gemm[WL_MAX_GEMMS];
    /* memory bandwidth: copies of 1 MiB, 4 MiB, ... up to membw_bytes                          */
    size_t membw_bytes;
    /* interference: GEMMs alone and beside traffic over buffers of interf_bytes (0 = none)     */
    size_t interf_bytes;
    /* the real sharded step, per layout (zero3 or mics:p=P)                                   */
    int n_steps;
    spec_layout step[BENCH_MAX_STEPS];
    cal_step_shape shape;        /* its layers, hidden, ffn, ... (calibrate/step.h)            */
    int timed_steps;
    /* output */
    const char *out;   /* measurements.json                                                    */
    const char *trace; /* Chrome trace of the last measured step (NULL = none)                  */
    const char *note;  /* appended to host.note                                                */
    int quiet;         /* no tables on stdout                                                   */
} bench_opts;

/* nccl-tests bus-bandwidth factor (doc/PERFORMANCE.md): (n-1)/n for all-gather and
 * reduce-scatter, 2(n-1)/n for all-reduce. */
double bench_busbw_factor(bench_coll kind, int n);

const char *bench_coll_name(bench_coll kind);


/* One run of the harness on this rank. */
typedef struct bench_ctx {
    const bench_backend *be;
    const bench_host *h;
    const bench_opts *o;
    bench_comm *world;
    int N, G;          /* world size, ranks per node                                        */
    int *node_of;      /* node index of every world rank                                    */
    int *local_of;     /* local index of every world rank                                   */
    size_t esz;        /* bytes of one element of be->dtype                                 */
    float *host;       /* scratch for patterns and checks                                   */
    size_t host_bytes;
    json_t *colls, *gemms, *membw, *interf, *steps;
    int print;         /* rank 0 and not quiet                                              */
} bench_ctx;

/* Mean, min and p95 of a measurement's iterations (after the max over ranks), seconds. */
typedef struct bench_stats {
    double mean, min, p95;
} bench_stats;

/* A communicator to measure: its kind, partition size, and geometry. */
typedef struct bench_grp {
    lo_group_kind kind;
    int p;
    int n, k, m, concurrent; /* ranks, nodes spanned, members per node, groups per node       */
} bench_grp;

/* A failed operation leaves the other ranks waiting inside a collective: end them all. */
void bench_die(const bench_ctx *r, const char *what);
/* malloc or bench_die. */
void *bench_alloc(const bench_ctx *r, size_t bytes, const char *what);
/* A world barrier. */
void bench_sync(const bench_ctx *r);
/* v[i] = max over ranks of v[i]. */
void bench_max_over_ranks(const bench_ctx *r, double *v, int n);
/* qsort order of doubles. */
int bench_cmp_double(const void *a, const void *b);
/* Mean, min and p95 (nearest rank) of n samples; sorts v. */
bench_stats bench_stats_of(double *v, int n);
/* Device buffer dev of elems elements of dt: a pattern from seed. */
void bench_fill(const bench_ctx *r, void *dev, size_t elems, bench_dtype dt, int seed);
/* This rank's communicator of kind over partition size p (layout_group_members' membership). */
bench_comm *bench_split_kind(const bench_ctx *r, lo_group_kind kind, int p);
/* The communicators the options ask for, at most max; returns the count. */
int bench_plan_groups(const bench_ctx *r, bench_grp *out, int max);

/* The measurements, one file each; every rank calls each, rank 0 records into r's JSON arrays. */
void bench_measure_collectives(bench_ctx *r);
void bench_measure_gemms(bench_ctx *r);
void bench_measure_membw(bench_ctx *r);
void bench_measure_interference(bench_ctx *r);
int bench_measure_step(bench_ctx *r, const spec_layout *lay, int first, sc_err *err) SC_MUST_CHECK;

#endif
