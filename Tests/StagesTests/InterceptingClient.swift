import Connectors
import JSON

/// The real client with each request passed through `around`, which sends it (`send`) or not and
/// may hold, change or lose its answer — to make an answer late, or lost, on purpose.
struct InterceptingClient: OrgClient {
    let base: SalesforceClient
    let around: @Sendable (OrgRequest, _ send: @Sendable () async throws -> OrgResponse) async throws -> OrgResponse

    var instanceURL: String { get async throws { try await base.instanceURL } }
    var apiPath: String { base.apiPath }
    var writeSettlingSeconds: Double { base.writeSettlingSeconds }
    var writesSettledBefore: Int64? { base.writesSettledBefore }
    var clock: WallClock { base.clock }
    func usage() async -> APIUsage { await base.usage() }
    func shutdown() async { await base.shutdown() }
    func describe(_ type: String) async throws -> JSONObject { try await base.describe(type) }
    func serverClockOffset() async -> Int64 { await base.serverClockOffset() }
    func send(_ request: OrgRequest) async throws -> OrgResponse {
        try await around(request) { try await base.send(request) }
    }
}
