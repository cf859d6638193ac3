/* spawn.c - fp_bench_spawn: runs one command and reports its own wall time, CPU time and peak RSS,
 * for bench/bench.py (never part of the product build or of make test).
 *
 *   fp_bench_spawn OUT_FILE COMMAND [ARG...]
 *
 * Forks, execs COMMAND (stdin, stdout and stderr inherited), waits for it with wait4 and writes
 * one line to OUT_FILE: "wall_us=W cpu_us=C maxrss_kib=R status=S", where W runs from just before
 * fork to the end of wait4, C is the child's user + system time and R its peak resident set
 * (ru_maxrss). A small process forks the command, so the command's peak RSS does not inherit the
 * Python driver's (Linux keeps the high-water mark across exec), and unlike /usr/bin/time nothing
 * of this process's own start-up lands in the numbers. S is the exit status, or 128 + the signal.
 * Exit status: the command's; 2 when it cannot be started or OUT_FILE written.
 */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s OUT_FILE COMMAND [ARG...]\n", argv[0]);
        return 2;
    }
    double t0 = now_us();
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 2;
    }
    if (pid == 0) {
        execvp(argv[2], argv + 2);
        perror(argv[2]);
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) != pid) {
        perror("wait4");
        return 2;
    }
    double wall = now_us() - t0;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    FILE *f = fopen(argv[1], "w");
    if (!f)
        return 2;
    double cpu = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 + ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
    int ok = fprintf(f, "wall_us=%.1f cpu_us=%.1f maxrss_kib=%ld status=%d\n", wall, cpu, ru.ru_maxrss, code) > 0;
    if (fclose(f) != 0 || !ok)
        return 2;
    return code;
}
