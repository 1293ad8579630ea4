// glibc's allocator tuning (`mallopt`), which the Glibc Swift module does not export.
#include <malloc.h>
#include <unistd.h>

/// Tunes glibc's allocator for a batch process that streams, as `pipeline` ships (the benchmarks
/// call it too, so they measure the same process):
/// - a buffer of a megabyte or more (a Bulk upload or result file, a page of query results) is
///   mapped on its own and given back whole when freed: by default glibc raises that threshold
///   after the first such free, and later large buffers then stay in the heap among its fragments;
/// - at most two arenas per core. glibc's default (eight per core) holds more memory; one per core
///   made the stages' threads (the cooperative pool, the store's writer and readers) wait on each
///   other's arena locks: 25,000 context switches where 4,500 do, and staging 15-25 % slower.
static inline void pipeline_tune_allocator(void) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    mallopt(M_ARENA_MAX, (int)(cores < 1 ? 2 : 2 * cores));
}
