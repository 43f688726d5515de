/* cmdline_int.h - what cmdline.c and cmdline_help.c share (private to them). */
#ifndef JT_CMDLINE_INT_H
#define JT_CMDLINE_INT_H

#include <stdio.h>

/* A macro's value as a string literal, for messages. */
#define JT_STR(x) JT_STR_(x)
#define JT_STR_(x) #x

/* Writes the --help text to f: the usages, then every option, with its limits. */
void cmdline_usage(FILE *f);

#endif
