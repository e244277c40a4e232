/* driver.h — the calibration harness loop, the same over every backend: which measurements
 * (collectives per communicator and size, GEMMs, memory bandwidth, GEMMs beside concurrent
 * communication (interference), a real sharded step), warm-up
 * and timed iterations, statistics (max over ranks per iteration, then mean/min/p95),
 * nccl-tests algbw/busbw, the printed tables and measurements.json (calibrate/README.md).
 * Not here: option parsing (main.c) or anything that touches MPI, CUDA or BLAS (backend.h). */
#ifndef SC_BENCH_DRIVER_H
#define SC_BENCH_DRIVER_H

#include <stddef.h>

#include "../../model/spec.h"
#include "../../model/workload.h"
#include "backend.h"

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
    int layers, hidden, ffn, seq, micro_batch, grad_accum;
    int timed_steps;
    /* output */
    const char *out;   /* measurements.json                                                    */
    const char *trace; /* Chrome trace of the last measured step (NULL = none)                  */
    const char *note;  /* appended to host.note                                                */
    int quiet;         /* no tables on stdout                                                   */
} bench_opts;

/* Run every measurement on every rank (collective: all ranks call it with the same options) and
 * let rank 0 print the tables and write o->out atomically (path.tmp, then rename). Returns 0,
 * SC_EINPUT when the options do not fit the world (a partition size not dividing the ranks:
 * every rank finds it the same), or SC_ERUNTIME (err filled). A failing operation on one rank
 * ends all of them through be->abort. */
int bench_run(const bench_backend *be, const bench_host *host, const bench_opts *o, sc_err *err);

/* nccl-tests bus-bandwidth factor (doc/PERFORMANCE.md): (n-1)/n for all-gather and
 * reduce-scatter, 2(n-1)/n for all-reduce. */
double bench_busbw_factor(bench_coll kind, int n);

const char *bench_coll_name(bench_coll kind);

#endif
