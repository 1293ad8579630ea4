// jemalloc as the process's allocator. Importing this module links `libjemalloc.so.2`, loaded
// ahead of the C library, so its `malloc` and `free` serve the Swift runtime, Foundation, SQLite
// and the C library alike (one allocator: memory one library allocates, another may free). Not
// the static archive: `--static-swift-stdlib` hides archive symbols (`--exclude-libs ALL`), which
// would leave the shared libraries on glibc's allocator beside it.
//
// Why: a pipeline's stages run on different threads, so records are built on one and freed on
// another. glibc's allocator handles that flow poorly (each free of another thread's memory goes
// through the owning arena, and the building thread's cache never refills): with jemalloc a
// 1,000,000-row CSV load takes a quarter to a third less CPU, and one through a `transform` more
// (BENCHMARKS.md). Its settings are in `jemalloc_conf.c`. Nothing to call: the import is the link.
