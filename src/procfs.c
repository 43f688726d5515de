/* procfs.c - reads single facts about a process or thread from /proc. */
#include <stdio.h>
#include <string.h>

#include "procfs.h"

int
procfs_status_field(pid_t pid, const char *key, char *buf, size_t size)
{
	char path[64], line[512];
	size_t klen = strlen(key);
	FILE *f;
	int ret = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (!(f = fopen(path, "re")))
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) || line[klen] != ':')
			continue;
		snprintf(buf, size, "%s", line + klen + 1 + strspn(line + klen + 1, " \t"));
		buf[strcspn(buf, "\n")] = 0;
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}
