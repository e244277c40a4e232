/* str.c — small in-place string helpers (see str.h). */
#include "str.h"

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
