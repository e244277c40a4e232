/* str.h — small in-place string helpers shared by the floors above (the sweep CSV reader in
 * predict/results, gnuplot's error lines in cli/gnuplot). Not here: parsing numbers or JSON
 * (base/jsonrd), anything that allocates. */
#ifndef SC_BASE_STR_H
#define SC_BASE_STR_H

/* s without its leading and trailing spaces and tabs: the trailing ones are cut off in place
 * (s is written), the returned pointer is past the leading ones. Other white space (newlines,
 * carriage returns) is kept. */
char *str_trim(char *s);

#endif
