import CJemalloc  // jemalloc is the allocator (see `Sources/CJemalloc`): the import links it.
import PipelineCLI

await PipelineCommand.main(registry: .builtIn)
