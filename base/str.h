/* str.h — small string helpers shared by the floors above (the sweep CSV reader in
 * predict/results, gnuplot's error lines in cli/gnuplot, "did you mean" for names and keys).
 * Not here: parsing numbers or JSON (base/jsonrd), anything that allocates. */
#ifndef SC_BASE_STR_H
#define SC_BASE_STR_H

/* s without its leading and trailing spaces and tabs: the trailing ones are cut off in place
 * (s is written), the returned pointer is past the leading ones. Other white space (newlines,
 * carriage returns) is kept. */
char *str_trim(char *s);

/* Whether s[0..n) is only white space (spaces, tabs, newlines, carriage returns, form feeds,
 * vertical tabs) or empty: a file with nothing in it to read. */
int str_blank(const char *s, unsigned long n);

/* Levenshtein distance of a and b (insertions, deletions, substitutions), letters compared
 * without case when fold_case; either longer than 63 characters: 1 << 20. */
int str_edit_distance(const char *a, const char *b, int fold_case);
/* The entry of known[] (NULL-terminated) nearest to k, when near enough to be a typo of it:
 * within a third of k's length, at least 2 edits; else NULL. Ties: the first listed. */
const char *str_nearest(const char *k, const char *const *known);
/* Every entry of known[] at that nearest distance (within the same limit), in their order, as
 * "a", "a or b", "a, b or c" into out (n bytes); returns how many, 0 (out "") when none. */
int str_nearest_all(const char *k, const char *const *known, char *out, unsigned long n);
/* The same as an error's tail: "; did you mean a or b?" into out (n bytes), "" when none is near;
 * returns how many were named. */
int str_did_you_mean(const char *k, const char *const *known, char *out, unsigned long n);

#endif
