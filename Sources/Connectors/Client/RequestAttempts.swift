/// Lets a caller learn that a request is leaving later than it was handed over — after a refusal
/// the client retries, a re-login, or a wait for a free connection — so whatever it recorded about
/// the send (a sync journal's send time and settle-by deadline) follows the attempt that may
/// actually be applied.
public enum RequestAttempts {
    /// Called, in the task sending the request, before a retry or a late first attempt; an error
    /// it throws stops the request unsent.
    @TaskLocal public static var beforeSend: (@Sendable () async throws -> Void)?
}
