/* cmdline.h - jmptrace's command line: its options, their checks and the --help text. */
#ifndef JT_CMDLINE_H
#define JT_CMDLINE_H

#include "options.h"

/*
 * Fills o (zeroed by the caller) from argv: every option given, checked
 * alone and against the others, then the defaults and what one option
 * implies for another (--leak-check and --source uprobe take one tracer
 * thread). argv[0] becomes "jmptrace", for getopt's messages; o->argv
 * points into argv. Returns 0; 1 once --help or --version has printed
 * its text (exit 0); or -1 after one line on stderr that says what is
 * wrong (bad usage: exit 2).
 */
int cmdline_parse(int argc, char **argv, struct jt_options *o);

/*
 * What the uprobe source implies for the other options (one tracer thread,
 * no CPU following, the rings' sizes): cmdline_parse applies it for
 * --source uprobe, main.c once --source auto has chosen that source.
 */
void cmdline_uprobe_defaults(struct jt_options *o);

#endif
