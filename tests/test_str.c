/* test_str.c — base/str.h: str_trim cuts spaces and tabs at both ends, in place, and nothing
 * else. Not here: the readers that call it (test_results.c, golden tests of plot). */
#include "suites.h"

#include "../base/str.h"

#include <string.h>

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

Suite *str_suite(void)
{
    Suite *s = suite_create("str");
    TCase *t = tcase_create("trim");
    tcase_add_test(t, test_trim);
    suite_add_tcase(s, t);
    return s;
}
