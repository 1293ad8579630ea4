import ArgumentParser
import Stages

/// Starts the org of `"org": {"emulator": {…}}` inside the run's process. `pipeline`'s `main`
/// installs the org emulator's (``PipelineCommand/main(registry:embeddedOrg:)``, module
/// `EmbeddedOrg`); a build without one refuses such pipelines and can leave the emulator out.
public protocol EmbeddedOrgLauncher: Sendable {
    /// Starts an org on a free loopback port; throws a message naming what is wrong
    /// (a seed or faults file that does not read, a database that does not open).
    func start(_ settings: OrgConfiguration.EmulatorSettings) async throws -> EmbeddedOrgServer

    /// The commands that come with it (`pipeline emulator`).
    var commands: [any ParsableCommand.Type] { get }
}

/// A running embedded org: where it answers, the token it accepts, and how to stop it.
public struct EmbeddedOrgServer: Sendable {
    public var instanceURL: String
    public var accessToken: String
    /// How long it lets a request run before stopping it unapplied.
    public var requestDeadlineSeconds: Double
    /// Stops serving and waits until the port is closed.
    public var stop: @Sendable () async -> Void

    public init(instanceURL: String, accessToken: String, requestDeadlineSeconds: Double, stop: @escaping @Sendable () async -> Void) {
        self.instanceURL = instanceURL
        self.accessToken = accessToken
        self.requestDeadlineSeconds = requestDeadlineSeconds
        self.stop = stop
    }
}
