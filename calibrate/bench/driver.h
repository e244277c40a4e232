/* driver.h — the calibration harness loop, the same over every backend: which measurements
 * (collectives per communicator and size, GEMMs, memory bandwidth, GEMMs beside concurrent
 * communication (interference), a real sharded step), warm-up
 * and timed iterations, statistics (max over ranks per iteration, then mean/min/p95),
 * nccl-tests algbw/busbw, the printed tables and measurements.json (calibrate/README.md).
 * The options and the shared helpers are harness.h. Not here: option parsing (main.c) or anything
 * that touches MPI, CUDA or BLAS (backend.h). */
#ifndef SC_BENCH_DRIVER_H
#define SC_BENCH_DRIVER_H

#include "harness.h"

/* Run every measurement on every rank (collective: all ranks call it with the same options) and
 * let rank 0 print the tables and write o->out atomically (path.tmp, then rename). Returns 0,
 * SC_EINPUT when the options do not fit the world (a partition size not dividing the ranks:
 * every rank finds it the same), or SC_ERUNTIME (err filled). A failing operation on one rank
 * ends all of them through be->abort. */
int bench_run(const bench_backend *be, const bench_host *host, const bench_opts *o, sc_err *err) SC_MUST_CHECK;

#endif
