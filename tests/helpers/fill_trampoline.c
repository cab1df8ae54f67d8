// SPDX-License-Identifier: Apache-2.0
/* cerberus-fill-trampoline FUNCTION PIN_DIR: attaches fmod_ret programs that
 * do nothing to the kernel function until the kernel refuses one more (its
 * per-function limit of trampoline programs), pinning each link in PIN_DIR,
 * so that tests can see what the runtime does when another tool has taken
 * every slot. Prints "attached=N errno=E (NAME)". */
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: cerberus-fill-trampoline FUNCTION PIN_DIR\n");
        return 2;
    }
    struct btf *kernel = btf__load_vmlinux_btf();
    int id = kernel ? btf__find_by_name_kind(kernel, argv[1], BTF_KIND_FUNC) : -1;
    if (id < 0) {
        fprintf(stderr, "%s: not in the kernel's BTF\n", argv[1]);
        return 1;
    }
    const struct bpf_insn return_zero[] = {
        {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0},
        {.code = BPF_JMP | BPF_EXIT},
    };
    LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_MODIFY_RETURN, .attach_btf_id = id);
    int attached = 0, err = 0;
    for (;;) {
        int prog = bpf_prog_load(BPF_PROG_TYPE_TRACING, "fill", "GPL", return_zero, 2, &opts);
        if (prog < 0) {
            err = errno;
            break;
        }
        int link = bpf_raw_tracepoint_open(NULL, prog);
        if (link < 0) {
            err = errno;
            break;
        }
        char pin[4096];
        snprintf(pin, sizeof(pin), "%s/link_%d", argv[2], attached);
        if (bpf_obj_pin(link, pin) < 0) {
            err = errno;
            break;
        }
        close(link);
        close(prog);
        attached++;
    }
    printf("attached=%d errno=%d (%s)\n", attached, err, strerror(err));
    return attached > 0 && err == E2BIG ? 0 : 1;
}
