// SPDX-License-Identifier: Apache-2.0
/* cerberus-verifier-stats OBJECT [PROGRAM...]: loads each program of a BPF
 * object file on its own (the object opened anew each time, every other
 * program left out) and prints, per program, what the running kernel's
 * verifier said of it: "NAME ok|errno=E processed=N states=S" plus the last
 * lines of the log when the load failed. The verifier stops a program at a
 * million processed instructions with E2BIG: a kernel whose verifier explores
 * a program further than an older one did shows it here, program by program.
 * Programs the kernel cannot attach (a missing function, another prototype)
 * fail as they would in the runtime. Exits 1 when any load failed. */
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int quiet(enum libbpf_print_level level, const char *format, va_list args)
{
    (void)level, (void)format, (void)args;
    return 0;
}

/* The verifier's closing "processed N insns (limit 1000000) ... total_states S ..." */
static void print_stats(const char *log, long *processed, long *states)
{
    const char *at = strstr(log, "processed ");
    *processed = at ? strtol(at + strlen("processed "), NULL, 10) : -1;
    at = strstr(log, "total_states ");
    *states = at ? strtol(at + strlen("total_states "), NULL, 10) : -1;
}

static int load_one(const char *path, const char *name)
{
    static char log[1 << 16];
    struct bpf_object *object = bpf_object__open_file(path, NULL);
    if (!object) {
        fprintf(stderr, "%s: cannot open: %s\n", path, strerror(errno));
        return -1;
    }
    struct bpf_program *program;
    bpf_object__for_each_program(program, object)
    {
        int mine = !strcmp(bpf_program__name(program), name);
        bpf_program__set_autoload(program, mine);
        if (mine) {
            log[0] = 0;
            bpf_program__set_log_buf(program, log, sizeof log);
            bpf_program__set_log_level(program, 4); /* BPF_LOG_STATS */
        }
    }
    int err = bpf_object__load(object);
    long processed, states;
    print_stats(log, &processed, &states);
    if (err) {
        printf("%s errno=%d (%s) processed=%ld states=%ld\n", name, -err, strerror(-err), processed, states);
        /* the verifier's reason: the last lines before its statistics */
        size_t length = strlen(log);
        const char *end = strstr(log, "processed ");
        const char *from = end ? end : log + length;
        for (int lines = 0; from > log && lines < 4; --from)
            lines += from[-1] == '\n';
        printf("%.*s", (int)((end ? end : log + length) - from), from);
    }
    else
        printf("%s ok processed=%ld states=%ld\n", name, processed, states);
    fflush(stdout);
    bpf_object__close(object);
    return err ? -1 : 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: cerberus-verifier-stats OBJECT [PROGRAM...]\n");
        return 2;
    }
    libbpf_set_print(quiet);
    int failed = 0;
    if (argc > 2) {
        for (int i = 2; i < argc; ++i)
            failed |= load_one(argv[1], argv[i]) != 0;
        return failed;
    }
    struct bpf_object *object = bpf_object__open_file(argv[1], NULL);
    if (!object) {
        fprintf(stderr, "%s: cannot open: %s\n", argv[1], strerror(errno));
        return 1;
    }
    struct bpf_program *program;
    bpf_object__for_each_program(program, object) failed |= load_one(argv[1], bpf_program__name(program)) != 0;
    bpf_object__close(object);
    return failed;
}
