/* A second translation unit for time_block_known.c: its site must land in
 * the same registry (the header's state is shared through weak symbols). */
#include <yamba/time_block.h>

static volatile int touched;

void other_site(int n)
{
	for (int i = 0; i < n; i++) {
		TIME_BLOCK(touched++;) /* SITE:other */
	}
}
