/* check_main.c — the unit test runner: every suite in suites.h, CK_NORMAL output, exit status
 * non-zero when any test fails. Run from the repository root (tests read configs/ and
 * tests/fixtures/). CK_FORK, CK_RUN_SUITE and CK_RUN_CASE work as Check documents them. */
#include "suites.h"

#include <stdio.h>
#include <stdlib.h>

/* One line per suite. */
static Suite *(*const SUITES[])(void) = {
    spec_suite,
    anchor_suite,
    accuracy_fit_suite,
    spec_hf_suite,
    layout_suite,
    workload_suite,
    memory_suite,
    cost_suite,
    analytic_suite,
    tensor_suite,
    pipe_suite,
    ev_suite,
    offload_suite,
    infinity_suite,
    net_suite,
    exec_suite,
    kernels_suite,
    trace_suite,
    nccl_suite,
    framework_suite,
    fit_suite,
    search_suite,
    results_suite,
    accuracy_suite,
    atomic_suite,
    reliab_suite,
    base_suite,
    step_suite,
    impl_suite,
    cp_suite,
    fsdp2tp_suite,
    fsdp2pp_suite,
    plan_fsdp2_suite,
    remat_suite,
};

/* Without CK_RUN_SUITE each suite runs on its own runner, so its result line comes when it
 * ends (the whole run takes ~30 s and was silent until the end; issue 30 item 7), then a total.
 * With CK_RUN_SUITE or CK_RUN_CASE: one runner, as Check documents them. */
int main(void)
{
    const size_t n = sizeof SUITES / sizeof SUITES[0];
    const char *only = getenv("CK_RUN_SUITE");
    if (!only || !*only)
        only = getenv("CK_RUN_CASE");
    int failed = 0, run = 0;
    for (size_t i = 0; i < n; i++) {
        SRunner *sr = srunner_create(NULL);
        if (only && *only) {
            for (size_t j = 0; j < n; j++)
                srunner_add_suite(sr, SUITES[j]());
            i = n;
        } else {
            srunner_add_suite(sr, SUITES[i]());
        }
        srunner_run_all(sr, CK_NORMAL);
        failed += srunner_ntests_failed(sr);
        run += srunner_ntests_run(sr);
        srunner_free(sr);
        fflush(stdout);
    }
    if (!only || !*only)
        printf("unit: %d tests in %zu suites, %d failed\n", run, n, failed);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
