import _CryptoExtras
import Connectors
import Foundation
import JSON
import OrgEmulator
import Synchronization
import Testing
import X509

/// The sample seed shipped with the package (`samples/org/seed.json`).
let sampleSeedPath: String = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent()  // ConnectorsTests
    .deletingLastPathComponent()  // Tests
    .deletingLastPathComponent()  // package root
    .appendingPathComponent("samples/org/seed.json").path

/// The sample seed's user and connected app.
enum Demo {
    static let username = "demo@syncpipeline.dev"
    static let password = "demo-password"
    static let clientId = "demo-client"
    static let clientSecret = "demo-secret"
    static let refreshToken = "demo-refresh-token"
}

/// Retries that wait next to nothing, so fault tests stay fast.
let fastRetry = RetryPolicy(maxAttempts: 3, baseDelaySeconds: 0.001, maxDelaySeconds: 0.01)

/// A test harness failure (not an assertion about the client).
struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// An emulator on its own free port with an in-memory org, plus a plain HTTP transport for its
/// admin API (`/emulator/*`).
final class TestOrg: Sendable {
    let emulator: OrgEmulator
    /// `http://127.0.0.1:PORT`.
    let url: String
    private let running: RunningOrgEmulator
    private let admin: AsyncHTTPClientTransport

    /// The emulator's development token.
    var accessToken: String { emulator.accessToken }

    private init(emulator: OrgEmulator, running: RunningOrgEmulator) {
        self.emulator = emulator
        self.url = running.instanceURL
        self.running = running
        admin = AsyncHTTPClientTransport(maxConnections: 1, environment: [:])
    }

    static func start(seedPath: String = sampleSeedPath) async throws -> TestOrg {
        let emulator = try OrgEmulator(configuration: .init(host: "127.0.0.1", port: 0, seedPath: seedPath))
        return TestOrg(emulator: emulator, running: try await emulator.start())
    }

    func stop() async {
        await admin.shutdown()
        await running.stop()
    }

    /// Sends an admin request and returns the JSON answer, requiring a 200.
    @discardableResult
    func adminRequest(_ method: String, _ path: String, _ body: JSONValue? = nil,
                      sourceLocation: SourceLocation = #_sourceLocation) async throws -> JSONValue {
        var bytes: [UInt8]?
        if let body {
            var buffer: [UInt8] = []
            body.write(into: &buffer)
            bytes = buffer
        }
        let response = try await admin.execute(method: method, url: url + path, headers: [("Content-Type", "application/json")],
                                               body: bytes, timeoutSeconds: 30)
        try #require(response.status == 200, "\(method) \(path): \(response.status) \(response.text)", sourceLocation: sourceLocation)
        return try response.json()
    }

    /// `POST /emulator/faults` (`[:]` clears every fault).
    func setFaults(_ faults: JSONValue, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await adminRequest("POST", "/emulator/faults", faults, sourceLocation: sourceLocation)
    }

    /// `GET /emulator/stats`.
    func stats() async throws -> JSONValue {
        try await adminRequest("GET", "/emulator/stats")
    }

    /// Requests of one kind the emulator received.
    func received(_ kind: String) async throws -> Int {
        Int(try await stats()["requests"]?["byKind"]?[kind]?.integerValue ?? 0)
    }

    /// Live records of one type.
    func recordCount(_ type: String) async throws -> Int {
        Int(try await stats()["records"]?[type]?.integerValue ?? 0)
    }

    /// A client for this org; the emulator's development token (`access_token` flow) by default.
    func client(auth: OrgAuth? = nil, instanceURL: String?? = .none, maxInFlight: Int = 8, retry: RetryPolicy = fastRetry,
                timeoutSeconds: Double = 30, transport: (any HTTPTransport)? = nil) throws -> SalesforceClient {
        let auth = auth ?? .accessToken(accessToken: accessToken)
        let instance: String?
        switch instanceURL {
        case .none: if case .accessToken = auth { instance = url } else { instance = nil }
        case .some(let value): instance = value
        }
        let settings = OrgConnectionSettings(instanceURL: instance, loginURL: url, maxInFlight: maxInFlight,
                                             timeoutSeconds: timeoutSeconds, auth: auth, retry: retry)
        return try SalesforceClient(settings: settings, transport: transport)
    }
}

/// Runs `body` against a fresh emulator and stops it afterwards.
func withOrg<T>(seedPath: String = sampleSeedPath, _ body: (TestOrg) async throws -> T) async throws -> T {
    let org = try await TestOrg.start(seedPath: seedPath)
    do {
        let value = try await body(org)
        await org.stop()
        return value
    } catch {
        await org.stop()
        throw error
    }
}

/// Runs `body` with a client of a fresh emulator; shuts both down afterwards.
func withClient<T>(seedPath: String = sampleSeedPath, auth: OrgAuth? = nil, maxInFlight: Int = 8, retry: RetryPolicy = fastRetry,
                   _ body: (TestOrg, SalesforceClient) async throws -> T) async throws -> T {
    try await withOrg(seedPath: seedPath) { org in
        let client = try org.client(auth: auth, maxInFlight: maxInFlight, retry: retry)
        do {
            let value = try await body(org, client)
            await client.shutdown()
            return value
        } catch {
            await client.shutdown()
            throw error
        }
    }
}

/// Collects a sequence into an array.
func collect<S: AsyncSequence>(_ stream: S) async throws -> [S.Element] {
    var items: [S.Element] = []
    for try await item in stream { items.append(item) }
    return items
}

/// The error `body` throws, or a recorded issue when it throws none.
func caught<T>(sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> T) async -> (any Error)? {
    do {
        _ = try await body()
        Issue.record("expected an error", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}

/// Every text an error can show: `description`, `String(reflecting:)`, `localizedDescription`,
/// and the dump of its fields.
func texts(of error: any Error) -> [String] {
    var dumped = ""
    dump(error, to: &dumped)
    return ["\(error)", String(reflecting: error), error.localizedDescription, dumped]
}

/// Checks that no secret appears in any of `lines`.
func expectNoSecret(_ lines: [String], secrets: [String], sourceLocation: SourceLocation = #_sourceLocation) {
    for secret in secrets where !secret.isEmpty {
        for line in lines where line.contains(secret) {
            Issue.record("a secret appears in: \(line.replacingOccurrences(of: secret, with: "<SECRET>"))", sourceLocation: sourceLocation)
        }
    }
}

/// An Account record for Collections (`attributes.type` set).
func account(_ name: String, _ extra: JSONObject = [:]) -> JSONObject {
    var record: JSONObject = ["attributes": ["type": "Account"], "Name": .string(name)]
    for (key, value) in extra { record[key] = value }
    return record
}

/// Creates `count` Accounts named `prefix-0001`… through Collections, 200 a request; returns their ids.
@discardableResult
func createAccounts(_ client: SalesforceClient, count: Int, prefix: String, extra: JSONObject = [:],
                    sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String] {
    var ids: [String] = []
    var records = (1...count).map { account("\(prefix)-\(String(format: "%04d", $0))", extra) }
    while !records.isEmpty {
        let batch = Array(records.prefix(OrgLimits.collection))
        records.removeFirst(batch.count)
        let results = try await client.createRecords(batch, allOrNone: true)
        for result in results {
            try #require(result.success, "create failed: \(result.errors)", sourceLocation: sourceLocation)
            ids.append(try #require(result.id, sourceLocation: sourceLocation))
        }
    }
    return ids
}

/// An `HTTPTransport` that forwards to another and records what passes: the peak number of
/// requests in flight and every request line.
final class ObservingTransport: HTTPTransport {
    let inner: any HTTPTransport
    private let state = Mutex<(inFlight: Int, peak: Int, lines: [String], trace: [String], tokens: [String])>((0, 0, [], [], []))

    init(_ inner: any HTTPTransport) {
        self.inner = inner
    }

    var peakInFlight: Int { state.withLock { $0.peak } }
    /// `METHOD URL` of every request sent, in order.
    var requestLines: [String] { state.withLock { $0.lines } }

    func execute(method: String, url: String, headers: [(String, String)], body: [UInt8]?, timeoutSeconds: Double) async throws -> OrgResponse {
        state.withLock {
            $0.inFlight += 1
            $0.peak = max($0.peak, $0.inFlight)
            $0.lines.append("\(method) \(url)")
        }
        defer { state.withLock { $0.inFlight -= 1 } }
        let token = headers.first { $0.0 == "Authorization" }.map { String($0.1.suffix(4)) } ?? "-"
        do {
            let response = try await inner.execute(method: method, url: url, headers: headers, body: body, timeoutSeconds: timeoutSeconds)
            let issued = (try? response.json())?["access_token"]?.stringValue
            let note = issued.map { " new token …" + $0.suffix(4) } ?? ""
            state.withLock {
                $0.trace.append("\(method) \(TracePath.path(url)) [\(token)] → \(response.status)\(note)")
                if let issued { $0.tokens.append(issued) }
            }
            return response
        } catch {
            state.withLock { $0.trace.append("\(method) \(TracePath.path(url)) [\(token)] → \(error)") }
            throw error
        }
    }

    /// Every access token the org issued to the client (secrets that must appear in no error).
    var issuedTokens: [String] { state.withLock { $0.tokens } }

    /// `METHOD path [token tail] → status` of every exchange, in the order answers arrived (for diagnostics).
    var trace: [String] { state.withLock { $0.trace } }

    func shutdown() async {
        await inner.shutdown()
    }
}

/// The path of a URL, for traces.
enum TracePath {
    static func path(_ url: String) -> String {
        URLComponents(string: url)?.path ?? url
    }
}

/// A copy of the sample seed (in the temporary folder) whose first user also has `changes`.
func sampleSeedCopy(firstUser changes: JSONObject) throws -> String {
    var document = try #require(try JSONParser.parse(String(contentsOfFile: sampleSeedPath, encoding: .utf8)).objectValue)
    var users = try #require(document["users"]?.arrayValue)
    var user = try #require(users[0].objectValue)
    for (key, value) in changes { user[key] = value }
    users[0] = .object(user)
    document["users"] = .array(users)
    let path = NSTemporaryDirectory() + "seed-\(UUID().uuidString).json"
    try JSONValue.object(document).jsonString.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

// MARK: JWT

/// A fresh RSA key, its PEM written to a temporary file, and a copy of the sample seed whose
/// user has the matching certificate.
struct JWTFixture {
    let keyPath: String
    let seedPath: String

    init() throws {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        keyPath = NSTemporaryDirectory() + "jwt-key-\(UUID().uuidString).pem"
        try key.pemRepresentation.write(toFile: keyPath, atomically: true, encoding: .utf8)
        let certificateKey = Certificate.PrivateKey(key)
        let name = try DistinguishedName { CommonName("syncpipeline-connectors-test") }
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: certificateKey.publicKey,
            notValidBefore: Date().addingTimeInterval(-3600), notValidAfter: Date().addingTimeInterval(86400),
            issuer: name, subject: name, signatureAlgorithm: .sha256WithRSAEncryption, extensions: Certificate.Extensions(),
            issuerPrivateKey: certificateKey)
        seedPath = try sampleSeedCopy(firstUser: ["jwtCertificate": .string(try certificate.serializeAsPEM().pemString)])
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: keyPath)
        try? FileManager.default.removeItem(atPath: seedPath)
    }
}

/// A Bulk query's rows, every page's, each as column name → cell.
func bulkRows(_ pages: ProducedSequence<BulkQueryPage>) async throws -> [[String: String]] {
    var rows: [[String: String]] = []
    for try await page in pages {
        for cells in page.rows { rows.append(Dictionary(uniqueKeysWithValues: zip(page.columns, cells))) }
    }
    return rows
}
