import PipelineCLI

await PipelineCommand.main(registry: .builtIn)
