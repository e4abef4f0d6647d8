/* What a callee across a 64-byte line costs a chained call (why
 * `cpu.call`'s x86-64 callees each start a line: adapter::callees).
 *
 *   gcc -O2 -o /tmp/call-line-crossing bench/call-line-crossing.c
 *   taskset -c 1 /tmp/call-line-crossing
 *
 * yamba_call5's body (lea, four adds, ret: 17 bytes) placed 0, 16, 32, 48
 * and 56 bytes into a 64-byte line, called in a chain as cpu.call.5 calls
 * it (every argument the previous result), through a register (one
 * target, always predicted; yamba calls directly). At 48 and 56 the body crosses
 * into the next line. ns per call, 2 × 2 000 000 calls, three rounds.
 * On a Golden Cove-class Xeon guest: 1.65-1.85 ns within a line, 2.64-2.76
 * at 48 and 2.39-2.59 at 56 — about 3 cycles a call.
 */
#include <stdint.h>
#include <stdio.h>
#include <time.h>

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }

#define CALLEE(name, pad) \
    __asm__(".text\n.p2align 6\n" pad #name ":\n lea 1(%r8),%rax\n add %rdi,%rax\n add %rsi,%rax\n" \
            " add %rdx,%rax\n add %rcx,%rax\n ret\n");
CALLEE(at0, "")
CALLEE(at16, ".skip 16, 0xcc\n")
CALLEE(at32, ".skip 32, 0xcc\n")
CALLEE(at48, ".skip 48, 0xcc\n")
CALLEE(at56, ".skip 56, 0xcc\n")
extern char at0[], at16[], at32[], at48[], at56[];

#define STEP "call *%[f]\n\tmov %%rax,%%rdi\n\tmov %%rax,%%rsi\n\tmov %%rax,%%rdx\n\tmov %%rax,%%rcx\n\tmov %%rax,%%r8\n\t"
static double chain(void *f) {
    uint64_t x = 1;
    const int n = 2000000;
    double t0 = now();
    for (int i = 0; i < n; i++)
        __asm__ volatile(STEP STEP : "+D"(x) : [f] "r"(f) : "rax", "rsi", "rdx", "rcx", "r8", "r9", "r10", "r11", "memory");
    return (now() - t0) / (2.0 * n);
}

int main(void) {
    void *f[] = {at0, at16, at32, at48, at56};
    const char *name[] = {"0", "16", "32", "48 (crosses)", "56 (crosses)"};
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < 5; i++)
            printf("%s=%.3f%s", name[i], chain(f[i]), i == 4 ? "\n" : "  ");
    return 0;
}
