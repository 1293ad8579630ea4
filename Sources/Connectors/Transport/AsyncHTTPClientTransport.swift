import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// The default transport: async-http-client with keep-alive connection pooling, certificate
/// verification on, and `HTTPS_PROXY` honoured.
public final class AsyncHTTPClientTransport: HTTPTransport {
    private let client: HTTPClient

    /// - Parameter maxConnections: connections kept per host (match the client's in-flight limit).
    public init(maxConnections: Int, environment: [String: String] = ProcessInfo.processInfo.environment) {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: maxConnections)
        configuration.decompression = .enabled(limit: .none)
        if let proxy = environment["HTTPS_PROXY"] ?? environment["https_proxy"], let url = URL(string: proxy), let host = url.host {
            configuration.proxy = .server(host: host, port: url.port ?? 80)
        }
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    public func execute(method: String, url: String, headers: [(String, String)], body: [UInt8]?, timeoutSeconds: Double) async throws -> OrgResponse {
        var request = HTTPClientRequest(url: url)
        request.method = HTTPMethod(rawValue: method)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response: HTTPClientResponse
        do {
            response = try await client.execute(request, timeout: .milliseconds(Int64(timeoutSeconds * 1000)))
        } catch let error as HTTPClientError {
            throw TransportError(message: "\(method) \(Self.withoutQuery(url)): \(error)", mayHaveBeenSent: error != .connectTimeout)
        } catch {
            throw TransportError(message: "\(method) \(Self.withoutQuery(url)): \(error)", mayHaveBeenSent: true)
        }
        // The body is gathered straight into one array (a large Bulk result file is held once, not
        // in a buffer and again in its copy).
        var body: [UInt8] = []
        if let length = response.headers.first(name: "content-length").flatMap(Int.init), length <= Self.maxBodyBytes {
            body.reserveCapacity(length)
        }
        do {
            for try await chunk in response.body {
                guard body.count + chunk.readableBytes <= Self.maxBodyBytes else {
                    throw TransportError(message: "\(method) \(Self.withoutQuery(url)): the response is larger than \(Self.maxBodyBytes >> 20) MB",
                                         mayHaveBeenSent: true)
                }
                body.append(contentsOf: chunk.readableBytesView)
            }
        } catch let error as TransportError {
            throw error
        } catch {
            throw TransportError(message: "\(method) \(Self.withoutQuery(url)): the response was cut off (\(error))", mayHaveBeenSent: true)
        }
        var responseHeaders: [String: String] = [:]
        for header in response.headers { responseHeaders[header.name.lowercased()] = header.value }
        return OrgResponse(status: Int(response.status.code), headers: responseHeaders, body: body)
    }

    public func shutdown() async {
        try? await client.shutdown()
    }

    deinit {
        // A transport dropped without shutdown() still releases its connections.
        let client = self.client
        Task { try? await client.shutdown() }
    }

    /// The largest answer taken.
    static let maxBodyBytes = 512 * 1024 * 1024

    /// URLs in messages never carry their query (it may hold a query's data).
    static func withoutQuery(_ url: String) -> String {
        String(url.prefix { $0 != "?" })
    }
}
