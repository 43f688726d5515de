/* diff.c - `jmptrace diff`: the stacks whose live bytes grew most between two JSON snapshots. */
#include "diff.h"
#include "util.h"

/* STUB: replaced by the diff work. */
int
diff_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	error_msg("diff: not built yet");
	return 2;
}
