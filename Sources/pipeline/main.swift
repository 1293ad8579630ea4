import CJemalloc  // jemalloc is the allocator (see `Sources/CJemalloc`): the import links it.
import EmbeddedOrg
import PipelineCLI

await PipelineCommand.main(registry: .builtIn, embeddedOrg: EmbeddedEmulator())
