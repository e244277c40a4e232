/* fuzz_ds_config.c — DeepSpeed ds_config.json (training keys and the ZeRO / MiCS layout it names),
 * then the layout it gives through every check. */
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
    sc_err err;
    spec_training_defaults(&t);
    memset(&l, 0, sizeof l);
    int rc = spec_load_ds_config(fz_file(data, size), &t, &l, &err);
    FZ_EXPECT(rc);
    if (rc == 0)
        fz_check_layout(&l, (unsigned)size);
    return 0;
}
