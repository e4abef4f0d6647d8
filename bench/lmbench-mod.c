/* Why lmbench's lat_ops "integer mod" reads ~0.9 ns more than yamba's
 * cpu.ops.i32.mod (4.8 vs 3.9 ns on a Golden Cove core at 3.59 GHz).
 *
 *   gcc -O2 -o /tmp/lmbench-mod bench/lmbench-mod.c && taskset -c 1 /tmp/lmbench-mod
 *
 * lmbench's kernel, `r %= s; r |= s;`, compiles to cltd; idiv; mov; or: its
 * chain runs through the dividend and holds two 1-cycle operations besides
 * the divide, which lmbench does not subtract. yamba's chain is
 * x = (S mod x) + 1: it runs through the divisor, and yamba subtracts the
 * add's measured latency. The rows below take each part apart in one run
 * (minimum of 25 repetitions of 20,000 × 100 operations, ns per operation);
 * the last two rows are par_ops': four independent chains of each form.
 */
#include <stdio.h>
#include <stdint.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e9+t.tv_nsec;}
#define R10(x) x x x x x x x x x x
#define R100(x) R10(R10(x))
#define N 20000
/* lmbench's compiled kernel: cltd; idiv s; mov edx,eax; or s,eax (r %= s; r |= s) */
static double lm(int r, int s){ double t0=now(); for(int i=0;i<N;i++){ __asm__ volatile(R100("cltd\n\tidivl %[s]\n\tmovl %%edx,%%eax\n\torl %[s],%%eax\n\t") :"+a"(r):[s]"r"(s):"edx"); } return (now()-t0)/(N*100.0); }
/* the same chain without the idiv: cltd; mov edx,eax; or s,eax */
static double lm_rest(int r, int s){ double t0=now(); for(int i=0;i<N;i++){ __asm__ volatile(R100("cltd\n\tmovl %%edx,%%eax\n\torl %[s],%%eax\n\t") :"+a"(r):[s]"r"(s):"edx"); } return (now()-t0)/(N*100.0); }
/* yamba's chain: x = (S mod x) + 1 at its fixed point: mov S,eax; cltd; idiv x; lea 1(edx),x */
static double yb(int x, int S){ double t0=now(); for(int i=0;i<N;i++){ __asm__ volatile(R100("movl %[S],%%eax\n\tcltd\n\tidivl %[x]\n\tleal 1(%%rdx),%[x]\n\t") :[x]"+r"(x):[S]"r"(S):"eax","edx"); } return (now()-t0)/(N*100.0); }
/* an add chain (what yamba subtracts) */
static double add1(int x){ double t0=now(); for(int i=0;i<N;i++){ __asm__ volatile(R100("addl $1,%[x]\n\t") :[x]"+r"(x)); } return (now()-t0)/(N*100.0); }
/* unsigned div, edx zeroed (no cltd): the chain through the dividend, x = (x mod S) + S, x in [S, 2S) */
static double via_dividend(unsigned x, unsigned S){ double t0=now(); for(int i=0;i<N;i++){ __asm__ volatile(R100("movl %[x],%%eax\n\txorl %%edx,%%edx\n\tdivl %[S]\n\tleal (%%rdx,%q[S]),%[x]\n\t") :[x]"+r"(x):[S]"r"(S):"eax","edx"); } return (now()-t0)/(N*100.0); }
/* ... and through the divisor, x = (S mod x) + 1 */
static double via_divisor(unsigned x, unsigned S){ double t0=now(); for(int i=0;i<N;i++){ __asm__ volatile(R100("movl %[S],%%eax\n\txorl %%edx,%%edx\n\tdivl %[x]\n\tleal 1(%%rdx),%[x]\n\t") :[x]"+r"(x):[S]"r"(S):"eax","edx"); } return (now()-t0)/(N*100.0); }
/* par_ops: 4 independent chains of each form; ns per operation is the divider's issue period */
static double lm4(int a, int b, int c, int d, int s){ double t0=now(); for(int i=0;i<N;i++){ __asm__ volatile(R10(
  "movl %[a],%%eax\n\tcltd\n\tidivl %[s]\n\tmovl %%edx,%[a]\n\torl %[s],%[a]\n\t"
  "movl %[b],%%eax\n\tcltd\n\tidivl %[s]\n\tmovl %%edx,%[b]\n\torl %[s],%[b]\n\t"
  "movl %[c],%%eax\n\tcltd\n\tidivl %[s]\n\tmovl %%edx,%[c]\n\torl %[s],%[c]\n\t"
  "movl %[d],%%eax\n\tcltd\n\tidivl %[s]\n\tmovl %%edx,%[d]\n\torl %[s],%[d]\n\t")
  :[a]"+r"(a),[b]"+r"(b),[c]"+r"(c),[d]"+r"(d):[s]"r"(s):"eax","edx"); } return (now()-t0)/(N*40.0); }
static double yb4(int a, int b, int c, int d, int S){ double t0=now(); for(int i=0;i<N;i++){ __asm__ volatile(R10(
  "movl %[S],%%eax\n\tcltd\n\tidivl %[a]\n\tleal 1(%%rdx),%[a]\n\t"
  "movl %[S],%%eax\n\tcltd\n\tidivl %[b]\n\tleal 1(%%rdx),%[b]\n\t"
  "movl %[S],%%eax\n\tcltd\n\tidivl %[c]\n\tleal 1(%%rdx),%[c]\n\t"
  "movl %[S],%%eax\n\tcltd\n\tidivl %[d]\n\tleal 1(%%rdx),%[d]\n\t")
  :[a]"+r"(a),[b]"+r"(b),[c]"+r"(c),[d]"+r"(d):[S]"r"(S):"eax","edx"); } return (now()-t0)/(N*40.0); }
int main(void){
  double a=1e9,b=1e9,c=1e9,d=1e9,e=1e9,f=1e9,g=1e9,h=1e9,j=1e9;
  for(int k=0;k<25;k++){ double v;
    v=lm(64,63); if(v<a)a=v;           /* lmbench: N=1, s=N+62=63 */
    v=lm_rest(64,63); if(v<b)b=v;
    v=yb(1000003,37000110); if(v<c)c=v; /* yamba's i32 operands */
    v=yb(63,2*63-1); if(v<d)d=v;        /* yamba's chain, small operands like lmbench's */
    v=add1(1); if(v<e)e=v;
    v=via_dividend(100,63); if(v<f)f=v;
    v=via_divisor(1000003,37000110); if(v<g)g=v;
    v=lm4(64,65,66,67,63); if(v<h)h=v;
    v=yb4(1000003,1000003,1000003,1000003,37000110); if(v<j)j=v; }
  printf("lmbench kernel (cltd+idiv+mov+or)   %.3f ns/op\n",a);
  printf("  without idiv (cltd+mov+or)        %.3f ns/op\n",b);
  printf("  difference = idiv latency          %.3f ns\n",a-b);
  printf("yamba chain (mov+cltd+idiv+lea)     %.3f ns/op\n",c);
  printf("  with lmbench's operand sizes     %.3f ns/op\n",d);
  printf("add chain (1 cycle)                 %.3f ns/op\n",e);
  printf("yamba chain - add                    %.3f ns\n",c-e);
  printf("div, chain through the dividend     %.3f ns/op (div + lea)\n",f);
  printf("div, chain through the divisor      %.3f ns/op (div + lea)\n",g);
  printf("4 chains, lmbench's form            %.3f ns/op: par = %.2f\n",h,a/h);
  printf("4 chains, yamba's form              %.3f ns/op: par = %.2f\n",j,c/j);
  return 0; }
