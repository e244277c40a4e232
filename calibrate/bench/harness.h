/* harness.h — what the harness's files share (not for the backends or main.c): one run's
 * context, statistics, communicators planned from the layout membership rules, and one entry
 * per measurement, each in its own file as nccl-tests keeps one file per collective:
 * meas_coll.c, meas_gemm.c, meas_membw.c, meas_interf.c, meas_step.c. driver.c is the core. */
#ifndef SC_BENCH_HARNESS_H
#define SC_BENCH_HARNESS_H

#include <jansson.h>
#include <stddef.h>

#include "../../model/layout.h"
#include "driver.h"

#define MiB ((size_t)1 << 20)

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
int bench_measure_step(bench_ctx *r, const spec_layout *lay, int first, sc_err *err);

#endif
