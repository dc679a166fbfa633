#define _XOPEN_SOURCE 700
/* A host program linked with two libraries that each bundle ccopt's run-time (different tables), which
 * afterwards runs a signal handler on an 8 KiB alternate signal stack, as many programs do. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

int one_check(char *out, size_t len);
int two_check(char *out, size_t len);

static volatile sig_atomic_t handled;

static void on_signal(int sig)
{
    (void)sig;
    handled = 1;
}

int main(void)
{
    static char stack[8192];
    char text[256];
    stack_t ss;
    struct sigaction sa;
    int rc = one_check(text, sizeof text);
    printf("one %d %s\n", rc, text);
    rc = two_check(text, sizeof text);
    printf("two %d %s\n", rc, text);
    ss.ss_sp = stack;
    ss.ss_size = sizeof stack;
    ss.ss_flags = 0;
    if (sigaltstack(&ss, NULL) != 0) {
        perror("sigaltstack(8 KiB)");
        return 1;
    }
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    raise(SIGUSR1);
    printf("sigaltstack %s\n", handled ? "ok" : "not run");
    return 0;
}
