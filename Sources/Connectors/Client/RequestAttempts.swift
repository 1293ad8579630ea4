/// Lets a caller follow each attempt of a request as it leaves — the first, or a retry after a
/// refusal, a re-login or a wait for a free connection — so whatever it recorded about the send
/// (a sync journal's send time and settle-by deadline) follows the attempt that may actually be
/// applied.
public enum RequestAttempts {
    /// Called, in the task sending the request, just before each attempt goes out; an error it
    /// throws stops the request unsent.
    @TaskLocal public static var beforeSend: (@Sendable () async throws -> Void)?
}
