/* fuzz_scenario.c — scenario files: names, node lists, training, layouts; each layout string a
 * scenario carries is parsed and checked as `predict --scenario` would. */
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    spec_scenario sc;
    sc_err err;
    int rc = spec_load_scenario(fz_file(data, size), &sc, &err);
    FZ_EXPECT(rc);
    if (rc == 0)
        for (int i = 0; i < sc.n_layouts && i < SPEC_MAX_LIST; i++) {
            spec_layout l;
            int lr = spec_layout_parse(sc.layouts[i], &l, &err);
            FZ_EXPECT(lr);
            if (lr == 0)
                fz_check_layout(&l, (unsigned)i);
        }
    return 0;
}
