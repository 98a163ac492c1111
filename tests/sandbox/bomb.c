/*
 * bomb — a fork bomb that stops by itself, for tests/cli/sandbox_escape.sh.
 *
 *   bomb SECONDS
 *
 * Every process forks as fast as it can until SECONDS have passed since
 * the first one started, and every child does the same, so the number of
 * processes grows exponentially until something refuses a fork.  At the
 * deadline all of them exit; the first one prints
 *
 *   bomb forks=N failed=M errno=EAGAIN
 *
 * (its own successful and failed forks, and the errno of the last failure)
 * and exits 0.  Without a limit it would fork until the deadline.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 2;
    double end = now() + secs;
    pid_t first = getpid();
    long forks = 0, failed = 0;
    int last = 0;
    while (now() < end) {
        pid_t p = fork();
        if (p == 0) {
            forks = failed = 0;
            continue;
        }
        if (p < 0) {
            failed++;
            last = errno;
            struct timespec ts = {0, 2000000};
            nanosleep(&ts, NULL);
        } else {
            forks++;
        }
        while (waitpid(-1, NULL, WNOHANG) > 0) {
        }
    }
    if (getpid() == first) {
        printf("bomb forks=%ld failed=%ld errno=%s\n", forks, failed,
               last == EAGAIN ? "EAGAIN" : last ? strerror(last) : "none");
        fflush(stdout);
    }
    return 0;
}
