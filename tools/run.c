/* `numalock run`: needs the preload library (issue 5); refuses clearly until then. */
#include <stdio.h>
#include "numalock_cli.h"

int nl_cli_run(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "numalock run: not available in this build: the preload library is not built yet\n");
    return 2;
}
