import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import JSON
import Logging
import NIOCore
import NIOSSL

/// The org emulator: an HTTP server speaking the Salesforce REST API over SQLite (docs/emulator.md).
///
/// ```swift
/// let emulator = try OrgEmulator(configuration: .init(seedPath: "samples/org/seed.json"))
/// try await emulator.run { instanceURL in print(instanceURL) }   // serves until cancelled
/// ```
public final class OrgEmulator: Sendable {
    /// The API versions served under `/services/data/vNN.N`, oldest first.
    /// Every REST API version a current org serves: v31.0 (Summer '14) to v67.0 (Summer '26).
    public static let apiVersions = (31...67).map { "\($0).0" }

    /// The release a version came with, as `/services/data` labels it: three releases a year,
    /// Winter, Spring and Summer, v31.0 being Summer '14.
    static func releaseName(_ version: String) -> String {
        let offset = (Int(Double(version) ?? 31) - 31) + 2
        return "\(["Winter", "Spring", "Summer"][offset % 3]) '\(14 + offset / 3)"
    }

    /// How to start an emulator.
    public struct Configuration: Sendable {
        public var host: String
        /// 0 picks a free port.
        public var port: Int
        /// The SQLite file; `nil` keeps the org in memory.
        public var databasePath: String?
        public var seedPath: String?
        /// Fixes the development token instead of generating one.
        public var accessToken: String?
        public var faultsPath: String?
        public var latencyMs: Int?
        /// PEM certificate chain and private key: serve HTTPS instead of HTTP.
        public var tlsCertificatePath: String?
        public var tlsKeyPath: String?
        /// How long a request may run (latency faults included) before the org stops it without
        /// applying it, as Salesforce stops a request after 10 minutes. Default 30 seconds.
        public var requestDeadlineSeconds: Double

        public init(host: String = "127.0.0.1", port: Int = 0, databasePath: String? = nil, seedPath: String? = nil,
                    accessToken: String? = nil, faultsPath: String? = nil, latencyMs: Int? = nil,
                    tlsCertificatePath: String? = nil, tlsKeyPath: String? = nil, requestDeadlineSeconds: Double = 30) {
            self.host = host
            self.port = port
            self.databasePath = databasePath
            self.seedPath = seedPath
            self.accessToken = accessToken
            self.faultsPath = faultsPath
            self.latencyMs = latencyMs
            self.tlsCertificatePath = tlsCertificatePath
            self.tlsKeyPath = tlsKeyPath
            self.requestDeadlineSeconds = requestDeadlineSeconds
        }
    }

    /// Why an emulator cannot start.
    public struct StartError: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    let configuration: Configuration
    let engine: OrgEngine

    /// How long a request may run before the emulator stops it unapplied (its request deadline).
    public var requestDeadlineSeconds: Double { configuration.requestDeadlineSeconds }

    /// The token the emulator accepts from the start.
    public var accessToken: String { engine.developmentToken }

    /// The username of the seed's first user.
    public let username: String

    /// Loads the seed (or an empty org) and opens the database; the server starts in ``run(onRunning:)``.
    public init(configuration: Configuration) throws(StartError) {
        self.configuration = configuration
        let seed: OrgSeed
        do {
            if let path = configuration.seedPath {
                seed = try OrgSeed.load(path: path)
            } else {
                seed = try OrgSeed.decode(.object(JSONObject()), file: "(empty seed)")
            }
        } catch {
            throw StartError(description: error.description)
        }
        username = seed.users.first?.username ?? "admin@emulator.local"
        do {
            engine = try OrgEngine(seed: seed, databasePath: configuration.databasePath, accessToken: configuration.accessToken,
                                   requestDeadlineSeconds: configuration.requestDeadlineSeconds)
        } catch {
            throw StartError(description: "\(configuration.databasePath ?? "database"): \(error)")
        }
    }

    /// Applies `--faults FILE` and `--latency-ms` before serving.
    func applyStartFaults() async throws(StartError) {
        var object = JSONObject()
        if let path = configuration.faultsPath {
            guard let data = FileManager.default.contents(atPath: path) else { throw StartError(description: "\(path): cannot read the faults file") }
            do {
                guard let parsed = try JSONParser.parse(data).value.objectValue else { throw StartError(description: "\(path): expected a JSON object") }
                object = parsed
            } catch let error as JSONSyntaxError {
                throw StartError(description: "\(path): line \(error.line), column \(error.column): \(error.message)")
            } catch {
                throw StartError(description: "\(path): \(error)")
            }
        }
        if let latency = configuration.latencyMs { object["latencyMs"] = .integer(Int64(latency)) }
        guard !object.isEmpty else { return }
        do {
            await engine.setFaults(try FaultSettings(json: object))
        } catch {
            throw StartError(description: "\(configuration.faultsPath ?? "--latency-ms"): \(error.message)")
        }
    }

    /// Serves until the task is cancelled; `onRunning` gets the instance URL once the port is bound.
    public func run(onRunning: @escaping @Sendable (String) async -> Void = { _ in }) async throws {
        try await applyStartFaults()
        let engine = self.engine
        let host = configuration.host
        let origin = engine.clock.instant()
        let server = try makeServerBuilder(origin: origin, clock: engine.clock)
        let scheme = configuration.tlsCertificatePath == nil ? "http" : "https"
        let application = Application(
            responder: EmulatorResponder(engine: engine, origin: origin, clock: engine.clock),
            server: server,
            configuration: .init(address: .hostname(host, port: configuration.port), serverName: "SyncPipeline-OrgEmulator"),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? 0
                let url = "\(scheme)://\(host):\(port)"
                await engine.setInstanceURL(url, loopback: Self.isLoopback(host))
                await onRunning(url)
            },
            logger: Self.logger)
        try await application.runService(gracefulShutdownSignals: [])
    }

    /// `true` when the server listens on loopback only (an address in 127.0.0.0/8, `::1` or
    /// `localhost`), where local tools may use the admin API without a token.
    static func isLoopback(_ host: String) -> Bool {
        var address = in_addr()
        if inet_pton(AF_INET, host, &address) == 1 { return UInt32(bigEndian: address.s_addr) >> 24 == 127 }
        return ["localhost", "::1", "[::1]"].contains(host.lowercased())
    }

    /// Plain HTTP/1.1, or HTTPS with `--tls-cert` and `--tls-key`; requests are stamped with
    /// their arrival and answers dated by the org's clock (``ArrivalStamp``).
    private func makeServerBuilder(origin: ContinuousClock.Instant, clock: EmulatorClock) throws(StartError) -> HTTPServerBuilder {
        let http1 = HTTPServerBuilder.http1(configuration: .init(additionalChannelHandlers: [ArrivalStamp(origin: origin, clock: clock)]))
        switch (configuration.tlsCertificatePath, configuration.tlsKeyPath) {
        case (nil, nil):
            return http1
        case (let certificatePath?, let keyPath?):
            do {
                let chain = try NIOSSLCertificate.fromPEMFile(certificatePath).map { NIOSSLCertificateSource.certificate($0) }
                let key = try NIOSSLPrivateKey(file: keyPath, format: .pem)
                return try .tls(http1, tlsConfiguration: .makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key)))
            } catch {
                throw StartError(description: "\(certificatePath), \(keyPath): cannot load the TLS certificate and key (\(error))")
            }
        default:
            throw StartError(description: "--tls-cert and --tls-key go together")
        }
    }
}

extension OrgEmulator {
    /// Server diagnostics go to stderr, critical ones only: stdout carries the start line, and
    /// cancelling the server (how it stops) makes HummingbirdCore log shutdown noise at error level.
    static var logger: Logger {
        var logger = Logger(label: "org-emulator") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .critical
        return logger
    }
}

/// The request context, keeping the connection so a dropped answer can close it.
struct EmulatorRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}

/// Bridges Hummingbird requests to the engine.
struct EmulatorResponder: HTTPResponder {
    typealias Context = EmulatorRequestContext
    let engine: OrgEngine
    /// The instant ``ArrivalStamp`` counts from.
    let origin: ContinuousClock.Instant
    let clock: EmulatorClock

    func respond(to request: Request, context: EmulatorRequestContext) async throws -> Response {
        let arrival = ArrivalStamp.arrival(in: request.headers, origin: origin) ?? clock.instant()
        let buffer = try await request.body.collect(upTo: 200 * 1024 * 1024)
        var headers: [String: String] = [:]
        for field in request.headers where field.name != ArrivalStamp.field { headers[field.name.canonicalName] = field.value }
        let uri = request.uri
        // Form decoding: clients send spaces as `+` (simple-salesforce, curl --data-urlencode).
        let query = OrgEngine.formFields(uri.query ?? "")
        let message = EmulatorRequest(method: request.method.rawValue, path: uri.path, query: query, headers: headers,
                                      body: Data(buffer.readableBytesView), arrival: arrival)
        var response = await engine.handle(message)
        // `X-PrettyPrint: 1` asks for indented JSON, as an org gives it.
        if headers["x-prettyprint"] == "1", let body = response.body,
           response.headers.contains(where: { $0.0 == "Content-Type" && $0.1.hasPrefix("application/json") }),
           let value = try? JSONParser.parse(body).value {
            response.body = Data(value.prettyJSONString.utf8)
        }
        if response.drop {
            // Hummingbird turns a thrown error into a 500 answer: close the connection first so
            // the client gets no answer at all.
            try? await context.channel.close()
            throw DroppedConnection()
        }
        var responseHeaders = HTTPFields()
        for (name, value) in response.headers {
            if let fieldName = HTTPField.Name(name) { responseHeaders.append(HTTPField(name: fieldName, value: value)) }
        }
        let body = response.body.map { ResponseBody(byteBuffer: ByteBuffer(bytes: $0)) } ?? ResponseBody()
        return Response(status: HTTPResponse.Status(code: response.status), headers: responseHeaders, body: body)
    }
}

/// Thrown to close the connection without a response (the `dropAfterCommitRate` fault).
struct DroppedConnection: Error {}
