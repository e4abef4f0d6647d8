/* Why yamba's mem.latency.sequential and lmbench's "Main mem" (lat_mem_rd
 * SIZE 128, its largest size) differ: a dependent chase through ascending
 * addresses STRIDE bytes apart, timed with 1 to 100 loads a loop turn.
 * At a 128-byte stride the figure depends on the loop's code: a
 * prefetcher that learns each load instruction's own stride follows a
 * stride of (loads a turn × 128) bytes only while it is short; lmbench's
 * loop runs 100 a turn. At a 64-byte stride the stream prefetcher alone
 * keeps up, whatever the loop.
 *
 *   gcc -O2 -o /tmp/chase-shape-witness bench/chase-shape-witness.c
 *   taskset -c 1 /tmp/chase-shape-witness [MiB (256)] [stride (128)]
 *
 * Base pages (MADV_NOHUGEPAGE), as both tools; three rounds, each the
 * whole chain once at every shape, ns per load.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e9+t.tv_nsec;}
#define ONE p=(char**)*p;
#define U(k) static double u##k(char*a,size_t n){char**p=(char**)a;double t0=now();for(size_t i=0;i<n;i+=k){BODY##k} double d=(now()-t0)/n; if(!p)puts(""); return d;}
#define BODY1 ONE
#define BODY2 ONE ONE
#define BODY4 BODY2 BODY2
#define BODY8 BODY4 BODY4
#define BODY16 BODY8 BODY8
#define BODY32 BODY16 BODY16
#define BODY64 BODY32 BODY32
#define BODY100 BODY64 BODY32 ONE ONE ONE ONE
U(1) U(2) U(4) U(8) U(16) U(32) U(64) U(100)
int main(int argc, char **argv) {
  size_t mb=argc>1?atol(argv[1]):256, stride=argc>2?atol(argv[2]):128, len=mb<<20, n=len/stride, i;
  char*a=mmap(0,len,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS,-1,0); madvise(a,len,MADV_NOHUGEPAGE);
  for(i=stride;i<len;i+=stride) *(char**)&a[i-stride]=&a[i];
  *(char**)&a[i-stride]=&a[0];
  for(int r=0;r<3;r++) printf("%zu MiB stride %zu, ns/load by loads per turn: 1 %.2f  2 %.2f  4 %.2f  8 %.2f  16 %.2f  32 %.2f  64 %.2f  100 %.2f\n",mb,stride,u1(a,n),u2(a,n),u4(a,n),u8(a,n),u16(a,n),u32(a,n),u64(a,n),u100(a,n));
}
