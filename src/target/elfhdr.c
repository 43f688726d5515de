/* elfhdr.c - tells from a program's ELF header whether jmptrace can trace it, and names what it is. */
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "arch.h"
#include "machine.h"
#include "elfhdr.h"

const char elfhdr_our_arch[] = ARCH_NAME;

/* The traced machine is named by arch_elf_machine_name, so it has no case here. */
static const char *
elfhdr_machine_name(unsigned class, unsigned m)
{
	if (m == ARCH_ELF_MACHINE)
		return arch_elf_machine_name(class);
	switch (m) {
	case EM_386: return "i386";
	case EM_ARM: return "ARM";
	case EM_AARCH64: return "AArch64";
	case EM_RISCV: return "RISC-V";
	case EM_PPC: return "PowerPC";
	case EM_PPC64: return "PowerPC64";
	case EM_S390: return "s390";
	case EM_MIPS: return "MIPS";
	case EM_LOONGARCH: return "LoongArch";
	case EM_SPARCV9: return "SPARC";
	default: return "another architecture";
	}
}

enum elfhdr_kind
elfhdr_classify(const unsigned char *h, size_t n, char *what, size_t size)
{
	unsigned class, machine;

	/* e_machine is a 16-bit field at the same offset (18) in both classes. */
	if (n < 20 || memcmp(h, ELFMAG, SELFMAG) != 0)
		return ELFHDR_NOT_ELF;
	class = h[EI_CLASS];
	machine = h[EI_DATA] == ELFDATA2MSB ? (unsigned)h[18] << 8 | h[19] : h[18] | (unsigned)h[19] << 8;
	if (class == ARCH_ELF_CLASS && h[EI_DATA] == ARCH_ELF_DATA && machine == ARCH_ELF_MACHINE)
		return ELFHDR_OURS;
	snprintf(what, size, "a %s (%s) program",
		 class == ELFCLASS32 ? "32-bit" : class == ELFCLASS64 ? "64-bit" : "non-standard",
		 elfhdr_machine_name(class, machine));
	return ELFHDR_OTHER_ARCH;
}

int
elfhdr_classify_file(const char *path, char *what, size_t size)
{
	unsigned char h[EI_NIDENT + 16];
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, h, sizeof(h));
	close(fd);
	if (n < 0)
		return -1;
	return elfhdr_classify(h, (size_t)n, what, size);
}
