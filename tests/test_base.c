/* test_base.c — small helpers of base/: str_trim (base/str.h) cuts spaces and tabs at both
 * ends, in place, and nothing else; proc_self_dir (base/proc.h) names the running binary's
 * directory. Not here: their callers (test_results.c, golden tests of plot and calibrate run). */
#include "suites.h"

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

Suite *base_suite(void)
{
    Suite *s = suite_create("base");
    TCase *t = tcase_create("str");
    tcase_add_test(t, test_trim);
    suite_add_tcase(s, t);
    t = tcase_create("proc");
    tcase_add_test(t, test_self_dir);
    suite_add_tcase(s, t);
    return s;
}
