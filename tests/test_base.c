/* test_base.c — small helpers of base/: str_trim (base/str.h) cuts spaces and tabs at both
 * ends, in place, and nothing else; proc_self_dir (base/proc.h) names the running binary's
 * directory; str_edit_distance / str_nearest (base/str.h) give "did you mean"; sc_pace (base/pace.h) paces progress lines by an injected clock. Not here: their callers (test_results.c, golden tests of plot and calibrate run). */
#include "suites.h"

#include "../base/err.h"
#include "../base/pace.h"
#include "../base/proc.h"
#include "../base/str.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

START_TEST(test_trim)
{
    /* leading and trailing spaces and tabs go; the inner ones stay; the end is cut in place */
    char a[] = " \t a b\t \t";
    char *t = str_trim(a);
    ck_assert_str_eq(t, "a b");
    ck_assert_ptr_eq(t, a + 3);
    ck_assert_int_eq(a[6], '\0');
    /* only spaces and tabs: the empty string, at the end of the buffer */
    char b[] = " \t ";
    ck_assert_str_eq(str_trim(b), "");
    char c[] = "";
    ck_assert_str_eq(str_trim(c), "");
    /* newlines and carriage returns are not trimmed (the CSV reader cuts those itself) */
    char d[] = " x\r\n";
    ck_assert_str_eq(str_trim(d), "x\r\n");
    /* nothing to trim: the same pointer, the same text */
    char e[] = "3.5";
    ck_assert_ptr_eq(str_trim(e), e);
    ck_assert_str_eq(e, "3.5");
}
END_TEST

START_TEST(test_blank_and_file_errors)
{
    /* str_blank: nothing, or white space of every kind, is blank; one other byte is not (a NUL
     * byte included: the length counts, not the string) */
    ck_assert(str_blank("", 0));
    ck_assert(str_blank(" \t\r\n\f\v", 6));
    ck_assert(!str_blank(" \n{", 3));
    ck_assert(!str_blank("\0", 1));
    ck_assert(str_blank("x", 0));
    /* the one wording of a file that cannot be read, and of an empty one: the path as the source */
    sc_err err;
    ck_assert_int_eq(sc_err_unreadable(&err, "a.json", "No such file or directory"), SC_EINPUT);
    ck_assert_str_eq(err.source, "a.json");
    ck_assert_str_eq(err.text, "cannot read: No such file or directory");
    ck_assert_int_eq(sc_err_empty(&err, "b.log", "an nccl-tests log"), SC_EINPUT);
    ck_assert_str_eq(err.source, "b.log");
    ck_assert_str_eq(err.text, "the file is empty, expected an nccl-tests log");
}
END_TEST

START_TEST(test_edit_distance)
{
    /* by hand: kitten -> sitting = 3 (k->s, e->i, insert g); one deletion; the empty string is
     * the other's length; case counts unless folded */
    ck_assert_int_eq(str_edit_distance("kitten", "sitting", 0), 3);
    ck_assert_int_eq(str_edit_distance("grad_acum", "grad_accum", 0), 1);
    ck_assert_int_eq(str_edit_distance("", "abc", 0), 3);
    ck_assert_int_eq(str_edit_distance("LLama3-8b", "llama3-8b", 0), 2);
    ck_assert_int_eq(str_edit_distance("LLama3-8b", "llama3-8b", 1), 0);
    /* over 63 characters: "far" (1 << 20), whatever the other */
    char longer[70];
    memset(longer, 'a', 69);
    longer[69] = '\0';
    ck_assert_int_eq(str_edit_distance(longer, longer, 0), 1 << 20);
    /* nearest within a third of the name (at least 2 edits); else none; ties: the first */
    const char *const known[] = {"micro_batch", "grad_accum", "precision", NULL};
    ck_assert_str_eq(str_nearest("grad_acum", known), "grad_accum");
    ck_assert_str_eq(str_nearest("micro_batch_size", known), "micro_batch"); /* 5 <= 16 / 3 */
    ck_assert_ptr_null(str_nearest("colour", known));                       /* > 2 from each */
    const char *const tie[] = {"ab", "ac", "xyz", NULL};
    ck_assert_str_eq(str_nearest("aa", tie), "ab");
    /* every name at the nearest distance, in the list's order */
    char all[64];
    ck_assert_int_eq(str_nearest_all("aa", tie, all, sizeof all), 2);
    ck_assert_str_eq(all, "ab or ac");
    const char *const three[] = {"hsdp", "fsdp2", "ddp", "zero3", "mics", NULL}; /* fsdp: 1, 1, 2, 4, 4 */
    ck_assert_int_eq(str_nearest_all("fsdp", three, all, sizeof all), 2);
    ck_assert_str_eq(all, "hsdp or fsdp2");
    const char *const abc[] = {"xa", "xb", "xc", NULL};
    ck_assert_int_eq(str_nearest_all("xz", abc, all, sizeof all), 3);
    ck_assert_str_eq(all, "xa, xb or xc");
    ck_assert_int_eq(str_nearest_all("colour", known, all, sizeof all), 0);
    ck_assert_str_eq(all, "");
    /* as an error's tail: the same names, or nothing */
    ck_assert_int_eq(str_did_you_mean("aa", tie, all, sizeof all), 2);
    ck_assert_str_eq(all, "; did you mean ab or ac?");
    ck_assert_int_eq(str_did_you_mean("colour", known, all, sizeof all), 0);
    ck_assert_str_eq(all, "");
}
END_TEST

START_TEST(test_self_dir)
{
    /* this test binary (build/tests/run, or BUILD=... /tests/run) lives in the directory named */
    char dir[4096], run[4200];
    proc_self_dir("ignored/when/proc/works", dir, sizeof dir);
    ck_assert_int_eq(dir[0], '/'); /* /proc/self/exe is absolute */
    const char *tail = strrchr(dir, '/');
    ck_assert_str_eq(tail, "/tests");
    snprintf(run, sizeof run, "%s/run", dir);
    struct stat st;
    ck_assert_int_eq(stat(run, &st), 0);
    ck_assert(S_ISREG(st.st_mode) && (st.st_mode & S_IXUSR));
    /* a short buffer gets the start of it, terminated */
    char small[4];
    proc_self_dir(NULL, small, sizeof small);
    ck_assert_int_eq(strlen(small), 3);
    ck_assert_int_eq(strncmp(small, dir, 3), 0);
}
END_TEST

START_TEST(test_pace)
{
    /* A 2 s period started at t = 100 s, the clock injected. Points end at 100.5, 101.9 (not
     * due: < 102), 102.0 (due: 2 s since the start; next due 104.0), 103.9 (no), 104.3 (due:
     * next 106.3), 106.2 (no), and a final point at 106.25 (last: due although 0.05 s after). */
    sc_pace p;
    sc_pace_start(&p, 100.0, 2.0);
    ck_assert_int_eq(sc_pace_due(&p, 100.5, 0), 0);
    ck_assert_int_eq(sc_pace_due(&p, 101.9, 0), 0);
    ck_assert_int_eq(sc_pace_due(&p, 102.0, 0), 1);
    ck_assert_int_eq(sc_pace_due(&p, 103.9, 0), 0);
    ck_assert_int_eq(sc_pace_due(&p, 104.3, 0), 1);
    ck_assert_int_eq(sc_pace_due(&p, 106.2, 0), 0);
    ck_assert_int_eq(sc_pace_due(&p, 106.25, 1), 1);
    /* by time, not by count: 10,000 points within 1.9 s print nothing; one slow point each
     * 5 s prints every time (the old rule, every 16th point, did the opposite of both) */
    sc_pace_start(&p, 0.0, 2.0);
    int lines = 0;
    for (int i = 1; i <= 10000; i++)
        lines += sc_pace_due(&p, 1.9 * i / 10000, 0);
    ck_assert_int_eq(lines, 0);
    for (int i = 1; i <= 5; i++)
        lines += sc_pace_due(&p, 1.9 + 5.0 * i, 0);
    ck_assert_int_eq(lines, 5);
    /* a clock that steps back prints nothing until a period after the last line */
    ck_assert_int_eq(sc_pace_due(&p, 20.0, 0), 0);
    ck_assert_int_eq(sc_pace_due(&p, 28.9, 0), 1);
}
END_TEST

Suite *base_suite(void)
{
    Suite *s = suite_create("base");
    TCase *t = tcase_create("str");
    tcase_add_test(t, test_trim);
    tcase_add_test(t, test_edit_distance);
    tcase_add_test(t, test_blank_and_file_errors);
    suite_add_tcase(s, t);
    t = tcase_create("proc");
    tcase_add_test(t, test_self_dir);
    suite_add_tcase(s, t);
    t = tcase_create("pace");
    tcase_add_test(t, test_pace);
    suite_add_tcase(s, t);
    return s;
}
