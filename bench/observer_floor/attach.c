// SPDX-License-Identifier: Apache-2.0
// Attaches one program of bpf/bench/empty_exits.bpf.c by name, or a pinned tp_btf
// program (the call observer's), says so on stdout, and holds it until
// killed (bench/observer_floor.sh).
// usage: attach OBJECT PROGRAM | attach --pinned PATH
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int hold(void)
{
    printf("attached\n");
    fflush(stdout);
    pause();
    return 0;
}

int main(int argc, char** argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: attach OBJECT PROGRAM | attach --pinned PATH\n");
        return 2;
    }
    if (strcmp(argv[1], "--pinned") == 0) {
        int program = bpf_obj_get(argv[2]);
        if (program < 0 || bpf_raw_tracepoint_open(NULL, program) < 0) {
            fprintf(stderr, "attach: cannot attach %s\n", argv[2]);
            return 1;
        }
        return hold();
    }
    struct bpf_object* object = bpf_object__open_file(argv[1], NULL);
    if (!object) {
        fprintf(stderr, "attach: cannot open %s\n", argv[1]);
        return 1;
    }
    struct bpf_program* each;
    bpf_object__for_each_program(each, object) // only the one measured: another may not load on this kernel
        bpf_program__set_autoload(each, strcmp(bpf_program__name(each), argv[2]) == 0);
    if (bpf_object__load(object) != 0) {
        fprintf(stderr, "attach: cannot load %s\n", argv[1]);
        return 1;
    }
    struct bpf_program* program = bpf_object__find_program_by_name(object, argv[2]);
    if (!program || !bpf_program__attach(program)) {
        fprintf(stderr, "attach: cannot attach %s\n", argv[2]);
        return 1;
    }
    return hold();
}
