/* fuzz_spec.c — the cluster, model and training loaders on any bytes (as JSON text), and what a
 * loaded spec goes through next: a parsed cluster meets every layout kind's check at several node
 * counts, a parsed model the layouts' model checks (heads, hidden and ffn splits). */
#include "fuzz_common.h"

static const char *const LAYOUTS[] = {"ddp", "zero3", "mics:p=8", "mics:p=16,hier=0", "hsdp:p=8", "zeropp:hpz=8",
                                      "tp:t=4", "axonn:x=2,y=2,z=2", "axonn:x=1,y=4,z=2,placement=zxyd", "luwu",
                                      "zero3-offload", "zero2-offload"};
#define N_LAYOUTS (sizeof LAYOUTS / sizeof LAYOUTS[0])

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fz_str(data, size);
    if (!text)
        return 0;
    sc_err err;
    spec_cluster c;
    spec_model m;
    spec_training t;
    spec_layout l;
    int rc = spec_parse_cluster(text, "fuzz", &c, &err);
    FZ_EXPECT(rc);
    if (rc == 0)
        for (size_t i = 0; i < N_LAYOUTS; i++) {
            if (spec_layout_parse(LAYOUTS[i], &l, &err))
                abort();
            static const int nodes[] = {1, 2, 7, 64, 4096};
            for (size_t k = 0; k < sizeof nodes / sizeof nodes[0]; k++)
                if (!spec_nodes_check(&c, nodes[k], "--nodes", &err))
                    FZ_EXPECT(spec_layout_check(&l, &c, nodes[k], &err));
        }
    rc = spec_parse_model(text, "fuzz", &m, &err);
    FZ_EXPECT(rc);
    if (rc == 0)
        for (size_t i = 0; i < N_LAYOUTS; i++) {
            if (spec_layout_parse(LAYOUTS[i], &l, &err))
                abort();
            FZ_EXPECT(spec_layout_check_model(&l, &m, &err));
        }
    spec_training_defaults(&t);
    FZ_EXPECT(spec_parse_training(text, "fuzz", &t, &err));
    rc = spec_layout_parse(text, &l, &err);
    FZ_EXPECT(rc);
    if (rc == 0)
        fz_check_layout(&l, (unsigned)size);
    free(text);
    return 0;
}
