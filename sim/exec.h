/* exec.h — the discrete-event executor: every rank simulated explicitly, with a compute stream
 * and a FIFO communication stream, running the op graph of model/layout under its execution
 * rules (layout.h); each collective waits for all members of its group, then its latency, then
 * its flows over the topology (sim/net, max-min fair), so concurrent groups, shared NICs and
 * oversubscribed spines slow each other for real. Optional jitter and stragglers (seeded GSL
 * RNG). Not here: the op graph, the cost functions, the network's sharing rule. */
#ifndef SC_EXEC_H
#define SC_EXEC_H

#include <stdint.h>

#include "../model/analytic.h"
#include "../traces/trace.h"
#include "net.h"

#define EXEC_MAX_STRAGGLERS 16

typedef struct exec_opts {
    double jitter;              /* relative standard deviation of compute durations (0 = none) */
    int n_stragglers;
    int straggler_rank[EXEC_MAX_STRAGGLERS];
    double straggler_factor[EXEC_MAX_STRAGGLERS]; /* compute of that rank takes this x longer */
    unsigned long seed;
    int grad_accum;             /* micro-steps to simulate (0 = the graph's)                   */
    tr_writer *trace;           /* NULL = no trace                                             */
    int trace_ranks;            /* ranks 0..trace_ranks-1 are traced (0 = all)                 */
    double sample_s;            /* link-utilisation counter period when tracing (0 = none)     */
    int full;                   /* 1: every rank simulated even where the step is symmetric    */
} exec_opts;

typedef struct exec_result {
    double step_s;              /* the last rank's end                                         */
    double first_end_s;         /* the first rank's end (per-rank spread = step - first_end)   */
    double compute_s, optimizer_s, exposed_s[N_COLLS], skew_s, idle_s; /* means over ranks     */
    int slowest_rank;
    int latest_rank;            /* rank most often the last to reach a collective              */
    long latest_count;          /* how often                                                   */
    long collectives;           /* collective instances run                                    */
    uint64_t events, flows;
    uint64_t stale;             /* events popped that no longer applied: 0 (re-timed in place)  */
    uint64_t retimed;           /* events moved or cancelled in the queue instead (each one a   */
                                /* stale pop of a lazy queue)                                   */
    int ranks_simulated;        /* n_ranks, or the represented ranks of an exact-symmetric run  */
} exec_result;

/* Exact symmetry. Where nothing tells ranks apart but their place (no jitter, no straggler, no
 * trace, no pipeline, no in-network node shared by all) and shifting every rank by `unit` nodes
 * maps the topology onto itself (whole pods where there is a spine) and each communicator of the
 * step onto one of the same kind, every rank's timeline is a copy of its representative's in
 * nodes 0..unit-1. exec_run then simulates only those ranks: a collective waits for its
 * represented members (the others are their copies and arrive with them), emits the flows that
 * leave them, and routes them over the quotient network (net_build_quotient), whose links carry
 * exactly what each of their copies carries, so every rate, every time and the step are the full
 * simulation's (to rounding: the sums run in another order; tests/test_exec.c compares them).
 * Communicators that reach past the represented ranks must be their own shifted copies (a ring
 * over all nodes, a replica group across them); those inside them stand for `nodes / unit`
 * copies. Returns the smallest such unit dividing the node count, the node count itself when
 * there is none or it does not apply (then the full simulation runs), -1 when out of memory. */
int exec_symmetry_unit(const lo_graph *g, const spec_cluster *c, const exec_opts *o);

/* Exact symmetry of a pipelined layout (sim/pipe.c). A stage's t x dp ranks (rank q S + j + i t of
 * stage q, S = t dp) are whole nodes, b of them; rotating every stage's nodes by u (u | b, u G a
 * multiple of t, so tensor groups stay whole and data-parallel rings map onto themselves) maps
 * each send (rank q S + x to (q +- 1) S + x) and each stage's boundary rings onto themselves, and
 * every stage's ranks run the same ops at the same times: the ranks of nodes n mod b >= u of a
 * stage are copies of those u nodes below them. pipe.c relabels node n = q b + k u + r (r < u) as
 * k p u + q u + r, which makes the rotation a shift by p u nodes of the relabelled cluster, and
 * runs exec_run's quotient on it (net_build_quotient). The relabelling keeps the network only
 * where it permutes whole pods: with a spine, u must be whole pods (and the cluster whole pods);
 * without one, every node is alike. Returns p u, the nodes simulated, for the smallest such u
 * below b; the node count (the full run) where there is none or it does not apply (jitter,
 * stragglers, a trace, an in-network node, o->full, a stage sharing a node). */
int exec_pipe_symmetry_unit(const lo_graph *g, const spec_cluster *c, const exec_opts *o);

/* Simulate one step. `t` gives compute durations (an_time); collectives take their latency
 * from cal and their time from flows on the cluster's network (link efficiencies from cal). */
int exec_run(const lo_graph *g, const an_timed *t, const cost_calib *cal, const spec_cluster *c,
             const exec_opts *o, exec_result *r, sc_err *err) SC_MUST_CHECK;

/* The same, but with identical micro-steps (no jitter) simulated only until the step time is
 * affine in the micro-step count (checked on 2, 3 and 4 micro-steps, to 1e-12), then
 * extrapolated: the cost does not grow with grad_accum. Falls back to the full run. */
int exec_run_steady(const lo_graph *g, const an_timed *t, const cost_calib *cal, const spec_cluster *c,
                    const exec_opts *o, exec_result *r, sc_err *err) SC_MUST_CHECK;

/* Pipelined layouts (sim/pipe.c; rules in model/analytic.h): every stage's schedule run event by
 * event, each send between stages as flows of all its t x dp rank pairs over the topology, each
 * stage's data-parallel boundary as ring flows of its groups, so sends that share NICs, and
 * boundaries that overlap other stages' sends, slow each other. Op durations: an_pipe_time.
 * Jitter scales each op; a straggler rank slows its whole stage (its peers wait for it in the
 * tensor-parallel collectives). A trace has one process per stage (compute, received sends,
 * boundary). Without jitter, stragglers or a trace, the data-parallel copies are simulated
 * once (exec_pipe_symmetry_unit; ranks_simulated says how many ranks ran). */
int exec_pipe_run(const lo_graph *g, const wl *w, const spec_training *tr, const cost_calib *cal,
                  const spec_cluster *c, const exec_opts *o, exec_result *r, sc_err *err) SC_MUST_CHECK;

#endif
