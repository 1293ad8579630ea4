/// Lets a caller follow each attempt of a request as it leaves — the first, or a retry after a
/// refusal, a re-login or a wait for a free connection — so whatever it recorded about the send
/// (a sync journal's send time and settle-by deadline) follows the attempt that may actually be
/// applied.
public final class RequestAttempts: Sendable {
    /// Called just before each attempt goes out; an error it throws stops the request unsent.
    let beforeSend: @Sendable () async throws -> Void

    public init(beforeSend: @escaping @Sendable () async throws -> Void) {
        self.beforeSend = beforeSend
    }

    /// The hook of the task sending the request, if its caller set one (``run(_:)``).
    @TaskLocal static var current: RequestAttempts?

    /// Runs `operation` with this hook called before every attempt of the requests it sends.
    public func run<T: Sendable>(_ operation: () async throws -> T) async throws -> T {
        try await Self.$current.withValue(self, operation: operation)
    }
}
