import CMalloc
import PipelineCLI

// glibc's allocator, tuned for a batch process that streams (see `pipeline_tune_allocator`).
pipeline_tune_allocator()

await PipelineCommand.main(registry: .builtIn)
