import Foundation

/// Where a client reads the time, in epoch milliseconds: when a write leaves, when an answer
/// arrives, and so when the org can no longer apply a write. ``system`` outside tests; a test
/// gives the client a clock it moves forward (with the emulator's) instead of waiting.
public struct WallClock: Sendable {
    private let read: @Sendable () -> Int64

    /// A clock reading `read` (epoch milliseconds).
    public init(_ read: @escaping @Sendable () -> Int64) {
        self.read = read
    }

    /// Now, in epoch milliseconds.
    public func now() -> Int64 { read() }

    /// This machine's clock.
    public static let system = WallClock { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }
}
