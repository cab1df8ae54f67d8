// SPDX-License-Identifier: Apache-2.0
/* cerberus-dynprobe: a dynamically linked program for test containers, so
 * tests can run the dynamic loader (ld.so PROGRAM) on a file of their choice. */
#include <stdio.h>

int main(void)
{
    printf("dynamic ok\n");
    return 0;
}
