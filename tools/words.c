/* Command lines as words (words.h). */
#include <string.h>
#include "words.h"

void nl_cli_shell_word(FILE *f, const char *arg)
{
    if (*arg && strspn(arg, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./=:,+@%-") ==
                    strlen(arg)) {
        fputs(arg, f);
        return;
    }
    fputc('\'', f);
    for (const char *c = arg; *c; c++) {
        if (*c == '\'')
            fputs("'\\''", f); /* close the quote, an escaped quote, reopen */
        else
            fputc(*c, f);
    }
    fputc('\'', f);
}

void nl_cli_join_args(char *buf, size_t len, int argc, char **argv)
{
    size_t off = (size_t)snprintf(buf, len, "numalock");
    for (int i = 0; i < argc && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, " %s", argv[i]);
}

int nl_cli_split_words(char *s, char **words, int max)
{
    int n = 0;
    while (*s) {
        while (*s == ' ' || *s == '\t')
            s++;
        if (!*s)
            break;
        if (n == max)
            return -1;
        char *out = s;
        words[n++] = out;
        while (*s && *s != ' ' && *s != '\t') {
            if (*s == '\'') {
                char *end = strchr(s + 1, '\'');
                if (!end)
                    return -1;
                memmove(out, s + 1, (size_t)(end - s - 1));
                out += end - s - 1;
                s = end + 1;
            } else {
                *out++ = *s++;
            }
        }
        if (*s)
            s++;
        *out = 0;
    }
    return n;
}
