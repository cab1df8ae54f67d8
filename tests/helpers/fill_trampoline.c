// SPDX-License-Identifier: Apache-2.0
/* cerberus-fill-trampoline FUNCTION PIN_DIR COUNT: attaches COUNT fmod_ret
 * programs that do nothing to the kernel function, pinning each link in
 * PIN_DIR, so that tests can see what the runtime does when another tool has
 * taken every slot of its trampoline (COUNT: the kernel's limit, on a
 * function nothing else uses). It stops at the first refusal and never tries
 * past COUNT: an attach refused for a full trampoline is what must not happen
 * in the test (see bpf::trampoline_use). Prints "attached=N errno=E (NAME)",
 * and succeeds when all COUNT were attached. */
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int count = argc == 4 ? atoi(argv[3]) : 0;
    if (count <= 0) {
        fprintf(stderr, "usage: cerberus-fill-trampoline FUNCTION PIN_DIR COUNT\n");
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
    while (attached < count) {
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
    return attached == count ? 0 : 1;
}
