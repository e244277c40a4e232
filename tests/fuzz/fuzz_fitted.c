/* fuzz_fitted.c — the fitted host-cost table (configs/fitted/framework-host.json, issue 27 rules):
 * loaded, then asked for a case's value of every framework and key. */
#include "fuzz_common.h"

#include <string.h>

#include "../../predict/accuracy_fit.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static acc_fit_table t;
    static acc_case c;
    sc_err err;
    int rc = acc_fit_load(fz_file(data, size), &t, &err);
    FZ_EXPECT(rc);
    if (rc == 0) {
        snprintf(c.source_id, sizeof c.source_id, "zeropp-blog");
        for (int f = 0; f < N_FRAMEWORKS; f++)
            for (int k = 0; k < ACC_FIT_N_KEYS; k++) {
                double v = 0;
                c.training.framework = (spec_framework)f;
                if (acc_fit_value_for(&t, &c, (acc_fit_key)k, &v) && !(v > 0))
                    abort(); /* a loaded value is positive */
            }
    }
    return 0;
}
