/* schema.h — the one layout of shardcast's Chrome traces, shared by their writers (the
 * simulator, sim/exec.c; the calibration harness, calibrate/bench/driver.c) and their reader
 * (`shardcast plot --kind timeline`, cli/plot.c): one process per node, a block of
 * TR_LANES_PER_RANK threads per local rank, a category per kind of span.
 * Not here: how spans are written (trace.h) or what a step contains (model/layout). */
#ifndef SC_TRACE_SCHEMA_H
#define SC_TRACE_SCHEMA_H

/* Categories ("cat") of complete spans ("ph":"X"). */
#define TR_CAT_COMPUTE "compute"       /* the compute stream: forward, backward, optimizer    */
#define TR_CAT_COLLECTIVE "collective" /* the communication stream: one collective, "all-gather
                                          world 100.7 MB", "reduce-scatter partition ..."     */
#define TR_CAT_FLOW "flow"             /* simulator only: one flow of a collective on a link  */
/* Written as "comm" by shardcast-bench before this schema; readers accept it as collective. */
#define TR_CAT_COLLECTIVE_LEGACY "comm"

/* Lanes: pid = node, tid = local rank x TR_LANES_PER_RANK + stream. A rank has one compute
 * stream and TR_COMM_STREAMS communication streams (the frameworks' all-gather, reduce-scatter
 * and all-reduce streams, model/framework.h); the remaining lanes carry flows ("flow to rank D
 * chC"), each on the first lane free since it began, so that concurrent flows never overlap on
 * a lane; more than TR_FLOW_LANES at once from one rank are not drawn, and their count is
 * written as a thread name of process TR_NOTES_PID ("N flows not drawn: ..."). */
#define TR_NOTES_PID 1000000 /* a process of notes about the trace, not a node: its threads' names */
#define TR_NOTE_TITLE 0       /* what the trace is of: layout, model, cluster, nodes (tr_title)     */
#define TR_NOTE_UNDRAWN 1     /* "N flows not drawn: ..."                                          */
#define TR_LANES_PER_RANK 8
#define TR_COMM_STREAMS 3
enum {
    TR_STREAM_COMPUTE = 0, /* "rank R compute"                                               */
    TR_STREAM_COMM = 1,    /* "rank R comm", "rank R comm 1", ...: collectives of each
                              communication stream, in issue order (each a FIFO stream)     */
    TR_STREAM_FLOW0 = 1 + TR_COMM_STREAMS /* "rank R flows ch C"                             */
};
#define TR_FLOW_LANES (TR_LANES_PER_RANK - TR_STREAM_FLOW0)
#define TR_TID(local_rank, stream) ((local_rank) * TR_LANES_PER_RANK + (stream))

/* Times: spans are written in integer nanoseconds (as microseconds with three decimals), start
 * and end each rounded once, so a span ending where the next begins on the same lane never
 * overlaps it: see tr_span_at. */

#endif
