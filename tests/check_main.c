/* check_main.c — the unit test runner: every suite in suites.h, CK_NORMAL output, exit status
 * non-zero when any test fails. Run from the repository root (tests read configs/ and
 * tests/fixtures/). CK_FORK, CK_RUN_SUITE and CK_RUN_CASE work as Check documents them. */
#include "suites.h"

#include <stdlib.h>

/* One line per suite. */
static Suite *(*const SUITES[])(void) = {
    spec_suite,
    anchor_suite,
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
};

int main(void)
{
    SRunner *sr = srunner_create(NULL);
    for (size_t i = 0; i < sizeof SUITES / sizeof SUITES[0]; i++)
        srunner_add_suite(sr, SUITES[i]());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
