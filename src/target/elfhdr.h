/* elfhdr.h - tells from a program's ELF header whether jmptrace can trace it, and names what it is. */
#ifndef JT_ELFHDR_H
#define JT_ELFHDR_H

#include <stddef.h>

enum elfhdr_kind {
	ELFHDR_OURS,		/* a program for the architecture jmptrace traces (arch.h) */
	ELFHDR_NOT_ELF,		/* too short, or no ELF magic */
	ELFHDR_OTHER_ARCH,	/* an ELF for another architecture or word size */
};

/*
 * Classifies the first n bytes of a file. For ELFHDR_OTHER_ARCH, what gets
 * a description such as "a 32-bit (i386) program" or "a 64-bit (AArch64)
 * program"; otherwise it is left alone.
 */
enum elfhdr_kind elfhdr_classify(const unsigned char *h, size_t n, char *what, size_t size);

/*
 * elfhdr_classify on the file at path (e.g. /proc/PID/exe). Returns the kind,
 * or -1 with errno when the file cannot be read.
 */
int elfhdr_classify_file(const char *path, char *what, size_t size);

/* The architecture jmptrace traces, for messages: arch.h's ARCH_NAME. */
extern const char elfhdr_our_arch[];

#endif
