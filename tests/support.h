/* support.h — fixtures shared by several test suites (kept here so that a change to a fixture
 * is made once). Not a test itself. */
#ifndef SC_TEST_SUPPORT_H
#define SC_TEST_SUPPORT_H

#include "../model/cost.h"
#include "../model/spec.h"

/* A tiny cluster whose numbers are easy to derive by hand: 2 GPUs per node on an NVSwitch with
 * 2 links of link_Bps each; one NIC of nic_Bps per node; peak 1e12 FLOP/s, HBM 80e9 B at
 * 1e12 B/s; PCIe 1e10 B/s; one non-blocking leaf of 16 nodes. */
spec_cluster test_duo_cluster(const char *name, double link_Bps, double nic_Bps);

/* A tiny decoder: `layers` blocks, hidden 64, 1 head, ffn 256 (GeLU), seq 16, vocab 128, no
 * biases, LayerNorm, untied embeddings, rotary positions (every flag 0). */
spec_model test_tiny_model(int layers);

/* A calibration that makes times plain arithmetic: efficiencies 1, every latency and the GEMM
 * overhead 0, Adam 16 B per parameter, tree factor 0.92, no overlap slowdown. */
cost_calib test_tiny_calib(void);

/* The shipped p4d.24xlarge cluster and Llama-3-8B into c and m, and the default calibration for
 * that cluster into k unless it is NULL: the fixture the context- and tensor-parallel engine
 * tests run on (a load that fails fails the test). */
void test_p4d_llama3_8b(spec_cluster *c, spec_model *m, cost_calib *k);

/* Layout s parsed (a parse error fails the test); and s's parse error, which must be want. */
/* Both engines on timed graph g: the analytical step into *ar (zeroed first), the simulator's run
 * into *r (asserted to succeed); comparing them is the caller's. */
struct an_timed;
struct an_result;
struct exec_result;
struct lo_graph;
void test_engines_run(const struct lo_graph *g, const struct an_timed *t, const cost_calib *k, const spec_cluster *c,
                      struct an_result *ar, struct exec_result *r);
spec_layout test_parse_layout(const char *s);
void test_parse_layout_err(const char *s, const char *want);

/* The analytical (*an) and simulated (*sim) step of pipelined layout s (it must pass its check
 * and build a pipelined graph) for model mo and training tr on `nodes` duo nodes (NIC nic_Bps)
 * with the tiny calibration, sends given a 1 us latency the schedule must carry: the two
 * pipeline suites' engine comparisons (test_pipe.c, test_fsdp2pp.c). */
void test_pipe_both(const spec_model *mo, const spec_training *tr, const char *s, int nodes, double nic_Bps,
                    double *an, double *sim);

/* One pipeline family's engine agreement (both: its analytical and simulated step of a layout
 * on `nodes` duo nodes, m micro-batches, NIC nic_Bps), spelled for t = 2, p = 2: on 2 nodes (dp =
 * 1), 1F1B (f1b2) for m = 1..6 and GPipe (gpipe2) at m = 4 agree to 1e-9: stage 0 sends forward
 * over node 0's NIC, stage 1 backward over node 1's, never two at once on one link when a send
 * (2 ranks x 1024 B over a 1e11 B/s NIC) is shorter than an op, so the simulator's flows take
 * exactly the analytical send time; on 4 nodes (dp = 2: f1b4) the boundary's reduce-scatter can
 * meet a send on a NIC, and interleaved (two chunks: il2, il4 at 1e9 B/s) sends both ways on
 * each node: contention only slows the simulator. */
typedef void (*test_both_fn)(const char *layout, int nodes, int m, double nic_Bps, double *an, double *sim);
void test_pipe_agree(test_both_fn both, const char *f1b2, const char *gpipe2, const char *f1b4, const char *il2,
                     const char *il4);

#endif
