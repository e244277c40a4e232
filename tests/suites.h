/* suites.h — one Check suite per module under test; check_main.c runs them all.
 * Adding a module: declare its suite here and add one line to SUITES[] in check_main.c. */
#ifndef SC_TEST_SUITES_H
#define SC_TEST_SUITES_H

#include <check.h>

Suite *spec_suite(void);     /* tests/test_spec.c: JSON loaders, validation, name resolution */
Suite *spec_hf_suite(void);  /* tests/test_spec_hf.c: Hugging Face config.json, "did you mean"   */
Suite *layout_suite(void);   /* tests/test_layout.c: layout strings and their cluster checks  */
Suite *workload_suite(void); /* tests/test_workload.c: parameters, FLOPs, activation bytes    */
Suite *memory_suite(void);   /* tests/test_memory.c: per-GPU bytes of each layout (ZeRO §3)   */

Suite *cost_suite(void);     /* tests/test_cost.c: compute and collective cost functions      */
Suite *analytic_suite(void); /* tests/test_analytic.c: op graph volumes, hand schedules, jumps  */
Suite *ev_suite(void);       /* tests/test_ev.c: event queue and engine                        */
Suite *net_suite(void);      /* tests/test_net.c: topology, paths, max-min fair flows          */
Suite *trace_suite(void);    /* tests/test_trace.c: integer-ns trace times, no overlap on a lane  */
Suite *exec_suite(void);     /* tests/test_exec.c: simulator vs analytic, contention, rings, seeds */
Suite *tensor_suite(void);   /* tests/test_tensor.c: tp / axonn volumes per axis, degenerate grids */

Suite *pipe_suite(void);     /* tests/test_pipe.c: megatron 3D: schedules, bubble, stage memory, SP, engines */
Suite *offload_suite(void);  /* tests/test_offload.c: zero3-offload and luwu: bytes, transports, memory, spec */
Suite *infinity_suite(void); /* tests/test_infinity.c: ZeRO-Infinity tiers: PCIe / NVMe bytes, memory, engines */

Suite *kernels_suite(void); /* tests/test_kernels.c: GEMM tiles and waves, FlashAttention, element-wise bytes, precision */

Suite *nccl_suite(void);     /* tests/test_nccl.c: NCCL algorithms x protocols, choice, properties */

Suite *framework_suite(void); /* tests/test_framework.c: schedules per framework, ds_config */

Suite *atomic_suite(void);  /* tests/test_atomic.c: whole-or-absent output (base/atomic)      */
Suite *reliab_suite(void);  /* tests/test_reliab.c: issue 19 regressions (crashes, ranges, NaN) */
Suite *fit_suite(void);      /* tests/test_fit.c: calibration fit recovers known parameters    */

Suite *search_suite(void);   /* tests/test_search.c: plan's candidates, ranking, objectives, verdicts */
Suite *results_suite(void);  /* tests/test_results.c: the sweep CSV written and read from one table */
Suite *accuracy_suite(void); /* tests/test_accuracy.c: cases, metric conversion, statistics, figures */
Suite *base_suite(void);     /* tests/test_base.c: base/ helpers (str_trim, proc_self_dir)        */
Suite *cp_suite(void);       /* tests/test_cp.c: context parallelism: rank workload, ring, groups, properties */
Suite *impl_suite(void);     /* tests/test_impl.c: issue 27: FSDP gradient path, reduce_dtype, op SAC, element-wise flags, AdamW */
Suite *fsdp2tp_suite(void);   /* tests/test_fsdp2tp.c: FSDP2 + tensor parallelism (fsdp2:dp=D,t=T): grammar, bytes, memory, engines */
Suite *fsdp2pp_suite(void);   /* tests/test_fsdp2pp.c: FSDP2 + pipeline stages (fsdp2:dp=D,t=T,p=P): grammar, checks, p = 1, 1F1B by hand, dp boundary, memory, engines */
Suite *plan_fsdp2_suite(void); /* tests/test_plan_fsdp2.c: plan's fsdp2-tp / fsdp2-pp families: counts by hand, divisibility, m >= stages, when searched */
Suite *remat_suite(void);    /* tests/test_remat.c: MaxText remat policies' bytes and FLOPs; activation and sharding properties */
Suite *step_suite(void);     /* tests/test_step.c: the harness step described once (calibrate/step.h) */

Suite *anchor_suite(void);    /* tests/test_anchor.c: calibrate anchor's fit, bounds, sd, the anchor object */
Suite *accuracy_fit_suite(void); /* tests/test_accuracy_fit.c: host costs fitted leave-one-source-out, held-out values, the shipped table */

#endif
