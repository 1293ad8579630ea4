import JSON

/// The seam between stages and an org: everything org-facing goes through a type conforming to
/// `OrgClient`, so a user can put their own transport, auth or test double behind a pipeline.
/// ``SalesforceClient`` is the implementation that talks to a real org (or the emulator).
public protocol OrgClient: Sendable {
    /// The org's instance URL, e.g. `https://example.my.salesforce.com`, once connected.
    var instanceURL: String { get async throws }

    /// The path prefix of the REST API version in use, e.g. `/services/data/v62.0`; the API
    /// methods of this protocol's extensions build their paths on it.
    var apiPath: String { get }

    /// Sends one request (authenticated, retried, counted) and returns the response.
    func send(_ request: OrgRequest) async throws -> OrgResponse

    /// What the client has sent so far, by kind, for the run report.
    func usage() async -> APIUsage

    /// Releases the client's connections; the run calls it when it ends.
    func shutdown() async

    /// An object's describe; the default asks the org every time, a client may cache it.
    func describe(_ type: String) async throws -> JSONObject

    /// How far the org's clock is ahead of this machine's, in milliseconds, as its last answers
    /// showed (their `Date` header); 0 when unknown.
    func serverClockOffset() async -> Int64

    /// Seconds after sending a write past which the org can no longer apply it: the client's
    /// timeout plus the org's request deadline. A lost answer found nowhere in the org before then
    /// may still be applied; after it, it was not.
    var writeSettlingSeconds: Double { get }

    /// Epoch milliseconds (this machine's clock) before which no write can still be in progress
    /// in the org, because it started since (an emulator the run started itself); `nil` if unknown.
    var writesSettledBefore: Int64? { get }

    /// The clock this client stamps its requests and answers with (``WallClock/system`` unless
    /// a test moves time forward); what measures a write's settling window reads it too.
    var clock: WallClock { get }
}

extension OrgClient {
    public func serverClockOffset() async -> Int64 { 0 }
    public var writeSettlingSeconds: Double { 720 }
    public var writesSettledBefore: Int64? { nil }
    public var clock: WallClock { .system }
}

/// An HTTP request to the org, relative to its instance URL.
public struct OrgRequest: Sendable {
    public var method: String
    /// A path from the instance root, e.g. `/services/data/v62.0/query`.
    public var path: String
    public var query: [(String, String)]
    public var headers: [(String, String)]
    public var body: [UInt8]?
    /// The report bucket: `query`, `sobject`, `composite`, `graph`, `tree`, `collections`, `bulk`, `bulkStatus` (job status polls), `describe`, `limits`, `changes`, `versions`.
    public var kind: String
    /// Whether sending it twice is harmless, so a lost connection may be retried. Creates are not.
    public var idempotent: Bool

    public init(method: String, path: String, query: [(String, String)] = [], headers: [(String, String)] = [],
                body: [UInt8]? = nil, kind: String, idempotent: Bool? = nil) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.kind = kind
        self.idempotent = idempotent ?? (method != "POST")
    }

    /// A request with a JSON body.
    public static func json(_ method: String, _ path: String, _ body: JSONValue, kind: String, idempotent: Bool? = nil) -> OrgRequest {
        var bytes: [UInt8] = []
        body.write(into: &bytes)
        return OrgRequest(method: method, path: path, headers: [("Content-Type", "application/json")], body: bytes, kind: kind,
                          idempotent: idempotent)
    }
}

/// An HTTP response from the org.
public struct OrgResponse: Sendable {
    public var status: Int
    /// Header names lower-cased.
    public var headers: [String: String]
    public var body: [UInt8]

    public init(status: Int, headers: [String: String], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The body parsed as JSON (`null` when empty).
    public func json() throws -> JSONValue {
        if body.isEmpty { return .null }
        do {
            return try JSONParser.parse(body).value
        } catch {
            throw OrgClientError.invalidResponse("the org answered HTTP \(status) with a body that is not JSON (\(error))")
        }
    }

    /// The body as text.
    public var text: String { String(decoding: body, as: UTF8.self) }
}

/// Requests sent and retried, by kind, and the org's last `Sforce-Limit-Info`.
public struct APIUsage: Sendable, Equatable {
    /// Every attempt, retries included.
    public var requests = 0
    public var retries = 0
    public var byKind: [String: Int] = [:]
    /// `api-usage=N/M` as the org last reported it.
    public var limitInfo: String?

    public init() {}

    /// Used and maximum daily requests from `limitInfo`.
    public var dailyUsage: (used: Int, max: Int)? {
        guard let info = limitInfo, let range = info.range(of: "api-usage=") else { return nil }
        let parts = info[range.upperBound...].prefix { $0 != ";" && $0 != " " }.split(separator: "/")
        guard parts.count == 2, let used = Int(parts[0]), let max = Int(parts[1]) else { return nil }
        return (used, max)
    }
}
