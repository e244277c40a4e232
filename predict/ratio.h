/* ratio.h — how two predictions of one command compare: by throughput, so that rows running
 * different global batches compare fairly (context parallelism takes its ranks from the data
 * replicas: megatron:t=2,p=1,cp=2 on 16 GPUs runs 4 sequences a step where megatron:t=2,p=1 runs
 * 8 at the same micro-batch split, and a step-time ratio would call the faster layout slower).
 * Not here: which rows are compared (best against best: plan.h), printing (cli/). */
#ifndef SC_PRED_RATIO_H
#define SC_PRED_RATIO_H

#include "eval.h"

/* 1 when a and b run the same global batch (samples per optimizer step). */
int ratio_same_batch(const an_result *a, const an_result *b);
/* How many times faster b trains than a: b's samples/s over a's. At the same global batch this is
 * a's step time over b's, and is computed so (the ratio predict printed before rows could differ);
 * 0 when the denominator is not positive (never Inf or NaN). */
double ratio_speedup(const an_result *a, const an_result *b);

#endif
