/* fuzz_accelerate.c — an accelerate FSDP config (YAML, through libyaml), then the layout it gives
 * through every check. */
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    spec_training t;
    spec_layout l;
    spec_ds_report rep;
    sc_err err;
    spec_training_defaults(&t);
    int rc = spec_load_accelerate(fz_file(data, size), 8, &t, &l, &rep, &err);
    FZ_EXPECT(rc);
    if (rc == 0)
        fz_check_layout(&l, (unsigned)size);
    return 0;
}
