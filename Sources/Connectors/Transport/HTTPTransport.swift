/// Sends HTTP requests. ``AsyncHTTPClientTransport`` is the default; swap in another (a proxying
/// or recording one) through ``SalesforceClient``'s initializer.
public protocol HTTPTransport: Sendable {
    /// Sends a request to an absolute URL. Throws ``TransportError`` when no HTTP answer arrives.
    func execute(method: String, url: String, headers: [(String, String)], body: [UInt8]?, timeoutSeconds: Double) async throws -> OrgResponse

    /// Releases connections.
    func shutdown() async
}

/// No HTTP answer: the connection failed, was reset or closed, or timed out.
public struct TransportError: Error, Sendable, CustomStringConvertible {
    public var message: String
    /// `true` when the request may have reached the server before the failure.
    public var mayHaveBeenSent: Bool

    public init(message: String, mayHaveBeenSent: Bool) {
        self.message = message
        self.mayHaveBeenSent = mayHaveBeenSent
    }

    public var description: String { message }
}
