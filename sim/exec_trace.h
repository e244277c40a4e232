/* exec_trace.h — what the executor (sim/exec.c) writes to a Chrome trace, kept out of its state
 * machine: lane names, one span per compute, per collective on each member's stream and per
 * flow on its sender's channel lane, and the NICs' utilisation counters. Private to sim/: the
 * executor creates one only when a trace is asked for and passes NULL otherwise, and every call
 * below is then a no-op (no formatting, no allocation). Lanes and categories: traces/schema.h. */
#ifndef SC_EXEC_TRACE_H
#define SC_EXEC_TRACE_H

#include "../model/layout.h"
#include "../traces/trace.h"
#include "net.h"

typedef struct exec_tracer exec_tracer;

/* A tracer writing to w for ranks 0..n_traced-1 (of gpus_per_node per node, nics NIC lanes) and,
 * with sample_s > 0, the utilisation of the traced nodes' NIC up-links of net every sample_s.
 * Names every traced node and lane. 0, or SC_ERUNTIME when out of memory (*out NULL). */
int exec_trace_new(tr_writer *w, int n_traced, int gpus_per_node, int nics, int streams, const net_t *net,
                   double sample_s, exec_tracer **out) SC_MUST_CHECK;
void exec_trace_free(exec_tracer *t);

/* Rank r's compute span (forward, backward, optimizer). */
void exec_trace_compute(exec_tracer *t, int r, const char *name, double t0, double t1);
/* A collective that ended: its label ("all-gather world 12.5 MB") is formatted once by
 * exec_trace_coll_begin, then exec_trace_coll_span draws it on each member's stream lane. */
void exec_trace_coll_begin(exec_tracer *t, const lo_coll *op);
void exec_trace_coll_span(exec_tracer *t, int r, int stream, double t0, double t1);
/* Flow id started (from GPU src to dst on channel ch) and ended: one span on src's lane. */
int exec_trace_flow_start(exec_tracer *t, int id, int src, int dst, int ch, double now) SC_MUST_CHECK;
void exec_trace_flow_end(exec_tracer *t, int id, double now);
/* The NIC up-links' utilisation since the last sample, as counters at that sample's time. */
void exec_trace_sample(exec_tracer *t, const net_t *net, double now);

#endif
