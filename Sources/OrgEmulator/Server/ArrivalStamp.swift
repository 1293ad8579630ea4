import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Stamps each request head with the instant it was decoded, on the connection's event loop,
/// in the `X-Emulator-Arrival` field (nanoseconds since `origin`, replacing any sent value).
///
/// A request's deadline runs from its arrival. Measured in the handler instead, it would start
/// only once a busy task pool got to the request: a write queued that long could then commit
/// later than a client relying on the deadline may assume.
final class ArrivalStamp: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    static let field = HTTPField.Name("X-Emulator-Arrival")!
    let origin: ContinuousClock.Instant

    init(origin: ContinuousClock.Instant) {
        self.origin = origin
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        let elapsed = (ContinuousClock.now - origin).components
        head.headerFields[Self.field] = String(elapsed.seconds * 1_000_000_000 + elapsed.attoseconds / 1_000_000_000)
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }

    /// The arrival stamped on `headers`, if any.
    static func arrival(in headers: HTTPFields, origin: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        headers[field].flatMap(Int64.init).map { origin + .nanoseconds($0) }
    }
}
