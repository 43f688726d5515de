/* machine.c - x86-64: the names of its ELF machine, x86-64 itself and the 32-bit x32 ABI. */
#include <elf.h>

#include "arch.h"
#include "machine.h"

const char *
arch_elf_machine_name(unsigned elf_class)
{
	return elf_class == ELFCLASS32 ? "x32" : ARCH_NAME;
}
