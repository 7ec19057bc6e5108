/* CPU lists (cpulist.h): the parser behind nl_cpulist_parse and the cpus:
 * specs. */
#include <ctype.h>
#include <string.h>
#include "cpulist.h"

/* One CPU number of a list at *s (before end): -1 when there is no digit or
 * the number reaches NL_MAX_CPUS. */
static int cpulist_number(const char **s, const char *end, long *v)
{
    if (*s == end || !isdigit((unsigned char)**s))
        return -1;
    for (*v = 0; *s < end && isdigit((unsigned char)**s); (*s)++)
        if ((*v = *v * 10 + (**s - '0')) >= NL_MAX_CPUS)
            return -1;
    return 0;
}

/* The CPU-list parser (cpulist.h). */
int nl_cpulist_scan(const char *s, const char *end, unsigned char *set, int *cpus, int max)
{
    int n = 0;
    if (s == end)
        return -1;
    while (s < end) {
        long a, b;
        if (cpulist_number(&s, end, &a))
            return -1;
        b = a;
        if (s < end && *s == '-') {
            s++;
            if (cpulist_number(&s, end, &b))
                return -1;
        }
        if (b < a)
            return -1;
        for (long c = a; c <= b; c++) {
            if (set[c] || (cpus && n >= max))
                return -1;
            set[c] = 1;
            if (cpus)
                cpus[n] = (int)c;
            n++;
        }
        if (s < end && (*s != ',' || ++s == end))
            return -1;
    }
    return n;
}

int nl_cpulist_parse(const char *s, size_t len, int *cpus, int max)
{
    unsigned char set[NL_MAX_CPUS];
    memset(set, 0, sizeof set);
    return nl_cpulist_scan(s, s + len, set, cpus, max);
}

