/* fuzz_calib.c — calibration files (per-GPU, per-link and per-algorithm parameters with their
 * standard errors), and the defaults filled in from a cluster beside them. */
#include "fuzz_common.h"

#include "../../model/cost.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cost_calib cal;
    sc_err err;
    FZ_EXPECT(cost_calib_load(fz_file(data, size), &cal, &err));
    return 0;
}
