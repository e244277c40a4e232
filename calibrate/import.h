/* import.h — other tools' measurements into shardcast-measurements/1: nccl-tests' printed tables
 * (all_reduce_perf, all_gather_perf, reduce_scatter_perf), so that someone with nccl-tests logs
 * from their cluster can fit (`calibrate fit`) and validate without our harness.
 * Not here: fitting (calibrate/measure.c) or running anything. */
#ifndef SC_IMPORT_H
#define SC_IMPORT_H

#include <jansson.h>

#include "../base/err.h"

/* What the logs do not say (0 / NULL = take it from the log). */
typedef struct cal_import_opts {
    const char *kind;      /* "all-reduce" | "all-gather" | "reduce-scatter"; else from the log's
                              "Collective test starting: X_perf" line or the file name          */
    int ranks, nodes;      /* else from the "#  Rank N ... on HOST device" lines               */
    const char *algorithm; /* "ring", "tree", ... when the run pinned NCCL_ALGO (else also read
                              from an "NCCL_ALGO=X" the log shows); absent: NCCL's choice       */
    int in_place;          /* 1: take the in-place columns instead of out-of-place           */
} cal_import_opts;

/* Parse nccl-tests logs into one measurements document (*out, new reference): every data row
 * of every log becomes a collective {kind, group "world", n, k, m, bytes, time_us, algbw_GBps,
 * busbw_GBps[, algorithm]}; rows with #wrong > 0 are kept with "errors" (the loader skips them).
 * 0 or SC_EINPUT naming the file and line. */
int cal_import_nccl_tests(char *const *paths, int n_paths, const cal_import_opts *o, json_t **out, sc_err *err)
    SC_MUST_CHECK;

#endif
