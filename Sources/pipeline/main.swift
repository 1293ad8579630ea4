import CMalloc
import Glibc
import PipelineCLI

// glibc's allocator, tuned for a batch process that streams: a buffer of a megabyte or more (a Bulk
// job's upload or result file, a page of query results) is mapped on its own and given back whole
// when freed — by default glibc raises that threshold after the first such free, and later large
// buffers then stay in the heap among its fragments — and threads share at most one arena per core.
// At 1,000,000 records through Bulk this keeps ~30 MB off the peak memory.
mallopt(M_MMAP_THRESHOLD, 1 << 20)
mallopt(M_ARENA_MAX, Int32(max(2, sysconf(Int32(_SC_NPROCESSORS_ONLN)))))

await PipelineCommand.main(registry: .builtIn)
