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

#endif
