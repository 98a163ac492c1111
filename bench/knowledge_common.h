/*
 * knowledge_common — what the two knowledge benches share (included by
 * bench/knowledge_bench.c and bench/kb_bench.c only): clustered data, clocks, settings
 * from the environment, memory figures, percentiles, and numpy's brute
 * force run as a peer (bench/knowledge_numpy.py) on the files a bench
 * wrote.
 */
#ifndef SL_BENCH_KNOWLEDGE_COMMON_H
#define SL_BENCH_KNOWLEDGE_COMMON_H

#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define PY "/usr/bin/python3"
#define OPENBLAS_DIR "/usr/lib/x86_64-linux-gnu/openblas-pthread"

/* ---- clustered data: a xorshift stream (each bench seeds rng_state
 * first thing), Gaussians, unit vectors, points near a centre ---- */

static uint64_t rng_state = 1;

static inline uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return rng_state = x;
}

static inline double uniform(void)
{
    return ((rnd() >> 11) + 0.5) / 9007199254740992.0;
}

/* Two Gaussians per call (Box-Muller). */
static inline void gauss2(double *a, double *b)
{
    double r = sqrt(-2 * log(uniform())), t = 6.283185307179586 * uniform();
    *a = r * cos(t), *b = r * sin(t);
}

static inline double gauss(void)
{
    double a, b;
    gauss2(&a, &b);
    return a;
}

static inline void unit(float *v, size_t d)
{
    double ss = 0;
    for (size_t i = 0; i < d; i++)
        ss += (double)v[i] * v[i];
    double inv = 1 / sqrt(ss);
    for (size_t i = 0; i < d; i++)
        v[i] = (float)(v[i] * inv);
}

/* centre + noise of length `noise` (against the unit centre), normalised */
static inline void point(float *v, const float *centre, size_t d, double noise)
{
    double s = noise / sqrt((double)d);
    for (size_t i = 0; i < d; i += 2) {
        double a, b;
        gauss2(&a, &b);
        v[i] = (float)(centre[i] + s * a);
        if (i + 1 < d)
            v[i + 1] = (float)(centre[i + 1] + s * b);
    }
    unit(v, d);
}

static inline double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static inline long env_long(const char *name, long def)
{
    const char *s = getenv(name);
    return s && *s ? strtol(s, NULL, 10) : def;
}

static inline double env_double(const char *name, double def)
{
    const char *s = getenv(name);
    return s && *s ? strtod(s, NULL) : def;
}

static inline long status_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    size_t kl = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, key, kl))
            kb = strtol(line + kl, NULL, 10);
    if (f)
        fclose(f);
    return kb;
}

static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static inline double pct(double *v, size_t n, double p)
{
    qsort(v, n, sizeof *v, cmp_double);
    size_t i = (size_t)(p * (double)(n - 1) + 0.5);
    return v[i];
}

static inline int write_file(const char *path, const void *p, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return -1;
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w <= 0) {
            close(fd);
            return -1;
        }
        c += w, n -= (size_t)w;
    }
    return close(fd);
}

/* Runs bench/knowledge_numpy.py over the files in dir; its lines
 * "numpy CASE p50_ms p95_ms" are read back, the BLAS it used shown. */
static inline int run_numpy(const char *dir, size_t n, size_t d, size_t q, double p50[2], double p95[2])
{
    char out[512], ns[32], ds[32], qs[32];
    snprintf(out, sizeof out, "%s/numpy.out", dir);
    snprintf(ns, sizeof ns, "%zu", n), snprintf(ds, sizeof ds, "%zu", d);
    snprintf(qs, sizeof qs, "%zu", q);
    /* numpy's environment without the OpenBLAS overrides the issue names */
    size_t ne = 0;
    while (environ[ne])
        ne++;
    char **env = calloc(ne + 2, sizeof *env);
    size_t k = 0;
    for (size_t i = 0; i < ne; i++)
        if (strncmp(environ[i], "OPENBLAS_CORETYPE=", 18) && strncmp(environ[i], "OPENBLAS_L2_SIZE=", 17) &&
            strncmp(environ[i], "LD_LIBRARY_PATH=", 16))
            env[k++] = environ[i];
    /* Debian's numpy calls whichever libblas.so.3 the system's alternative
     * names, netlib's reference BLAS unless OpenBLAS was chosen; when
     * OpenBLAS is installed it is the peer, whatever the alternative says. */
    char lib[] = "LD_LIBRARY_PATH=" OPENBLAS_DIR;
    if (!access(OPENBLAS_DIR "/libblas.so.3", R_OK))
        env[k++] = lib;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    char *argv[] = {PY, "bench/knowledge_numpy.py", (char *)dir, ns, ds, qs, NULL};
    pid_t pid;
    int rc = posix_spawn(&pid, PY, &fa, NULL, argv, env);
    posix_spawn_file_actions_destroy(&fa);
    free(env);
    int st = 0;
    if (rc || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
        return -1;
    FILE *f = fopen(out, "r");
    char line[256];
    int got = 0;
    while (f && fgets(line, sizeof line, f)) {
        char name[32];
        double a, b;
        if (!strncmp(line, "numpy ", 6) && strstr(line, " blas "))
            printf("  %s", line);
        if (sscanf(line, "numpy %31s %lf %lf", name, &a, &b) == 3) {
            int c = !strcmp(name, "filter30") ? 0 : !strcmp(name, "filter2") ? 1 : -1;
            if (c >= 0)
                p50[c] = a, p95[c] = b, got++;
        }
    }
    if (f)
        fclose(f);
    return got == 2 ? 0 : -1;
}

#endif
