// The header from C++: five executions of one site, reported at exit.
#include <yamba/time_block.h>

int main()
{
	yamba_time_block_set_interval(0);
	int x = 0;
	for (int i = 0; i < 5; i++)
		TIME_BLOCK(x += i;) // SITE:cpp
	return x == 10 ? 0 : 1;
}
