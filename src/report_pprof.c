/* report_pprof.c - STUB: the --pprof writer, replaced by its own work. */
#include <errno.h>

#include "report.h"

int
report_pprof(const char *path, const struct jt_snapshot *s)
{
	(void)path;
	(void)s;
	errno = ENOSYS;
	return -1;
}
