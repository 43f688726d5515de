/* up_bpf_obj.S - links the uprobe source's BPF object (clang's build of src/uprobe/bpf/uprobe.bpf.c) into jmptrace whole (.incbin). */
	.section .rodata
	.balign 8
	.global up_bpf_obj
	.type up_bpf_obj, @object
up_bpf_obj:
	.incbin UP_BPF_OBJ
	.global up_bpf_obj_end
up_bpf_obj_end:
	.size up_bpf_obj, . - up_bpf_obj
	.section .note.GNU-stack, "", @progbits
