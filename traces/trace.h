/* trace.h — Chrome trace-event JSON writer (opens in Perfetto and chrome://tracing): processes
 * (one per node), threads (one per rank stream), complete spans and counters. Written to
 * path.tmp and renamed on close, so a failed run never leaves half a trace.
 * Not here: what to trace (sim/, calibrate/ decide). */
#ifndef SC_TRACE_H
#define SC_TRACE_H

#include "../base/err.h"
#include "schema.h"

typedef struct tr_writer tr_writer;

int tr_open(const char *path, tr_writer **out, sc_err *err) SC_MUST_CHECK;
/* Metadata: names shown for a process / thread. */
void tr_process_name(tr_writer *w, int pid, const char *name);
void tr_thread_name(tr_writer *w, int pid, int tid, const char *name);
/* What the trace is of ("zero3, gpt3-1.3b on p4d.24xlarge x 2 nodes"): a thread name of the
 * notes process (schema.h TR_NOTES_PID), read back by traces/read for the timeline's title. */
void tr_title(tr_writer *w, const char *title);
/* A complete span ("ph":"X") from t0_s to t1_s (seconds). Start and end are each rounded once
 * to whole nanoseconds and the duration is their difference, so back-to-back spans (one's t1
 * the next one's t0) never overlap on a lane; written as microseconds with three decimals, the
 * duration a nanosecond shorter where ts + dur as doubles (as viewers add them) would pass the end.
 * cat is one of traces/schema.h's TR_CAT_*; args_json may be NULL or a JSON object text such as
 * {"bytes":123}. */
void tr_span_at(tr_writer *w, int pid, int tid, const char *name, const char *cat, double t0_s, double t1_s,
                const char *args_json);
/* The same from a start and a duration (end = t_s + dur_s). */
void tr_span(tr_writer *w, int pid, int tid, const char *name, const char *cat, double t_s, double dur_s,
             const char *args_json);
/* Seconds to the integer nanoseconds the writer uses (negative and non-finite times: 0). */
long long tr_ns(double t_s);
/* A counter sample ("ph":"C"): series `name` of process pid takes `value` from t_s on. */
void tr_counter(tr_writer *w, int pid, const char *name, double t_s, double value);
/* Finish the JSON and rename into place; on failure the old file stays. Frees w. */
int tr_close(tr_writer *w, sc_err *err) SC_MUST_CHECK;
/* Abandon: remove the temporary file. Frees w. */
void tr_abort(tr_writer *w);

#endif
