/* step.h — the one description of the harness's sharded training step, for the harness that
 * runs it (calibrate/bench/meas_step.c), the measurements file that records it (measure.h) and
 * `shardcast validate`, which predicts it (cli/validate.c): `layers` identical layers of four
 * GEMMs (qkv, proj, fc1, fc2) over T = seq_len x micro_batch tokens per rank; per layer the
 * parameters are all-gathered before its forward and its backward, every GEMM has an input- and
 * a weight-gradient GEMM in the backward, the gradients are reduce-scattered; grad_accum
 * micro-steps; no optimizer, no prefetch, no activation checkpointing.
 * Not here: timing it (calibrate/bench) or reading its measurements (measure.c). */
#ifndef SC_CAL_STEP_H
#define SC_CAL_STEP_H

#include <stddef.h>

#include "../base/err.h"
#include "../model/layout.h"
#include "../model/spec.h"
#include "../model/workload.h"

/* The step's shape, as the harness's options set it and the measurements file records it. */
typedef struct cal_step_shape {
    int layers;      /* identical layers                                                   */
    int hidden, ffn; /* h, f                                                               */
    int seq_len;     /* sequence length                                                    */
    int micro_batch; /* sequences per rank per micro-step                                  */
    int grad_accum;  /* micro-steps per step                                               */
} cal_step_shape;

/* One forward GEMM of a layer: C[T x n] = A[T x k] W[k x n]. The layer's parameters are its
 * four W, stored one after the other in this order. */
enum { CAL_STEP_QKV, CAL_STEP_PROJ, CAL_STEP_FC1, CAL_STEP_FC2, CAL_STEP_GEMMS };
typedef struct cal_step_gemm {
    const char *name; /* "qkv", "proj", "fc1", "fc2"                                         */
    size_t n, k;      /* output and input width                                              */
    size_t w_off;     /* elements of the layer's parameters before W                         */
} cal_step_gemm;

/* The four GEMMs of a layer of hidden h and MLP f, in order; returns the layer's parameters
 * (elements): 3h^2 (qkv) + h^2 (proj) + hf (fc1) + fh (fc2). */
size_t cal_step_layer(size_t hidden, size_t ffn, cal_step_gemm g[CAL_STEP_GEMMS]);

/* Tokens of one rank's micro-step: seq_len x micro_batch. */
size_t cal_step_tokens(const cal_step_shape *s);

/* The workload the step is (one block kind, `layers` of it; elem_bytes 4 for fp32, 2 for bf16),
 * as model/workload builds a model's. */
void cal_step_workload(const cal_step_shape *s, double elem_bytes, wl *w);

/* The op graph of one step under layout l on `nodes` nodes of c, with its workload: the
 * training as the harness runs it (no prefetch, no checkpointing) and no optimizer boundary
 * (the harness times forward, backward and the gradients' synchronisation). SC_EINPUT naming
 * src and "$.layout" for a pipelined layout (the harness does not run pipelines). */
int cal_step_graph(const cal_step_shape *s, double elem_bytes, const spec_layout *l, const spec_cluster *c,
                   int nodes, const char *src, wl *w, lo_graph *g, sc_err *err) SC_MUST_CHECK;

#endif
