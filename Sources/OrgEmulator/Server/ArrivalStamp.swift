import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Stamps each request head with the instant it was decoded, on the connection's event loop,
/// in the `X-Emulator-Arrival` field (nanoseconds of the org's clock since `origin`, replacing any sent value), and
/// dates each answer by the org's clock as it is written.
///
/// A request's deadline runs from its arrival. Measured in the handler instead, it would start
/// only once a busy task pool got to the request: a write queued that long could then commit
/// later than a client relying on the deadline may assume. An answer's `Date` is the org's time
/// when it leaves, as a client estimating the org's clock expects (the server framework's own
/// header is a cache refreshed by a timer, and knows nothing of the clock tests advance).
final class ArrivalStamp: ChannelDuplexHandler, RemovableChannelHandler, Sendable {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    static let field = HTTPField.Name("X-Emulator-Arrival")!
    let origin: ContinuousClock.Instant
    let clock: EmulatorClock

    init(origin: ContinuousClock.Instant, clock: EmulatorClock) {
        self.origin = origin
        self.clock = clock
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .head(var head) = unwrapOutboundIn(data) else {
            context.write(data, promise: promise)
            return
        }
        head.headerFields[.date] = clock.httpDate()
        context.write(wrapOutboundOut(.head(head)), promise: promise)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        let elapsed = (clock.instant() - origin).components
        head.headerFields[Self.field] = String(elapsed.seconds * 1_000_000_000 + elapsed.attoseconds / 1_000_000_000)
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }

    /// The arrival stamped on `headers`, if any.
    static func arrival(in headers: HTTPFields, origin: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        headers[field].flatMap(Int64.init).map { origin + .nanoseconds($0) }
    }
}
