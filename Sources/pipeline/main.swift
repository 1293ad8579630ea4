import CJemalloc  // jemalloc is the allocator (see `Sources/CJemalloc/shim.h`): the import links it.
import PipelineCLI

await PipelineCommand.main(registry: .builtIn)
