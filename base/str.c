/* str.c — small in-place string helpers (see str.h). */
#include "str.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

char *str_trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
    return s;
}

int str_blank(const char *s, unsigned long n)
{
    for (unsigned long i = 0; i < n; i++)
        if (!isspace((unsigned char)s[i]))
            return 0;
    return 1;
}

int str_edit_distance(const char *a, const char *b, int fold_case)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > 63 || m > 63)
        return 1 << 20;
    int row[64];
    for (size_t j = 0; j <= m; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= n; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= m; j++) {
            int ca = (unsigned char)a[i - 1], cb = (unsigned char)b[j - 1];
            if (fold_case)
                ca = tolower(ca), cb = tolower(cb);
            int up = row[j], best = diag + (ca != cb);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            diag = up;
            row[j] = best;
        }
    }
    return row[m];
}

/* The nearest distance of k to known[] if within the typo limit, else -1. */
static int nearest_distance(const char *k, const char *const *known)
{
    int bd = 1 << 20;
    for (int i = 0; known[i]; i++) {
        int d = str_edit_distance(k, known[i], 0);
        if (d < bd)
            bd = d;
    }
    int len = (int)strlen(k), lim = len / 3 > 2 ? len / 3 : 2;
    return bd <= lim ? bd : -1;
}

const char *str_nearest(const char *k, const char *const *known)
{
    int bd = nearest_distance(k, known);
    for (int i = 0; bd >= 0 && known[i]; i++)
        if (str_edit_distance(k, known[i], 0) == bd)
            return known[i];
    return NULL;
}

int str_nearest_all(const char *k, const char *const *known, char *out, unsigned long n)
{
    int bd = nearest_distance(k, known), total = 0, done = 0;
    for (int i = 0; bd >= 0 && known[i]; i++)
        total += str_edit_distance(k, known[i], 0) == bd;
    size_t o = 0;
    if (n)
        out[0] = '\0';
    for (int i = 0; bd >= 0 && known[i] && o < n; i++)
        if (str_edit_distance(k, known[i], 0) == bd) {
            o += (size_t)snprintf(out + o, n - o, "%s%s", done ? (done == total - 1 ? " or " : ", ") : "", known[i]);
            done++;
        }
    return total;
}

int str_did_you_mean(const char *k, const char *const *known, char *out, unsigned long n)
{
    char near[256];
    int nn = str_nearest_all(k, known, near, sizeof near);
    if (n)
        snprintf(out, n, "%s%s%s", nn ? "; did you mean " : "", nn ? near : "", nn ? "?" : "");
    return nn;
}
