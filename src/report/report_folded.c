/* report_folded.c - the --folded writer: a "frame;frame;...;frame value" line per stack, as flamegraph.pl, inferno and speedscope read them. */
#include <inttypes.h>
#include <stdio.h>

#include "report.h"
#include "report_common.h"
#include "report_fold.h"

int
report_folded(FILE *f, const struct jt_snapshot *s)
{
	struct jt_fold fold;

	fold_build(s, &fold);
	for (size_t i = 0; i < fold.npaths; i++) {
		const struct fold_path *p = &fold.paths[i];

		for (uint32_t k = 0; k < p->n; k++)
			fprintf(f, "%s%s", k ? ";" : "", p->names[k]);
		fprintf(f, " %" PRIu64 "\n", p->value);
	}
	fold_free(&fold);
	return ferror(f) ? -1 : 0;
}
