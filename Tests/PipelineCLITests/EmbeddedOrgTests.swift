import Foundation
@testable import PipelineCLI
import Stages
import Testing

/// A `pipeline` built without the embedded org refuses `"org": {"emulator": …}` with a clear
/// error before any stage starts; the shipped build has it and its `emulator` command.
@Suite struct EmbeddedOrgTests {
    @Test func aBuildWithoutTheEmbeddedOrgRefusesAnEmulatorOrg() async throws {
        let directory = try PipelineCLITests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/pipeline.json"
        try """
            { "org": { "emulator": {} }, "store": "store.sqlite",
              "stages": [ { "id": "read", "type": "extract.soql", "query": "SELECT Id FROM Account" } ] }
            """.write(toFile: path, atomically: true, encoding: .utf8)
        let pipeline = try PipelineLoader(registry: .builtIn, variables: VariableResolver(variables: [:])).load(path: path)
        let connections = OrgConnections(dryRun: false, allowProduction: false, writes: false, embeddedOrg: nil)
        var options = RunOptions()
        options.reportDirectory = directory + "/report"
        let outcome = try await PipelineRunner(pipeline: pipeline, options: options, observer: SilentObserver(), orgConnector: connections.connector).run()
        await connections.close()
        #expect(outcome.exitCode == 2)
        let errors = ([outcome.report.error] + outcome.report.stages.map(\.error)).compactMap { $0 }.joined(separator: "\n")
        #expect(errors.contains("org.emulator: this build of pipeline has no embedded org emulator"), "\(errors)")
        #expect(!PipelineCommand.configuration.subcommands.map { $0.configuration.commandName }.contains("emulator"))
    }
}

/// Takes no notice of a run's events.
private struct SilentObserver: RunObserver {
    func handle(_ event: RunEvent, at date: Date) {}
}
