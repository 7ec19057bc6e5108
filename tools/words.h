/*
 * Command lines as words (words.c): a recorded command line that can be
 * pasted back into a shell, and a suite line split into words.
 */
#ifndef NUMALOCK_WORDS_H
#define NUMALOCK_WORDS_H

#include <stddef.h>
#include <stdio.h>

/* Appends ARG to f as one shell word (quoted when it needs to be). */
void nl_cli_shell_word(FILE *f, const char *arg);
/* "numalock ARG ARG ..." into buf, the words as given (truncated at len). */
void nl_cli_join_args(char *buf, size_t len, int argc, char **argv);
/* Splits s in place into words at blanks; '...' quotes a word with blanks
 * (nothing is special inside, as in sh). Returns the count, or -1 for an
 * unclosed quote or more than max words. */
int nl_cli_split_words(char *s, char **words, int max);

#endif
