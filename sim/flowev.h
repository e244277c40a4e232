/* flowev.h — the completion events of network flows, shared by both executors (exec.c and
 * pipe.c): a flow has at most one queued completion event, re-timed in place when its rate
 * changes (so no stale one is ever popped); flows ending at one instant are removed as one batch
 * and re-rated once by a solve event queued after everything already due then.
 * Not here: what a completed flow means to its collective or send (the executors). */
#ifndef SC_FLOWEV_H
#define SC_FLOWEV_H

#include "ev.h"
#include "net.h"

/* Queue or re-time the completion event (kind flow_kind, a = flow id, ver = its version) of
 * every flow whose rate the last solve changed. 0, or SC_ERUNTIME. */
int fev_push_changed(net_t *net, ev_engine *eng, int flow_kind);
/* Is e still the completion event of a live flow (id e->a, its version and event id)? */
int fev_current(const net_t *net, const ev_event *e);
/* Flow `id` has completed at `now`: forget its event, remove it inside a batch that one event
 * of solve_kind (queued once per instant; *solve_pending remembers it) closes. 0, or SC_ERUNTIME. */
int fev_remove(net_t *net, ev_engine *eng, int solve_kind, int *solve_pending, int id, double now);
/* The solve event: close the batch and queue or re-time the changed flows' events. */
int fev_solve(net_t *net, ev_engine *eng, int flow_kind, int *solve_pending);

#endif
