import AcmeTargets
import PipelineCLI
import Stages

// `pipeline` with the built-in stages and targets, plus CompositeKeySyncUpTarget.
var registry = StageRegistry.builtIn
CompositeKeySyncUpTarget.register(in: &registry)
await PipelineCommand.main(registry: registry)
