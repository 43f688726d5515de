/* report_folded.c - STUB: the --folded writer, replaced by its own work. */
#include <errno.h>

#include "report.h"

int
report_folded(const char *path, const struct jt_snapshot *s)
{
	(void)path;
	(void)s;
	errno = ENOSYS;
	return -1;
}
