/* analytic_result.h — what one configuration's step comes to, as both engines report it (the
 * analytical engine, its pipeline schedule in analytic_pipe.c, and the simulator fill it). Only
 * the type: below analytic.h and analytic_pipe.h, which both fill it. Not here: how. */
#ifndef SC_ANALYTIC_RESULT_H
#define SC_ANALYTIC_RESULT_H

#include "cost.h"
#include "memory_states.h"

typedef struct an_result {
    double step_s;
    double compute_s;             /* forward + backward + recompute busy time            */
    double optimizer_s;
    double exposed_s[N_COLLS];    /* compute stream waiting on each collective kind      */
    double idle_s;                /* the rest of the step (0 in the analytic engine)     */
    double samples_per_step, samples_per_s, tokens_per_s;
    double model_tflops_per_gpu;  /* model FLOPs (no recompute) / step / GPU, 1e12/s     */
    double hw_tflops_per_gpu;     /* with recompute                                      */
    double mfu;                   /* model FLOP/s over dense peak                        */
    double comm_bytes;            /* per rank per step (ring volume)                     */
    mem_breakdown mem;
    double bubble_frac;           /* pipelines: the schedule's bubble in closed form
                                     (layout_pipe_bubble); 0 without a pipeline            */
} an_result;

#endif
