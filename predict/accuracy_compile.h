/* accuracy_compile.h — the torch.compile gain where a source measured both (issue 27 item 6's
 * done-when): pairs of cases of one source that ran the same job eager and compiled, and for each
 * the measured gain (compiled tokens/s over eager, - 1) beside the predicted one.
 * Not here: loading or running cases (accuracy.h), printing (cli/accuracy_compile.c). */
#ifndef SC_PRED_ACCURACY_COMPILE_H
#define SC_PRED_ACCURACY_COMPILE_H

#include "accuracy.h"

/* The bound the issue sets: a pair's predicted gain within 5 points of the measured one. */
#define ACC_COMPILE_TOL_PTS 5.0

typedef struct acc_compile_pair {
    int eager, compiled;       /* case indices                                                   */
    double measured_gain_pct;  /* (measured compiled / measured eager - 1) x 100                 */
    double predicted_gain_pct; /* the same of the predictions; NAN when either is not predicted  */
    double diff_pts;           /* predicted - measured gain, points; NAN when not predicted      */
} acc_compile_pair;

/* Two cases pair when they share the source, cluster, calibration, model, seq_len, node count,
 * layout, micro-batch, accumulation, precision, checkpointing and attention kernel, and one runs
 * eager while the other runs compiled (training.execution after its stack). rows[i] is case i's
 * outcome (acc_suite_rows). Fills out[0..max) in case order of the eager one; returns the count
 * found (may exceed max: only max are written). */
int acc_compile_pairs(const acc_case *const *cases, const acc_row *rows, int n, acc_compile_pair *out, int max);

#endif
