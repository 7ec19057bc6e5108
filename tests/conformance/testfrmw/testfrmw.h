/*
 * numalock's stand-in for the Open POSIX Test Suite's "testfrmw" helpers,
 * which the suite's archive does not ship (tests/conformance/run.sh copies
 * this folder to conformance/interfaces/testfrmw in the extracted tree, where
 * the tests' "../testfrmw/..." and "../../testfrmw/..." includes find it).
 * Written for numalock from the tests' use of it alone.
 *
 * A test includes this header and then testfrmw.c into its one translation
 * unit. What it uses:
 *   output_init()            before the first output()
 *   output(fmt, ...)         printf to stdout, flushed at once (tests fork)
 *   output_fini()            before a child process exits
 *   UNRESOLVED(err, text)    say why and exit PTS_UNRESOLVED (2)
 *   FAILED(text)             say why and exit PTS_FAIL (1)
 *   UNTESTED(text)           say why and exit PTS_UNTESTED (5)
 *   PASSED                   exit PTS_PASS (0)
 * Each macro is a braced block: some tests use it with no `;` after it.
 */
#ifndef NUMALOCK_CONFORMANCE_TESTFRMW_H
#define NUMALOCK_CONFORMANCE_TESTFRMW_H

#include <stdlib.h>
#include "posixtest.h" /* the exit codes; -I include */

void output_init(void);
void output(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void output_fini(void);
void testfrmw_exit(int code, const char *verdict, const char *file, int line, int err, const char *text)
    __attribute__((noreturn));

#define UNRESOLVED(err, text) { testfrmw_exit(PTS_UNRESOLVED, "UNRESOLVED", __FILE__, __LINE__, (int)(err), (text)); }
#define FAILED(text) { testfrmw_exit(PTS_FAIL, "FAILED", __FILE__, __LINE__, 0, (text)); }
#define UNTESTED(text) { testfrmw_exit(PTS_UNTESTED, "UNTESTED", __FILE__, __LINE__, 0, (text)); }
#define PASSED { testfrmw_exit(PTS_PASS, "PASSED", __FILE__, __LINE__, 0, NULL); }

#endif
