/* yamba's P'' for cpu.syscall.getppid as rustc compiled it at unroll 1
 * (objdump of yamba_core::unroll::looped): one getppid, then its check (a
 * count, the result against the expected parent, a mismatch count, all
 * in memory: w[0], w[1], w[2]) and the turn count stored and compared
 * through memory (black_box). Position-independent, so it can be copied:
 * its bytes run from loop1 to loop1_end. Shared by
 * bench/placement-settle.c, bench/slow-state.c and bench/trust-at-speed.sh
 * part 4. */
__attribute__((noinline, aligned(64))) static void loop1(long n, long *w) {
    long g;
    __asm__ volatile(
        "1: mov $110, %%eax\n syscall\n"
        " incq (%[w])\n xor %%r9d, %%r9d\n cmp 8(%[w]), %%rax\n setne %%r9b\n add %%r9, 16(%[w])\n"
        " mov %[n], %[g]\n dec %[n]\n cmpq $1, %[g]\n jne 1b"
        : [n] "+r"(n), [g] "=m"(g) : [w] "r"(w) : "rax", "rcx", "r9", "r11", "memory", "cc");
}
__attribute__((noinline)) static void loop1_end(void) {}
