/* report_csv.c - STUB: the --csv writer, replaced by its own work. */
#include <errno.h>

#include "report.h"

int
report_csv(const char *path, const struct jt_snapshot *s)
{
	(void)path;
	(void)s;
	errno = ENOSYS;
	return -1;
}
