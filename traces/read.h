/* read.h — the reader of shardcast's Chrome traces (traces/schema.h), predicted (`shardcast
 * predict --trace`) or measured (shardcast-bench): every compute and collective span with its
 * lane and kind, and the rank numbers the thread names carry. `shardcast plot --kind timeline`
 * draws from it. Not here: writing traces (trace.h), drawing (cli/plot.c). */
#ifndef SC_TRACE_READ_H
#define SC_TRACE_READ_H

#include <stddef.h>

#include "../base/err.h"

/* What a span is, from its category and name. */
typedef enum { TR_K_COMPUTE, TR_K_AG, TR_K_RS, TR_K_AR, TR_K_OPT, TR_K_OTHER, TR_N_KINDS } tr_kind;
/* "compute", "all-gather", "reduce-scatter", "all-reduce", "optimizer", "other collective" */
const char *tr_kind_name(tr_kind k);

/* One complete span ("ph":"X") of category compute or collective (the legacy "comm" too). */
typedef struct tr_read_span {
    long pid, tid;       /* node; TR_TID(local rank, stream)              */
    double ts_us, dur_us; /* start and duration, microseconds              */
    tr_kind kind;
} tr_read_span;

/* A thread name "rank R ..." ("ph":"M", "thread_name"): which global rank a lane belongs to, and
 * the pipeline stage where the name ends "(stage Q)" (sim/pipe.c's names; else -1). */
typedef struct tr_rank_name {
    long pid, tid, rank, stage;
} tr_rank_name;

typedef struct tr_doc {
    tr_read_span *spans;         /* in file order */
    size_t n_spans;
    tr_rank_name *names;    /* in file order */
    size_t n_names;
    char title[256];        /* what the trace is of (tr_title), "" when it does not say */
} tr_doc;

/* Read a trace file (a JSON object with "traceEvents", or a bare array of events). Errors name
 * the file and the event's JSON path; a trace without a single span is an error. */
int tr_read(const char *path, tr_doc *out, sc_err *err) SC_MUST_CHECK;
void tr_doc_free(tr_doc *d);

#endif
