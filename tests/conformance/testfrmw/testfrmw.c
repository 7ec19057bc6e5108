/*
 * numalock's stand-in for the Open POSIX Test Suite's testfrmw.c: see
 * testfrmw.h. Included once into each test's translation unit.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void output_init(void)
{
    /* line buffered even into a log file, so that a fork copies no pending text */
    setvbuf(stdout, NULL, _IOLBF, 0);
}

void output(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fflush(stdout);
}

void output_fini(void)
{
    fflush(stdout);
}

void testfrmw_exit(int code, const char *verdict, const char *file, int line, int err, const char *text)
{
    if (text && err)
        printf("%s at %s:%d: %s (error %d: %s)\n", verdict, file, line, text, err, strerror(err));
    else if (text)
        printf("%s at %s:%d: %s\n", verdict, file, line, text);
    else
        printf("%s\n", verdict);
    fflush(stdout);
    exit(code);
}
