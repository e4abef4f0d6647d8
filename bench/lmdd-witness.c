/* Why lmbench's `lmdd of=FILE move=8m bs=16k notrunc=1 [fsync=1]` and
 * yamba's `fs.write.seq.buffered[.fsync]` differ (issue 26: on an Intel
 * Xeon guest yamba reported 1.27-1.53 x lmdd's MB/s without fsync and
 * 1.31-1.46 x with it over three rounds of bench/lmbench-list.sh; 0.91 and
 * 1.05 in one earlier round, within 5% on AMD).
 *
 *   gcc -O2 -o /tmp/lmdd-witness bench/lmdd-witness.c
 *   taskset -c 1 /tmp/lmdd-witness DIR      (DIR on the filesystem to test)
 *
 * Both overwrite a cached 8 MiB file in 16 KiB writes from a zeroed,
 * page-aligned buffer, open not timed, fsync (when asked) timed with the
 * pass. They differ in how many passes one process makes:
 *   lmdd:  one pass in a process just exec'd (lmbench's runner, and the
 *          list, run lmdd again for each value);
 *   yamba: many passes in one long-lived process, each timed, the median
 *          reported.
 * Shapes: a fresh process (exec of this program) making PASSES passes,
 * each timed, and this process making passes all along, the two
 * interleaved round by round. Rows (name, a tab, the value; MB/s are
 * 10^6 bytes a second, as lmdd prints), each the median over ROUNDS rounds:
 * the fresh process's first pass (lmdd's number), its second, the median
 * of its last PASSES-2, and the long-lived process's median (yamba's) -
 * for a file made once 1 MiB at a time, and for one made anew so before
 * each round (as the list's dd makes lmdd's, not synced: its first fsync
 * allocates its blocks). Then a pass without fsync over clean pages
 * against one over dirty pages; fsync passes back to back against passes
 * each after 300 ms idle, with the device's own time per write request
 * over each (its sysfs stat); and last the first rows again for a file
 * whose page cache was built 4 KiB at a time (small folios).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SIZE (8 << 20)
#define BLOCK (16 << 10)
#define PASSES 8
#define ROUNDS 15

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }
static double median(double *v, int n) { qsort(v, n, sizeof *v, cmp); return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2; }

/* One pass as lmdd makes it: write(2) from the file's start, then fsync. */
static double pass(int fd, char *buf, int sync) {
    double t0 = now();
    if (lseek(fd, 0, SEEK_SET) != 0) { perror("lseek"); exit(1); }
    for (int off = 0; off < SIZE; off += BLOCK)
        if (write(fd, buf, BLOCK) != BLOCK) { perror("write"); exit(1); }
    if (sync && fsync(fd) != 0) { perror("fsync"); exit(1); }
    return SIZE / ((now() - t0) / 1e9) / 1e6;
}

static char *zeroed_buffer(void) {
    char *buf = aligned_alloc(4096, BLOCK);
    if (!buf) { perror("aligned_alloc"); exit(1); }
    memset(buf, 0, BLOCK);
    return buf;
}

/* Writes PATH anew in CHUNK-byte writes and reads it back: its page cache
 * is then made of folios no larger than CHUNK allows. */
static void make_file(const char *path, int chunk, int sync) {
    char *buf = malloc(chunk);
    memset(buf, 1, chunk);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) { perror(path); exit(1); }
    for (int off = 0; off < SIZE; off += chunk)
        if (write(fd, buf, chunk) != chunk) { perror("write"); exit(1); }
    if (sync) fsync(fd);
    close(fd);
    free(buf);
}

/* The fresh process: PASSES passes, their MB/s on stdout. */
static int child(const char *path, int sync) {
    char *buf = zeroed_buffer();
    int fd = open(path, O_WRONLY);
    if (fd < 0) { perror(path); return 1; }
    for (int p = 0; p < PASSES; p++) printf("%f\n", pass(fd, buf, sync));
    return 0;
}

/* Runs this program as a fresh process; its PASSES values into v. */
static void fresh(const char *self, const char *path, int sync, double *v) {
    int fds[2];
    if (pipe(fds)) { perror("pipe"); exit(1); }
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        execl(self, self, "--pass", path, sync ? "1" : "0", (char *)0);
        perror("exec");
        _exit(1);
    }
    close(fds[1]);
    FILE *in = fdopen(fds[0], "r");
    for (int p = 0; p < PASSES; p++)
        if (fscanf(in, "%lf", &v[p]) != 1) { fprintf(stderr, "child gave no value\n"); exit(1); }
    fclose(in);
    waitpid(pid, 0, 0);
}

/* Rows of one file: made once (before the rows) or, when NEW_EACH_ROUND,
 * written anew before every round as the list's dd writes it (1 MiB at a
 * time, not synced): a new file's first fsyncs allocate its blocks. */
static void rows(const char *self, const char *path, const char *what, int new_each_round) {
    for (int sync = 0; sync <= 1; sync++) {
        double first[ROUNDS], second[ROUNDS], later[ROUNDS], warm[ROUNDS];
        char *buf = zeroed_buffer();
        int fd = open(path, O_WRONLY);
        if (fd < 0) { perror(path); exit(1); }
        pass(fd, buf, sync); /* this process's own first pass, not kept */
        for (int r = 0; r < ROUNDS; r++) {
            double v[PASSES], w[PASSES];
            if (new_each_round) {
                close(fd);
                make_file(path, 1 << 20, 0);
                fd = open(path, O_WRONLY);
                if (fd < 0) { perror(path); exit(1); }
            }
            fresh(self, path, sync, v);
            first[r] = v[0];
            second[r] = v[1];
            later[r] = median(v + 2, PASSES - 2);
            for (int p = 0; p < PASSES; p++) w[p] = pass(fd, buf, sync);
            warm[r] = median(w, PASSES);
        }
        close(fd);
        free(buf);
        const char *how = sync ? "fsync" : "no fsync";
        printf("lmdd %s, %s: fresh process, pass 1 (lmdd's)\t%.0f MB/s\n", what, how, median(first, ROUNDS));
        printf("lmdd %s, %s: fresh process, pass 2\t%.0f MB/s\n", what, how, median(second, ROUNDS));
        printf("lmdd %s, %s: fresh process, passes 3-%d\t%.0f MB/s\n", what, how, PASSES, median(later, ROUNDS));
        printf("lmdd %s, %s: long-lived process (yamba's)\t%.0f MB/s\n", what, how, median(warm, ROUNDS));
    }
}

/* A pass without fsync over clean pages (the file synced, untimed, just
 * before: lmdd's runs without fsync follow its runs with it in the list)
 * against one over the dirty pages the pass before left (a long-lived
 * process's steady state), alternating. */
static void clean_vs_dirty(const char *path) {
    double clean[ROUNDS * 4], dirty[ROUNDS * 4];
    char *buf = zeroed_buffer();
    int fd = open(path, O_WRONLY);
    if (fd < 0) { perror(path); exit(1); }
    for (int r = 0; r < ROUNDS * 4; r++) {
        if (fsync(fd) != 0) { perror("fsync"); exit(1); }
        clean[r] = pass(fd, buf, 0);
        dirty[r] = pass(fd, buf, 0);
    }
    close(fd);
    free(buf);
    printf("lmdd no fsync, one process: a pass over clean pages\t%.0f MB/s\n", median(clean, ROUNDS * 4));
    printf("lmdd no fsync, one process: a pass over dirty pages\t%.0f MB/s\n", median(dirty, ROUNDS * 4));
}

/* A block device's writes completed and the ms spent on them (fields 5
 * and 8 of its sysfs stat). */
static int device_writes(const char *dev_stat, double *writes, double *ms) {
    FILE *f = fopen(dev_stat, "r");
    if (!f) return 0;
    double v[8];
    int ok = fscanf(f, "%lf %lf %lf %lf %lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) == 8;
    fclose(f);
    *writes = v[4];
    *ms = v[7];
    return ok;
}

/* fsync passes back to back (a streak, as a long-lived process makes
 * them) against each after SPACED_MS idle (as lmdd's runs meet the device
 * between other work), alternating streak and spaced sets; with the
 * device's own time per write request over each. */
#define STREAK 8
#define SPACED_MS 300
static void streak_vs_spaced(const char *path, const char *dev_stat) {
    double v[2][ROUNDS / 3 * STREAK], w[2] = {0}, ms[2] = {0};
    int n = 0;
    char *buf = zeroed_buffer();
    int fd = open(path, O_WRONLY);
    if (fd < 0) { perror(path); exit(1); }
    for (int r = 0; r < ROUNDS / 3; r++)
        for (int spaced = 0; spaced <= 1; spaced++) {
            double w0, m0, w1, m1;
            usleep(SPACED_MS * 1000);
            int have = device_writes(dev_stat, &w0, &m0);
            for (int p = 0; p < STREAK; p++) {
                if (spaced && p) usleep(SPACED_MS * 1000);
                v[spaced][r * STREAK + p] = pass(fd, buf, 1);
            }
            if (have && device_writes(dev_stat, &w1, &m1)) { w[spaced] += w1 - w0; ms[spaced] += m1 - m0; }
            n = (r + 1) * STREAK;
        }
    close(fd);
    free(buf);
    for (int spaced = 0; spaced <= 1; spaced++) {
        const char *how = spaced ? "each pass after 300 ms idle" : "passes back to back";
        printf("lmdd fsync, %s\t%.0f MB/s\n", how, median(v[spaced], n));
        if (w[spaced] > 0) printf("lmdd fsync, %s: the device's time per write request\t%.2f ms\n", how, ms[spaced] / w[spaced]);
    }
}

int main(int argc, char **argv) {
    if (argc == 4 && !strcmp(argv[1], "--pass")) return child(argv[2], atoi(argv[3]));
    if (argc != 2) { fprintf(stderr, "usage: %s DIR\n", argv[0]); return 2; }
    char path[4096];
    snprintf(path, sizeof path, "%s/lmdd-witness.dat", argv[1]);
    make_file(path, 1 << 20, 1);
    rows(argv[0], path, "file made once", 0);
    rows(argv[0], path, "file made anew each round", 1);
    clean_vs_dirty(path);
    struct stat st;
    char dev_stat[256] = "";
    if (stat(argv[1], &st) == 0)
        snprintf(dev_stat, sizeof dev_stat, "/sys/dev/block/%u:%u/stat", major(st.st_dev), minor(st.st_dev));
    streak_vs_spaced(path, dev_stat);
    make_file(path, 4096, 1);
    rows(argv[0], path, "file made once 4 KiB at a time", 0);
    unlink(path);
    return 0;
}
