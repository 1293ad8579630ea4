import _CryptoExtras
import Connectors
import Foundation
import JSON
import OrgEmulatorTesting
import Synchronization
import Testing
import X509

/// Runs `body` with a client of a fresh emulator; shuts both down afterwards.
func withClient<T>(seedPath: String = SampleOrg.seedPath, auth: OrgAuth? = nil, maxInFlight: Int = 8, retry: RetryPolicy = TestOrg.fastRetry,
                   _ body: (TestOrg, SalesforceClient) async throws -> T) async throws -> T {
    try await withTestOrg(seedPath: seedPath) { org in
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
    var document = try #require(try JSONParser.parse(String(contentsOfFile: SampleOrg.seedPath, encoding: .utf8)).objectValue)
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
