/* launch.c - checks the program, forks it, and seizes it before its first instruction runs. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "elfhdr.h"
#include "launch.h"
#include "util.h"


/* Non-zero when path names an executable regular file; errno says why not otherwise. */
static int
launch_is_program(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return 0;
	if (!S_ISREG(st.st_mode)) {
		errno = S_ISDIR(st.st_mode) ? EISDIR : EACCES;
		return 0;
	}
	return access(path, X_OK) == 0;
}

/*
 * Finds name the way execvp would: a name with a slash as it is, any other
 * in $PATH, where a directory or a file we may not execute is passed over
 * (/usr/bin/X11 is a directory). Returns 0 and fills path, or -1 with errno.
 */
static int
launch_find(const char *name, char *path, size_t size)
{
	const char *dirs = getenv("PATH");
	int err = ENOENT;

	if (strchr(name, '/')) {
		snprintf(path, size, "%s", name);
		return access(path, F_OK) == 0 ? 0 : -1;
	}
	if (!dirs)
		dirs = "/usr/local/bin:/usr/bin:/bin";
	while (*dirs) {
		const char *end = strchrnul(dirs, ':');
		int len = (int)(end - dirs);

		snprintf(path, size, "%.*s/%s", len ? len : 1, len ? dirs : ".", name);
		if (launch_is_program(path))
			return 0;
		if (errno == EACCES)
			err = EACCES;
		dirs = *end ? end + 1 : end;
	}
	errno = err;
	return -1;
}

/* Returns 0 when path is an ELF program we can trace, 1 for a script, or -1 after saying why. */
static int
launch_check(const char *name, const char *path)
{
	unsigned char h[EI_NIDENT + 16];
	char what[64];
	struct stat st;
	ssize_t n;
	int fd;

	if (!launch_is_program(path)) {
		if (errno == EACCES && stat(path, &st) == 0 && !S_ISREG(st.st_mode))
			error_msg("cannot run '%s': not a regular file", name);
		else
			perror_msg("cannot run '%s'", name);
		return -1;
	}
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		perror_msg("cannot read '%s'", name);
		return -1;
	}
	n = read(fd, h, sizeof(h));
	close(fd);
	if (n >= 2 && h[0] == '#' && h[1] == '!')
		return 1;	/* the kernel runs its interpreter, which we then trace */
	switch (elfhdr_classify(h, n > 0 ? (size_t)n : 0, what, sizeof(what))) {
	case ELFHDR_OURS:
		return 0;
	case ELFHDR_NOT_ELF:
		error_msg("cannot trace '%s': not an ELF executable", name);
		return -1;
	default:
		error_msg("cannot trace '%s': it is %s; jmptrace traces %s programs only", name, what,
			  elfhdr_our_arch);
		return -1;
	}
}

pid_t
launch_program(char *const argv[], int *script)
{
	char path[PATH_MAX];
	int status;
	pid_t pid;

	if (!*argv[0]) {
		/* $PATH would turn it into a directory, "/usr/bin/". */
		error_msg("cannot run '': empty program name");
		return -1;
	}
	if (launch_find(argv[0], path, sizeof(path)) < 0) {
		if (errno == ENOENT && !strchr(argv[0], '/'))
			error_msg("cannot run '%s': no such program in $PATH", argv[0]);
		else
			perror_msg("cannot run '%s'", argv[0]);
		return -1;
	}
	if ((*script = launch_check(argv[0], path)) < 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		perror_msg("fork");
		return -1;
	}
	if (pid == 0) {
		/* Wait for the tracer to seize us, then become the program. */
		raise(SIGSTOP);
		execv(path, argv);
		fprintf(stderr, "jmptrace: cannot execute '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &status, WSTOPPED) < 0 || !WIFSTOPPED(status)) {
		perror_msg("waiting for the child to stop");
		kill(pid, SIGKILL);
		return -1;
	}
	if (ptrace(PTRACE_SEIZE, pid, 0L, (long)LAUNCH_PTRACE_OPTIONS) < 0) {
		perror_msg("cannot trace the program (ptrace PTRACE_SEIZE)");
		kill(pid, SIGKILL);
		return -1;
	}
	kill(pid, SIGCONT);
	return pid;
}
