// glibc's allocator tuning (`mallopt`), which the Glibc Swift module does not export.
#include <malloc.h>
