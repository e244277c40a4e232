/* fuzz_hf.c — a Hugging Face config.json (every family spec_hf reads). A config that loads must
 * meet the bounds every model meets (spec_model_check: the HF sizes once overflowed int) and name
 * the model without control characters; then its layers are described as `describe` does. */
#include "fuzz_common.h"

#include "../../model/spec_hf.h"
#include "../../model/workload.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fz_str(data, size);
    if (!s)
        return 0;
    spec_model m;
    sc_err err;
    char summary[1024];
    /* the name comes from the path when _name_or_path is absent: a fixed .../NAME/config.json */
    int rc = spec_parse_hf(s, "fuzz/model/config.json", &m, summary, sizeof summary, &err);
    FZ_EXPECT(rc);
    free(s);
    if (rc)
        return 0;
    if (spec_model_check(&m, "fuzz", &err)) {
        fprintf(stderr, "fuzz: a loaded HF model fails spec_model_check: %s\n", err.text);
        abort();
    }
    /* the -1.15e9 parameters of issue 31: a loaded model's counts are positive and finite */
    spec_training t;
    spec_training_defaults(&t);
    wl w;
    wl_build(&m, &t, &w);
    if (!(w.params > 0) || !(w.model_flops > 0) || !(w.params < 1e300) || !(w.model_flops < 1e300)) {
        fprintf(stderr, "fuzz: params %g, model FLOPs %g\n", w.params, w.model_flops);
        abort();
    }
    return 0;
}
