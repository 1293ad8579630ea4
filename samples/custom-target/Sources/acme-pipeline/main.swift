import AcmeTargets
import EmbeddedOrg
import PipelineCLI
import Stages

// `pipeline` with the built-in stages and targets, plus CompositeKeySyncUpTarget, and the
// embedded org emulator (leave `embeddedOrg` out to ship without it).
var registry = StageRegistry.builtIn
CompositeKeySyncUpTarget.register(in: &registry)
await PipelineCommand.main(registry: registry, embeddedOrg: EmbeddedEmulator())
