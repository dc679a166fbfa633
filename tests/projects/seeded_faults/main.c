/* main.c: the program, using only the library's API. */
#include <stddef.h>
#include <stdio.h>

int faults_sum(const int *v, size_t n, int seeded);

int main(int argc, char **argv)
{
    int v[100], i;
    (void)argv;
    for (i = 0; i < 100; i++)
        v[i] = i;
    printf("%d\n", faults_sum(v, 100, argc > 1));
    return faults_sum(v, 100, argc > 1) == 9900 ? 0 : 1;
}
