/* The preload's own messages (preload.h): a line to stderr with write(2),
 * no stdio, so that it may be said at any time (start-up, exit, inside an
 * intercepted call). The bottom of the preload's files: it calls none. */
#include <string.h>
#include <unistd.h>
#include "preload.h"

void nlp_say(const char *msg)
{
    size_t n = strlen(msg);
    while (n) {
        ssize_t w = write(2, msg, n);
        if (w <= 0)
            return;
        msg += w;
        n -= (size_t)w;
    }
}
