/* What a chain of calls costs on this core, in core cycles, taken apart:
 * the witness for docs/writing-benchmarks.md ("What cpu.call measures").
 *
 *   gcc -O2 -o /tmp/call-chain bench/call-chain.c && taskset -c 1 /tmp/call-chain
 *
 * Every loop is one dependency chain through %rax, 64 steps a pass, written
 * in asm so the compiler adds nothing. Cycles come from a dependent add
 * chain (1 cycle an add) timed beside each loop. Lines (median of 15):
 *   add        — x += 1: the clock's reference, 1.00 by definition
 *   adds K     — K dependent adds (K = 1..7): what a callee with K
 *                arguments adds to the chain, inline
 *   mem        — load, add, store of one static, the next step loading it:
 *                store-to-load forwarding (cpu.call.0's chain, inline)
 *   stack      — push, load [rsp], pop: the 7th argument's trip, inline
 *   call       — call/ret of a function returning its argument + 1
 *   call+adds 7— call of a function adding 7 serial values
 *   call+stack — push, call of a function loading [rsp+8] and adding 1
 *   call+mem   — call of the load-add-store function (cpu.call.0)
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }

uint64_t counter;

__asm__(
    ".text\n"
    "f_inc: lea 1(%rdi), %rax\n ret\n"
    "f_adds7: lea 1(%rdi), %rax\n add %rdi, %rax\n add %rdi, %rax\n add %rdi, %rax\n"
    "  add %rdi, %rax\n add %rdi, %rax\n add %rdi, %rax\n ret\n"
    "f_stack: mov 8(%rsp), %rax\n add $1, %rax\n ret\n"
    "f_mem: mov counter(%rip), %rax\n add $1, %rax\n mov %rax, counter(%rip)\n ret\n");

#define REP8(s) s s s s s s s s
#define REP64(s) REP8(REP8(s))
#define LOOP(name, body)                                                              \
    static uint64_t name(uint64_t n) {                                               \
        uint64_t x = 1;                                                              \
        for (uint64_t i = 0; i < n; i++)                                             \
            __asm__ volatile(REP64(body) : "+a"(x) : : "rdi", "rsi", "rdx", "rcx",   \
                             "r8", "r9", "r10", "r11", "memory");                   \
        return x;                                                                    \
    }

LOOP(l_add, "add $1, %%rax\n")
LOOP(l_adds1, "add $1, %%rax\n")
LOOP(l_adds2, "add $1, %%rax\n add %%rax, %%rax\n")
LOOP(l_adds4, "add $1, %%rax\n add %%rax, %%rax\n add %%rax, %%rax\n add %%rax, %%rax\n")
LOOP(l_adds7, "add $1, %%rax\n add %%rax, %%rax\n add %%rax, %%rax\n add %%rax, %%rax\n"
              "add %%rax, %%rax\n add %%rax, %%rax\n add %%rax, %%rax\n")
LOOP(l_mem, "mov %%rax, counter(%%rip)\n mov counter(%%rip), %%rax\n add $1, %%rax\n")
LOOP(l_stack, "push %%rax\n mov (%%rsp), %%rax\n add $8, %%rsp\n add $1, %%rax\n")
LOOP(l_call, "mov %%rax, %%rdi\n call f_inc\n")
LOOP(l_call_adds7, "mov %%rax, %%rdi\n call f_adds7\n")
LOOP(l_call_stack, "push %%rax\n call f_stack\n add $8, %%rsp\n")
LOOP(l_call_mem, "call f_mem\n")

static int cmp(const void *a, const void *b) { double x = *(double *)a, y = *(double *)b; return (x > y) - (x < y); }

int main(void) {
    struct { const char *name; uint64_t (*f)(uint64_t); } t[] = {
        {"add", l_add}, {"adds 1", l_adds1}, {"adds 2", l_adds2}, {"adds 4", l_adds4},
        {"adds 7", l_adds7}, {"mem", l_mem}, {"stack", l_stack}, {"call", l_call},
        {"call+adds 7", l_call_adds7}, {"call+stack", l_call_stack}, {"call+mem", l_call_mem},
    };
    const uint64_t n = 20000; /* passes of 64 steps: ~1.3M steps */
    uint64_t sink = 0;
    for (size_t k = 0; k < sizeof t / sizeof t[0]; k++) {
        double c[15];
        for (int r = 0; r < 15; r++) {
            double a = now(); sink += l_add(n); double ref = now() - a;
            a = now(); sink += t[k].f(n); double d = now() - a;
            c[r] = d / ref; /* cycles per step: the add chain is 1 cycle a step */
        }
        qsort(c, 15, sizeof c[0], cmp);
        printf("%-12s %5.2f cycles a step (min %.2f)\n", t[k].name, c[7], c[0]);
    }
    return (int)(sink & 0) ;
}
