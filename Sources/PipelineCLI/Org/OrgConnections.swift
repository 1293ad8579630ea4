import Connectors
import Foundation
import Stages
import Synchronization

/// Connects a run to its org when a stage first needs it: the embedded org for
/// `"org": {"emulator": {…}}` (in-process, on a free loopback port, when the build has one), or a ``SalesforceClient`` for a
/// real org. A run that writes (a sync up) is refused on a production org unless
/// `--allow-production`; a dry run of it is refused the same way, so it predicts the refusal
/// (`--dry-run --allow-production` plans against production, writing nothing). A read-only run
/// (extracts, sync downs) may read any org.
final class OrgConnections: Sendable {
    private let dryRun: Bool
    private let allowProduction: Bool
    private let writes: Bool
    private let embeddedOrg: (any EmbeddedOrgLauncher)?
    private let opened = Mutex<[(client: SalesforceClient, server: EmbeddedOrgServer?)]>([])

    init(dryRun: Bool, allowProduction: Bool, writes: Bool, embeddedOrg: (any EmbeddedOrgLauncher)?) {
        self.embeddedOrg = embeddedOrg
        self.dryRun = dryRun
        self.allowProduction = allowProduction
        self.writes = writes
    }

    /// The connector to give the runner.
    var connector: OrgConnector {
        { [self] configuration in try await self.connect(configuration) }
    }

    private func connect(_ configuration: OrgConfiguration) async throws -> any OrgClient {
        let client: SalesforceClient
        var server: EmbeddedOrgServer?
        switch configuration {
        case .emulator(let settings):
            guard let embeddedOrg else {
                throw StageFailure(.invalidInput, "org.emulator: this build of pipeline has no embedded org emulator; give \"org\" an instanceUrl and auth")
            }
            let startedAt = Date()
            let running = try await embeddedOrg.start(settings)
            server = running
            var connection = OrgConnectionSettings(
                instanceURL: running.instanceURL, requestDeadlineSeconds: running.requestDeadlineSeconds,
                auth: .accessToken(accessToken: running.accessToken))
            // The emulator lives in this process: whatever an earlier run sent it died with that run.
            connection.orgStartedAt = startedAt
            client = try SalesforceClient(settings: connection)
        case .remote(let settings):
            do {
                client = try SalesforceClient(settings: settings.connectionSettings)
            } catch {
                throw StageFailure(.invalidInput, "org: \(error)")
            }
        }
        opened.withLock { $0.append((client, server)) }
        do {
            try await client.connect()
        } catch {
            throw StageFailure(.invalidInput, "org: \(error)")
        }
        if writes && !allowProduction, try await !client.isSandbox() {
            throw StageFailure(.invalidInput,
                               "org: \(try await client.instanceURL) is a production org (Organization.IsSandbox is false); writes are refused unless you pass --allow-production"
                               + (dryRun ? " (this dry run plans writes, so a live run would be refused; add --allow-production to plan it anyway — a dry run writes nothing)" : ""))
        }
        return client
    }

    /// Closes the clients and stops any embedded emulator.
    func close() async {
        let all = opened.withLock { list in
            defer { list.removeAll() }
            return list
        }
        for (client, server) in all {
            await client.shutdown()
            await server?.stop()
        }
    }
}
