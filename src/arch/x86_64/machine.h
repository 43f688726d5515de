/* machine.h - names the traced architecture's ELF machine in each ELF class (the contract every src/arch/<arch>/machine.h fills). */
#ifndef JT_MACHINE_H
#define JT_MACHINE_H

/*
 * The name of a program whose e_machine is ARCH_ELF_MACHINE and whose
 * class is elf_class (ELFCLASS32 or ELFCLASS64), for messages about
 * programs jmptrace cannot trace: an ABI of the same machine in another
 * word size has a name of its own. Returns static storage.
 */
const char *arch_elf_machine_name(unsigned elf_class);

#endif
