import ArgumentParser
import OrgEmulator
import PipelineCLI
import Stages

/// The org emulator as `pipeline`'s embedded org: `"org": {"emulator": {…}}` starts one in the
/// run's process, and `pipeline emulator` serves one.
///
/// ```swift
/// await PipelineCommand.main(registry: .builtIn, embeddedOrg: EmbeddedEmulator())
/// ```
public struct EmbeddedEmulator: EmbeddedOrgLauncher {
    public init() {}

    public var commands: [any ParsableCommand.Type] { [EmulatorCommand.self] }

    public func start(_ settings: OrgConfiguration.EmulatorSettings) async throws -> EmbeddedOrgServer {
        let emulator: OrgEmulator
        do {
            emulator = try OrgEmulator(configuration: .init(
                port: 0, databasePath: settings.database, seedPath: settings.seed, faultsPath: settings.faults))
        } catch {
            throw StageFailure(.invalidInput, "org.emulator: \(error.description)")
        }
        let running: RunningOrgEmulator
        do {
            running = try await emulator.start()
        } catch {
            throw StageFailure(.failed, "org.emulator: the embedded emulator did not start: \(error)")
        }
        return EmbeddedOrgServer(instanceURL: running.instanceURL, accessToken: running.accessToken,
                                 requestDeadlineSeconds: emulator.requestDeadlineSeconds, stop: { await running.stop() })
    }
}
