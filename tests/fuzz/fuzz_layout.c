/* fuzz_layout.c — layout strings ("mics:p=8", "axonn:x=2,y=2,z=4,placement=zxyd", ...): parse,
 * print and re-parse to the same struct, then every check against shipped clusters and a model. */
#include "fuzz_common.h"

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
    spec_layout l;
    sc_err err;
    int rc = spec_layout_parse(s, &l, &err);
    FZ_EXPECT(rc);
    if (rc == 0) {
        char buf[192];
        spec_layout l2;
        if (spec_layout_parse(spec_layout_str(&l, buf, sizeof buf), &l2, &err) || memcmp(&l2, &l, sizeof l))
            abort();
        fz_check_layout(&l, (unsigned)size);
    }
    free(s);
    return 0;
}
