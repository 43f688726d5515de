/* diff.h - `jmptrace diff`: the stacks whose live bytes grew most between two JSON snapshots. */
#ifndef JT_DIFF_H
#define JT_DIFF_H

/* Runs the subcommand; argv[0] is "diff". Returns the exit status (0, or 2 for bad usage, 1 on errors). */
int diff_main(int argc, char **argv);

#endif
